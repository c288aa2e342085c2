"""Pieces, fragments, assembly and resume on one machine.

The promise: the finished directory is byte-identical whatever the piece size and worker count,
and a build interrupted at any moment (a data error, SIGKILL) resumes from its intact fragments
to the byte-identical result. Piece cuts are checked against a brute-force reading of the file.
"""

from __future__ import annotations

import hashlib
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from mintdim import errors
from mintdim.build import batch as batch_module
from mintdim.build.contracts import FilePlan
from mintdim.build.pieces import cut_pieces, default_piece_bytes
from mintdim.build.write.staging import MARKER_END, Staging
from mintdim.check.verify import verify_build
from tests.conftest import corpora_file
from tests.unit_build.helpers import job, read_json, tree_bytes, write_jsonl
from tests.waiting import children, wait_for, wait_for_exit

SIZES = [8, 16, 32, 64]


def _file_plan(path: Path) -> FilePlan:
    # Cutting reads only the path: the other facts are never looked at.
    return FilePlan(
        index=0,
        path=str(path),
        abs_path=str(path.resolve()),
        fields=("text",),
        template=None,
        tokenizer=None,
        sizes=(8,),
        build_batch=4,
        output_index=0,
        max_line_bytes=1 << 20,
    )


def _cut(path: Path, piece_bytes: int):
    generator = cut_pieces(_file_plan(path), piece_bytes)
    pieces = []
    while True:
        try:
            pieces.append(next(generator).piece)
        except StopIteration as done:
            return pieces, done.value


