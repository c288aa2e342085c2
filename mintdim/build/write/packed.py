"""One packed unit while its build runs: samples kept back to back, rows made once all are known.

Rows need every sample's length (``units/packing.py`` sorts them), so the samples of a packed
unit are first appended, in input order, to a hidden file beside its shards
(``.tokens.partial``: their ids, no PAD; ``.spans.partial``: their span records). ``finish``
packs the lengths, writes the rows through the unit's ordinary shard writer (fixed width,
``samples_per_shard`` rows per shard), writes the boundary index (``formats/boundaries.py``),
removes the hidden files and gives each sample's place for ``sample_index.jsonl``.

Memory: 4 bytes per sample while the build runs (its length), the packing's int32 arrays at the
end. The rows are made a block at a time, each sample read from the file into its place, while
a thread hashes and writes the block before: a unit of any size fits, and a 1M-sample build's
main process peaked at most 40 bytes a sample above an unpacked one (benchmarks/packed_build.py).
A failed build leaves the hidden files inside its failed unit directory, which a resumed build
clears with everything else.
"""

from __future__ import annotations

import errno
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mintdim.build.formats import boundaries
from mintdim.build.formats import spans as spans_format
from mintdim.build.formats.shards import ShardRecord, UnitShardWriter
from mintdim.build.units.packing import Packing, pack

__all__ = ["PackedUnitWriter", "Places"]

TOKENS = ".tokens.partial"
SPANS = ".spans.partial"
_BLOCK_SLOTS = 1 << 21
"""Slots of the rows made at a time (4 MiB of uint16): big enough for numpy, small for memory."""


@dataclass(frozen=True, slots=True)
class Places:
    """Where a packed unit's samples landed, in the order the unit received them."""

    shard: np.ndarray
    """int32: the shard number."""
    row: np.ndarray
    """int32: the row inside that shard."""
    start: np.ndarray
    """int32: the first slot inside that row."""


