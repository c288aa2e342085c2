"""Packed builds (``units(pack=True)``): every sample whole, in exactly one row, its tokens
exactly the reference encoding; rows as brute-force best-fit decreasing gives them; shards read
back raw; byte-identical for any workers, batching, pieces, resumability and resume after a
SIGKILL; verify finds every tampering; the runner and inspect show the rows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import mintdim
from mintdim import errors, pipeline
from mintdim.check.verify import verify_build
from mintdim.cli import main
from mintdim.read.reader import open_build
from tests.unit_build.helpers import reference_encoder, reseal_build, tree_bytes, write_jsonl
from tests.unit_build.test_packing import brute_force, polished
from tests.waiting import wait_for

DEMO = Path(mintdim.__file__).parent / "demo"
ALPACA = DEMO / "self_instruct_seed_alpaca.jsonl"
GSM8K = DEMO / "gsm8k_test_first300.jsonl"
BPE = DEMO / "demo_bpe.tokenizer.json"
UNIGRAM = DEMO / "demo_unigram.model"
TEMPLATE = "### Instruction\n{instruction}\n### Input\n{input}\n### Response\n{output}"
FIELDS = ["instruction", "input", "output"]


def packed_job(out, *, sizes=((128, 512, 4096),), tokenizer=None, spans=None, pack=True,
               build_batch=16, per_shard=5, files=(ALPACA,)):  # fmt: skip
    """The demo's Alpaca seed tasks (and more files if given), packed into ``sizes``; EOS
    appended with the unigram model (the demo BPE has none)."""
    tokenizer = tokenizer or UNIGRAM
    config = {"path": str(tokenizer), "append_eos": tokenizer == UNIGRAM}
    if spans:
        config["encode"] = spans
    gsm = [Path(f) == GSM8K for f in files]
    step = pipeline("unit-build").source.jsonl(
        files=[str(f) for f in files],
        fields=[["question", "answer"] if g else FIELDS for g in gsm],
        templates=["Question: {question}\nAnswer: {answer}" if g else TEMPLATE for g in gsm],
    )
    kind = step.tokenizer.hf_json if str(config["path"]).endswith(".json") else None
    declared = kind(config) if kind else step.tokenizer.sentencepiece(config)
    return declared.units(
        sizes=[list(s) for s in sizes], build_batch=[build_batch], pack=pack
    ).output.dir(str(out), samples_per_shard=[per_shard])


def _rendered(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [TEMPLATE.format(**{k: r[k] for k in FIELDS}) for r in rows]


def _shard_rows(root: Path, content: dict, size: int) -> np.ndarray:
    """Every row of a unit, read raw from its shard files in manifest order."""
    dtype = np.dtype(content["token_storage"]["dtype"]).newbyteorder("<")
    parts = [
        np.fromfile(root / s["path"], dtype=dtype).reshape(-1, size)
        for s in content["shards"]
        if s["unit_size"] == size
    ]
    return np.concatenate(parts) if parts else np.empty((0, size), dtype)


def test_every_sample_is_whole_in_one_row_exactly_its_reference_tokens(tmp_path):
    out = tmp_path / "packed"
    packed_job(out).run(workers=2, progress=False)
    root = Path(out)
    content = json.loads((root / "manifest.json").read_text())
    encode = reference_encoder(UNIGRAM)
    eos = content["tokenizer"]["eos_id"]
    pad = content["tokenizer"]["pad_id"]
    dtype = np.dtype(content["token_storage"]["dtype"]).newbyteorder("<")
    expected = [[*encode(text), eos] for text in _rendered(ALPACA)]
    index = [json.loads(line) for line in (root / "sample_index.jsonl").read_text().splitlines()]
    assert len(index) == len(expected)
    seen: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for row, ids in zip(index, expected, strict=True):
        size = row["unit_size"]
        assert size == min(s for s in (128, 512, 4096) if s >= len(ids))  # smallest unit holding it
        shard = np.fromfile(root / row["shard_path"], dtype=dtype).reshape(-1, size)
        start = row["row_start"]
        assert shard[row["shard_row"], start : start + len(ids)].tolist() == ids
        number = int(row["shard_path"][-10:-4])
        seen.setdefault((size, number * 5 + row["shard_row"]), []).append(
            (start, len(ids), row["sample_id"])
        )
    build = open_build(out)
    assert build.packed
    slots = tokens = 0
    for size in (128, 512, 4096):
        rows = _shard_rows(root, content, size)
        assert rows.shape[0] == build.records()[size]
        for r in range(rows.shape[0]):
            held = sorted(seen[(size, r)])
            # Back to back from slot 0, PAD exactly after the last sample, never past the width.
            ends = np.cumsum([length for _, length, _ in held])
            assert [start for start, _, _ in held] == [0, *ends[:-1].tolist()]
            assert ends[-1] <= size and (rows[r, ends[-1] :] == pad).all()
            # The boundary index says the same, in the row's order.
            listed = build.row_samples(size, r)
            assert sorted(listed.tolist()) == sorted((sid, s, n) for s, n, sid in held)
            tokens += int(ends[-1])
        slots += rows.size
    stats = json.loads((root / "stats.json").read_text())
    assert (stats["total_slots"], stats["total_tokens"]) == (slots, tokens)
    assert stats["padding_ratio"] == round((slots - tokens) / slots, 6)
    for i, ids in enumerate(expected):
        assert build[i].tolist() == ids
    assert content["units"]["pack"]["algorithm"] == "best-fit-decreasing"
    assert verify_build(out).ok


def test_the_rows_are_brute_force_best_fit_decreasing_polished_of_each_unit(tmp_path):
    packed_job(tmp_path / "p", files=(ALPACA, GSM8K)).run(workers=1, progress=False)
    build = open_build(tmp_path / "p")
    index = [json.loads(line) for line in (tmp_path / "p/sample_index.jsonl").open()]
    for size in build.units:
        members = [r["sample_id"] for r in index if r["unit_size"] == size]
        lengths = [r["token_count"] for r in index if r["unit_size"] == size]
        rows = polished(lengths, brute_force(lengths, size), size)
        want = [[members[i] for i in row] for row in rows]
        got = [build.row_samples(size, r)["sample_id"].tolist() for r in range(len(want))]
        assert got == want and build.records()[size] == len(want)


def test_packing_cuts_the_demo_padding_near_its_bound(tmp_path):
    packed_job(tmp_path / "p", sizes=((4096,),), files=(ALPACA, GSM8K)).run(
        workers=2, progress=False
    )
    packed_job(tmp_path / "u", sizes=((128, 512, 4096),), files=(ALPACA, GSM8K), pack=False).run(
        workers=2, progress=False
    )
    packed, unpacked = (json.loads((tmp_path / d / "stats.json").read_text()) for d in "pu")
    rows, bound = packed["packing"]["rows"]["4096"], packed["packing"]["lower_bound_rows"]["4096"]
    assert bound == -(-packed["total_tokens"] // 4096)
    assert rows <= -(-(101 * bound) // 100) + 1  # the target
    assert packed["padding_ratio"] < 0.05 < unpacked["padding_ratio"]
    assert packed["total_tokens"] == unpacked["total_tokens"]


@pytest.mark.parametrize("spans", ["whole", "segments"])
def test_spans_keep_their_meaning_per_sample(tmp_path, spans):
    packed_job(tmp_path / "p", spans=spans, tokenizer=UNIGRAM).run(workers=2, progress=False)
    packed_job(tmp_path / "u", spans=spans, tokenizer=UNIGRAM, pack=False).run(
        workers=1, progress=False
    )
    p, u = open_build(tmp_path / "p"), open_build(tmp_path / "u")
    assert len(p) == len(u) == 175
    for i in range(len(u)):
        assert p[i].tolist() == u[i].tolist()
        assert p.segments(i) == u.segments(i)
    assert verify_build(tmp_path / "p").ok


def test_byte_identical_for_any_workers_batching_pieces_and_executor_mode(tmp_path):
    reference = tmp_path / "ref"
    packed_job(reference, build_batch=4096).run(workers=1, resumable=False, progress=False)
    expected = tree_bytes(reference)
    for n, (workers, batch, piece, resumable) in enumerate(
        [(2, 7, 2000, True), (2, 16, None, False), (1, 3, 700, True)]
    ):
        out = tmp_path / f"b{n}"
        packed_job(out, build_batch=batch).run(
            workers=workers, piece_bytes=piece, resumable=resumable, progress=False
        )
        assert tree_bytes(out) == expected


_KILLED = """
import sys
from tests.unit_build.helpers import hold_after
from tests.unit_build.test_packed_build import packed_job
hold_after(int(sys.argv[2]), "held")
packed_job(sys.argv[1], build_batch=4).run(workers=2, piece_bytes=3000, progress=False)
"""

_KILLED_PACKING = """
import os, signal, sys
from mintdim.build.formats import boundaries
from tests.unit_build.test_packed_build import packed_job
boundaries.write = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # dies while packing
packed_job(sys.argv[1], build_batch=4).run(workers=2, piece_bytes=3000, progress=False)
"""


@pytest.mark.parametrize("moment", ["encoding", "packing"])
def test_resume_after_sigkill_is_byte_identical(cwd, moment):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    if moment == "encoding":
        child = subprocess.Popen([sys.executable, "-c", _KILLED, "out", "5"], env=env)
        try:
            wait_for(Path("held").exists, "the build held after 5 pieces", child)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait()
    else:
        child = subprocess.run([sys.executable, "-c", _KILLED_PACKING, "out"], env=env, check=False)
    assert child.returncode == -signal.SIGKILL
    assert not Path("out/manifest.json").exists()  # nothing half-written looks complete
    with pytest.raises(errors.NotABuildError):
        open_build("out")
    packed_job("out", build_batch=4).run(workers=2, piece_bytes=3000, resume=True, progress=False)
    packed_job("ref", build_batch=4).run(workers=1, piece_bytes=3000, progress=False)
    assert tree_bytes("out") == tree_bytes("ref")
    assert verify_build("out").ok


@pytest.mark.parametrize("policy", ["extend", "truncate", "skip"])
def test_overflow_policies_pack_too(tmp_path, policy):
    # The BPE demo tokenizer (no EOS, UNK ids in its output): its unk_index must match too.
    for name, pack, workers in (("p", True, 2), ("u", False, 1)):
        packed_job(tmp_path / name, sizes=((128, 256),), tokenizer=BPE, pack=pack).run(
            workers=workers, on_overflow=policy, progress=False
        )
    p, u = open_build(tmp_path / "p"), open_build(tmp_path / "u")
    assert p.units == u.units and len(p) == len(u)
    for i in range(len(u)):
        assert p[i].tolist() == u[i].tolist()
    for name in ("overflow_index.jsonl", "unk_index.jsonl", "duplicate_index.jsonl"):
        assert (tmp_path / "p" / name).read_bytes() == (tmp_path / "u" / name).read_bytes()
    assert verify_build(tmp_path / "p").ok


def test_pack_must_be_a_bool(tmp_path):
    with pytest.raises(errors.UnitValidationError) as caught:
        packed_job(tmp_path / "p", pack="yes").run(workers=1, progress=False)
    assert "units.pack" in caught.value.message("en") and "true" in caught.value.message("en")
    assert "units.pack" in caught.value.message("vi")
    assert not (tmp_path / "p").exists()


# ---------------------------------------------------------------------------
# Tampering: each found by verify, even behind a manifest sealed again
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def packed_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("packed") / "build"
    packed_job(out).run(workers=2, progress=False)
    return out


def _copy(packed_build: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(packed_build, tmp_path / "b")
    return tmp_path / "b"


def _codes(root: Path, deep: bool = False) -> set[tuple[str, str]]:
    report = verify_build(root, deep=deep, workers=1)
    assert not report.ok
    return {(f.check, f.code) for f in report.failures}


def test_tampered_boundary_index_is_found(packed_build, tmp_path):
    root = _copy(packed_build, tmp_path)
    path = root / "unit_128/row_samples.npy"
    entries = np.load(path).copy()
    entries[[0, 1]] = entries[[1, 0]]  # two samples change places
    np.save(path, entries)
    reseal_build(root)
    codes = _codes(root)
    assert ("boundaries", "packing") in codes and ("sample_index", "index_place") in codes


def test_a_sample_in_two_rows_is_found(packed_build, tmp_path):
    root = _copy(packed_build, tmp_path)
    path = root / "unit_512/row_samples.npy"
    entries = np.load(path).copy()
    entries["sample_id"][1] = entries["sample_id"][0]
    np.save(path, entries)
    reseal_build(root)
    assert ("boundaries", "row_samples") in _codes(root)


def test_a_token_in_a_row_tail_is_found(packed_build, tmp_path):
    root = _copy(packed_build, tmp_path)
    build = open_build(root)
    fill = int(build.row_columns(128).fill[0])
    assert fill < 128
    shard = root / "unit_128/shard_000000.bin"
    data = np.fromfile(shard, dtype="<u2")
    data[fill] = 5  # a token where PAD belongs
    data.tofile(shard)
    reseal_build(root)
    assert ("padding", "padding") in _codes(root)


def test_a_changed_token_inside_a_row_is_found_by_deep(packed_build, tmp_path, monkeypatch):
    root = _copy(packed_build, tmp_path)
    shard = root / "unit_512/shard_000000.bin"
    data = np.fromfile(shard, dtype="<u2")
    data[3] = 7 if data[3] != 7 else 8
    data.tofile(shard)
    assert ("shards", "sha256") in _codes(root)
    reseal_build(root)
    assert verify_build(root).ok  # only a re-derivation can tell
    assert ("deep", "deep_record") in _codes(root, deep=True)


def test_a_moved_row_start_in_the_sample_index_is_found(packed_build, tmp_path):
    root = _copy(packed_build, tmp_path)
    path = root / "sample_index.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    row = json.loads(lines[0])
    lines[0] = lines[0].replace(f'"row_start":{row["row_start"]}}}', '"row_start":1}')
    path.write_text("".join(lines))
    reseal_build(root)
    report = verify_build(root)
    assert any(f.code == "index_place" and "row_start" in f.message("en") for f in report.failures)


def test_deep_verify_holds_on_an_intact_packed_build(packed_build):
    report = verify_build(packed_build, deep=True, workers=2)
    assert report.ok, report.lines("en")


# ---------------------------------------------------------------------------
# Around it: split, inspect, the runner
# ---------------------------------------------------------------------------


def test_split_refuses_a_packed_build_by_name(packed_build, tmp_path):
    groups = tmp_path / "groups"
    mintdim.group(str(packed_build), str(groups), near_duplicates=False)
    with pytest.raises(errors.PackedSplitError) as caught:
        mintdim.split(str(packed_build), str(groups), str(tmp_path / "s"), seed=0,
                      ratios="train=0.8,validation=0.1,test=0.1")  # fmt: skip
    assert "units.pack" in caught.value.message("en") and "units.pack" in caught.value.message("vi")
    assert not (tmp_path / "s").exists()


def test_inspect_shows_rows_and_their_samples(packed_build):
    runner = CliRunner()
    summary = runner.invoke(main, ["inspect", str(packed_build)])
    assert summary.exit_code == 0 and "packed" in summary.output and "rows" in summary.output
    build = open_build(packed_build)
    held = build.row_samples(512, 1).tolist()
    shown = runner.invoke(main, ["inspect", str(packed_build), "--row", "512", "1"])
    assert shown.exit_code == 0
    for sample_id, start, length in held:
        assert f"slots {start} to {start + length}: sample {sample_id} (" in shown.output
    vi = runner.invoke(main, ["inspect", "--lang", "vi", str(packed_build), "--row", "512", "1"])
    assert "hàng 1" in vi.output
    bad = runner.invoke(main, ["inspect", str(packed_build), "--row", "512", "999"])
    assert bad.exit_code == 2 and "512 (0-" in bad.output
    one = runner.invoke(main, ["inspect", str(packed_build), "--sample", str(held[0][0])])
    assert f"from slot {held[0][1]}" in one.output


def test_units_no_sample_reaches_stay_empty(tmp_path):
    # A unit no sample reaches gets its EMPTY_UNIT.md and no boundary index, as unpacked.
    write_jsonl(tmp_path / "short.jsonl", [{k: "hi" for k in FIELDS}] * 30)
    packed_job(tmp_path / "p", files=(tmp_path / "short.jsonl",)).run(workers=1, progress=False)
    assert (tmp_path / "p/unit_4096/EMPTY_UNIT.md").is_file()
    assert not (tmp_path / "p/unit_4096/row_offsets.npy").exists()
    build = open_build(tmp_path / "p")
    per_row = 128 // len(build[0])  # 30 equal samples, as many a row as fit
    assert build.records() == {128: -(-30 // per_row), 512: 0, 4096: 0}
    assert verify_build(tmp_path / "p").ok


def test_the_sample_index_written_beside_is_the_one_written_here(tmp_path, monkeypatch):
    """The duplicate groups and the places are written by forked children beside the rows, or
    here when another thread runs (a fork could copy a lock it holds): the same bytes."""
    import threading

    forks = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or real_fork())
    packed_job(tmp_path / "forked").run(workers=1, progress=False)
    assert len(forks) == 2  # the duplicate groups, the places
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        packed_job(tmp_path / "here").run(workers=1, progress=False)
    finally:
        stop.set()
        other.join()
    assert len(forks) == 2  # the second build wrote both here
    assert tree_bytes(tmp_path / "forked") == tree_bytes(tmp_path / "here")


def test_a_failure_beside_the_rows_fails_the_build_by_name(tmp_path, monkeypatch):
    """The child writing the places meets a full disk: the build fails with BuildWriteError
    naming it, no manifest, every unit marked."""
    import errno as errnos

    from mintdim.build.formats import sample_index

    def full(*_args, **_kwargs):
        raise OSError(errnos.ENOSPC, "No space left on device", "sample_index.jsonl")

    monkeypatch.setattr(sample_index.SampleIndexWriter, "place_pending", full)
    out = tmp_path / "p"
    with pytest.raises(errors.BuildWriteError) as caught:
        packed_job(out).run(workers=1, progress=False)
    assert caught.value.reason == "disk_full"
    assert not (out / "manifest.json").exists()
    assert all((unit / "UNIT_BUILD_FAILED.md").is_file() for unit in out.glob("unit_*"))
