"""One build on a real (local, loopback-only) Ray cluster: byte-identical to the local build.

One cluster for the module (two CPUs, no dashboard). Covered: identity for several piece sizes
and actor counts, a bad line in a late piece (same error, same line as a local build), an actor
killed mid-build (Ray restarts it and retries its piece), a driver SIGKILLed mid-build and
resumed, units="auto" and an overflow error (their counting runs on Ray: no process pool is
forked beside Ray's threads), a packed build, and the bilingual error when Ray is not installed. Ray is an optional extra: without it
the module is skipped (CI installs it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import zstandard

from mintdim import errors
from mintdim.build import runtime
from tests.unit_build.helpers import (
    StallOnPiece,
    job,
    sections,
    tree_bytes,
    tree_bytes_but_source_names,
    write_jsonl,
)
from tests.waiting import wait_for

# Single-node mode: Ray then binds its services to 127.0.0.1 only (read when ray is imported;
# the driver subprocess inherits it).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")

SIZES = [8, 16, 32, 64]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """A local Ray cluster on 127.0.0.1 for this module; builds join it (ray_address=None).

    The local builds compared with it run with workers=1: a process pool forked from a process
    running Ray's threads is not safe (test_pieces proves workers=1 and workers=2 identical)."""
    ray.init(
        address="local",  # a fresh cluster, never one a `ray start` left running on this host
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )
    yield
    ray.shutdown()


def _rows(count: int) -> list[object]:
    words = ["the model", "a unit", "padding is waste", "xin chào thế giới", "tokens ✓ ☃"]
    return [{"text": f"{words[i % 5]} {i % 53}"} for i in range(count)]


def _job(sp_model, out: str):
    return job(
        ["data/a.jsonl"],
        sp_model,
        sizes=[SIZES],
        samples_per_shard=[11],
        build_batch=[16],
        out=out,
    )


def test_byte_identical_to_the_local_build_for_piece_sizes_and_actor_counts(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows(1500))
    _job(sp_model, "local").run(workers=1)
    reference = tree_bytes("local")
    for actors, piece_bytes in [(1, 700), (2, 300), (3, None)]:
        out = f"ray_{actors}_{piece_bytes}"
        _job(sp_model, out).run(executor="ray", workers=actors, piece_bytes=piece_bytes)
        assert tree_bytes(out) == reference, (actors, piece_bytes)


def test_a_packed_build_on_ray_is_the_local_one(cwd):
    from tests.unit_build.test_packed_build import packed_job

    packed_job("local", build_batch=8).run(workers=1, progress=False)
    reference = tree_bytes("local")
    for actors, piece_bytes in [(2, 4000), (3, None)]:
        out = f"ray_{actors}_{piece_bytes}"
        packed_job(out, build_batch=8).run(executor="ray", workers=actors, piece_bytes=piece_bytes)
        assert tree_bytes(out) == reference, (actors, piece_bytes)


@pytest.mark.corpora
def test_the_parity_guard_checks_the_same_rows_on_ray(cwd):
    """The fast engine's guard chooses rows by line number alone: on Ray, with any piece size,
    the same rows are checked (the manifest's count) and the output is the same bytes."""
    pytest.importorskip("gigatoken", reason="the optional extra [fast] is not installed")
    from tests.conftest import corpora_file

    roberta = str(corpora_file("tokenizers/roberta-base.tokenizer.json"))
    write_jsonl("data/a.jsonl", _rows(1500))
    tokenizer = {"path": roberta, "engine": "fast", "parity": {"first_rows": 100, "every": 64}}

    def build(out: str, **run):
        job(["data/a.jsonl"], tokenizer, sizes=[SIZES], build_batch=[16], out=out).run(**run)
        files = tree_bytes(out)
        manifest = files.pop("manifest.json")
        return files, manifest

    local, local_manifest = build("local", workers=1)
    for actors, piece_bytes in [(2, 700), (1, None)]:
        files, manifest = build(
            f"ray_{actors}", executor="ray", workers=actors, piece_bytes=piece_bytes
        )
        assert files == local
        assert manifest == local_manifest  # the parity record's count included
    checked = sum(1 for offset in range(1500) if offset < 100 or offset % 64 == 0)
    assert f'"rows_checked_during_build": {checked}'.encode() in local_manifest


