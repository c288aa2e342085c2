"""Faults and limits: each ends in a named MintDim error; a failed build has markers, no manifest.

Each fault is real: the input file is really rewritten while the build reads it, the disk really
fills (a tmpfs mounted for the test), the file-size limit is really reached (RLIMIT_FSIZE in a
child). Tests that need a mount or a limit skip cleanly where the machine does not allow them.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
import zlib
from contextlib import suppress
from pathlib import Path

import pytest
import sentencepiece as spm
import zstandard

from mintdim import errors, open_build
from mintdim.build import runtime
from mintdim.build.formats.layout import UNIT_BUILD_FAILED
from mintdim.build.source import jsonl
from mintdim.build.write.dir import OutputDirectory
from mintdim.check.verify import verify_build
from tests.unit_build.helpers import job, tree_bytes, write_jsonl

SIZES = [8, 16, 32, 64]


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


def test_a_disk_that_fills_while_rows_are_packed_is_a_named_error(
    cwd, sp_model, small_disk, monkeypatch
):
    """A packed build writes its rows at the end: a disk full then (filled for real just before)
    is the same named error, every unit marked, no manifest, and resume builds it whole."""
    from mintdim.build.write import packed

    disk = small_disk("2m")
    write_jsonl("data.jsonl", _rows(200, words=30))
    out = disk / "out"
    declared = job(["data.jsonl"], sp_model, sizes=[[64, 1024]], samples_per_shard=[20],
                   out=str(out)).units(sizes=[[64, 1024]], build_batch=[4], pack=True)  # fmt: skip
    finish = packed.PackedUnitWriter.finish
    filler = disk / "filler"

    def fill_then_finish(self, sample_ids):
        with open(filler, "ab") as handle, suppress(OSError):
            while True:
                handle.write(bytes(64 << 10))
                handle.flush()
        return finish(self, sample_ids)

    monkeypatch.setattr(packed.PackedUnitWriter, "finish", fill_then_finish)
    with pytest.raises(errors.BuildWriteError) as caught:
        declared.run(workers=1)
    assert (caught.value.reason, caught.value.directory) == ("disk_full", str(out))
    _assert_failed_build(out, "BuildWriteError", sizes=[64, 1024])
    monkeypatch.setattr(packed.PackedUnitWriter, "finish", finish)
    filler.unlink()
    declared.run(workers=1, resume=True)
    assert verify_build(out).ok and len(open_build(out)) == 200


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
    monkeypatch.setattr(jsonl, "READ_BLOCK", 1 << 20)
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


# ---------------------------------------------------------------------------
# Damaged or mislabelled inputs in the other formats (compressed JSONL, Parquet)
# ---------------------------------------------------------------------------


def _packed(name: str, rows: list[object], compress) -> tuple[Path, bytes]:
    """``rows`` as JSONL compressed by ``compress`` into ``name``; returns it and the plain bytes."""
    plain = write_jsonl(name + ".plain", rows)
    data = plain.read_bytes()
    plain.unlink()
    Path(name).write_bytes(compress(data))
    return Path(name), data


def _gzip_members(data: bytes) -> bytes:
    half = len(data) // 2
    return gzip.compress(data[:half]) + gzip.compress(data[half:])


def _zstd_frames(data: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor()
    half = len(data) // 2
    return compressor.compress(data[:half]) + compressor.compress(data[half:])


@pytest.mark.parametrize(
    ("suffix", "compress", "code"),
    [("gz", _gzip_members, "gzip"), ("zst", _zstd_frames, "zstd")],
)
@pytest.mark.parametrize("workers", [1, 2])
def test_a_truncated_stream_names_the_last_whole_line(
    cwd, sp_model, suffix, compress, code, workers
):
    path, data = _packed(f"data.jsonl.{suffix}", _rows(400, words=30), compress)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) * 3 // 4])  # the second member or frame cut short
    # What the damaged file still gives, by the library itself: the lines before the cut.
    readable = _readable_prefix(path, suffix)
    assert 0 < len(readable) < len(data)
    with pytest.raises(errors.CompressedStreamError) as caught:
        job([str(path)], sp_model, sizes=[SIZES], build_batch=[16]).run(
            workers=workers, piece_bytes=3000
        )
    err = caught.value
    assert (err.file, err.compression, err.problem) == (str(path), code, "truncated")
    assert err.last_line == readable.count(b"\n")
    assert f"{err.last_line}" in err.message("en") and f"{err.last_line}" in err.message("vi")
    _assert_failed_build(cwd / "out", "CompressedStreamError")
    # Every whole line before the cut was built: the records written are exactly theirs.
    rows = [line for line in readable.split(b"\n")[: err.last_line] if line.strip()]
    assert sum(1 for _ in (cwd / "out").glob("unit_*/shard_*.bin")) > 0
    assert _staged_samples(cwd / "out") == len(rows)


def _readable_prefix(path: Path, suffix: str) -> bytes:
    """The whole lines the library decompresses from a damaged file given all at once: gzip
    member by member (zlib), zstandard frame by frame (python-zstandard's reader, which ends
    quietly at the cut)."""
    damaged = path.read_bytes()
    if suffix == "gz":
        first = zlib.decompressobj(31)
        data = first.decompress(damaged)
        data += zlib.decompressobj(31).decompress(first.unused_data)
    else:
        reader = zstandard.ZstdDecompressor().stream_reader(damaged, read_across_frames=True)
        data = reader.read()
    return data[: data.rfind(b"\n") + 1]


def _staged_samples(out: Path) -> int:
    """Samples in the fragments a failed build staged (its batches, read back)."""
    import pickle

    from mintdim.build.batch import EncodedBatch

    count = 0
    for fragment in sorted((out / "staging").glob("*.fragment")):
        with open(fragment, "rb") as handle:
            while True:
                try:
                    item = pickle.load(handle)
                except Exception:  # noqa: BLE001 - the marker after the batches ends them
                    break
                if isinstance(item, EncodedBatch):
                    count += item.sample_count
    return count


@pytest.mark.parametrize(
    ("suffix", "compress", "code"),
    [("gz", _gzip_members, "gzip"), ("zst", _zstd_frames, "zstd")],
)
def test_corrupt_bytes_and_trailing_garbage_are_named(cwd, sp_model, suffix, compress, code):
    path, data = _packed(f"data.jsonl.{suffix}", _rows(300, words=30), compress)
    whole = path.read_bytes()
    middle = len(whole) // 2 + 40
    corrupt = (
        whole[:middle] + bytes(b ^ 0x5A for b in whole[middle : middle + 64]) + whole[middle + 64 :]
    )
    for name, damaged in [("corrupt", corrupt), ("trailing", whole + b"not a member")]:
        path.write_bytes(damaged)
        with pytest.raises(errors.CompressedStreamError) as caught:
            job([str(path)], sp_model, sizes=[SIZES], out=name).run(workers=2)
        err = caught.value
        assert (err.compression, err.problem) == (code, "corrupt"), name
        assert err.detail
        # Trailing bytes: every line was read, only the bytes after the stream are bad.
        lines = data.count(b"\n")
        assert err.last_line == lines if name == "trailing" else err.last_line < lines
        _assert_failed_build(cwd / name, "CompressedStreamError")


# What follows the last member, codec by codec: MintDim's verdict (True: read, False: refused)
# and the reference tool's exit status on the same file. Zero padding is read where the tool
# reads it; other bytes are refused even where the tool only warns (gzip -t: status 2 "trailing
# garbage ignored"; bzip2 -t: status 0 "trailing garbage after EOF ignored"), since they may be
# a damaged next member whose records would be lost without a word. docs/sources.md has the table.
TRAILING = {
    # codec: (compress, tool, {tail: (MintDim reads it, the tool's status)})
    "gz": (
        lambda data: gzip.compress(data, mtime=0),
        ["gzip", "-t"],
        {
            "zeros512": (True, 0),
            "zeros3": (True, 0),
            "garbage": (False, 2),
            "zeros8_stream": (False, 2),
        },
    ),
    "xz": (
        lzma.compress,
        ["xz", "-t"],
        {
            "zeros512": (True, 0),
            "zeros3": (False, 1),
            "garbage": (False, 1),
            "zeros8_stream": (True, 0),
        },
    ),
    "bz2": (
        bz2.compress,
        ["bzip2", "-t"],
        {
            "zeros512": (True, 0),
            "zeros3": (True, 0),
            "garbage": (False, 0),
            "zeros8_stream": (False, 0),
        },
    ),
    "zst": (
        lambda data: zstandard.ZstdCompressor().compress(data),
        ["zstd", "-q", "-t"],
        {
            "zeros512": (False, 1),
            "zeros3": (False, 1),
            "garbage": (False, 1),
            "zeros8_stream": (False, 1),
        },
    ),
}
TAILS = {"zeros512": bytes(512), "zeros3": bytes(3), "garbage": b"xy", "zeros8_stream": bytes(8)}
"""What follows the stream; ``zeros8_stream``: eight zeros, then the same stream again."""


@pytest.mark.parametrize("codec", list(TRAILING))
def test_trailing_bytes_are_read_as_the_reference_tools_read_them(cwd, sp_model, codec):
    compress, tool, verdicts = TRAILING[codec]
    path, data = _packed(f"data.jsonl.{codec}", _rows(50, words=5), compress)
    stream = path.read_bytes()
    lines = data.count(b"\n")
    for tail, (reads, status) in verdicts.items():
        again = stream if tail == "zeros8_stream" else b""
        path.write_bytes(stream + TAILS[tail] + again)
        out = f"out-{tail}"
        build = job([str(path)], sp_model, sizes=[SIZES], out=out)
        if reads:
            build.run(workers=1, progress=False)
            assert len(open_build(out)) == lines * (2 if again else 1), tail
        else:
            with pytest.raises(errors.CompressedStreamError) as caught:
                build.run(workers=1, progress=False)
            assert caught.value.problem in ("corrupt", "trailing"), tail
            assert caught.value.last_line == lines, tail  # every record was read first
        if shutil.which(tool[0]):
            found = subprocess.run([*tool, str(path)], capture_output=True, check=False)
            assert found.returncode == status, (tail, found.stderr)


def test_a_bad_line_before_a_damaged_stream_is_the_error_named(cwd, sp_model):
    rows = _rows(300, words=30)
    rows[20] = "not json"
    path, _ = _packed("data.jsonl.gz", rows, _gzip_members)
    path.write_bytes(path.read_bytes()[:-100])
    for workers in (1, 2):
        with pytest.raises(errors.SourceParseError) as caught:
            job([str(path)], sp_model, sizes=[SIZES], out=f"out{workers}").run(
                workers=workers, piece_bytes=500
            )
        assert caught.value.line == 21


def test_a_truncated_stream_fixed_then_resumed_builds_the_whole_file(cwd, sp_model):
    rows = _rows(500, words=30)
    path, _ = _packed("data.jsonl.zst", rows, _zstd_frames)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 50])
    declared = job([str(path)], sp_model, sizes=[SIZES], build_batch=[8])
    with pytest.raises(errors.CompressedStreamError):
        declared.run(workers=2, piece_bytes=2000)
    path.write_bytes(whole)  # downloaded again
    declared.run(workers=1, resume=True)
    job([str(path)], sp_model, sizes=[SIZES], build_batch=[8], out="fresh").run(
        workers=1, piece_bytes=2000
    )
    assert tree_bytes("out") == tree_bytes("fresh")
    assert verify_build("out", deep=True).ok


@pytest.mark.parametrize(
    ("name", "content", "claimed", "found", "by"),
    [
        ("data.jsonl.gz", b'{"text": "the model"}\n', "gzip", "plain", "extension"),
        ("data.jsonl.zst", gzip.compress(b'{"text": "a"}\n', mtime=0), "zstd", "gzip", "extension"),
        ("data.jsonl.bz2", lzma.compress(b'{"text": "a"}\n'), "bz2", "xz", "extension"),
        ("data.parquet", b'{"text": "the model"}\n', "parquet", "plain", "extension"),
        ("rows.jsonl", b"PAR1" + bytes(20) + b"PAR1", "plain", "parquet", "step"),
    ],
    ids=[
        "plain-named-gz",
        "gzip-named-zst",
        "xz-named-bz2",
        "plain-named-parquet",
        "parquet-as-jsonl",
    ],
)
def test_a_file_not_in_the_format_it_claims_is_refused_before_any_work(
    cwd, sp_model, name, content, claimed, found, by
):
    Path(name).write_bytes(content)
    with pytest.raises(errors.SourceFormatError) as caught:
        job([name], sp_model).run(workers=1)
    assert caught.value.facts() == {"file": name, "claimed": claimed, "found": found, "by": by}
    assert caught.value.message("vi").splitlines()[0] == "SourceFormatError:"
    assert name in caught.value.message("vi")
    assert not (cwd / "out").exists()


def test_parquet_declared_for_a_file_that_is_not_parquet(cwd, sp_model):
    Path("data.jsonl").write_bytes(gzip.compress(b'{"text": "a"}\n'))
    with pytest.raises(errors.SourceFormatError) as caught:
        job(["data.jsonl"], sp_model, source="parquet").run(workers=1)
    assert (caught.value.claimed, caught.value.found, caught.value.by) == (
        "parquet",
        "gzip",
        "step",
    )
    assert not (cwd / "out").exists()


@pytest.mark.parametrize(
    ("columns", "field", "problem", "found_type"),
    [
        ({"text": ["a", "b"]}, "answer", "missing", ""),
        (
            {"text": ["a", "b"], "answer": [["x"], ["y"]]},
            "answer",
            "nested",
            "list<element: string>",
        ),
        (
            {"text": ["a", "b"], "answer": [{"k": "x"}, {"k": "y"}]},
            "answer",
            "nested",
            "struct<k: string>",
        ),
    ],
    ids=["missing", "list", "struct"],
)
def test_a_parquet_file_without_the_declared_field_is_refused_before_any_work(
    cwd, sp_model, columns, field, problem, found_type
):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table(columns), "data.parquet")
    declared = job(
        ["data.parquet"], sp_model, fields=[["text", field]], templates=[f"{{text}} {{{field}}}"],
        source="parquet",
    )  # fmt: skip
    with pytest.raises(errors.ParquetSchemaError) as caught:
        declared.run(workers=1)
    err = caught.value
    assert (err.file, err.field, err.problem, err.found_type) == (
        "data.parquet",
        field,
        problem,
        found_type,
    )
    assert err.columns == list(columns)
    for lang in ("en", "vi"):
        assert all(f"- {name}" in err.message(lang) for name in columns)
    assert not (cwd / "out").exists()


@pytest.mark.parametrize("cut", ["footer", "magic"])
def test_an_unreadable_parquet_footer_is_named_before_any_work(cwd, sp_model, cut):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"text": ["the model"] * 100}), "data.parquet")
    data = Path("data.parquet").read_bytes()
    # Cut short (a download that stopped), or the footer's bytes damaged.
    damaged = data[: len(data) // 2] if cut == "footer" else data[:-12] + bytes(8) + data[-4:]
    Path("data.parquet").write_bytes(damaged)
    with pytest.raises(errors.ParquetReadError) as caught:
        job(["data.parquet"], sp_model, source="parquet").run(workers=1)
    assert (caught.value.file, caught.value.part) == ("data.parquet", "footer")
    assert caught.value.detail
    assert "data.parquet" in caught.value.message("vi")
    assert not (cwd / "out").exists()