@pytest.mark.parametrize("piece_bytes", [1, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("tail", [b"\n", b"", b"\n\n"])
def test_pieces_tile_the_file_at_the_first_line_end_past_each_multiple(tmp_path, piece_bytes, tail):
    lines = [b"\xef\xbb\xbf" + b'{"text":"a"}'] + [b"x" * (i * 13 % 150) for i in range(60)]
    data = b"\n".join(lines) + tail
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    pieces, fingerprint = _cut(path, piece_bytes)

    # Brute force: for each multiple of piece_bytes, the end of the line holding its last byte
    # before it; a line spanning several multiples is one piece.
    ends: list[int] = []
    for multiple in range(piece_bytes, len(data), piece_bytes):
        newline = data.find(b"\n", multiple - 1)
        if newline >= 0 and (not ends or newline + 1 > ends[-1]):
            ends.append(newline + 1)
    if not ends or ends[-1] < len(data):
        ends.append(len(data))
    assert [(p.start, p.end) for p in pieces] == list(zip([0, *ends[:-1]], ends, strict=True))
    for number, piece in enumerate(pieces):
        chunk = data[piece.start : piece.end]
        assert piece.number == number
        assert piece.first_line == data[: piece.start].count(b"\n") + 1
        assert piece.sha256 == hashlib.sha256(chunk).hexdigest()
    assert (fingerprint.bytes, fingerprint.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert fingerprint.mtime_ns == path.stat().st_mtime_ns


def test_the_default_piece_size_depends_on_the_input_size_only():
    assert default_piece_bytes(0) == 1 << 20
    assert default_piece_bytes(150 << 20) == 1 << 20
    assert default_piece_bytes(10 << 30) == 16 << 20
    assert default_piece_bytes(1 << 40) == 256 << 20


def _rows(count: int) -> list[object]:
    """Samples with cross-piece duplicates, UNK, blank lines and a long sample in the middle."""
    words = ["the model", "a unit", "padding is waste", "xin chào thế giới", "tokens ✓ ☃"]
    rows: list[object] = []
    for i in range(count):
        rows.append({"text": f"{words[i % 5]} {i % 37}"})
        if i % 41 == 0:
            rows.append("   ")
    rows[count // 2] = {"text": " ".join(words)}
    return rows


def _build(out: str, workers: int, piece_bytes: int | None, files=("data/a.jsonl",), **more):
    return job(
        list(files),
        more.pop("tokenizer"),
        sizes=[SIZES] * len(files),
        samples_per_shard=[7] * len(files),
        build_batch=[5] * len(files),
        out=out,
    ).run(workers=workers, piece_bytes=piece_bytes, **more)


def test_byte_identical_for_every_piece_size_and_worker_count(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows(400), bom=True)
    write_jsonl("data/b.jsonl", _rows(90), final_newline=False)
    files = ("data/a.jsonl", "data/b.jsonl")
    _build("ref", 1, None, files, tokenizer=sp_model)
    reference = tree_bytes("ref")
    assert "staging" not in {Path(name).parts[0] for name in reference}
    for workers, piece_bytes in [(1, 1), (2, 1), (2, 37), (2, 500), (1, 4096)]:
        out = f"out_{workers}_{piece_bytes}"
        _build(out, workers, piece_bytes, files, tokenizer=sp_model)
        assert tree_bytes(out) == reference, (workers, piece_bytes)


@pytest.mark.corpora
def test_not_resumable_streams_to_the_identical_output_and_stages_nothing(
    cwd, sp_model, monkeypatch
):
    write_jsonl("data/a.jsonl", _rows(400), bom=True)
    write_jsonl("data/b.jsonl", _rows(90), final_newline=False)
    files = ("data/a.jsonl", "data/b.jsonl")
    _build("ref", 2, 300, files, tokenizer=sp_model)
    staged: list[object] = []
    monkeypatch.setattr(Staging, "write", lambda *args: staged.append(args))
    monkeypatch.setattr(Staging, "begin", lambda *args: staged.append(args))
    for workers in (1, 2):
        out = f"stream_{workers}"
        _build(out, workers, None, files, tokenizer=sp_model, resumable=False)
        assert tree_bytes(out) == tree_bytes("ref"), workers
    assert staged == []


def test_a_failed_build_that_was_not_resumable_cannot_resume(cwd, sp_model):
    rows = _rows(200)
    rows[150] = "not json"
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.SourceParseError) as staged:
        _build("staged", 2, 100, tokenizer=sp_model)
    with pytest.raises(errors.SourceParseError) as failed:
        _build("out", 2, None, tokenizer=sp_model, resumable=False)
    assert failed.value.facts() == staged.value.facts() and failed.value.line == 151
    assert not Path("out/staging").exists() and not Path("out/manifest.json").exists()
    with pytest.raises(errors.OutputValidationError) as refused:
        _build("out", 1, None, tokenizer=sp_model, resume=True)
    assert refused.value.problem == "not_resumable"


def test_byte_identical_on_a_real_corpus_and_tokenizer(cwd):
    data = corpora_file("datasets/xquad_vi.jsonl")
    tokenizer = corpora_file("tokenizers/bert-base-uncased.tokenizer.json")
    first = data.read_bytes().split(b"\n")[:300]
    Path("data").mkdir()
    Path("data/a.jsonl").write_bytes(b"\n".join(first) + b"\n")

    def build(out: str, workers: int, piece_bytes: int | None) -> None:
        job(
            ["data/a.jsonl"],
            str(tokenizer),
            fields=[["context", "question"]],
            templates=["{context} - {question}"],
            sizes=[[256, 512, 1024, 8192]],
            build_batch=[64],
            out=out,
            samples_per_shard=[50],
        ).run(workers=workers, piece_bytes=piece_bytes)

    build("ref", 1, None)
    build("pieces", 2, 4000)
    assert tree_bytes("pieces") == tree_bytes("ref")


def test_resume_after_a_bad_line_reuses_the_pieces_before_it(cwd, sp_model, monkeypatch):
    rows = _rows(300)
    rows[250] = '{"text": "broken'
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.SourceParseError) as caught:
        _build("out", 2, 200, tokenizer=sp_model)
    bad_line = caught.value.line
    assert Path("data/a.jsonl").read_bytes().split(b"\n")[bad_line - 1] == b'{"text": "broken'
    assert not Path("out/manifest.json").exists()
    staged = sorted(p.name for p in Path("out/staging").glob("*.fragment"))
    assert len(staged) > 5

    rows[250] = '{"text": "fixed"}'  # the same length: no later piece moves
    write_jsonl("data/a.jsonl", rows)
    encoded = _count_encoded_batches(monkeypatch)
    _build("out", 1, None, tokenizer=sp_model, resume=True)  # the staged piece size is used
    resumed = list(encoded)
    encoded.clear()
    _build("fresh", 1, 200, tokenizer=sp_model)  # the same input file, unchanged since
    assert tree_bytes("out") == tree_bytes("fresh")
    # The pieces before the bad line were reused; its own piece was encoded again.
    assert 1 < min(resumed) <= bad_line
    assert len(resumed) < len(encoded)


def _count_encoded_batches(monkeypatch) -> list[int]:
    """Record each batch the encoder encodes in this process (workers=1)."""
    calls: list[int] = []
    real = batch_module.BatchEncoder.__call__

    def counting(self, raw):
        calls.append(raw.first_line)
        return real(self, raw)

    monkeypatch.setattr(batch_module.BatchEncoder, "__call__", counting)
    return calls


_KILLED_BUILD = """
import sys
from tests.unit_build.helpers import hold_after, job
hold_after(40, "held")
job(["data/a.jsonl"], sys.argv[1], sizes=[[8, 16, 32, 64]], samples_per_shard=[7],
    build_batch=[5], out="out").run(workers=2, piece_bytes=100)
"""


def test_resume_after_the_build_was_sigkilled(cwd, sp_model, monkeypatch):
    write_jsonl("data/a.jsonl", _rows(1000))
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_BUILD, str(sp_model)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    try:
        wait_for(Path("held").exists, "the build held after 40 pieces", child)
        workers = children(child.pid)
        assert len(workers) == 2
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # The forked workers die with their parent (PR_SET_PDEATHSIG), perhaps mid-piece.
    assert not wait_for_exit(workers), "workers outlived the killed build"
    assert not Path("out/manifest.json").exists()
    assert len(list(Path("out/staging").glob("*.fragment"))) >= 40

    encoded = _count_encoded_batches(monkeypatch)
    _build("out", 1, None, tokenizer=sp_model, resume=True)
    resumed = len(encoded)
    _build("ref", 1, 100, tokenizer=sp_model)
    assert tree_bytes("out") == tree_bytes("ref")
    assert resumed < len(encoded) - resumed  # the resumed build re-encoded less than a whole one


_KILLED_WHILE_TIDYING = """
import os, signal, sys
from mintdim.build.write.staging import Staging
from tests.unit_build.helpers import job
Staging.remove = lambda self: os.kill(os.getpid(), signal.SIGKILL)  # the first removal dies
job(["data/a.jsonl", "data/b.jsonl"], sys.argv[1], sizes=[[8, 16, 32, 64]] * 2,
    samples_per_shard=[7] * 2, build_batch=[5] * 2, out=["out/a", "out/b"]).run(
    workers=2, piece_bytes=100)
"""


def test_a_build_killed_while_removing_its_fragments_is_complete_and_resume_tidies_it(
    cwd, sp_model, monkeypatch
):
    write_jsonl("data/a.jsonl", _rows(300))
    write_jsonl("data/b.jsonl", _rows(120))
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_TIDYING, str(sp_model)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert child.returncode == -signal.SIGKILL
    files = ("data/a.jsonl", "data/b.jsonl")
    _build(["ref/a", "ref/b"], 1, 100, files, tokenizer=sp_model)
    for name in ("a", "b"):  # every manifest was written before any fragment was removed
        assert Path(f"out/{name}/manifest.json").is_file()
        assert Path(f"out/{name}/staging/job.json").is_file()
        report = verify_build(f"out/{name}")
        assert [(f.path, f.code) for f in report.failures] == [("staging", "staging")]
        assert "resume=True" in report.lines("en")[0] and "resume=True" in report.lines("vi")[0]

    other = job(list(files), sp_model, sizes=[SIZES] * 2, templates=["the {text}"] * 2,
                samples_per_shard=[7] * 2, build_batch=[5] * 2, out=["out/a", "out/b"])  # fmt: skip
    with pytest.raises(errors.ResumeMismatchError):  # the fragments still guard their job
        other.run(workers=1, resume=True)
    encoded = _count_encoded_batches(monkeypatch)
    result = _build(["out/a", "out/b"], 1, None, files, tokenizer=sp_model, resume=True)
    assert encoded == []  # complete: nothing read, nothing encoded, only the fragments removed
    for name in ("a", "b"):
        assert tree_bytes(f"out/{name}") == tree_bytes(f"ref/{name}")
        assert verify_build(f"out/{name}").ok
    assert [o.stats for o in result.outputs] == [read_json(f"ref/{n}/stats.json") for n in "ab"]


def _marker_of(fragment: Path) -> dict:
    """The marker closing a fragment: JSON, then its length and MARKER_END (output/staging.py)."""
    data = fragment.read_bytes()
    length, end = struct.unpack("<Q8s", data[-16:])
    assert end == MARKER_END
    return orjson.loads(data[-16 - length : -16])


def _flip(data: bytes, at: int) -> bytes:
    damaged = bytearray(data)
    damaged[at] ^= 0xFF
    return bytes(damaged)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: _flip(data, len(data) // 3),  # in a batch
        lambda data: _flip(data, len(data) - 30),  # in its marker
        lambda data: _flip(data, len(data) - 1),  # in the marker's end
        lambda data: data[:-1],  # cut short: a power loss took its end
        lambda data: data[: len(data) // 2],
        lambda data: b"",
    ],
    ids=["batch", "marker", "marker-end", "cut-1", "cut-half", "empty"],
)
def test_a_damaged_fragment_is_encoded_again_on_resume(cwd, sp_model, damage, monkeypatch):
    rows = _rows(200)
    rows[190] = "not json"
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.SourceParseError):
        _build("out", 1, 300, tokenizer=sp_model)
    fragments = sorted(Path("out/staging").glob("*.fragment"))
    # The first line of the second piece and of the last (the one that failed), from markers.
    second, last = (
        _marker_of(path)["piece"]["first_line"] for path in (fragments[1], fragments[-1])
    )
    fragments[0].write_bytes(damage(fragments[0].read_bytes()))
    rows[190] = {"text": "now json"}
    write_jsonl("data/a.jsonl", rows)
    encoded = _count_encoded_batches(monkeypatch)
    _build("out", 1, None, tokenizer=sp_model, resume=True)
    # The damaged piece and the one that failed (and after) are encoded again, no other.
    assert encoded[0] == 1 and encoded[-1] >= last > second > 1
    assert all(line < second or line >= last for line in encoded)
    _build("ref", 1, 300, tokenizer=sp_model)
    assert tree_bytes("out") == tree_bytes("ref")


def test_resume_refuses_a_finished_build_other_directories_and_other_jobs(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows(50))
    _build("done", 1, None, tokenizer=sp_model, resume=True)  # nothing to resume: a fresh build
    with pytest.raises(errors.OutputValidationError) as finished:
        _build("done", 1, None, tokenizer=sp_model, resume=True)
    assert finished.value.problem == "finished"
    Path("other").mkdir()
    Path("other/notes.txt").write_text("mine")
    with pytest.raises(errors.OutputValidationError) as other:
        _build("other", 1, None, tokenizer=sp_model, resume=True)
    assert other.value.problem == "not_resumable"
    assert Path("other/notes.txt").read_text() == "mine"

    rows = _rows(50)
    rows[40] = "bad"
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.SourceParseError):
        _build("out", 1, 100, tokenizer=sp_model)
    rows[40] = {"text": "ok"}
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.ResumeMismatchError) as mismatch:
        job(
            ["data/a.jsonl"],
            sp_model,
            sizes=[SIZES],
            samples_per_shard=[7],
            templates=["the {text}"],
            out="out",
        ).run(workers=1, resume=True)
    assert mismatch.value.setting == "files[0].template.source"
    assert "files[0].template.source" in mismatch.value.message("vi")