def test_compressed_and_parquet_inputs_build_on_ray_what_plain_jsonl_builds(cwd, sp_model):
    """A .jsonl.zst piece carries its lines to the actor; a Parquet piece is row groups the actor
    reads itself: both give the plain file's output (the input's name aside), and a damaged
    stream fails on Ray with the local build's error."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = _rows(1500)
    write_jsonl("data/a.jsonl", rows)
    data = Path("data/a.jsonl").read_bytes()
    compressor = zstandard.ZstdCompressor()
    frames = [compressor.compress(data[i : i + 9000]) for i in range(0, len(data), 9000)]
    Path("data/a.jsonl.zst").write_bytes(b"".join(frames))
    pq.write_table(
        pa.table({"text": [r["text"] for r in rows]}), "data/a.parquet", row_group_size=100
    )
    _job(sp_model, "local").run(workers=1)
    reference = tree_bytes_but_source_names("local")
    for name, source in [("data/a.jsonl.zst", "jsonl"), ("data/a.parquet", "parquet")]:
        out = f"ray_{source}"
        declared = job([name], sp_model, sizes=[SIZES], samples_per_shard=[11], build_batch=[16],
                       out=out, source=source)  # fmt: skip
        declared.run(executor="ray", workers=2, piece_bytes=3000)
        assert tree_bytes_but_source_names(out) == reference, name

    Path("data/a.jsonl.zst").write_bytes(b"".join(frames)[:-20])  # the last frame cut short
    failures = []
    for out, options in [
        ("cut_local", {"workers": 1}),
        ("cut_ray", {"executor": "ray", "workers": 2}),
    ]:
        declared = job(["data/a.jsonl.zst"], sp_model, sizes=[SIZES], out=out)
        with pytest.raises(errors.CompressedStreamError) as caught:
            declared.run(piece_bytes=3000, **options)
        failures.append(caught.value.facts())
    assert failures[0] == failures[1] and failures[0]["problem"] == "truncated"


def _fails_like_the_local_build(sp_model, error: type, piece_bytes: int):
    """The error of the build on Ray, after checking a local build fails with the same facts."""
    with pytest.raises(error) as local:
        _job(sp_model, "local").run(workers=1, piece_bytes=piece_bytes)
    with pytest.raises(error) as on_ray:
        _job(sp_model, "ray").run(executor="ray", workers=2, piece_bytes=piece_bytes)
    assert on_ray.value.facts() == local.value.facts()
    return on_ray.value


def test_a_bad_line_in_a_late_piece_fails_like_the_local_build(cwd, sp_model):
    rows = _rows(1200)
    rows[1100] = '{"text": 5}'
    write_jsonl("data/a.jsonl", rows)
    assert _fails_like_the_local_build(sp_model, errors.FieldValueTypeError, 500).line == 1101
    assert not Path("ray/manifest.json").exists()
    assert tree_bytes("ray/unit_8") == tree_bytes("local/unit_8")  # the same samples written


@pytest.fixture
def no_fork(monkeypatch):
    """Fail the test if anything forks a local process pool beside this module's Ray."""
    from mintdim.build import runtime

    real = runtime.encode_in_order

    def forbidden(work, items, workers):
        assert workers == 1, "a process pool forked beside Ray's threads"
        return real(work, items, workers)

    monkeypatch.setattr(runtime, "encode_in_order", forbidden)


