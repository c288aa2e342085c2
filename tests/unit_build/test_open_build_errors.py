"""open_build refuses what is not a whole, known build with a named error naming the file and why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mintdim import BuildReadError, NoSegmentSpansError, NotABuildError, open_build
from tests.unit_build.helpers import job, write_jsonl

WORDS = ["the cat", "a dog runs", "the bird sings a song", "x"]


@pytest.fixture
def built(cwd: Path, sp_model: Path) -> Path:
    """A small finished build of one SentencePiece tokenizer, two shards in its busiest unit."""
    write_jsonl("data/a.jsonl", [{"text": w} for w in WORDS * 3])
    job(["./data/a.jsonl"], sp_model, samples_per_shard=[2]).run(workers=1, progress=False)
    return cwd / "out"


def _edit_manifest(build: Path, change) -> Path:
    path = build / "manifest.json"
    content = json.loads(path.read_text())
    change(content)
    path.write_text(json.dumps(content))
    return path


def _first_shard(build: Path) -> Path:
    return sorted(build.glob("unit_*/shard_*.bin"))[0]


def test_a_directory_without_a_build_names_why(cwd, built):
    with pytest.raises(NotABuildError) as missing:
        open_build(cwd / "nowhere")
    assert missing.value.reason == "missing"
    (cwd / "plain.txt").write_text("x")
    with pytest.raises(NotABuildError) as a_file:
        open_build(cwd / "plain.txt")
    assert a_file.value.reason == "not_directory"
    (built / "manifest.json").unlink()
    with pytest.raises(NotABuildError) as no_manifest:
        open_build(built)
    assert no_manifest.value.reason == "no_manifest"
    assert isinstance(no_manifest.value, FileNotFoundError)


@pytest.mark.parametrize("damage", [b"", b'{"format_version": 2, ', b"[1, 2]", b"\xff\xfe"])
def test_a_corrupt_manifest_names_the_file(built, damage):
    (built / "manifest.json").write_bytes(damage)
    with pytest.raises(BuildReadError) as info:
        open_build(built)
    assert info.value.problem == "manifest_json"
    assert info.value.path == str(built / "manifest.json")
    assert "manifest.json" in info.value.message("vi")


def test_a_manifest_missing_a_needed_field_names_it(built):
    _edit_manifest(built, lambda content: content.pop("token_storage"))
    with pytest.raises(BuildReadError) as info:
        open_build(built)
    assert info.value.problem == "manifest_field"
    assert "token_storage" in info.value.detail


def test_an_unknown_format_version_and_an_incomplete_status_are_refused(built):
    _edit_manifest(built, lambda content: content.update(format_version=99))
    with pytest.raises(BuildReadError) as version:
        open_build(built)
    assert (version.value.problem, version.value.detail) == ("version", "99")
    assert "99" in str(version.value) and "format_version" in version.value.message("vi")

    _edit_manifest(built, lambda content: content.update(format_version=2, status="partial"))
    with pytest.raises(BuildReadError) as status:
        open_build(built)
    assert (status.value.problem, status.value.detail) == ("status", "'partial'")


@pytest.mark.parametrize("cut", [1, 3])
def test_open_build_refuses_a_shard_that_is_not_a_whole_number_of_records(built, cut):
    shard = _first_shard(built)
    data = shard.read_bytes()
    shard.write_bytes(data[:-cut])
    unit = int(shard.parent.name.removeprefix("unit_"))
    with pytest.raises(BuildReadError) as info:
        open_build(built)
    error = info.value
    assert (error.problem, error.path, error.size) == ("short_shard", str(shard), len(data) - cut)
    assert error.record_bytes == unit * 2  # uint16 tokens for the tiny vocabulary
    assert f"mintdim verify {built}" in str(error)
    assert f"{len(data) - cut} byte" in error.message("vi")


def test_open_build_refuses_a_shard_of_another_size_than_listed(built):
    shard = _first_shard(built)
    data = shard.read_bytes()
    unit = int(shard.parent.name.removeprefix("unit_"))
    shard.write_bytes(data[: -unit * 2])  # one whole record less
    with pytest.raises(BuildReadError) as info:
        open_build(built)
    error = info.value
    assert (error.problem, error.path, error.size) == (
        "shard_size",
        str(shard),
        len(data) - unit * 2,
    )
    assert error.listed == len(data)
    assert str(len(data)) in error.message("en") and str(len(data)) in error.message("vi")


def test_a_shard_cut_after_opening_is_named_on_first_use(built):
    build = open_build(built)
    shard = _first_shard(built)
    shard.write_bytes(shard.read_bytes()[:-3])
    with pytest.raises(BuildReadError) as info:
        build.shard(int(shard.parent.name.removeprefix("unit_")), 0)
    assert info.value.problem == "short_shard"


def test_a_missing_shard_and_a_damaged_unit_index_are_named(built):
    shard = _first_shard(built)
    unit = int(shard.parent.name.removeprefix("unit_"))
    data = shard.read_bytes()
    shard.unlink()
    with pytest.raises(BuildReadError) as missing:
        open_build(built)
    assert (missing.value.problem, missing.value.path) == ("missing_file", str(shard))
    shard.write_bytes(data)

    index = shard.parent / "index.npy"
    index.write_bytes(b"not an npy file")
    with pytest.raises(BuildReadError) as damaged:
        open_build(built).unit_index(unit)
    assert (damaged.value.problem, damaged.value.path) == ("unit_index", str(index))


@pytest.mark.parametrize(
    ("offset", "byte"),
    [
        pytest.param(20, b"(", id="paren"),
        pytest.param(30, b'"', id="quote"),
        pytest.param(11, b"{", id="brace"),
        # NumPy parses the header as a Python literal, which warns of the escape the backslash
        # makes ("\i") before it fails: expected here, so it is no warning of the suite's.
        pytest.param(
            60,
            b"\\",
            id="backslash",
            marks=pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning"),
        ),
    ],
)
def test_a_damaged_unit_index_header_is_a_named_error(built, offset, byte):
    """One byte of the .npy header dictionary changed: NumPy's own parser fails in many ways
    (tokenize.TokenError, SyntaxError, ValueError); each is BuildReadError naming the file."""
    index = _first_shard(built).parent / "index.npy"
    unit = int(index.parent.name.removeprefix("unit_"))
    data = bytearray(index.read_bytes())
    data[offset : offset + 1] = byte
    index.write_bytes(bytes(data))
    with pytest.raises(BuildReadError) as damaged:
        open_build(built).unit_index(unit)
    assert (damaged.value.problem, damaged.value.path) == ("unit_index", str(index))
    assert "index.npy" in damaged.value.message("vi")


def test_the_damaged_headers_leave_no_warning_behind(tmp_path):
    """A backslash in the header makes NumPy's parser warn of an invalid escape before it fails:
    expected, and filtered in that test, so the suite's warnings summary shows only real ones."""
    repo = Path(__file__).resolve().parents[2]
    node = f"{Path(__file__).relative_to(repo)}::test_a_damaged_unit_index_header_is_a_named_error"
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            node,
            "-q",
            "-rw",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout
    assert "warning" not in done.stdout.lower(), done.stdout


def test_an_empty_unit_index_is_a_named_error(built):
    index = _first_shard(built).parent / "index.npy"
    index.write_bytes(b"")
    with pytest.raises(BuildReadError) as damaged:
        open_build(built).unit_index(int(index.parent.name.removeprefix("unit_")))
    assert damaged.value.problem == "unit_index"


def test_segments_of_a_build_without_spans_is_a_named_error(built):
    build = open_build(built)
    assert build.sequence_names() is None
    with pytest.raises(NoSegmentSpansError) as info:
        build.segments(0)
    assert info.value.directory == str(built)
    assert 'encode: "whole"' in info.value.message("en")
    assert 'encode: "whole"' in info.value.message("vi")
