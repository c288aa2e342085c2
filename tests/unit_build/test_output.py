"""The output directory: manifest content and checksums, manifest last, creation rules, byte-identical
builds whatever build_batch or worker count, several output directories, and how a build that
fails after it began writing ends (UNIT_BUILD_FAILED.md, no manifest, no process left behind).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import pytest
import sentencepiece as spm

import mintdim
from mintdim import errors
from mintdim.build import runtime
from mintdim.build import workers as workers_module
from mintdim.build.batch import BatchEncoder
from mintdim.build.tokenizer.sentencepiece import SentencePieceEncoder
from mintdim.read.reader import open_build
from mintdim.shared import durable
from tests.unit_build.helpers import (
    OUTPUT_FILES,
    Expected,
    assert_no_worker_left,
    file_sha256,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    sections,
    tree_bytes,
    verify_build,
    write_jsonl,
)
from tests.waiting import wait_for, wait_for_exit

SIZES = [4, 8, 16, 64]


def _rows(count: int) -> list:
    """Varied samples: lengths across every unit, duplicates, UNK, blank lines."""
    words = ["the", "model", "data", "token", "unit", "中", "shard", "build"]
    rows: list = []
    for i in range(count):
        if i % 11 == 5:
            rows.append("")
        elif i % 7 == 3:
            rows.append({"text": "the model"})  # duplicates
        else:
            rows.append({"text": " ".join(words[(i * j) % len(words)] for j in range(i % 23))})
    return rows


# ---------------------------------------------------------------------------
# manifest.json
# ---------------------------------------------------------------------------


def test_manifest_fields_and_shard_checksums(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows(30))
    write_jsonl("data/b.jsonl", [{"q": "the", "a": "model"}])
    job(
        ["./data/a.jsonl", "./data/b.jsonl"],
        sp_model,
        fields=[["text"], ["q", "a"]],
        templates=["{text}", "# {q}:\n{a}"],
        sizes=[SIZES],
        samples_per_shard=[3],
        build_batch=[5, 2],
    ).run(workers=1)
    manifest = read_json("out/manifest.json")
    processor = spm.SentencePieceProcessor(model_file=str(sp_model))
    assert manifest["pipeline"] == "unit-build"
    assert manifest["mintdim_version"] == mintdim.__version__
    assert manifest["status"] == "complete"
    assert manifest["tokenizer"] == {
        **manifest["tokenizer"],
        "type": "sentencepiece",
        "path": str(sp_model),
        "vocab_size": processor.get_piece_size(),
        "unk_id": processor.unk_id(),
        "pad_id": processor.pad_id(),
        "unk_id_source": "sp.unk_id()",
        "pad_id_source": "sp.pad_id()",
        "sha256": file_sha256(sp_model),
    }
    assert manifest["token_storage"]["dtype"] == "uint16"
    assert manifest["token_storage"]["bytes_per_token"] == 2
    assert manifest["units"]["sizes"] == SIZES
    assert manifest["source"] == {
        "files": ["./data/a.jsonl", "./data/b.jsonl"],
        "fields": [["text"], ["q", "a"]],
        "templates": ["{text}", "# {q}:\n{a}"],
        "sequence_templates": [
            [{"kind": "field", "name": "text"}],
            [
                {"kind": "literal", "text": "# "},
                {"kind": "field", "name": "q"},
                {"kind": "literal", "text": ":\n"},
                {"kind": "field", "name": "a"},
            ],
        ],
        "inputs": [
            {
                "path": f"./data/{name}",
                "bytes": os.stat(f"data/{name}").st_size,
                "mtime_ns": os.stat(f"data/{name}").st_mtime_ns,
                "sha256": file_sha256(f"data/{name}"),
            }
            for name in ("a.jsonl", "b.jsonl")
        ],
        "max_line_bytes": 64 << 20,
    }
    assert manifest["output"] == {"samples_per_shard": 3}
    assert manifest["hash"]["algorithm"] == "sha256"
    # Every shard on disk is listed once, with its real size, record count and checksum.
    on_disk = sorted(p.relative_to("out").as_posix() for p in Path("out").glob("unit_*/*.bin"))
    listed = [shard["path"] for shard in manifest["shards"]]
    assert sorted(listed) == on_disk and len(listed) == len(set(listed))
    for shard in manifest["shards"]:
        path = Path("out", shard["path"])
        assert shard["bytes"] == path.stat().st_size
        assert shard["sha256"] == file_sha256(path)
        assert shard["unit_size"] == int(shard["path"].split("/")[0].removeprefix("unit_"))
        assert shard["samples"] == shard["bytes"] // (shard["unit_size"] * 2)
    index = read_jsonl("out/sample_index.jsonl")
    assert sum(s["samples"] for s in manifest["shards"]) == len(index)
    stats = read_json("out/stats.json")
    assert stats["shard_count"] == len(manifest["shards"])
    assert stats["shard_bytes"] == sum(s["bytes"] for s in manifest["shards"])
    assert stats["token_dtype"] == "uint16" and stats["bytes_per_token"] == 2
    spec_and_issue_keys = {
        "total_samples",
        "total_tokens",
        "token_dtype",
        "bytes_per_token",
        "duplicate_groups",
        "duplicate_samples",
        "samples_with_unk",
        "unk_tokens",
        "unit_distribution",
        "blank_lines",
        "total_slots",
        "pad_tokens",
        "padding_ratio",
    }
    assert spec_and_issue_keys <= set(stats)


def test_output_directory_holds_exactly_the_documented_files(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows(20))
    job(["./data/a.jsonl"], sp_model, sizes=[SIZES + [128]]).run(workers=1)
    top = sorted(p.name for p in Path("out").iterdir())
    assert top == sorted([*OUTPUT_FILES, *(f"unit_{s}" for s in SIZES + [128])])
    assert not list(Path("out").rglob(".*"))  # no temporary file left behind
    assert (Path("out") / "unit_128" / "EMPTY_UNIT.md").is_file()


def test_manifest_is_written_last(cwd, sp_model, monkeypatch):
    replaced: list[str] = []
    real_replace = os.replace

    def recording_replace(src, dst, *args, **kwargs):
        replaced.append(Path(dst).name)
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(durable.os, "replace", recording_replace)
    write_jsonl("data/a.jsonl", _rows(20))
    job(["./data/a.jsonl"], sp_model, sizes=[SIZES], samples_per_shard=[2]).run(workers=1)
    assert replaced[-1] == "manifest.json"
    assert replaced.count("manifest.json") == 1
    latest = max(p.stat().st_mtime_ns for p in Path("out").rglob("*") if p.is_file())
    assert Path("out/manifest.json").stat().st_mtime_ns == latest


def test_everything_reaches_the_disk_before_the_manifest(cwd, sp_model, monkeypatch):
    """After a power loss, a manifest on disk must not stand over shards still in the page cache:
    every file and directory is fsynced before manifest.json exists, and its rename after."""
    synced: list[tuple[Path, bool]] = []  # (path, manifest existed at that moment)
    real_fsync = os.fsync

    def recording_fsync(descriptor: int) -> None:
        path = Path(os.readlink(f"/proc/self/fd/{descriptor}"))
        synced.append((path, Path("out/manifest.json").exists()))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    write_jsonl("data/a.jsonl", _rows(40))
    job(["./data/a.jsonl"], sp_model, sizes=[SIZES + [128]], samples_per_shard=[3]).run(workers=1)
    out = Path("out").resolve()
    before = {path for path, manifest_existed in synced if not manifest_existed}
    everything = {p.resolve() for p in out.rglob("*")} | {out, out.parent}
    shards = {p for p in everything if p.suffix == ".bin"}
    assert len(shards) > len(SIZES)  # several shards per unit, all of them covered below
    assert everything - {out / "manifest.json"} <= before
    assert (out, True) in synced  # the manifest's rename itself reached the disk


def test_each_shard_is_fsynced_once_as_it_closes(cwd, sp_model, monkeypatch):
    """Fewer fsyncs, the same promise: a shard reaches the disk when it closes, and the last
    sweep before the manifest does not flush it a second time (a second fsync of a clean file
    can still flush the disk's cache); every other file is flushed by that sweep."""
    synced: list[Path] = []
    real_fsync = os.fsync

    def recording_fsync(descriptor: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{descriptor}")))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    write_jsonl("data/a.jsonl", _rows(40))
    job(["./data/a.jsonl"], sp_model, sizes=[SIZES + [128]], samples_per_shard=[3]).run(workers=1)
    out = Path("out").resolve()
    shards = [p for p in out.rglob("*.bin")]
    assert len(shards) > len(SIZES)
    assert all(synced.count(shard) == 1 for shard in shards)
    assert all(synced.count(out / name) == 1 for name in ("sample_index.jsonl", "unk_index.jsonl"))


def test_no_manifest_when_a_build_fails(cwd, sp_model):
    write_jsonl("data/a.jsonl", [*_rows(20), b"{"])
    with pytest.raises(errors.SourceParseError):
        job(["./data/a.jsonl"], sp_model, sizes=[SIZES]).run(workers=1)
    assert not Path("out/manifest.json").exists()
    with pytest.raises(FileNotFoundError):
        open_build("out")


def test_empty_dataset_has_a_complete_manifest_without_shards(cwd, sp_model):
    write_jsonl("data/a.jsonl", ["", "  "])
    job(["./data/a.jsonl"], sp_model, sizes=[SIZES]).run(workers=1)
    manifest = read_json("out/manifest.json")
    assert (manifest["status"], manifest["shards"]) == ("complete", [])
    assert list(open_build("out").samples()) == []


# ---------------------------------------------------------------------------
# Output directory rules
# ---------------------------------------------------------------------------


def test_missing_output_directory_and_its_parents_are_created(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    result = job(["./data/a.jsonl"], sp_model, out="./deep/er/out").run(workers=1)
    assert result.outputs[0].path == "./deep/er/out"
    assert Path("deep/er/out/manifest.json").is_file()


def test_an_existing_empty_output_directory_is_used(cwd, sp_model):
    Path("out").mkdir()
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    job(["./data/a.jsonl"], sp_model).run(workers=1)
    assert Path("out/manifest.json").is_file()


def test_a_finished_build_is_never_overwritten(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    declared = job(["./data/a.jsonl"], sp_model)
    declared.run(workers=1)
    before = tree_bytes("out")
    with pytest.raises(errors.OutputValidationError) as info:
        declared.run(workers=1)
    assert info.value.problem == "not_empty"
    assert tree_bytes("out") == before


# ---------------------------------------------------------------------------
# Byte-identical outputs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["sp_model", "hf_json"])
def test_byte_identical_for_any_build_batch_and_worker_count(cwd, request, fixture):
    tokenizer = request.getfixturevalue(fixture)
    write_jsonl("data/a.jsonl", _rows(60))
    write_jsonl("data/b.jsonl", _rows(9))
    trees = {}
    for build_batch, workers in [(4096, 1), (1, 1), (7, 1), (1, 2), (7, 3), (4096, 2), (3, 3)]:
        out = f"./out_{build_batch}_{workers}"
        job(
            ["./data/a.jsonl", "./data/b.jsonl"],
            tokenizer,
            sizes=[SIZES],
            samples_per_shard=[4],
            build_batch=[build_batch],
            out=out,
        ).run(workers=workers)
        trees[(build_batch, workers)] = tree_bytes(out)
    reference = trees[(4096, 1)]
    assert len(reference) > len(OUTPUT_FILES) + 4
    for key, tree in trees.items():
        assert tree.keys() == reference.keys(), key
        for name in reference:
            assert tree[name] == reference[name], (key, name)
    assert_no_worker_left()


def test_two_builds_of_the_same_job_are_identical(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows(40))
    declared = job(["./data/a.jsonl"], sp_model, sizes=[SIZES], samples_per_shard=[5])
    declared.run(workers=2)
    shutil.move("out", "first")
    declared.run(workers=2)
    assert tree_bytes("out") == tree_bytes("first")


# ---------------------------------------------------------------------------
# Several output directories
# ---------------------------------------------------------------------------


def test_each_output_directory_has_its_own_ids_and_files(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the model"}, {"text": "a unit"}])
    write_jsonl("data/b.jsonl", [{"text": "data"}, "", {"text": "the model"}])
    write_jsonl("data/c.jsonl", [{"text": "shard"}])
    result = job(
        ["./data/a.jsonl", "./data/b.jsonl", "./data/c.jsonl"],
        sp_model,
        sizes=[[8], [4, 8], [8]],
        samples_per_shard=[1, 2, 1],
        out=["./o1", "./o2", "./o1"],
    ).run(workers=2)
    assert [o.path for o in result.outputs] == ["./o1", "./o2"]
    encode = reference_encoder(str(sp_model))
    verify_build(
        "o1",
        [
            Expected("./data/a.jsonl", 1, "the model"),
            Expected("./data/a.jsonl", 2, "a unit"),
            Expected("./data/c.jsonl", 1, "shard"),
        ],
        encode,
        [8],
        1,
        pad_id=0,
    )
    verify_build(
        "o2",
        [Expected("./data/b.jsonl", 1, "data"), Expected("./data/b.jsonl", 3, "the model")],
        encode,
        [4, 8],
        2,
        pad_id=0,
    )
    assert read_json("o1/manifest.json")["source"]["files"] == ["./data/a.jsonl", "./data/c.jsonl"]
    assert read_json("o2/manifest.json")["source"]["files"] == ["./data/b.jsonl"]
    assert [o.stats["total_samples"] for o in result.outputs] == [3, 2]
    assert result.outputs[1].stats["blank_lines"] == 1


# ---------------------------------------------------------------------------
# Failure after writing began
# ---------------------------------------------------------------------------


def _message(error: BaseException, lang: str) -> str:
    if isinstance(error, errors.MintDimError):
        return error.message(lang)
    return f"{type(error).__name__}: {error}"


def _assert_failed(out: str, error: BaseException, sizes=SIZES) -> None:
    root = Path(out)
    assert root.is_dir()
    assert not (root / "manifest.json").exists()
    assert not (root / "stats.json").exists()
    for size in sizes:
        unit = root / f"unit_{size}"
        text = (unit / "UNIT_BUILD_FAILED.md").read_text(encoding="utf-8")
        if isinstance(error, errors.MintDimError):
            assert error.message("en") in text
            assert error.message("vi") in text
        english, vietnamese = text.split("\n\n# Build unit thất bại\n\n")
        assert english.startswith("# Unit build failed\n\n")
        assert english.endswith(f"```text\n{_message(error, 'en')}\n```")
        assert vietnamese.endswith(f"```text\n{_message(error, 'vi')}\n```\n")
        assert not (unit / "EMPTY_UNIT.md").exists()
    with pytest.raises(FileNotFoundError):
        open_build(out)


@pytest.mark.parametrize("workers", [1, 2])
def test_overflow_in_the_second_batch(cwd, sp_model, mintdim_lines, workers):
    rows = [{"text": "the"}] * 4 + [{"text": "the model"}, {"text": "the " * 70}]
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.UnitOverflowError) as info:
        job(
            ["./data/a.jsonl"], sp_model, sizes=[SIZES], build_batch=[4], samples_per_shard=[2]
        ).run(workers=workers)
    err = info.value
    assert (err.line, err.max_unit_size) == (6, 64)
    # Writing had begun: the first batch's shards were closed and reported.
    assert "[unit-build] shard=000000 samples=2 bytes=16 B unit=4" in mintdim_lines()
    assert sorted(p.name for p in Path("out/unit_4").glob("*.bin"))
    _assert_failed("out", err)
    assert_no_worker_left()


def test_failure_marks_every_output_directory(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the"}])
    write_jsonl("data/b.jsonl", [{"text": "the"}, {"text": 5}])
    with pytest.raises(errors.FieldValueTypeError) as info:
        job(["./data/a.jsonl", "./data/b.jsonl"], sp_model, sizes=[SIZES], out=["o1", "o2"]).run(
            workers=1
        )
    _assert_failed("o1", info.value)
    _assert_failed("o2", info.value)


def test_tokenizer_failure_names_the_sample(cwd, sp_model, monkeypatch):
    """A library failure while encoding (simulated: the library rejects one text) is reported as
    TokenizerEncodeError naming the sample, after the earlier batches were written."""
    encode_batch, encode = SentencePieceEncoder.encode_batch, SentencePieceEncoder.encode

    def failing_batch(self, texts, utf8):
        if "poison" in texts:
            raise RuntimeError("library refused the text")
        return encode_batch(self, texts, utf8)

    def failing_one(self, text):
        if text == "poison":
            raise RuntimeError("library refused the text")
        return encode(self, text)

    monkeypatch.setattr(SentencePieceEncoder, "encode_batch", failing_batch)
    monkeypatch.setattr(SentencePieceEncoder, "encode", failing_one)
    write_jsonl(
        "data/a.jsonl", [{"text": "the"}, {"text": "model"}, {"text": "a"}, {"text": "poison"}]
    )
    with pytest.raises(errors.TokenizerEncodeError) as info:
        job(["./data/a.jsonl"], sp_model, sizes=[SIZES], build_batch=[2]).run(workers=1)
    err = info.value
    assert (err.file, err.line, err.path) == ("./data/a.jsonl", 4, str(sp_model))
    assert err.detail == "library refused the text"
    assert sections(err.message("en"))["Sample"] == ["./data/a.jsonl:4"]
    assert sections(err.message("vi"))["Mẫu"] == ["./data/a.jsonl:4"]
    _assert_failed("out", err)


def test_interrupt_marks_the_build_failed_and_reaches_the_caller(cwd, sp_model, monkeypatch):
    calls = {"n": 0}
    real_call = BatchEncoder.__call__

    def interrupted(self, raw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real_call(self, raw)

    monkeypatch.setattr(BatchEncoder, "__call__", interrupted)
    write_jsonl("data/a.jsonl", _rows(10))
    with pytest.raises(errors.BuildInterruptedError) as info:
        job(["./data/a.jsonl"], sp_model, sizes=[SIZES], build_batch=[3]).run(workers=1)
    assert isinstance(info.value, KeyboardInterrupt)  # ``except KeyboardInterrupt`` still works
    assert info.value.signal_name == "SIGINT"
    assert info.value.__suppress_context__  # no traceback of where the signal happened to land
    _assert_failed("out", info.value)


needs_fork = pytest.mark.skipif(
    sys.platform != "linux" or workers_module._START_METHOD != "fork",
    reason="workers inherit the patched encoder only when they are forked",
)


def _kill_worker_on(monkeypatch: pytest.MonkeyPatch, marker: str) -> Path:
    """Make a *worker* process die by SIGKILL (as the OOM killer would) on the batch holding
    ``marker``. Workers are forked, so they inherit this patch; the main process never runs it.
    Returns the file where the dying worker writes its pid just before."""
    parent = os.getpid()
    real = SentencePieceEncoder.encode_batch
    dying_pid = Path("dying.pid").resolve()

    def dying(self, texts, utf8):
        if os.getpid() != parent and marker in texts:
            draft = dying_pid.with_suffix(f".{os.getpid()}")
            draft.write_text(str(os.getpid()))
            draft.replace(dying_pid)  # whole or not at all
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, texts, utf8)

    monkeypatch.setattr(SentencePieceEncoder, "encode_batch", dying)
    return dying_pid


@needs_fork
def test_a_killed_worker_is_a_worker_error_and_leaves_no_process(cwd, sp_model, monkeypatch):
    _kill_worker_on(monkeypatch, "die")
    # Four batches, all queued at once (the pool takes 3 per worker): the worker dies on the last.
    rows = [{"text": f"the model {i}"} for i in range(7)] + [{"text": "die"}]
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.WorkerError) as info:
        job(["./data/a.jsonl"], sp_model, sizes=[SIZES], build_batch=[2]).run(workers=2)
    err = info.value
    assert err.cause == "process_ended" and "terminated abruptly" in err.detail
    assert sections(err.message("vi"))["Vấn đề"] == ["một tiến trình worker đã kết thúc đột ngột"]
    assert sections(err.message("en"))["<sentence>"] == [
        "A worker process stopped without reporting a MintDim error."
    ]
    assert sections(err.message("vi"))["<sentence>"] == [
        "Một tiến trình worker đã dừng mà không báo lỗi MintDim."
    ]
    _assert_failed("out", err)
    assert_no_worker_left()


@needs_fork
def test_a_worker_dying_while_batches_are_still_read_is_a_worker_error(cwd, sp_model, monkeypatch):
    dying_pid = _kill_worker_on(monkeypatch, "die")
    real_pieces = runtime._all_pieces

    def slow_reader(plan, piece_bytes, fingerprints):
        for number, piece in enumerate(real_pieces(plan, piece_bytes, fingerprints)):
            if number == 1:  # piece 0 was handed out: read on once its worker is dead
                wait_for(dying_pid.exists, "the worker given piece 0 dying")
                assert not wait_for_exit([int(dying_pid.read_text())])
            yield piece

    monkeypatch.setattr(runtime, "_all_pieces", slow_reader)
    write_jsonl("data/a.jsonl", [{"text": "die"}] + [{"text": "the model"}] * 5)
    with pytest.raises(errors.WorkerError):  # one line per piece
        job(["./data/a.jsonl"], sp_model, sizes=[SIZES], build_batch=[2]).run(
            workers=2, piece_bytes=8
        )
    assert_no_worker_left()


@needs_fork
def test_a_killed_worker_reports_its_exit_code(cwd, sp_model, monkeypatch):
    _kill_worker_on(monkeypatch, "die")
    write_jsonl("data/a.jsonl", [{"text": "the"}, {"text": "die"}])
    with pytest.raises(errors.WorkerError) as info:
        job(["./data/a.jsonl"], sp_model, sizes=[SIZES], build_batch=[1]).run(workers=2)
    assert info.value.exitcode == -signal.SIGKILL
    assert sections(info.value.message("en"))["Exit code"] == ["-9 (killed by SIGKILL)"]


def test_nested_output_directories_are_refused(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    write_jsonl("data/b.jsonl", [{"text": "a unit"}])
    with pytest.raises(errors.OutputValidationError) as info:
        job(
            ["./data/a.jsonl", "./data/b.jsonl"], sp_model, sizes=[[8]], out=["./o1", "./o1/unit_8"]
        ).run(workers=1)
    err = info.value
    assert (err.directory, err.problem) == ("./o1/unit_8", "nested")
    assert (err.cause, err.other) == ("inside", "./o1")
    assert sections(err.message("en"))["Reason"] == ["./o1/unit_8 is inside ./o1"]
    assert sections(err.message("vi"))["Lý do"] == ["./o1/unit_8 nằm bên trong ./o1"]
    assert not Path("o1").exists()


def test_a_pad_id_beyond_uint16_is_stored_in_uint32(cwd, hf_json):
    """A padding section may name a PAD id outside the vocabulary: the shards must still hold it,
    so the dtype follows the largest id written (here PAD 99999), not the vocabulary size."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(hf_json))
    assert tokenizer.get_vocab_size() <= 65535  # the vocabulary alone would fit uint16
    tokenizer.enable_padding(pad_id=99999, pad_token="[PAD]")
    tokenizer.save("badpad.json")
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    job(["./data/a.jsonl"], "./badpad.json", sizes=[[4]]).run(workers=1)
    manifest = read_json("out/manifest.json")
    assert manifest["tokenizer"]["pad_id"] == 99999
    assert (manifest["token_storage"]["dtype"], manifest["token_storage"]["bytes_per_token"]) == (
        "uint32",
        4,
    )
    build = open_build("out")
    row = next(build.samples())
    expected = reference_encoder("./badpad.json")("the model")
    assert 0 < row["token_count"] == len(expected) < 4
    assert build.record(row).tolist() == expected + [99999] * (4 - len(expected))