def test_auto_units_scan_on_ray_and_build_the_local_result(cwd, sp_model, no_fork):
    rows = _rows(1500)
    rows[700] = {"text": " ".join(["padding is waste"] * 12)}  # a long sample for the plan
    write_jsonl("data/a.jsonl", rows)
    declared = _job(sp_model, "local").units(sizes="auto", build_batch=[16], count=3)
    local = declared.run(workers=1, piece_bytes=2000)
    on_ray = _job(sp_model, "ray").units(sizes="auto", build_batch=[16], count=3)
    result = on_ray.run(executor="ray", workers=2, piece_bytes=2000)
    assert result.outputs[0].plan.sizes == local.outputs[0].plan.sizes
    assert tree_bytes("ray") == tree_bytes("local")


def test_an_overflow_under_ray_names_every_overlong_sample_like_a_local_build(
    cwd, sp_model, no_fork
):
    rows = _rows(1500)
    for line in (40, 900, 1400):
        rows[line - 1] = {"text": " ".join(["padding is waste"] * 30)}
    write_jsonl("data/a.jsonl", rows)
    error = _fails_like_the_local_build(sp_model, errors.UnitOverflowError, 2000)
    assert error.count == 3 and error.line == 40


def _actor_pids() -> list[int]:
    """Live processes of this module's Ray actors (Ray titles them ``ray::_PieceActor...``)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                command = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if command.startswith(b"ray::_PieceActor"):
                pids.append(int(proc.name))
    return pids


def test_a_killed_actor_is_restarted_and_its_piece_retried(cwd, sp_model, monkeypatch):
    """The actor given piece 10 stalls there until the test kills it: the build can only finish
    if Ray restarts the actor and retries that piece (the retry runs it)."""
    write_jsonl("data/a.jsonl", _rows(3000))
    _job(sp_model, "local").run(workers=1, piece_bytes=4000)
    stalled = cwd / "stalled"
    encode = runtime._encode
    monkeypatch.setattr(
        runtime, "_encode", lambda work, *rest: encode(StallOnPiece(work, 10, stalled), *rest)
    )
    with ThreadPoolExecutor(1) as driver:  # the build goes on while this thread kills its actor
        build = driver.submit(
            _job(sp_model, "ray").run, executor="ray", workers=2, piece_bytes=4000
        )
        wait_for(lambda: stalled.exists() or build.done(), "an actor stalled on piece 10")
        assert not build.done(), "the build ended before any actor stalled"
        actor = int(stalled.read_text())
        assert actor in _actor_pids()
        os.kill(actor, signal.SIGKILL)
        build.result()
    assert tree_bytes("ray") == tree_bytes("local")


_DRIVER = """
import sys
import ray
from tests.unit_build.helpers import hold_after, job
ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
hold_after(14, "held")
job(["data/a.jsonl"], sys.argv[1], sizes=[[8, 16, 32, 64]], samples_per_shard=[11],
    build_batch=[16], out="ray").run(executor="ray", workers=2, piece_bytes=3000)
"""


def test_a_driver_killed_mid_build_resumes_to_the_identical_result(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows(3000))
    driver = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, str(sp_model)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,  # its Ray processes are found, and ended, as its group
    )
    try:
        wait_for(Path("held").exists, "the driver held after 14 pieces", driver)
        os.kill(driver.pid, signal.SIGKILL)
        assert driver.wait() == -signal.SIGKILL
    finally:
        # The driver's own Ray cluster dies with it; end any of its processes still running.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
    assert not Path("ray/manifest.json").exists()
    staged = len(list(Path("ray/staging").glob("*.fragment")))
    assert staged >= 14

    _job(sp_model, "ray").run(executor="ray", workers=2, resume=True)
    _job(sp_model, "local").run(workers=1, piece_bytes=3000)
    assert tree_bytes("ray") == tree_bytes("local")


def test_without_ray_the_error_says_how_to_get_it(cwd, sp_model, monkeypatch):
    write_jsonl("data/a.jsonl", _rows(5))
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(errors.RayMissingError) as info:
        _job(sp_model, "out").run(executor="ray")
    assert sections(info.value.message("en"))["Fix"][0].startswith(
        'install MintDim with its Ray extra, from the MintDim checkout: pip install ".[ray]"'
    )
    assert 'pip install ".[ray]"' in info.value.message("vi")
    assert not Path("out").exists()
