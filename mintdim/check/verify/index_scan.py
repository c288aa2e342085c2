"""``sample_index.jsonl``: contiguous ids, and each sample where the writer puts the next sample
of its unit; its columns (:class:`Index`) for the checks after it.

The lines are read in blocks straight from their bytes (sample_index.ExactReader) on a thread
of their own, beside the checks of the main thread, which take each block's columns in order."""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import sample_index
from mintdim.build.formats.boundaries import Boundaries
from mintdim.build.formats.shards import shard_path
from mintdim.check.report import SHOWN_PER_CHECK, VerifyReport
from mintdim.check.verify.manifest import Build
from mintdim.shared import durable

__all__ = ["INDEX_BLOCK_BYTES", "Index", "IndexScan", "Lines", "check_sample_index", "parse_block"]

INDEX_BLOCK_BYTES = 4 << 20
"""sample_index.jsonl is parsed in blocks of whole lines of about this size."""
_AHEAD = 3
"""Index blocks handed to the parsing thread beyond the one whose findings are being taken."""


@dataclass(slots=True)
class Index:
    """Columns of sample_index.jsonl (one entry per line) that later checks compare against."""

    token_counts: np.ndarray
    units: np.ndarray
    files: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray
    """``S64``: each sample's hash in lower-case hex."""
    record_counts: list[np.ndarray]
    """Per listed shard (by manifest position): the token count of each record, -1 if unknown."""
    record_ids: list[np.ndarray]
    """Per listed shard: the sample id of each record, -1 if no sample points at it."""


def check_sample_index(
    build: Build, report: VerifyReport, pool: Executor, rows: dict[int, Boundaries] | None = None
) -> Index:
    """Read the index in blocks of whole lines (on ``pool``) and check whole columns at once;
    a packed build's samples are where its ``rows`` put them."""
    scan = IndexScan(build, report, rows)
    path = build.root / sample_index.FILENAME
    if not path.is_file():
        report.add("sample_index", sample_index.FILENAME, "missing")
    else:
        # One open file for every range: the kernel reads ahead of it as of one sequential reader.
        with durable.open_sequential(path) as handle:
            size, step = os.fstat(handle.fileno()).st_size, INDEX_BLOCK_BYTES
            ranges = [
                (handle.fileno(), start, min(start + step, size)) for start in range(0, size, step)
            ]
            for offset, length, columns in _in_order(pool, scan.read, ranges):
                scan.lines(Lines(path, offset, length), columns)
    return scan.finish()


