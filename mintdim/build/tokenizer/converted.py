"""gigatoken's form of a SentencePiece model, converted once per model and kept on disk.

gigatoken reads a SentencePiece ``.model`` only as the ``tokenizer.json`` its own converter
writes, and that converter is pure Python: 0.7-0.9 s of CPU for mistral-7b's 32,000 pieces, a
fifth of a whole 40 MB fast build, paid again by every build and every spawned (Ray) worker.
The converted text depends only on the model's bytes, gigatoken's version and MintDim's own
edit of it (``fast._tokenizer_json``), so it is kept under those in a cache directory:

    $MINTDIM_CACHE_DIR, else $XDG_CACHE_HOME/mintdim, else ~/.cache/mintdim
        fast-engine/<key>-<SHA-256 of the file's bytes>.json

A file is used only if its bytes still hash to the digest in its name; anything else (a
truncated or edited file, one that cannot be read) is removed and converted afresh. Writing is
best effort: a read-only or full cache directory costs the conversion, never the build. The
parity guard checks whatever gigatoken loaded, cached or not.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

from mintdim.shared import durable

__all__ = ["cache_dir", "converted"]

_log = logging.getLogger(__name__)

EDIT = "1"
"""The version of MintDim's edit of the converted file: a change to it must change the key."""


def cache_dir() -> Path | None:
    """Where converted models are kept (module docstring); None when no directory is named and
    the user has no home (a container's uid without a passwd entry): then nothing is kept."""
    declared = os.environ.get("MINTDIM_CACHE_DIR")
    if declared:
        return Path(declared) / "fast-engine"
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # Path.home() finds neither $HOME nor a passwd entry
            return None
    return Path(base) / "mintdim" / "fast-engine"


def converted(model: bytes, library: str, convert: Callable[[], bytes]) -> bytes:
    """``convert()``'s bytes for the model ``model``, from the cache when it holds them whole.

    ``library`` names the converter (``gigatoken 0.10.0``): another version converts afresh.
    """
    directory = cache_dir()
    if directory is None:
        return convert()
    key = hashlib.sha256(b"\0".join([model, library.encode(), EDIT.encode()])).hexdigest()
    for path in sorted(directory.glob(f"{key}-*.json")) if directory.is_dir() else []:
        data = _read(path)
        if data is not None and hashlib.sha256(data).hexdigest() == path.stem[len(key) + 1 :]:
            return data
        _remove(path)
    data = convert()
    _keep(directory, f"{key}-{hashlib.sha256(data).hexdigest()}.json", data)
    return data


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError as err:
        _log.debug("cannot remove the damaged cached model %s: %s", path, err)


def _keep(directory: Path, name: str, data: bytes) -> None:
    """Write ``data`` as ``directory/name``, whole or not at all (best effort)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        durable.write_renamed(directory / name, data)
    except OSError as err:
        _log.debug("cannot keep the converted model in %s: %s", directory, err)
