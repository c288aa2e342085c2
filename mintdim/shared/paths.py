"""Path rules: relative paths resolve from the current working directory, nothing is searched for."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["resolve", "same_place_key"]


def resolve(path: str) -> Path:
    """Return the absolute path a declared path names, resolved from the current directory."""
    return Path(os.path.abspath(os.path.expanduser(path)))


def same_place_key(path: str) -> str:
    """A key equal for two spellings of one place (``./out``, ``out/``, a symlink to it)."""
    return os.path.realpath(resolve(path))
