"""Path rules: relative paths resolve from the current working directory, nothing is searched for.

Every declared path goes through :func:`resolve`, which refuses what cannot name a file on this
system at all (a NUL, a character the file system encoding cannot store, a name over 255 bytes,
a relative path when the current directory was deleted) with ``PathError`` naming the setting.
"""

from __future__ import annotations

import os
from pathlib import Path

from mintdim.errors import PathError
from mintdim.errors.base import current_directory

__all__ = ["resolve", "same_place_key"]

_NAME_MAX = 255
_PATH_MAX = 4096


def resolve(path: str, key: str) -> Path:
    """Return the absolute path a declared path names, resolved from the current directory.

    ``key`` names the setting the path came from (``source.files[0]``), for the error.
    """
    if "\0" in path:
        raise PathError(key=key, path=path, problem="nul")
    try:
        os.fsencode(path)
    except UnicodeEncodeError as err:
        raise PathError(key=key, path=path, problem="unencodable", detail=str(err)) from None
    try:
        absolute = os.path.abspath(os.path.expanduser(path))
    except FileNotFoundError:
        raise PathError(
            key=key, path=path, problem="cwd_gone", detail=current_directory()
        ) from None
    encoded = os.fsencode(absolute)
    for name in encoded.split(b"/"):
        if len(name) > _NAME_MAX:
            shown = os.fsdecode(name[:40]) + "..."
            raise PathError(key=key, path=path, problem="component_too_long", detail=shown)
    if len(encoded) >= _PATH_MAX:
        raise PathError(key=key, path=path, problem="too_long", detail=str(len(encoded)))
    return Path(absolute)


def same_place_key(path: str, key: str) -> str:
    """A key equal for two spellings of one place (``./out``, ``out/``, a symlink to it)."""
    return os.path.realpath(resolve(path, key))
