"""Faults and limits: each ends in a named MintDim error; a failed build has markers, no manifest.

Each fault is real: the input file is really rewritten while the build reads it, the disk really
fills (a tmpfs mounted for the test), the file-size limit is really reached (RLIMIT_FSIZE in a
child). Tests that need a mount or a limit skip cleanly where the machine does not allow them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from contextlib import suppress
from pathlib import Path

import pytest
import sentencepiece as spm

from mintdim import errors, open_build
from mintdim.build import runtime
from mintdim.build.formats.layout import UNIT_BUILD_FAILED
from mintdim.build.source import jsonl
from mintdim.build.write.dir import OutputDirectory
from mintdim.check.verify import verify_build
from tests.unit_build.helpers import job, write_jsonl

SIZES = [8, 16, 32, 64]


@pytest.fixture
def small_disk(tmp_path: Path):
    """``small_disk(size)``: a tmpfs of ``size`` mounted for the test, or a clean skip."""
    mounts: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"disk{len(mounts)}"
        point.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounts.append(point)
        return point

    yield mount
    for point in mounts:
        subprocess.run(["umount", "-l", str(point)], check=False)


def _rows(count: int, words: int = 300) -> list[dict]:
    return [{"text": " ".join(["the model data"] * (words // 3)) + f" {i}"} for i in range(count)]


def _assert_failed_build(
    out: Path, error_name: str, sizes: list[int] = SIZES, resumable: bool = True
) -> None:
    """No manifest, every unit directory carries the failure marker naming the error, and the
    staging area stays for a resume (a build that was not resumable has none)."""
    assert not (out / "manifest.json").exists()
    assert (out / "staging" / "job.json").is_file() == resumable
    units = sorted(p for p in out.iterdir() if p.is_dir() and p.name != "staging")
    assert {p.name for p in units} == {f"unit_{size}" for size in sizes}
    for unit in units:
        marker = (unit / UNIT_BUILD_FAILED).read_text(encoding="utf-8")
        assert marker.count(f"{error_name}:") == 2, marker  # English and Vietnamese


def _rewrite_during_build(monkeypatch: pytest.MonkeyPatch, change) -> None:
    """Call ``change()`` once the second piece of the build has been cut (64-byte pieces)."""
    real = runtime._all_pieces

    def reader(plan, piece_bytes, fingerprints):
        for number, piece in enumerate(real(plan, piece_bytes, fingerprints)):
            if number == 1:
                change()
            yield piece

    monkeypatch.setattr(runtime, "_all_pieces", reader)


def test_an_input_rewritten_in_place_fails_the_build(cwd, sp_model, monkeypatch):
    data = write_jsonl("data.jsonl", [{"text": f"the model {i}"} for i in range(40)])
    original = data.read_bytes()

    def rewrite() -> None:
        # Same length, other text, written into the same inode: only the mtime tells.
        with open(data, "r+b") as handle:
            handle.write(original.replace(b"model", b"MODEL"))

    _rewrite_during_build(monkeypatch, rewrite)
    with pytest.raises(errors.InputChangedError) as caught:
        job(["data.jsonl"], sp_model, sizes=[SIZES], build_batch=[4]).run(workers=1, piece_bytes=64)
    # The piece cut before the change is read after it: its bytes no longer match their digest.
    assert (caught.value.file, caught.value.change) == ("data.jsonl", "content")
    assert os.path.getsize(data) == len(original)
    _assert_failed_build(cwd / "out", "InputChangedError")
    err = caught.value
    assert err.was != err.now and len(err.was) == len(err.now) == 64
    start, end = (int(n) for n in err.byte_range.split("-"))
    assert hashlib.sha256(original[start:end]).hexdigest() == err.was
    vi = err.message("vi")
    assert f"SHA-256 của các byte {err.byte_range} khi build cắt chúng: {err.was}" in vi
    assert "bytes" not in vi and "when" not in vi  # the facts carry no English words


def test_an_input_that_grows_during_the_build_fails_it(cwd, sp_model, monkeypatch):
    data = write_jsonl("data.jsonl", [{"text": "the model"}] * 40)

    def append() -> None:
        with open(data, "ab") as handle:
            handle.write(b'{"text": "late"}\n')

    _rewrite_during_build(monkeypatch, append)
    with pytest.raises(errors.InputChangedError) as caught:
        job(["data.jsonl"], sp_model, sizes=[SIZES], build_batch=[4]).run(workers=2, piece_bytes=64)
    assert caught.value.change in {"size", "mtime"}
    _assert_failed_build(cwd / "out", "InputChangedError")


# ---------------------------------------------------------------------------
# Bounds and limits found by validation, before anything is written
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [2**24 + 1, 2**40, 2**64])
def test_absurd_unit_sizes_are_refused_with_the_reason(cwd, sp_model, size):
    write_jsonl("data.jsonl", [{"text": "the model"}])
    with pytest.raises(errors.UnitValidationError) as caught:
        job(["data.jsonl"], sp_model, sizes=[[8, size]]).run(workers=1)
    assert (caught.value.key, caught.value.rule) == ("units.sizes[0][1]", "too_large")
    assert "64 MiB" in caught.value.message("en") and "64 MiB" in caught.value.message("vi")
    assert not (cwd / "out").exists()


def test_the_largest_allowed_unit_size_still_validates(cwd, sp_model):
    write_jsonl("data.jsonl", [{"text": "the model"}])
    job(["data.jsonl"], sp_model, sizes=[[8, 2**24]]).run(workers=1)
    assert (cwd / "out" / "manifest.json").is_file()


def test_a_template_with_1500_placeholders_renders_without_recursion(cwd, sp_model):
    names = [f"f{i}" for i in range(1500)]
    row = {name: ("the" if i % 2 else "model") for i, name in enumerate(names)}
    write_jsonl("data.jsonl", [row, {**row, "f7": "data"}])
    template = " ".join(f"{{{name}}}" for name in names)
    job(["data.jsonl"], sp_model, fields=[names], templates=[template], sizes=[[4096]]).run(
        workers=1
    )
    processor = spm.SentencePieceProcessor(model_file=str(sp_model))
    build = open_build("out")
    for sample_id, values in enumerate([row, {**row, "f7": "data"}]):
        text = " ".join(values[name] for name in names)
        assert build[sample_id].tolist() == processor.encode(text)


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("a\0b", "nul"),
        ("a\ud800b", "unencodable"),
        ("x" * 256, "component_too_long"),
        ("d/" + "é" * 128 + "/f", "component_too_long"),  # 256 bytes in UTF-8
    ],
)
@pytest.mark.parametrize("role", ["source", "tokenizer", "output"])
def test_a_path_that_cannot_name_a_file_is_a_path_error(cwd, sp_model, path, problem, role):
    write_jsonl("data.jsonl", [{"text": "the model"}])
    declared = {"source": "data.jsonl", "tokenizer": str(sp_model), "output": "out"}
    declared[role] = path + (".model" if role == "tokenizer" else "")
    with pytest.raises(errors.PathError) as caught:
        job([declared["source"]], declared["tokenizer"], out=declared["output"]).run(workers=1)
    key = {"source": "source.files[0]", "tokenizer": "tokenizer[0].path", "output": "output.dir"}
    assert (caught.value.key, caught.value.problem) == (key[role], problem)
    assert caught.value.message("vi").splitlines()[0] == "PathError:"
    assert sorted(p.name for p in cwd.iterdir()) == ["data.jsonl"]


def test_a_deleted_working_directory_is_named(tmp_path, sp_model, monkeypatch):
    data = write_jsonl(tmp_path / "data.jsonl", [{"text": "the model"}])
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(errors.PathError) as caught:
        job([str(data)], sp_model, out="out").run(workers=1)
    assert (caught.value.key, caught.value.problem) == ("output.dir", "cwd_gone")
    assert caught.value.detail == f"{gone} (deleted)"
    with pytest.raises(errors.MintDimFileNotFoundError) as missing:
        job([str(tmp_path / "nope.jsonl")], sp_model, out=str(tmp_path / "out")).run(workers=1)
    assert missing.value.cwd == f"{gone} (deleted)"


# ---------------------------------------------------------------------------
# I/O faults during the build, for real
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_a_full_disk_is_a_named_error_with_every_marker(cwd, sp_model, small_disk, workers):
    disk = small_disk("256k")
    write_jsonl("data.jsonl", _rows(200))
    out = disk / "out"
    with pytest.raises(errors.BuildWriteError) as caught:
        job(["data.jsonl"], sp_model, sizes=[[64, 1024]], samples_per_shard=[20], out=str(out)).run(
            workers=workers
        )
    err = caught.value
    assert (err.place, err.directory, err.reason) == ("output", str(out), "disk_full")
    assert "No space left on device" in err.detail
    assert isinstance(err, OSError)
    _assert_failed_build(out, "BuildWriteError", sizes=[64, 1024])
    assert not list(out.rglob(".*room"))


def test_the_file_size_limit_is_a_named_error(cwd, sp_model):
    """RLIMIT_FSIZE in a child: the shard that reaches it ends the build with file_too_large."""
    write_jsonl("data.jsonl", _rows(200))
    script = f"""
