"""Compressed JSONL: gzip, zstandard, xz and bzip2 files read as the plain JSONL they hold.

Every file here is really compressed (the standard library, python-zstandard, and the command
line tools when installed), and every build is compared with the build of the same lines from
the plain file: byte-identical but for the input's name, for any worker count, piece size,
build_batch, resume and a build that stages nothing. Line numbers are lines of the decompressed
stream. Damaged streams are in test_faults.py.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
import zstandard

from mintdim import errors
from mintdim.build.contracts import FilePlan
from mintdim.build.pieces import cut_pieces
from mintdim.build.source import compressed
from mintdim.check.verify import verify_build as mintdim_verify
from tests.unit_build.helpers import (
    Expected,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    tree_bytes,
    tree_bytes_but_source_names,
    verify_build,
    write_jsonl,
)

SIZES = [8, 16, 32, 64]


def _rows(count: int) -> list[object]:
    """Samples with blank lines, a CRLF line, duplicates and non-ASCII text."""
    words = ["the model", "a unit", "padding is waste", "xin chào thế giới", "tokens ✓ ☃"]
    rows: list[object] = []
    for i in range(count):
        rows.append({"text": f"{words[i % 5]} {i % 37}"})
        if i % 29 == 0:
            rows.append("  ")
        if i % 31 == 0:
            rows.append(b'{"text": "crlf line"}\r')
    return rows


def _gzip_members(data: bytes, cuts: int = 3) -> bytes:
    """``data`` as several gzip members back to back (what `cat a.gz b.gz` makes)."""
    step = max(1, len(data) // cuts)
    return b"".join(gzip.compress(data[i : i + step]) for i in range(0, len(data), step))


def _zstd_frames(data: bytes, cuts: int = 3) -> bytes:
    """``data`` as several zstandard frames, with a skippable frame before each (as pzstd
    writes them)."""
    compressor = zstandard.ZstdCompressor()
    step = max(1, len(data) // cuts)
    skippable = struct.pack("<II", 0x184D2A50, 4) + b"\x00\x01\x02\x03"
    return b"".join(
        skippable + compressor.compress(data[i : i + step]) for i in range(0, len(data), step)
    )


COMPRESSORS = {
    "gz": _gzip_members,
    "zst": _zstd_frames,
    "xz": lambda data: (
        lzma.compress(data[: len(data) // 2]) + lzma.compress(data[len(data) // 2 :])
    ),
    "bz2": lambda data: bz2.compress(data[: len(data) // 2]) + bz2.compress(data[len(data) // 2 :]),
}


def _compressed_copy(plain: Path, suffix: str, name: str | None = None) -> Path:
    target = plain.with_name(name or f"{plain.name}.{suffix}")
    target.write_bytes(COMPRESSORS[suffix](plain.read_bytes()))
    return target


def _build(files: list[str], sp_model, out: str, build_batch: int = 7, **run) -> dict:
    declared = job(
        files, sp_model, sizes=[SIZES], samples_per_shard=[13], build_batch=[build_batch], out=out
    )
    return declared.run(workers=run.pop("workers", 1), **run).outputs[0].stats


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_every_compression_builds_what_the_plain_file_builds(cwd, sp_model, suffix):
    plain = write_jsonl("data/a.jsonl", _rows(300), bom=True)
    packed = _compressed_copy(plain, suffix)
    assert packed.read_bytes()[:2] != plain.read_bytes()[:2]
    _build(["data/a.jsonl"], sp_model, "plain")
    reference = tree_bytes_but_source_names("plain")
    for workers, piece_bytes, batch in [(1, None, 7), (2, 1, 7), (2, 300, 1), (1, 5000, 500)]:
        out = f"out_{workers}_{piece_bytes}"
        _build([str(packed)], sp_model, out, batch, workers=workers, piece_bytes=piece_bytes)
        assert tree_bytes_but_source_names(out) == reference, (workers, piece_bytes, batch)
    rows = read_jsonl(f"{out}/sample_index.jsonl")
    assert {row["source_file"] for row in rows} == {str(packed)}


def test_lines_are_lines_of_the_decompressed_stream(cwd, sp_model):
    rows = [
        {"text": "the"},
        "",
        b'{"text": "model"}\r',
        "   ",
        {"text": "a\u2028unit"},
        {"text": "x"},
    ]
    plain = write_jsonl("data/a.jsonl", rows, bom=True, final_newline=False)
    _compressed_copy(plain, "zst")
    job(["data/a.jsonl.zst"], sp_model, sizes=[SIZES]).run(workers=1)
    expected = [
        Expected("data/a.jsonl.zst", line, text)
        for line, text in [(1, "the"), (3, "model"), (5, "a\u2028unit"), (6, "x")]
    ]
    verify_build("out", expected, reference_encoder(sp_model), SIZES, 100, pad_id=0)
    assert read_json("out/stats.json")["blank_lines"] == 2


def test_a_member_or_frame_per_line_is_read_whole(cwd, sp_model):
    """Extreme multi-member files: one gzip member, one zstandard frame per line."""
    rows = _rows(120)
    plain = write_jsonl("data/a.jsonl", rows)
    lines = plain.read_bytes().splitlines(keepends=True)
    Path("data/a.jsonl.gz").write_bytes(b"".join(gzip.compress(line) for line in lines))
    compressor = zstandard.ZstdCompressor()
    Path("data/a.jsonl.zst").write_bytes(b"".join(compressor.compress(line) for line in lines))
    _build(["data/a.jsonl"], sp_model, "plain")
    for name in ("data/a.jsonl.gz", "data/a.jsonl.zst"):
        out = f"out_{Path(name).suffix}"
        _build([name], sp_model, out, workers=2, piece_bytes=200)
        assert tree_bytes_but_source_names(out) == tree_bytes_but_source_names("plain")


@pytest.mark.parametrize(
    ("tool", "suffix"),
    [(["gzip", "-kn"], "gz"), (["zstd", "-q"], "zst"), (["pzstd", "-q", "-p", "2"], "zst")],
)
def test_files_made_by_the_command_line_tools(cwd, sp_model, tool, suffix):
    if shutil.which(tool[0]) is None:
        pytest.skip(f"{tool[0]} is not installed")
    plain = write_jsonl("data/a.jsonl", _rows(3000))
    subprocess.run([*tool, str(plain)], check=True, capture_output=True)  # pzstd: a skippable
    # frame before its frame
    _build(["data/a.jsonl"], sp_model, "plain")
    _build([f"data/a.jsonl.{suffix}"], sp_model, "packed", workers=2)
    assert tree_bytes_but_source_names("packed") == tree_bytes_but_source_names("plain")


def test_the_format_is_read_from_the_bytes_not_the_name(cwd, sp_model):
    plain = write_jsonl("data/a.jsonl", _rows(50))
    _compressed_copy(plain, "gz", name="gzipped_but_named.jsonl")
    _compressed_copy(plain, "zst", name="zstd_without_extension")
    _build(["data/a.jsonl"], sp_model, "plain")
    for name in ("data/gzipped_but_named.jsonl", "data/zstd_without_extension"):
        out = f"out_{Path(name).name}"
        _build([name], sp_model, out)
        assert tree_bytes_but_source_names(out) == tree_bytes_but_source_names("plain")
        (entry,) = read_json(f"{out}/manifest.json")["source"]["inputs"]
        assert entry["format"] == ("jsonl.gz" if "gzip" in name else "jsonl.zst")


def test_the_manifest_fingerprints_the_file_as_stored_and_names_its_format(cwd, sp_model):
    plain = write_jsonl("data/a.jsonl", _rows(80))
    packed = _compressed_copy(plain, "xz")
    _build(["data/a.jsonl.xz"], sp_model, "out")
    _build(["data/a.jsonl"], sp_model, "plain")
    (entry,) = read_json("out/manifest.json")["source"]["inputs"]
    assert entry == {
        "path": "data/a.jsonl.xz",
        "bytes": packed.stat().st_size,
        "mtime_ns": packed.stat().st_mtime_ns,
        "sha256": hashlib.sha256(packed.read_bytes()).hexdigest(),
        "format": "jsonl.xz",
    }
    # A plain file's manifest names no format: it is the manifest plain builds always had.
    (plain_entry,) = read_json("plain/manifest.json")["source"]["inputs"]
    assert set(plain_entry) == {"path", "bytes", "mtime_ns", "sha256"}


@pytest.mark.parametrize("suffix", ["gz", "zst"])
def test_deep_verify_reads_the_compressed_input_again(cwd, sp_model, suffix):
    plain = write_jsonl("data/a.jsonl", _rows(200))
    packed = _compressed_copy(plain, suffix)
    _build([str(packed)], sp_model, "out", workers=2, piece_bytes=500)
    report = mintdim_verify(cwd / "out", deep=True)
    assert report.ok, report.lines("en")
    # The same lines compressed again in five members or frames (other bytes, same text): the
    # records still hold, the fingerprint of the file as stored does not.
    again = {"gz": _gzip_members, "zst": _zstd_frames}[suffix](plain.read_bytes(), cuts=5)
    assert again != packed.read_bytes()
    packed.write_bytes(again)
    report = mintdim_verify(cwd / "out", deep=True)
    assert [(f.path, f.code) for f in report.failures] == [(str(packed), "deep_fingerprint")]


def test_resume_and_a_streamed_build_give_the_identical_output(cwd, sp_model):
    rows = _rows(400)
    rows[350] = "not json"
    plain = write_jsonl("data/a.jsonl", rows)
    packed = _compressed_copy(plain, "gz")
    with pytest.raises(errors.SourceParseError) as caught:
        _build([str(packed)], sp_model, "out", workers=2, piece_bytes=400)
    assert caught.value.line == plain.read_bytes().split(b"\n").index(b"not json") + 1
    assert len(list(Path("out/staging").glob("*.fragment"))) > 3
    rows[350] = {"text": "fixed"}
    plain = write_jsonl("data/a.jsonl", rows)
    _compressed_copy(plain, "gz")
    _build([str(packed)], sp_model, "out", resume=True)
    _build([str(packed)], sp_model, "fresh", piece_bytes=400)
    _build([str(packed)], sp_model, "streamed", workers=2, resumable=False)
    assert tree_bytes("out") == tree_bytes("fresh") == tree_bytes("streamed")


def test_pieces_of_a_compressed_file_carry_at_most_the_largest_piece(tmp_path, monkeypatch):
    monkeypatch.setattr(compressed, "MAX_CARRIED_BYTES", 1000)
    plain = write_jsonl(tmp_path / "a.jsonl", _rows(600))
    packed = _compressed_copy(plain, "zst")
    plan = FilePlan(
        index=0,
        path=str(packed),
        abs_path=str(packed),
        fields=("text",),
        template=None,
        tokenizer=None,
        sizes=(8,),
        build_batch=4,
        max_line_bytes=1 << 20,
        output_index=0,
        format="jsonl.zst",
    )
    generator = cut_pieces(plan, 1 << 30)
    works = []
    while True:
        try:
            works.append(next(generator))
        except StopIteration as done:
            fingerprint = done.value
            break
    data = plain.read_bytes()
    # The decompressed stream, cut like a plain file with pieces of 1000 bytes, each carried.
    assert b"".join(work.data for work in works) == data
    for work in works:
        piece = work.piece
        assert work.data == data[piece.start : piece.end]
        assert piece.end - piece.start <= 1000 + max(map(len, data.split(b"\n")))
        assert piece.first_line == data[: piece.start].count(b"\n") + 1
        assert piece.sha256 == hashlib.sha256(work.data).hexdigest()
    assert len(works) > 10
    assert fingerprint.sha256 == hashlib.sha256(packed.read_bytes()).hexdigest()
    assert fingerprint.bytes == packed.stat().st_size


def test_the_progress_bar_counts_the_file_as_stored(cwd, sp_model, monkeypatch):
    from mintdim.build.progress import Progress

    plain = write_jsonl("data/a.jsonl", _rows(3000))
    packed = _compressed_copy(plain, "gz")
    advanced: list[int] = []
    real = Progress.advance
    monkeypatch.setattr(
        Progress, "advance", lambda self, n, s, t: (advanced.append(n), real(self, n, s, t))
    )
    _build([str(packed)], sp_model, "out")
    # Each batch counts its share of the compressed bytes (rounded per batch).
    assert sum(advanced) == pytest.approx(packed.stat().st_size, rel=0.02)


def test_scan_and_auto_units_count_the_decompressed_lines(cwd, sp_model):
    plain = write_jsonl("data/a.jsonl", _rows(500))
    packed = _compressed_copy(plain, "bz2")
    counts = {}
    for name in (str(plain), str(packed)):
        declared = job(
            [name], sp_model, sizes="auto", build_batch=[3], out=f"out_{Path(name).suffix}"
        )
        counts[name] = declared.scan(workers=2).token_counts
        declared.units(sizes="auto", build_batch=[11], count=3).run(workers=2, piece_bytes=700)
    assert counts[str(plain)].tolist() == counts[str(packed)].tolist()
    assert tree_bytes_but_source_names("out_.bz2") == tree_bytes_but_source_names("out_.jsonl")
