"""A packed unit's boundary index: which whole samples each row holds, and where.

Two NumPy ``.npy`` files (format 1.0, ``np.load(..., mmap_mode="r")``) beside the unit's
shards, a CSR over its rows::

    unit_<size>/row_offsets.npy   <i8 [rows + 1]   row r holds entries offsets[r]:offsets[r + 1]
    unit_<size>/row_samples.npy   [entries]        row after row, each row's samples in order:
        sample_id  <i8   the sample's id (its line in sample_index.jsonl)
        start      <i4   its first slot in the row
        length     <i4   its token count

Row ``r`` of the unit is row ``r % samples_per_shard`` of shard ``r // samples_per_shard``
(a packed unit's shards roll over by rows). Its samples lie back to back from slot 0, and PAD
fills the row from the end of the last one to ``unit_size``. Only units that received samples
have them; manifest.json lists both under ``boundary_indexes`` with their SHA-256.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mintdim.build.formats.shards import ShardRecord, unit_dir_name
from mintdim.shared.durable import HashedFile

__all__ = [
    "ENTRY",
    "OFFSETS",
    "SAMPLES",
    "Boundaries",
    "load",
    "offsets_path",
    "samples_path",
    "write",
]

OFFSETS = "row_offsets.npy"
SAMPLES = "row_samples.npy"
ENTRY = np.dtype([("sample_id", "<i8"), ("start", "<i4"), ("length", "<i4")])
_BLOCK = 1 << 16
"""Entries made and written at a time."""


def offsets_path(unit_size: int) -> str:
    """Path of a unit's row offsets inside the output directory."""
    return f"{unit_dir_name(unit_size)}/{OFFSETS}"


def samples_path(unit_size: int) -> str:
    """Path of a unit's row entries inside the output directory."""
    return f"{unit_dir_name(unit_size)}/{SAMPLES}"


@dataclass(frozen=True, slots=True)
class Boundaries:
    """One packed unit's rows, as read back (memory-mapped)."""

    offsets: np.ndarray
    """int64 [rows + 1]."""
    entries: np.ndarray
    """``ENTRY`` [samples], row after row."""

    @property
    def rows(self) -> int:
        """Rows of the unit."""
        return int(self.offsets.size - 1)

    @property
    def sample_id(self) -> np.ndarray:
        """int64 [samples]: each entry's sample id."""
        return self.entries["sample_id"]

    @property
    def start(self) -> np.ndarray:
        """int32 [samples]: each entry's first slot in its row."""
        return self.entries["start"]

    @property
    def length(self) -> np.ndarray:
        """int32 [samples]: each entry's token count."""
        return self.entries["length"]

    def row_of(self) -> np.ndarray:
        """int64 [samples]: each entry's row."""
        return np.repeat(np.arange(self.rows, dtype=np.int64), np.diff(self.offsets))

    def fill(self) -> np.ndarray:
        """int64 [rows]: the slot after each row's last sample (0 for an empty row)."""
        last = self.offsets[1:] - 1
        held = last >= self.offsets[:-1]
        at = np.maximum(last, 0)
        return np.where(held, self.start[at].astype(np.int64) + self.length[at], 0)

    def holds(self, packing: object, sample_ids: np.ndarray) -> bool:
        """Whether these are exactly ``packing``'s rows (a ``units/packing.Packing`` of the
        unit's samples, whose ids in packing order are ``sample_ids``): offsets, ids, starts."""
        return (
            np.array_equal(packing.offsets, self.offsets)
            and np.array_equal(sample_ids[packing.samples], self.sample_id)
            and np.array_equal(packing.starts, self.start)
        )

    def first_ids(self) -> np.ndarray:
        """int64 [rows]: each row's first sample id (-1 for an empty row)."""
        held = np.diff(self.offsets) > 0
        ids = np.full(self.rows, -1, dtype=np.int64)
        ids[held] = self.sample_id[self.offsets[:-1][held]]
        return ids


def write(
    output_path: Path,
    unit_size: int,
    offsets: np.ndarray,
    sample_ids: np.ndarray,
    order: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
) -> list[ShardRecord]:
    """Write a unit's two files (fsynced) and describe them for the manifest (``samples`` is the
    number of entries, rows + 1 for the offsets). Entry k is sample ``sample_ids[order[k]]`` at
    ``starts[k]`` with ``lengths[k]`` tokens; the entries are made a block at a time (a whole
    unit's at once would cost 16 bytes a sample more at the end of a build)."""

    def entries() -> Iterator[np.ndarray]:
        for first in range(0, order.size, _BLOCK):
            part = slice(first, first + _BLOCK)
            block = np.empty(order[part].size, dtype=ENTRY)
            block["sample_id"] = sample_ids[order[part]]
            block["start"] = starts[part]
            block["length"] = lengths[part]
            yield block

    return [
        _written(
            output_path, offsets_path(unit_size), offsets.size, [offsets.astype("<i8")], unit_size
        ),  # fmt: skip
        _written(output_path, samples_path(unit_size), order.size, entries(), unit_size),
    ]


def _written(
    output_path: Path, relative: str, count: int, parts: Iterable[np.ndarray], unit_size: int
) -> ShardRecord:
    """A .npy file of ``count`` items, ``parts`` back to back, hashed as written (fsynced)."""
    written = HashedFile(output_path / relative)
    dtype = None
    for part in parts:
        if dtype is None:
            dtype = part.dtype
            written.write(_header(dtype, count))
        written.write(memoryview(np.ascontiguousarray(part)).cast("B"))
    if dtype is None:
        written.write(_header(ENTRY, count))
    written.close(sync=True)
    facts = written.record()
    return ShardRecord(
        path=relative,
        unit_size=unit_size,
        samples=count,
        bytes=facts["bytes"],
        sha256=facts["sha256"],
    )


def _header(dtype: np.dtype, count: int) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer,
        {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (count,)},
    )
    return buffer.getvalue()


def load(output_path: Path, unit_size: int) -> Boundaries:
    """A unit's boundary index, memory-mapped read-only; ``ValueError`` when a file is not one
    (wrong dtype or shape, offsets that do not start at 0, fall, or end at the entry count).

    Only an ``OSError`` (a file cannot be read at all) passes through as itself.
    """
    offsets = _load(output_path / offsets_path(unit_size), np.dtype("<i8"))
    entries = _load(output_path / samples_path(unit_size), ENTRY)
    if offsets.size < 1 or offsets[0] != 0 or offsets[-1] != entries.size:
        raise ValueError(
            f"{offsets_path(unit_size)}: offsets must run from 0 to {entries.size} entries"
        )
    if (np.diff(offsets) < 0).any():
        raise ValueError(f"{offsets_path(unit_size)}: offsets must never fall")
    return Boundaries(offsets, entries)


def _load(path: Path, dtype: np.dtype) -> np.ndarray:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError:
        raise
    except Exception as err:  # noqa: BLE001 - any parse failure means "not a boundary index"
        raise ValueError(
            f"{path}: not a NumPy boundary index ({type(err).__name__}: {err})"
        ) from err
    if array.dtype != dtype or array.ndim != 1:
        raise ValueError(f"{path}: dtype {array.dtype} shape {array.shape}, expected {dtype}")
    return array