class PackedUnitWriter:
    """Receives a packed unit's samples in input order; ``finish`` writes its rows."""

    def __init__(
        self,
        unit_path: Path,
        unit_size: int,
        rows_per_shard: int,
        dtype: np.dtype,
        pad_id: int,
        span_width: int = 0,
    ) -> None:
        self.unit_path = unit_path
        self.unit_size = unit_size
        self.samples = 0
        self.rows = 0
        """Rows written (set by ``finish``)."""
        self.lower_bound = 0
        """The fewest rows any packing of the unit could use (set by ``finish``)."""
        self._dtype = dtype
        self._pad_id = pad_id
        self._span_width = span_width
        self._shards = UnitShardWriter(unit_path, unit_size, rows_per_shard, span_width > 0)
        self._shards.packed = True
        self._lengths: list[np.ndarray] | np.ndarray | None = []
        """Each batch's counts; one array once packed."""
        self._packing: Packing | None = None
        self._tokens = open(unit_path / TOKENS, "xb")  # noqa: SIM115 - closed by finish/abort
        self._spans = open(unit_path / SPANS, "xb") if span_width else None  # noqa: SIM115

    def write(
        self, tokens: np.ndarray, lengths: np.ndarray, span_rows: np.ndarray | None = None
    ) -> None:
        """Append samples: their ids back to back, their counts, their span records."""
        self._tokens.write(memoryview(np.ascontiguousarray(tokens, self._dtype)).cast("B"))
        if self._spans is not None:
            self._spans.write(memoryview(np.ascontiguousarray(span_rows)).cast("B"))
        self._lengths.append(np.asarray(lengths, dtype=np.int32))
        self.samples += int(lengths.size)

    def pack(self) -> Places:
        """Pack the unit's samples (every one received): their places, in received order."""
        self._close_partial()
        self._lengths = np.concatenate(self._lengths) if self._lengths else np.empty(0, np.int32)
        self._packing = pack(self._lengths, self.unit_size)
        self.rows, self.lower_bound = self._packing.rows, self._packing.lower_bound
        return _places(self._packing, self._shards.samples_per_shard)

    def finish(self, sample_ids: np.ndarray) -> tuple[list[ShardRecord], list[ShardRecord]]:
        """After ``pack``: write the rows and the boundary index (``sample_ids``: the unit's
        samples in received order), remove the partial files; the shards and index files."""
        packing, lengths = self._packing, self._lengths
        if lengths.size:
            self._write_rows(packing, lengths)
        shards = self._shards.finish()
        written = (
            boundaries.write(
                self.unit_path.parent,
                self.unit_size,
                packing.offsets,
                sample_ids,
                packing.samples,
                packing.starts,
                packing.lengths,
            )
            if lengths.size
            else []
        )
        for name in (TOKENS, SPANS):
            (self.unit_path / name).unlink(missing_ok=True)
        self._packing = self._lengths = None  # only the row counts are kept
        return shards, written

    def _write_rows(self, packing: Packing, lengths: np.ndarray) -> None:
        """The rows, a block at a time: each made here while a thread hashes and writes the
        one before (hashlib and file writes release the GIL), so the two overlap."""
        per_block = max(1, _BLOCK_SLOTS // self.unit_size)
        source = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
        with ThreadPoolExecutor(max_workers=1) as writer:
            pending = None
            for first in range(0, packing.rows, per_block):
                block = self._block(packing, source, first, min(first + per_block, packing.rows))
                if pending is not None:
                    pending.result()  # at most two blocks held at once
                pending = writer.submit(self._shards.write, *block)
            if pending is not None:
                pending.result()

    def _block(
        self, packing: Packing, source: np.ndarray, first: int, last: int
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """Rows ``first`` to ``last`` of the unit: ``UnitShardWriter.write``'s arguments."""
        width, offsets = self.unit_size, packing.offsets
        lo, hi = int(offsets[first]), int(offsets[last])
        samples = packing.samples[lo:hi]
        per_row = np.diff(offsets[first : last + 1])
        rows_of = np.repeat(np.arange(last - first, dtype=np.int64), per_row)
        targets = rows_of * width + packing.starts[lo:hi]
        rows = np.full((last - first) * width, self._pad_id, dtype=self._dtype)
        # One read per sample, straight into its place in the rows: 1.1 us a sample. Index
        # arrays over every token (np.take) took 1-5 us, and a mapping of the file 2.2 us with
        # the unmapping its pages need (a block's samples lie anywhere in the file, and every
        # page a fault maps counts in the process's memory: the whole file, read whole).
        itemsize = self._dtype.itemsize
        _read_into(
            self.unit_path / TOKENS,
            memoryview(rows).cast("B"),
            targets * itemsize,
            source[samples] * itemsize,
            packing.lengths[lo:hi].astype(np.int64) * itemsize,
        )
        records = None
        if self._spans is not None:  # one span record per sample, in the rows' order
            records = np.empty((samples.size, 1 + self._span_width), dtype=spans_format.DTYPE)
            size = records.shape[1] * records.itemsize
            _read_into(
                self.unit_path / SPANS,
                memoryview(records).cast("B"),
                np.arange(samples.size, dtype=np.int64) * size,
                samples.astype(np.int64) * size,
                np.full(samples.size, size, dtype=np.int64),
            )
        return rows.reshape(-1, width), records, per_row

    def _close_partial(self) -> None:
        for handle in (self._tokens, self._spans):
            if handle is not None and not handle.closed:
                handle.flush()
                handle.close()

    def abort(self) -> None:
        """Close the open files without finishing them (the build failed)."""
        self._close_partial()
        self._shards.abort()


def _read_into(
    path: Path, out: memoryview, targets: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> None:
    """Bytes ``[starts[k], starts[k] + sizes[k])`` of ``path`` into ``out`` at ``targets[k]``."""
    with open(path, "rb", buffering=0) as handle:
        fd = handle.fileno()
        for target, start, size in zip(
            targets.tolist(), starts.tolist(), sizes.tolist(), strict=True
        ):
            if os.preadv(fd, [out[target : target + size]], start) != size:
                raise OSError(errno.EIO, f"{path.name}: a short read", str(path.parent))


def _places(packing: Packing, rows_per_shard: int) -> Places:
    """Per sample in received order: its shard, row in that shard and start in that row."""
    row = np.empty(packing.samples.size, dtype=np.int32)
    start = np.empty(packing.samples.size, dtype=np.int32)
    row[packing.samples] = np.repeat(
        np.arange(packing.rows, dtype=np.int32), np.diff(packing.offsets)
    )
    start[packing.samples] = packing.starts
    shard, in_shard = np.divmod(row, rows_per_shard)
    return Places(shard, in_shard, start)
