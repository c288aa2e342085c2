"""Getting a build onto disk: atomic JSON files, files hashed as they are written, and fsync of
single paths and whole trees.

A rename makes a file appear whole or not at all, but only fsync makes it survive a power loss,
and only an fsync of the directory makes a new or renamed entry survive one.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

import orjson

__all__ = [
    "HashedFile",
    "file_sha256",
    "fsync_path",
    "json_bytes",
    "open_sequential",
    "sync_tree",
    "write_json_atomic",
    "write_renamed",
]

_HASH_BLOCK = 4 << 20
_SYNC_THREADS = 8
_buffers = threading.local()


def json_bytes(content: object) -> bytes:
    """The exact bytes of every JSON file a build writes: orjson, indented by 2, final newline.

    One form, so ``mintdim verify`` can demand it byte for byte and a changed byte that still
    parses (a space turned into a tab) is caught too.
    """
    return orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n"


def file_sha256(path: Path, limit: int | None = None) -> str:
    """SHA-256 hex digest of a file's bytes (its first ``limit`` bytes, when given).

    Read into one buffer per thread, reused: fresh blocks cost a page fault per page (a quarter
    of the time of hashing them), and a few large reads let a thread hashing beside busy ones
    (``mintdim verify``) wait for the GIL only a few times per file.
    """
    buffer = getattr(_buffers, "buffer", None)
    if buffer is None:
        buffer = _buffers.buffer = bytearray(_HASH_BLOCK)
    view, digest = memoryview(buffer), hashlib.sha256()
    with open_sequential(path) as handle:
        while size := handle.readinto(view if limit is None else view[: min(limit, len(view))]):
            digest.update(view[:size])
            if limit is not None:
                limit -= size
    return digest.hexdigest()


class HashedFile:
    """A new file (never one that exists) whose size and SHA-256 grow as it is written: the
    manifest lists both without reading the file back when the build ends."""

    def __init__(self, path: Path) -> None:
        self.name = path.name
        self._handle = open(path, "xb")  # noqa: SIM115 - closed by close()
        self._digest = hashlib.sha256()
        self._bytes = 0

    def write(self, data: bytes | memoryview) -> None:
        """Append ``data`` (bytes, or a one-dimensional byte view)."""
        self._digest.update(data)
        self._handle.write(data)
        self._bytes += len(data)

    def close(self, sync: bool = False) -> None:
        """Flush and close the file; ``sync``: fsync it first."""
        if sync:
            self._handle.flush()
            os.fsync(self._handle.fileno())
        self._handle.close()

    def record(self) -> dict[str, object]:
        """The file's size and SHA-256, as the manifest lists them."""
        return {"bytes": self._bytes, "sha256": self._digest.hexdigest()}


def open_sequential(path: Path) -> BinaryIO:
    """``path`` opened for reading (unbuffered), the kernel told it will be read from start to end:
    from a cold page cache it then reads further ahead (where the platform has ``posix_fadvise``)."""
    handle = open(path, "rb", buffering=0)  # noqa: SIM115 - the caller closes it
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
    return handle


def write_renamed(path: Path, data: bytes, durable: bool = False) -> None:
    """Write ``data`` as ``path``, whole or not at all: into a temporary file of a name no other
    writer uses, then renamed over ``path`` (the last writer wins; a failed write leaves no
    temporary file). ``durable``: the file is on disk before the rename, and the rename before
    this returns (fsync of both); without it, a crash may lose the file but never shows it
    half-written."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    if durable:
        fsync_path(path.parent)


def write_json_atomic(path: Path, content: object) -> None:
    """Write indented JSON durably and whole or not at all (``write_renamed``, ``durable``)."""
    write_renamed(path, json_bytes(content), durable=True)


def sync_tree(root: Path, skip: str, synced: Collection[Path] = ()) -> None:
    """fsync every file and directory under ``root`` but those under ``root/skip`` (fragments
    about to be removed: flushing them would only write what is deleted next) and the files in
    ``synced`` (already fsynced after their last write: a second fsync may still flush the
    disk's cache), and ``root``'s own entry in its parent.

    The files are flushed on several threads at once (fsync releases the GIL and waits on the
    disk, not the CPU): the file system can commit them together instead of one after another.
    """
    files: list[Path] = []
    directories: list[Path] = []
    done = set(synced)
    for directory, subdirectories, names in os.walk(root):
        if directory == str(root) and skip in subdirectories:
            subdirectories.remove(skip)
        files.extend(path for name in names if (path := Path(directory) / name) not in done)
        directories.append(Path(directory))
    with ThreadPoolExecutor(max_workers=max(1, min(_SYNC_THREADS, len(files)))) as pool:
        # list(): the first OSError of any file is raised here, after every fsync has ended.
        list(pool.map(fsync_path, files))
    for directory in directories:
        fsync_path(directory)
    fsync_path(root.parent)


def fsync_path(path: Path) -> None:
    """Flush a file's data, or a directory's entries, to disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
