"""Getting a build onto disk: atomic JSON files, and fsync of single paths and whole trees.

A rename makes a file appear whole or not at all, but only fsync makes it survive a power loss,
and only an fsync of the directory makes a new or renamed entry survive one.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

__all__ = ["fsync_path", "sync_tree", "write_json_atomic"]


def write_json_atomic(path: Path, content: object) -> None:
    """Write indented JSON through a temporary file and a rename, so no reader sees half a file.

    The file is on disk before the rename, and the rename before this returns.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_path(path.parent)


def sync_tree(root: Path) -> None:
    """fsync every file and directory under ``root``, and ``root``'s own entry in its parent."""
    for directory, _, names in os.walk(root):
        for name in names:
            fsync_path(Path(directory) / name)
        fsync_path(Path(directory))
    fsync_path(root.parent)


def fsync_path(path: Path) -> None:
    """Flush a file's data, or a directory's entries, to disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