def _in_order(pool: Executor, work: Callable, items: Iterable) -> Iterator:
    """``work(item)`` of each item, run on ``pool``, the results in the items' order. A few
    items run ahead of the one taken, so memory stays bounded and every worker stays busy."""
    pending: deque[Future] = deque()
    for item in items:
        pending.append(pool.submit(work, item))
        if len(pending) > _AHEAD:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def parse_block(block: bytes, lines_before: int, report: VerifyReport) -> list[object]:
    """The rows of a block of whole lines; a line that does not parse is reported, becomes None."""
    body = block[:-1] if block.endswith(b"\n") else block
    try:
        return orjson.loads(b"[" + body.replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        pass
    rows: list[object] = []
    for number, line in enumerate(body.split(b"\n"), start=lines_before + 1):
        try:
            rows.append(orjson.loads(line))
        except orjson.JSONDecodeError as err:
            report.add(
                "sample_index", sample_index.FILENAME, "index_line", line=number, problem=str(err)
            )
            rows.append(None)
    return rows


class IndexScan:
    """Running state of the index check: where the writer puts the next sample of each unit."""

    def __init__(
        self, build: Build, report: VerifyReport, rows: dict[int, Boundaries] | None = None
    ) -> None:
        self.build = build
        self.report = report
        self.lines_seen = 0
        self.sizes = np.asarray(build.sizes, dtype=np.int64)
        self.placed = np.zeros(len(build.sizes), dtype=np.int64)
        self.source_of = {path: i for i, path in enumerate(build.sources)}
        self.shard_of = {shard.path: position for position, shard in enumerate(build.shards)}
        self.shard_table = self._shard_table()
        self._readers = threading.local()
        self.columns: dict[str, list[np.ndarray]] = {
            key: [] for key in ("token_counts", "units", "files", "lines", "hashes")
        }
        records = [s.samples if s.rows is None else s.rows for s in build.shards]
        self.record_counts = [np.full(n, -1, dtype=np.int64) for n in records]
        self.record_ids = [np.full(n, -1, dtype=np.int64) for n in records]
        self.rows_at: tuple[np.ndarray, np.ndarray] | None = None
        """A packed build's place of each sample id: (global row, start); -1 when unknown."""
        if build.packed:
            self.rows_at = self._packed_rows(rows or {})

    def _packed_rows(self, rows: dict[int, Boundaries]) -> tuple[np.ndarray, np.ndarray]:
        """Each packed row's fill and first sample as its shard record's count and id; each
        sample's row and start, by id (one that is no sample's, or twice: left out)."""
        count = sum(own.sample_id.size for own in rows.values())
        row_at = np.full(count, -1, dtype=np.int64)
        start_at = np.full(count, -1, dtype=np.int64)
        per_shard = self.build.samples_per_shard
        for unit, size in enumerate(self.build.sizes):
            own = rows.get(size)
            if own is None:
                continue
            ids = own.sample_id
            fine = (ids >= 0) & (ids < count)
            row_at[ids[fine]], start_at[ids[fine]] = own.row_of()[fine], own.start[fine]
            fill, firsts = own.fill(), own.first_ids()
            # Shard n holds rows n * per_shard onwards: a slice each, not a mask over all rows.
            for number, first in enumerate(range(0, own.rows, per_shard)):
                shard = int(self.shard_table[unit, min(number, self.shard_table.shape[1] - 1)])
                if shard < 0:
                    continue
                held = min(per_shard, own.rows - first, self.record_counts[shard].size)
                self.record_counts[shard][:held] = fill[first : first + held]
                self.record_ids[shard][:held] = firsts[first : first + held]
        return row_at, start_at

    def _shard_table(self) -> np.ndarray:
        """Manifest position of shard ``[unit, number]`` under the writer's names, -1 if unlisted."""
        table = np.full((self.sizes.size, len(self.build.shards) + 1), -1, dtype=np.int64)
        for unit, size in enumerate(self.build.sizes):
            for number in range(table.shape[1]):
                position = self.shard_of.get(shard_path(size, number))
                if position is None:
                    break
                table[unit, number] = position
        return table

    def read(self, part: tuple[int, int, int]) -> tuple[int, int, sample_index.Columns | None]:
        """The lines of the index that start in one part of it, (open file, start, end): their
        offset and size, and their columns when every one has the writer's exact form (any
        thread: each has its reader)."""
        reader = getattr(self._readers, "reader", None)
        if reader is None:
            reader = self._readers.reader = sample_index.ExactReader(
                self.build.sources, list(self.shard_of), packed=self.build.packed
            )
        return reader.read_lines(*part)

    def lines(self, lines: Lines, columns: sample_index.Columns | None) -> None:
        """Check a block of whole lines, from its ``columns`` read straight from its bytes, else
        parsed by orjson (the same columns, and every line that does not parse reported)."""
        if not lines.size:
            return
        if columns is not None:
            self.block(lines, columns)
        else:
            rows = parse_block(lines.data(), self.lines_seen, self.report)
            self.block(rows, sample_index.parse_rows(rows, self.source_of, self.shard_of))

    def block(self, rows: Sequence[object], columns: sample_index.Columns) -> None:
        first = self.lines_seen
        self.lines_seen += columns.sample_id.size
        counts, sizes, lines = columns.token_count, columns.unit_size, columns.source_line
        units = np.minimum(np.searchsorted(self.sizes, sizes), self.sizes.size - 1)
        rules = {
            "unit_size is one of the build's units": columns.unit_size_ok
            & (self.sizes[units] == sizes),
            "token_count is an integer from 0 to unit_size": columns.token_count_ok
            & (counts >= 0)
            & (counts <= sizes),
            "source_file is an input of the manifest": columns.source_file >= 0,
            "source_line is a line number (1 or more)": columns.source_line_ok & (lines >= 1),
            "hash is a SHA-256 hex digest": columns.hash_ok,
        }
        good = np.logical_and.reduce(list(rules.values()))
        for position in np.flatnonzero(~good)[:SHOWN_PER_CHECK].tolist():
            broken = next(rule for rule, holds in rules.items() if not holds[position])
            self._fail("index_line", first + position, problem=f"expected: {broken}")
        expected_ids = np.arange(first, self.lines_seen)
        wrong_ids = ~columns.sample_id_ok | (columns.sample_id != expected_ids)
        for position in np.flatnonzero(wrong_ids)[:SHOWN_PER_CHECK].tolist():
            self._place(rows, first, position, "sample_id", int(expected_ids[position]))
        if self.rows_at is None:
            self._check_places(
                rows, first, good, units, counts, columns.shard_path, columns.shard_row
            )
        else:
            self._check_packed_places(rows, first, good, units, columns)
        counts[~good], units[~good] = 0, 0
        values = (counts, units, columns.source_file, lines, columns.hash)
        for key, column in zip(self.columns, values, strict=True):
            self.columns[key].append(column)

    def _check_places(
        self,
        rows: Sequence[object],
        first: int,
        good: np.ndarray,
        units: np.ndarray,
        counts: np.ndarray,
        shards: np.ndarray,
        shard_rows: np.ndarray,
    ) -> None:
        """Each good sample must sit where the writer puts the next sample of its unit."""
        sequence = np.full(units.size, -1, dtype=np.int64)
        for unit in range(self.sizes.size):
            members = np.flatnonzero(good & (units == unit))
            sequence[members] = self.placed[unit] + np.arange(members.size)
            self.placed[unit] += members.size
        numbers, places = np.divmod(sequence, self.build.samples_per_shard)
        table = self.shard_table
        inside = (numbers >= 0) & (numbers < table.shape[1])
        wanted = np.where(inside, table[units, np.clip(numbers, 0, table.shape[1] - 1)], -1)
        wrong_shard = good & ((shards != wanted) | (wanted < 0))
        wrong_row = good & ~wrong_shard & (shard_rows != places)
        for position in np.flatnonzero(wrong_shard)[:SHOWN_PER_CHECK].tolist():
            size = int(self.sizes[units[position]])
            path = shard_path(size, int(numbers[position]))
            self._place(rows, first, position, "shard_path", path)
        for position in np.flatnonzero(wrong_row)[:SHOWN_PER_CHECK].tolist():
            self._place(rows, first, position, "shard_row", int(places[position]))
        placed = good & ~wrong_shard & ~wrong_row
        for shard in np.unique(wanted[placed]).tolist():
            members = placed & (wanted == shard)
            in_shard = places[members]
            self.record_counts[shard][in_shard] = counts[members]
            self.record_ids[shard][in_shard] = first + np.flatnonzero(members)

    def _check_packed_places(
        self,
        rows: Sequence[object],
        first: int,
        good: np.ndarray,
        units: np.ndarray,
        columns: sample_index.Columns,
    ) -> None:
        """Each good sample must name the shard, row and start its unit's rows give it."""
        for unit in range(self.sizes.size):
            self.placed[unit] += np.count_nonzero(good & (units == unit))
        ids = first + np.arange(units.size)
        row_at, start_at = self.rows_at
        known = ids < row_at.size
        row = np.where(known, row_at[np.minimum(ids, max(row_at.size - 1, 0))], -1)
        start = np.where(known, start_at[np.minimum(ids, max(start_at.size - 1, 0))], -1)
        numbers, places = np.divmod(row, self.build.samples_per_shard)
        table = self.shard_table
        inside = (row >= 0) & (numbers < table.shape[1])
        wanted = np.where(inside, table[units, np.clip(numbers, 0, table.shape[1] - 1)], -1)
        checks = (
            ("shard_path", good & ((columns.shard_path != wanted) | (wanted < 0))),
            ("shard_row", good & (columns.shard_row != places)),
            (sample_index.ROW_START, good & (columns.row_start != start)),
        )
        for key, wrong in checks:
            for position in np.flatnonzero(wrong)[:SHOWN_PER_CHECK].tolist():
                if key == "shard_path":
                    number = int(numbers[position])
                    want = (
                        shard_path(int(self.sizes[units[position]]), number)
                        if row[position] >= 0
                        else None
                    )
                else:
                    want = int((places if key == "shard_row" else start)[position])
                self._place(rows, first, position, key, want)

    def _fail(self, code: str, position: int, **facts: object) -> None:
        self.report.add("sample_index", sample_index.FILENAME, code, line=position + 1, **facts)

    def _place(
        self, rows: Sequence[object], first: int, position: int, key: str, want: object
    ) -> None:
        row = rows[position]
        actual = row.get(key) if isinstance(row, dict) else None
        self._fail(
            "index_place",
            first + position,
            sample_id=first + position,
            key=key,
            actual=actual,
            expected=want,
        )

    def finish(self) -> Index:
        for unit, size in enumerate(self.build.sizes):
            records = sum(s.samples for s in self.build.shards if s.unit == size)
            if records != int(self.placed[unit]):
                self.report.add(
                    "sample_index",
                    sample_index.FILENAME,
                    "index_total",
                    samples=int(self.placed[unit]),
                    unit=size,
                    records=records,
                )
        self.report.samples = self.lines_seen
        joined = {
            key: np.concatenate(parts)
            if parts
            else np.zeros(0, dtype="S64" if key == "hashes" else np.int64)
            for key, parts in self.columns.items()
        }
        return Index(**joined, record_counts=self.record_counts, record_ids=self.record_ids)


class Lines(Sequence):
    """Lines of the index, by file offset and size; parsed only when a failure message needs a
    row (lines read straight from their bytes are valid JSON)."""

    def __init__(self, path: Path, offset: int, size: int) -> None:
        self.path, self.offset, self.size = path, offset, size
        self._rows: list[object] | None = None

    def data(self) -> bytes:
        with open(self.path, "rb") as handle:
            return os.pread(handle.fileno(), self.size, self.offset)

    def __len__(self) -> int:
        return len(self._parsed())

    def __getitem__(self, position: int) -> object:
        return self._parsed()[position]

    def _parsed(self) -> list[object]:
        if self._rows is None:
            self._rows = orjson.loads(b"[" + self.data()[:-1].replace(b"\n", b",") + b"]")
        return self._rows
