"""``unit_<size>/index.npy``: which sample each record of a unit holds, so readers never parse JSONL.

A NumPy ``.npy`` file (format 1.0, readable with ``np.load``) holding a 1-D structured array with
one entry per record of the unit's shards, in record order::

    sample_id    <i8   the sample's id (its line in sample_index.jsonl)
    token_count  <i4   its tokens before PAD

Record k of a unit is row ``k % samples_per_shard`` of shard ``k // samples_per_shard``. The file
is written as samples arrive: NumPy pads a ``.npy`` header so its shape can grow in place, so the
header is written first with shape ``(0,)`` and rewritten with the final count at the end. Only
units that received samples have one; manifest.json lists each with its SHA-256, like the shards.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import BinaryIO

import numpy as np

from mintdim.build.formats.shards import ShardRecord, unit_dir_name

__all__ = ["DTYPE", "FILENAME", "UnitIndexWriter", "index_path", "load"]

FILENAME = "index.npy"
DTYPE = np.dtype([("sample_id", "<i8"), ("token_count", "<i4")])


def index_path(unit_size: int) -> str:
    """Path of a unit's index inside the output directory."""
    return f"{unit_dir_name(unit_size)}/{FILENAME}"


def _header(count: int) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer,
        {"descr": np.lib.format.dtype_to_descr(DTYPE), "fortran_order": False, "shape": (count,)},
    )
    return buffer.getvalue()


class UnitIndexWriter:
    """Appends (sample_id, token_count) entries of one unit; the file appears with its first entry."""

    def __init__(self, output_path: Path, unit_size: int) -> None:
        self.output_path = output_path
        self.unit_size = unit_size
        self.samples = 0
        self._handle: BinaryIO | None = None

    def write(self, sample_ids: np.ndarray, token_counts: np.ndarray) -> None:
        """Append the entries of one batch's samples in this unit, in record order."""
        if self._handle is None:
            self._handle = open(self.output_path / index_path(self.unit_size), "xb")  # noqa: SIM115
            self._handle.write(_header(0))
        entries = np.empty(len(sample_ids), dtype=DTYPE)
        entries["sample_id"] = sample_ids
        entries["token_count"] = token_counts
        self._handle.write(entries.tobytes())
        self.samples += len(entries)

    def finish(self) -> ShardRecord | None:
        """Write the final count into the header, close, and describe the file for the manifest."""
        if self._handle is None:
            return None
        header = _header(self.samples)
        # NumPy reserves room for the shape to grow, so the final header has the same length.
        assert len(header) == len(_header(0))  # noqa: S101
        self._handle.seek(0)
        self._handle.write(header)
        self._handle.close()
        self._handle = None
        relative = index_path(self.unit_size)
        # The header changed last, so the digest needs a second read: 12 bytes a sample.
        with open(self.output_path / relative, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        return ShardRecord(
            path=relative,
            unit_size=self.unit_size,
            samples=self.samples,
            bytes=len(header) + self.samples * DTYPE.itemsize,
            sha256=digest,
        )

    def abort(self) -> None:
        """Close the file without finishing it (the build failed)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def load(path: Path) -> np.ndarray:
    """A unit index, memory-mapped read-only; ``ValueError`` when it is not one.

    Whatever NumPy raises for a damaged file (``tokenize.TokenError`` or ``SyntaxError`` from a
    damaged header dictionary, ``EOFError`` for an empty file, ...) becomes that ``ValueError``;
    only an ``OSError`` (the file cannot be read at all) passes through as itself.
    """
    try:
        entries = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError:
        raise
    except Exception as err:  # noqa: BLE001 - any parse failure means "not a unit index"
        raise ValueError(f"{path}: not a NumPy unit index ({type(err).__name__}: {err})") from err
    if entries.dtype != DTYPE or entries.ndim != 1:
        raise ValueError(f"{path}: dtype {entries.dtype} shape {entries.shape}, expected {DTYPE}")
    return entries
