"""Fixed-width shard files of one unit: ``unit_<size>/shard_<6 digits>.bin``, rolled by sample count.

Layout: little-endian records of exactly ``unit_size`` slots each (tokens, then PAD), so record k
of a shard starts at byte ``k * unit_size * bytes_per_token``. A shard closes after
``samples_per_shard`` records; the last one may be shorter. In a packed unit a record is a row
of whole samples back to back, then PAD (``build/formats/boundaries.py`` says which), and a
spans file holds one span record per sample, row after row. Each closed shard is hashed as it is
written (no second read) and reported in the spec's form through the ``mintdim.unit_build`` logger.
When segment spans are stored, each shard has its spans file beside it (``build/formats/spans.py``),
written in lockstep.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mintdim.build.formats import spans
from mintdim.shared.durable import HashedFile
from mintdim.shared.human import human_bytes
from mintdim.shared.lang import Bilingual
from mintdim.shared.log import get_logger, show

__all__ = [
    "ShardRecord",
    "UnitShardWriter",
    "shard_name",
    "shard_path",
    "spans_path",
    "unit_dir_name",
]

RECOMMENDED_SHARD_BYTES = 512 << 20
"""Above this a closed shard earns a warning; an internal heuristic, not a setting."""

_log = get_logger("unit_build")

# The key=value fields are the same in both languages: scripts grep them.
SHARD_CLOSED = Bilingual(
    en="[unit-build] shard={number:06d} samples={samples} bytes={size} unit={unit}",
    vi="[unit-build] shard={number:06d} samples={samples} bytes={size} unit={unit}",
)
SHARD_TOO_BIG = Bilingual(
    en="[unit-build:warning] shard={number:06d} size={size} exceeds recommended {limit}.\n"
    "Build continues because sharding is controlled by samples_per_shard.",
    vi="[unit-build:warning] shard={number:06d} size={size} vượt mức khuyến nghị {limit}.\n"
    "Build vẫn tiếp tục vì số mẫu mỗi shard do samples_per_shard quyết định.",
)


def unit_dir_name(size: int) -> str:
    """Directory of one unit inside the output directory."""
    return f"unit_{size}"


def shard_name(number: int) -> str:
    """File name of shard ``number`` inside its unit directory."""
    return f"shard_{number:06d}.bin"


def shard_path(unit_size: int, number: int) -> str:
    """Path of a shard inside the output directory, as manifest.json and sample_index list it."""
    return f"{unit_dir_name(unit_size)}/{shard_name(number)}"


def spans_path(unit_size: int, number: int) -> str:
    """Path of shard ``number``'s segment spans inside the output directory."""
    return shard_path(unit_size, number).removesuffix(".bin") + spans.SUFFIX


@dataclass(frozen=True, slots=True)
class ShardRecord:
    """A closed file of a unit (a shard, or its index), as listed in manifest.json."""

    path: str
    unit_size: int
    samples: int
    bytes: int
    sha256: str
    spans: dict | None = None
    """The spans file beside the shard: ``{"path", "bytes", "sha256"}``, or None."""
    rows: int | None = None
    """A packed unit's shard: its rows (``samples`` then counts the samples they hold)."""


def _raw(records: np.ndarray) -> memoryview:
    """The bytes of consecutive records (rows of a C-ordered array), without copying them: a
    copy (``tobytes``) cost as much again as hashing them."""
    return memoryview(np.ascontiguousarray(records)).cast("B")


class UnitShardWriter:
    """Appends padded records of one unit size, opening and closing shards by sample count."""

    def __init__(
        self,
        unit_path: Path,
        unit_size: int,
        samples_per_shard: int,
        spans_stored: bool = False,
    ) -> None:
        self.unit_path = unit_path
        self.unit_size = unit_size
        self.samples_per_shard = samples_per_shard
        self.samples = 0
        self.closed: list[ShardRecord] = []
        self._shard: HashedFile | None = None
        self._in_shard = 0
        self._spans_stored = spans_stored
        self._spans: HashedFile | None = None
        self.packed = False
        """Set by a packed unit's writer: records are rows, and shards list their samples."""
        self._held = 0

    def write(
        self,
        rows: np.ndarray,
        span_rows: np.ndarray | None = None,
        per_row: np.ndarray | None = None,
    ) -> None:
        """Append records (a 2-D array of width ``unit_size``), splitting them across shards;
        ``span_rows`` are their span records when spans are stored. ``per_row``: a packed
        unit's rows, the samples each holds (``span_rows`` then has one record per sample)."""
        start = 0
        held = 0 if per_row is None else np.concatenate(([0], np.cumsum(per_row)))
        while start < len(rows):
            if self._shard is None:
                self._open()
            take = min(self.samples_per_shard - self._in_shard, len(rows) - start)
            self._shard.write(_raw(rows[start : start + take]))
            first, last = (start, start + take) if per_row is None else held[[start, start + take]]
            if self._spans is not None:
                self._spans.write(_raw(span_rows[first:last]))
            self._in_shard += take
            self._held += int(last - first)
            self.samples += take
            start += take
            if self._in_shard == self.samples_per_shard:
                self._close()

    def finish(self) -> list[ShardRecord]:
        """Close the last, possibly short, shard and return every shard written."""
        if self._shard is not None:
            self._close()
        return self.closed

    def abort(self) -> None:
        """Close the open files without recording them (the build failed)."""
        for file in (self._shard, self._spans):
            if file is not None:
                file.close()
        self._shard = self._spans = None

    def _open(self) -> None:
        number = len(self.closed)
        self._shard = HashedFile(self.unit_path / shard_name(number))
        self._in_shard = self._held = 0
        if self._spans_stored:
            self._spans = HashedFile(self.unit_path.parent / spans_path(self.unit_size, number))

    def _close(self) -> None:
        assert self._shard is not None  # noqa: S101 - only called with an open shard
        # The build fsyncs everything before its manifest anyway; doing it per shard here, while
        # the workers keep tokenizing, leaves little for that last step to wait for.
        number = len(self.closed)
        span_record = None
        if self._spans is not None:
            self._spans.close(sync=True)
            span_record = {"path": spans_path(self.unit_size, number), **self._spans.record()}
            self._spans = None
        self._shard.close(sync=True)
        shard = self._shard.record()
        self._shard = None
        self.closed.append(
            ShardRecord(
                path=shard_path(self.unit_size, number),
                unit_size=self.unit_size,
                samples=self._held if self.packed else self._in_shard,
                bytes=shard["bytes"],
                sha256=shard["sha256"],
                spans=span_record,
                rows=self._in_shard if self.packed else None,
            )
        )
        size = human_bytes(shard["bytes"])
        show(
            _log,
            SHARD_CLOSED,
            number=number,
            samples=self.closed[-1].samples,
            size=size,
            unit=self.unit_size,
        )
        if shard["bytes"] > RECOMMENDED_SHARD_BYTES:
            limit = f"{RECOMMENDED_SHARD_BYTES >> 20} MiB"  # the spec's "512 MiB"
            show(_log, SHARD_TOO_BIG, logging.WARNING, number=number, size=size, limit=limit)