@pytest.mark.parametrize(
    ("options", "option", "rule"),
    [
        ({"executor": "spark"}, "executor", "executor"),
        ({"ray_address": "auto"}, "ray_address", "ray_only"),
        ({"executor": "ray", "ray_address": 5}, "ray_address", "address"),
        ({"resume": "yes"}, "resume", "bool"),
        ({"piece_bytes": 0}, "piece_bytes", "positive_int"),
        ({"resumable": 0}, "resumable", "bool"),
        ({"executor": "ray", "resumable": False}, "resumable", "ray_stages"),
        ({"resume": True, "resumable": False}, "resumable", "resume_stages"),
    ],
)
def test_bad_run_options_are_named(cwd, sp_model, options, option, rule):
    write_jsonl("data/a.jsonl", _rows(5))
    with pytest.raises(errors.RunOptionError) as info:
        job(["data/a.jsonl"], sp_model, sizes=[SIZES]).run(workers=1, **options)
    assert (info.value.option, info.value.rule) == (option, rule)
    assert not Path("out").exists()


@pytest.mark.parametrize(
    ("damage", "reason"),
    [(lambda data: data[:-1], "marker"), (lambda data: _flip(data, 0), "batches")],
    ids=["marker", "batches"],
)
def test_a_fragment_damaged_before_assembly_is_named_and_resume_mends_it(
    cwd, sp_model, monkeypatch, damage, reason
):
    """A fragment changed between its worker's write and the driver's read (another process, a
    failing disk) stops the build with FragmentDamagedError: every unit marked failed, no
    manifest; the same build resumed encodes that piece again."""
    write_jsonl("data/a.jsonl", _rows(200))
    real = Staging.write

    def write_then_damage(self, piece, batches):
        done = real(self, piece, batches)
        if piece.number == 2:
            path = self._fragment(piece)
            path.write_bytes(damage(path.read_bytes()))
        return done

    monkeypatch.setattr(Staging, "write", write_then_damage)
    with pytest.raises(errors.FragmentDamagedError) as caught:
        _build("out", 1, 300, tokenizer=sp_model)
    err = caught.value
    assert (err.reason, err.file) == (reason, "data/a.jsonl")
    assert err.fragment.endswith("staging/000000-000002.fragment")
    assert "resume=True" in err.message("en") and "resume=True" in err.message("vi")
    assert not Path("out/manifest.json").exists()
    units = sorted(Path("out").glob("unit_*"))
    assert units and all((unit / "UNIT_BUILD_FAILED.md").is_file() for unit in units)
    monkeypatch.setattr(Staging, "write", real)
    _build("out", 1, None, tokenizer=sp_model, resume=True)
    _build("ref", 1, 300, tokenizer=sp_model)
    assert tree_bytes("out") == tree_bytes("ref")