import resource, sys
from mintdim import errors
from tests.unit_build.helpers import job
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
try:
    job(["data.jsonl"], {str(sp_model)!r}, sizes=[[64, 1024]], samples_per_shard=[500]).run(
        workers=1, progress=False
    )
except errors.BuildWriteError as err:
    print(err.reason, err.place, err.directory)
    sys.exit(3)
"""
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 3 and "Operation not permitted" in done.stderr:
        pytest.skip("cannot set RLIMIT_FSIZE here")
    assert (done.returncode, done.stdout.split()) == (3, ["file_too_large", "output", "./out"])
    _assert_failed_build(cwd / "out", "BuildWriteError", sizes=[64, 1024])


def test_a_full_tmpdir_under_the_spool_files_names_it(cwd, sp_model, small_disk, monkeypatch):
    spool = small_disk("64k")
    monkeypatch.setenv("TMPDIR", str(spool))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    # Workers spool each batch of a build that is not resumable (a piece's short report comes
    # back through the pipe), and Python's tempfile passes over a TMPDIR that is already full:
    # the disk fills up just after the build made its spool directory there.
    make_spool = tempfile.TemporaryDirectory

    def spool_then_fill(*args, **kwargs):
        made = make_spool(*args, **kwargs)
        with open(spool / "filler", "wb", buffering=0) as filler, suppress(OSError):
            while True:
                filler.write(b"\0" * 4096)
        return made

    monkeypatch.setattr(tempfile, "TemporaryDirectory", spool_then_fill)
    write_jsonl("data.jsonl", _rows(400))
    with pytest.raises(errors.BuildWriteError) as caught:
        job(["data.jsonl"], sp_model, sizes=[[64, 1024]], build_batch=[100]).run(
            workers=2, resumable=False
        )
    err = caught.value
    assert (err.place, err.reason) == ("spool", "disk_full")
    assert err.directory.startswith(str(spool))
    assert "TMPDIR" in err.message("en") and "TMPDIR" in err.message("vi")
    _assert_failed_build(cwd / "out", "BuildWriteError", sizes=[64, 1024], resumable=False)
    assert [p.name for p in spool.iterdir()] == ["filler"]  # the spool directory is gone


def test_an_output_directory_deleted_mid_build_is_named(cwd, sp_model, monkeypatch):
    write_jsonl("data.jsonl", _rows(60, words=30))
    _rewrite_during_build(monkeypatch, lambda: shutil.rmtree(cwd / "out"))
    with pytest.raises(errors.BuildWriteError) as caught:
        job(["data.jsonl"], sp_model, sizes=[[64, 1024]], samples_per_shard=[2]).run(
            workers=1, piece_bytes=64
        )
    assert (caught.value.reason, caught.value.directory) == ("gone", "./out")
    assert not (cwd / "out").exists()  # nothing is made again behind the user's back


def test_a_completed_output_stays_complete_when_a_later_one_fails(
    cwd, sp_model, small_disk, monkeypatch
):
    """The second output's disk fills up while the outputs finish: the first one has finished.

    Its fragments stay until every output is complete, so the same run with resume=True (once
    there is room) finishes the second one and tidies both."""
    disk = small_disk("1m")
    write_jsonl("a.jsonl", _rows(3, words=30))
    write_jsonl("b.jsonl", _rows(3, words=30))
    real_finish = OutputDirectory.finish

    def finish(self, fingerprints):
        if self.path.is_relative_to(disk):
            with open(disk / "filler", "wb") as handle, suppress(OSError):
                while True:
                    handle.write(bytes(1 << 16))
        return real_finish(self, fingerprints)

    monkeypatch.setattr(OutputDirectory, "finish", finish)
    both = job(
        ["a.jsonl", "b.jsonl"],
        sp_model,
        fields=[["text"]],
        templates=["{text}"],
        sizes=[[64, 1024]],
        out=["./done", str(disk / "out")],
    )
    with pytest.raises(errors.BuildWriteError) as caught:
        both.run(workers=1)
    assert caught.value.reason == "disk_full"
    assert caught.value.completed_outputs == ("./done",)
    assert "- ./done" in caught.value.message("en") and "- ./done" in caught.value.message("vi")
    assert not list((cwd / "done").rglob(UNIT_BUILD_FAILED))
    report = verify_build(cwd / "done")
    assert [(f.path, f.code) for f in report.failures] == [("staging", "staging")]
    _assert_failed_build(disk / "out", "BuildWriteError", sizes=[64, 1024])

    monkeypatch.setattr(OutputDirectory, "finish", real_finish)
    (disk / "filler").unlink()
    both.run(workers=1, resume=True)
    assert verify_build(cwd / "done").ok and verify_build(disk / "out").ok


def test_a_line_past_the_limit_is_named_with_its_place(cwd, sp_model):
    rows = [{"text": "the model"}, {"text": "data"}, {"text": "x" * (3 << 20)}, {"text": "a"}]
    write_jsonl("data.jsonl", rows)
    with pytest.raises(errors.LineTooLongError) as caught:
        job(["data.jsonl"], sp_model, sizes=[SIZES], build_batch=[2]).source.jsonl(
            files=["data.jsonl"], fields=[["text"]], templates=["{text}"], max_line_bytes=1 << 20
        ).run(workers=1)
    assert (caught.value.file, caught.value.line, caught.value.limit) == ("data.jsonl", 3, 1 << 20)
    assert "data.jsonl:3" in caught.value.message("vi")
    _assert_failed_build(cwd / "out", "LineTooLongError")


def test_a_file_without_newlines_stops_at_the_limit_not_at_memory(cwd, sp_model, monkeypatch):
    with open("dump.jsonl", "wb") as handle:
        for _ in range(48):
            handle.write(b"[1, 2, 3, 4] " * ((1 << 20) // 13))  # about 48 MiB, no newline
    monkeypatch.setattr(jsonl, "_READ_BLOCK", 1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(errors.LineTooLongError) as caught:
            job(["dump.jsonl"], sp_model, sizes=[SIZES]).source.jsonl(
                files=["dump.jsonl"],
                fields=[["text"]],
                templates=["{text}"],
                max_line_bytes=4 << 20,
            ).run(workers=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.line == 1
    assert peak < 24 << 20, f"{peak / 2**20:.0f} MiB held for one unfinished line"


@pytest.mark.parametrize("value", [0, -1, "big", 1.5, True])
def test_the_line_limit_must_be_a_positive_int(cwd, sp_model, value):
    write_jsonl("data.jsonl", [{"text": "the model"}])
    with pytest.raises(errors.SourceValidationError) as caught:
        job(["data.jsonl"], sp_model).source.jsonl(
            files=["data.jsonl"], fields=[["text"]], templates=["{text}"], max_line_bytes=value
        ).run(workers=1)
    assert (caught.value.key, caught.value.problem) == ("source.max_line_bytes", "not_positive")
    assert not (cwd / "out").exists()
