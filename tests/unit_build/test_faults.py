"""Faults during a build end in a named MintDim error, markers in every unit directory, no manifest.

Each fault is real: the input file is really rewritten while the build reads it, the disk really
fills (a tmpfs mounted for the test), the file-size limit is really reached (RLIMIT_FSIZE in a
child). Tests that need a mount or a limit skip cleanly where the machine does not allow them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mintdim.pipelines.unit_build import runtime
from mintdim.pipelines.unit_build.output.dir import UNIT_BUILD_FAILED
from mintdim.shared import errors
from tests.unit_build.helpers import job, write_jsonl

SIZES = [8, 16, 32, 64]


def _assert_failed_build(out: Path, error_name: str) -> None:
    """No manifest, every unit directory carries the failure marker naming the error, and the
    staging area stays for a resume."""
    assert not (out / "manifest.json").exists()
    assert (out / "staging" / "job.json").is_file()
    units = sorted(p for p in out.iterdir() if p.is_dir() and p.name != "staging")
    assert {p.name for p in units} == {f"unit_{size}" for size in SIZES}
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
    assert "khi đọc: bytes " in caught.value.message("vi")


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
