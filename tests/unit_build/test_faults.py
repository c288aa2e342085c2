"""Faults and limits: each ends in a named MintDim error; a failed build has markers, no manifest.

Each fault is real: the input file is really rewritten while the build reads it, the disk really
fills (a tmpfs mounted for the test), the file-size limit is really reached (RLIMIT_FSIZE in a
child). Tests that need a mount or a limit skip cleanly where the machine does not allow them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sentencepiece as spm

from mintdim import open_build
from mintdim.pipelines.unit_build import runtime
from mintdim.pipelines.unit_build.output.dir import UNIT_BUILD_FAILED
from mintdim.shared import errors
from tests.unit_build.helpers import job, write_jsonl

SIZES = [8, 16, 32, 64]


def _assert_failed_build(out: Path, error_name: str) -> None:
    """No manifest, and every unit directory carries the failure marker naming the error."""
    assert not (out / "manifest.json").exists()
    units = sorted(p for p in out.iterdir() if p.is_dir())
    assert {p.name for p in units} == {f"unit_{size}" for size in SIZES}
    for unit in units:
        marker = (unit / UNIT_BUILD_FAILED).read_text(encoding="utf-8")
        assert marker.count(f"{error_name}:") == 2, marker  # English and Vietnamese


def _rewrite_during_build(monkeypatch: pytest.MonkeyPatch, change) -> None:
    """Call ``change()`` once the first batch of the build has been read."""
    real = runtime._all_batches

    def reader(plan, fingerprints):
        for number, batch in enumerate(real(plan, fingerprints)):
            if number == 1:
                change()
            yield batch

    monkeypatch.setattr(runtime, "_all_batches", reader)


def test_an_input_rewritten_in_place_fails_the_build(cwd, sp_model, monkeypatch):
    data = write_jsonl("data.jsonl", [{"text": f"the model {i}"} for i in range(40)])
    original = data.read_bytes()

    def rewrite() -> None:
        # Same length, other text, written into the same inode: only the mtime tells.
        with open(data, "r+b") as handle:
            handle.write(original.replace(b"model", b"MODEL"))

    _rewrite_during_build(monkeypatch, rewrite)
    with pytest.raises(errors.InputChangedError) as caught:
        job(["data.jsonl"], sp_model, sizes=[SIZES], build_batch=[4]).run(workers=1)
    assert (caught.value.file, caught.value.change) == ("data.jsonl", "mtime")
    assert os.path.getsize(data) == len(original)
    _assert_failed_build(cwd / "out", "InputChangedError")
    assert "khi đọc: mtime_ns" in caught.value.message("vi")


def test_an_input_that_grows_during_the_build_fails_it(cwd, sp_model, monkeypatch):
    data = write_jsonl("data.jsonl", [{"text": "the model"}] * 40)

    def append() -> None:
        with open(data, "ab") as handle:
            handle.write(b'{"text": "late"}\n')

    _rewrite_during_build(monkeypatch, append)
    with pytest.raises(errors.InputChangedError) as caught:
        job(["data.jsonl"], sp_model, sizes=[SIZES], build_batch=[4]).run(workers=2)
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
