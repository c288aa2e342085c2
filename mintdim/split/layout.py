"""The names and the life of a groups directory and a split directory.

A groups directory (``mintdim group``) holds ``groups.json``, ``joins.jsonl``, ``report.json``,
``REPORT.md`` and, written last, ``manifest.json``. A split directory (``mintdim split``) holds
the three builds ``train/``, ``validation/``, ``test/``, ``splits.jsonl``,
``group-joins.jsonl``, ``evaluation-windows.jsonl`` (with a window), ``report.json``,
``REPORT.md``, ``verification.json`` and, written last, ``manifest.json``.

Both are made in a fresh directory (absent, or empty) and sealed like a build's manifest (the
SHA-256 of its own bytes without the seal). A run that fails leaves its :data:`FAILED` marker
(the error in English and Vietnamese) and no manifest, so nothing half-written looks complete;
a full disk or the file-size limit is named (``BuildWriteError``, place ``derived``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

import orjson

from mintdim._version import __version__
from mintdim.build.formats import manifest as build_manifest
from mintdim.errors import BuildWriteError, MintDimError, OutputNotFreshError, SplitDirectoryError
from mintdim.shared import durable
from mintdim.shared.lang import Bilingual

__all__ = [
    "DECONTAMINATION_KIND",
    "FAILED",
    "FORMAT_VERSION",
    "GROUPS_KIND",
    "MANIFEST",
    "SPLIT_KIND",
    "SPLIT_NAMES",
    "check_fresh",
    "file_record",
    "fresh_directory",
    "header",
    "read_manifest",
    "running",
    "sealed",
    "write_manifest",
]

MANIFEST = build_manifest.FILENAME
FAILED = "FAILED.md"
FORMAT_VERSION = 1
GROUPS_KIND = "mintdim-groups"
SPLIT_KIND = "mintdim-split"
DECONTAMINATION_KIND = "mintdim-decontamination"
"""A decontamination directory (``mintdim/decontaminate``) lives the same life."""
SPLIT_NAMES = ("train", "validation", "test")
_KIND_WORDS = {
    GROUPS_KIND: "groups",
    SPLIT_KIND: "split",
    DECONTAMINATION_KIND: "decontamination",
}
"""The kind of directory a manifest describes, as SplitDirectoryError names it."""


def header(kind: str) -> dict[str, object]:
    """The first keys of every groups or split manifest."""
    return {
        "kind": kind,
        "format_version": FORMAT_VERSION,
        "status": "complete",
        "mintdim_version": __version__,
    }


def sealed(content: Mapping[str, object]) -> dict:
    """``content`` with its seal as the last key (build/formats/manifest.py's rule)."""
    return build_manifest.sealed(content)


def file_record(path: Path) -> dict[str, object]:
    """A file's size and SHA-256, as manifests list them."""
    return {"bytes": path.stat().st_size, "sha256": durable.file_sha256(path)}


def check_fresh(directory: str | os.PathLike[str], inputs: Mapping[str, Path]) -> None:
    """``OutputNotFreshError`` unless ``directory`` is absent or an empty directory outside
    every one of ``inputs`` (shown name -> path), whose files it would mix with. Checked before
    the work, so a long run never ends on a directory it cannot use."""
    path = Path(directory)
    shown = os.fspath(directory)
    absolute = path.resolve()
    for name, source in inputs.items():
        if absolute == source.resolve() or source.resolve() in absolute.parents:
            raise OutputNotFreshError(directory=shown, problem="inside_input", detail=name)
    if path.exists() and not path.is_dir():
        raise OutputNotFreshError(directory=shown, problem="not_a_directory")
    if path.is_dir() and any(path.iterdir()):
        raise OutputNotFreshError(directory=shown, problem="not_empty")


def fresh_directory(directory: str | os.PathLike[str], inputs: Mapping[str, Path]) -> Path:
    """Create ``directory`` after :func:`check_fresh`; an empty one that appeared meanwhile is
    taken, one that another writer filled meanwhile is refused."""
    check_fresh(directory, inputs)
    path = Path(directory)
    shown = os.fspath(directory)
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        if not path.is_dir() or any(path.iterdir()):
            raise OutputNotFreshError(directory=shown, problem="not_empty") from None
    except OSError as err:
        raise OutputNotFreshError(
            directory=shown, problem="cannot_create", detail=str(err)
        ) from err
    return path


_FAILED_TEXT = Bilingual(
    "# {what} failed\n\nThis directory is not complete: it has no manifest.json. Fix the error "
    "below, then run again into a new, empty directory.\n\n```text\n{message}\n```",
    "# {what} thất bại\n\nThư mục này chưa hoàn chỉnh: không có manifest.json. Hãy sửa lỗi "
    "dưới đây, rồi chạy lại vào một thư mục mới, rỗng.\n\n```text\n{message}\n```",
)


@contextmanager
def running(directory: Path, what: str) -> Iterator[None]:
    """Run the body that fills ``directory``; any failure leaves :data:`FAILED` there (and no
    manifest, which the body writes last) before it propagates, a full disk or the file-size
    limit as ``BuildWriteError``."""
    try:
        yield
    except BaseException as error:
        failure = error
        # (A MintDimError may be an OSError too: it is named already.)
        if (
            isinstance(error, OSError)
            and not isinstance(error, MintDimError)
            and error.errno in _NO_ROOM
        ):
            failure = BuildWriteError.from_os_error("derived", os.fspath(directory), error)
        if not (directory / MANIFEST).is_file():
            _mark_failed(directory, what, failure)
        if failure is error:
            raise
        raise failure from error


_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""What a write meets when the disk (or the quota, or the file-size limit) leaves no room."""


def _mark_failed(directory: Path, what: str, error: BaseException) -> None:
    if isinstance(error, MintDimError):
        en, vi = (
            _FAILED_TEXT.render(lang, what=what, message=error.message(lang))
            for lang in ("en", "vi")
        )
    else:
        message = f"{type(error).__name__}: {error}"
        en, vi = (_FAILED_TEXT.render(lang, what=what, message=message) for lang in ("en", "vi"))
    # The directory itself may be gone: the missing manifest still says "incomplete".
    with suppress(OSError):
        (directory / FAILED).write_text(f"{en}\n\n{vi}\n", encoding="utf-8")


def write_manifest(directory: Path, content: Mapping[str, object]) -> dict:
    """Seal ``content`` and write it as the directory's manifest, durably and last: every file
    it vouches for is flushed to disk first."""
    final = sealed(content)
    durable.sync_tree(directory, skip="")
    durable.write_json_atomic(directory / MANIFEST, final)
    return final


def read_manifest(directory: str | os.PathLike[str], kind: str) -> tuple[Path, dict, bytes]:
    """The path, manifest and manifest bytes of a complete groups or split directory;
    ``SplitDirectoryError`` saying why when ``directory`` holds none."""
    path = Path(directory)
    shown = os.fspath(directory)
    word = _KIND_WORDS[kind]

    def refuse(reason: str, **facts: object) -> SplitDirectoryError:
        return SplitDirectoryError(directory=shown, kind=word, reason=reason, **facts)

    if not path.exists():
        raise refuse("missing")
    if not path.is_dir():
        raise refuse("not_directory")
    try:
        raw = (path / MANIFEST).read_bytes()
    except FileNotFoundError:
        failed = (path / FAILED).is_file()
        raise refuse("failed" if failed else "no_manifest", marker=FAILED) from None
    except OSError as err:
        raise refuse("manifest_json", detail=str(err)) from err
    try:
        content = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise refuse("manifest_json", detail=str(err)) from err
    if not isinstance(content, dict):
        raise refuse("manifest_json")
    if content.get("kind") != kind:
        found = _KIND_WORDS.get(content.get("kind"), "build" if "shards" in content else "unknown")
        raise refuse("other_kind", found=found)
    if content.get("status") != "complete" or content.get("format_version") != FORMAT_VERSION:
        status, version = content.get("status"), content.get("format_version")
        raise refuse("manifest_status", status=status, version=version)
    if not build_manifest.seal_holds(content):
        raise refuse("manifest_seal")
    return path, content, raw
