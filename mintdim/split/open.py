"""``mintdim.open_split(SPLIT)``: train and validation for training, the test set locked away.

Opening a split reads its sealed manifest and checks only its ``training_files`` (every file of
``train`` and ``validation``, and the windows file): each must be there with its listed size,
and the small ones (manifests, indexes, summaries, windows) with their SHA-256; with
``full_check=True`` the shards are hashed too. Nothing under ``test/`` is opened, hashed or even
listed, so training works with the test directory absent, unreadable or damaged. ``.test``
raises ``TestSetLockedError`` unless the split was opened with ``final_evaluation=True``, which
checks and opens the test build the same way::

    split = mintdim.open_split("./splits/v1")
    for batch in split.train.loader(tokens_per_batch=16384):
        ...
    windows = split.windows("validation")   # [{"split", "sample_id", "start", "length", ...}]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from mintdim.errors import SplitDamagedError, SplitOptionError, TestSetLockedError
from mintdim.read.reader import UnitBuild, open_build
from mintdim.shared import durable
from mintdim.split import layout, windows
from mintdim.split.threeway import build_files

__all__ = ["Split", "open_split"]

_SHARD_SUFFIX = ".bin"
"""Shards and span files: hashed only with ``full_check`` (their sizes are always checked)."""


@dataclass(eq=False)
class Split:
    """An opened split: ``train`` and ``validation`` builds, windows, the test set on request."""

    path: Path
    manifest: dict = field(repr=False)
    train: UnitBuild
    validation: UnitBuild
    final_evaluation: bool = False
    full_check: bool = False
    _test: UnitBuild | None = field(default=None, repr=False)

    @property
    def test(self) -> UnitBuild:
        """The test build: only for a split opened with ``final_evaluation=True``."""
        if not self.final_evaluation:
            raise TestSetLockedError(directory=str(self.path))
        if self._test is None:
            name = "test"
            entry = self.manifest["builds"][name]
            listed = build_files(name, _manifest_of(self.path, name), entry["manifest_sha256"])
            _check_files(self.path, listed, self.full_check)
            self._test = open_build(self.path / name)
        return self._test

    def windows(self, split: str = "validation") -> list[dict]:
        """The evaluation windows of ``validation`` (or, for the final evaluation, ``test``)."""
        if split not in ("validation", "test"):
            raise SplitOptionError(option="windows(split)", value=split, rule="split_name")
        if split == "test" and not self.final_evaluation:
            raise TestSetLockedError(directory=str(self.path))
        if self.manifest["policy"]["window"] is None:
            raise SplitOptionError(option="windows", value=str(self.path), rule="no_windows")
        data = (self.path / windows.FILENAME).read_bytes()
        rows = [orjson.loads(line) for line in data.splitlines()]
        return [row for row in rows if row["split"] == split]


def open_split(
    path: str | os.PathLike[str], *, final_evaluation: bool = False, full_check: bool = False
) -> Split:
    """Open a finished split for training (see the module docstring)."""
    root, content, _ = layout.read_manifest(path, layout.SPLIT_KIND)
    _check_files(root, content["training_files"], full_check)
    opened = Split(
        path=root,
        manifest=content,
        train=open_build(root / "train"),
        validation=open_build(root / "validation"),
        final_evaluation=final_evaluation,
        full_check=full_check,
    )
    if final_evaluation:
        opened.test  # noqa: B018 - checked and opened now, so a damaged test set fails here
    return opened


def _manifest_of(root: Path, name: str) -> dict:
    """A build's manifest (its digest is checked with the build's files)."""
    try:
        return orjson.loads((root / name / "manifest.json").read_bytes())
    except FileNotFoundError:
        raise SplitDamagedError(
            directory=str(root), path=f"{name}/manifest.json", problem="missing"
        ) from None
    except (OSError, orjson.JSONDecodeError) as err:
        raise SplitDamagedError(
            directory=str(root), path=f"{name}/manifest.json", problem="unreadable", actual=str(err)
        ) from err


def _check_files(root: Path, listed: list[dict], full_check: bool) -> None:
    """Each listed file has its size, and (small files always, shards with ``full_check``) its
    SHA-256."""
    for entry in listed:
        problem = _file_problem(root / entry["path"], entry, full_check)
        if problem is not None:
            code, expected, actual = problem
            raise SplitDamagedError(
                directory=str(root),
                path=entry["path"],
                problem=code,
                expected=str(expected),
                actual=str(actual),
            )


def _file_problem(path: Path, entry: dict, full_check: bool) -> tuple[str, object, object] | None:
    try:
        size = path.stat().st_size
        if size != entry["bytes"]:
            return "size", entry["bytes"], size
        if full_check or not entry["path"].endswith(_SHARD_SUFFIX):
            digest = durable.file_sha256(path)
            if digest != entry["sha256"]:
                return "sha256", entry["sha256"], digest
    except FileNotFoundError:
        return "missing", "", ""
    except OSError as err:
        return "unreadable", "", err
    return None
