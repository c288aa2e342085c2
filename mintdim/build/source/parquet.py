"""Parquet inputs (the ``[parquet]`` extra, pyarrow): each row is a record, row groups make pieces.

Fields are columns: every declared field must name a column of the file's schema (extra columns
are never read), and a nested column (list, struct, map, union) is no field. Both are
``ParquetSchemaError``, found from the footer before any row is read (validation). Values follow
the JSONL rules: a string is used as it is, in any Arrow string encoding (string, large_string,
string_view, a dictionary of strings); a null, a number, a boolean or any other value is
``FieldValueTypeError`` at its row, the first in input order, like a JSONL value of that type.
Rows are numbered from 1 in the file, and that number is each sample's ``source_line``.

Pieces are runs of whole row groups cut like lines are (``jsonl.py``): a piece ends with the
first row group ending at or past each multiple of ``piece_bytes`` of the file. A piece is that
byte range of the file (the row groups' column chunks) and its first row; the driver hashes the
range and the worker reading it hashes it again before it reads the rows (``InputChangedError``
when they differ). Reading goes one row group at a time, in batches of ``build_batch`` rows of
the declared columns only, so memory holds one row group's declared columns at most.

A row group larger than a piece whose declared columns hold more than ``MAX_CARRIED_BYTES``
(pyarrow writes a file of up to 1Mi rows as one row group by default) would leave every worker
but one idle, and no reader can start in the middle of its pages without decoding what comes
before. So the driver reads such a group once and cuts it into row ranges of about
``MAX_CARRIED_BYTES`` of decoded values, each carried to its worker as Arrow IPC, as a
compressed stream's lines are (``compressed.py``); decoding costs the driver a few percent of
what tokenizing the rows costs the workers. (Whether a group is that large is told from its
footer, by the uncompressed size of its declared columns' pages.)

The fingerprint (manifest, unchanged check) is of the file as stored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mintdim.build.contracts import FilePlan
from mintdim.build.source.base import (
    MAX_CARRIED_BYTES,
    FileSource,
    InputFingerprint,
    ParsedLines,
    Piece,
    PieceWork,
    Records,
)
from mintdim.errors import (
    FieldValueTypeError,
    InputChangedError,
    LineTooLongError,
    MintDimError,
    ParquetMissingError,
    ParquetReadError,
    ParquetSchemaError,
)

__all__ = ["EXTENSIONS", "MAGIC", "ParquetSource", "RowBatch"]

MAGIC = b"PAR1"
"""The first (and last) four bytes of a Parquet file."""
EXTENSIONS = (".parquet", ".pq")
"""Name endings that claim Parquet."""

_HASH_BLOCK = 8 << 20
_RANGE_STEP_ROWS = 1024
"""Rows decoded at a time while a large row group is cut into row ranges (fewer and larger
batches cost the driver less to decode and to write out)."""


@dataclass(frozen=True, slots=True)
class RowBatch:
    """Up to ``build_batch`` consecutive rows of one row group: the declared columns, in
    declared field order (pyarrow arrays, which pickle with their own buffers only)."""

    file_index: int
    first_line: int
    """The 1-based row of the first row."""
    columns: tuple[Any, ...]
    stored_bytes: int
    """The rows' share of their row group's bytes in the file."""

    @property
    def last_line(self) -> int:
        """The 1-based row of the last row."""
        return self.first_line + len(self.columns[0]) - 1

    @property
    def input_bytes(self) -> int:
        """``stored_bytes``: the progress bar counts the file as stored."""
        return self.stored_bytes


@dataclass(frozen=True, slots=True)
class _Group:
    """One row group: its index, byte range in the file, first row, rows, and the uncompressed
    bytes of its declared columns."""

    index: int
    start: int
    end: int
    first_row: int
    rows: int
    declared_bytes: int

    def carried(self, piece_bytes: int) -> bool:
        """Whether the group is cut into row ranges the driver carries (module docstring)."""
        return (
            self.end - self.start > piece_bytes
            and self.declared_bytes > MAX_CARRIED_BYTES
            and self.rows > 1
        )


class ParquetSource(FileSource):
    """A Parquet file: row groups read by the workers themselves, rows parsed as records."""

    def check(self) -> None:
        """The footer reads and every declared field is a flat column (before any row)."""
        self._open()

    def pieces(self, piece_bytes: int) -> Generator[PieceWork, None, InputFingerprint]:
        """Runs of whole row groups, or row ranges of a large one (module docstring); returns
        the stored file's fingerprint."""
        mtime_ns = os.stat(self.plan.abs_path).st_mtime_ns
        file = self._open()
        groups = _groups(file, self.plan.fields)
        number = 0
        while groups:
            if groups[0].carried(piece_bytes):
                works = self._row_ranges(file, groups[0], number)
                groups = groups[1:]
            else:
                taken = _first_piece(groups, piece_bytes)
                works = [self._run(groups[:taken], number)]
                groups = groups[taken:]
            for work in works:
                yield work
                number += 1
        return _fingerprint(self.plan.abs_path, mtime_ns)

    def _run(self, run: list[_Group], number: int) -> PieceWork:
        """A piece of whole row groups, which its worker reads from the file."""
        start, end = run[0].start, max(group.end for group in run)
        digest = _range_sha256(self.plan.abs_path, start, end)
        piece = Piece(self.plan.index, number, start, end, run[0].first_row, digest)
        return PieceWork(piece, row_groups=range(run[0].index, run[-1].index + 1))

    def _row_ranges(self, file: Any, group: _Group, number: int) -> Iterator[PieceWork]:
        """A large row group's rows, read once here, in pieces that carry them (Arrow IPC), each
        as many rows as hold about ``MAX_CARRIED_BYTES`` of decoded values.

        Each piece names the group's byte range and its own first row; its digest is of the
        rows it carries."""
        pa, _ = _pyarrow()
        per_row = (group.end - group.start) / group.rows
        row = group.first_row
        held: list[Any] = []
        size = 0
        for batch in self._read(file, group, _RANGE_STEP_ROWS):
            held.append(batch)
            size += batch.nbytes
            if size >= MAX_CARRIED_BYTES:
                yield self._carrying(pa, held, group, number, row, per_row)
                number += 1
                row += sum(b.num_rows for b in held)
                held, size = [], 0
        if held:
            yield self._carrying(pa, held, group, number, row, per_row)

    def _carrying(
        self, pa: Any, batches: list[Any], group: _Group, number: int, row: int, per_row: float
    ) -> PieceWork:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batches[0].schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        data = sink.getvalue().to_pybytes()
        digest = hashlib.sha256(data).hexdigest()
        piece = Piece(self.plan.index, number, group.start, group.end, row, digest)
        return PieceWork(piece, data, ratio=per_row)

    def piece_batches(self, work: PieceWork) -> Iterator[RowBatch]:
        """The piece's rows: those it carries, or its row groups read from the file once their
        bytes are checked against the ones the driver cut."""
        piece = work.piece
        if work.data is not None:
            yield from self._carried_rows(work)
            return
        file = self._open()
        groups = _groups(file, self.plan.fields)
        run = [groups[i] for i in work.row_groups or () if i < len(groups)]
        same = (
            run
            and len(run) == len(work.row_groups)
            and (run[0].start, max(g.end for g in run), run[0].first_row)
            == (piece.start, piece.end, piece.first_line)
        )
        digest = _range_sha256(self.plan.abs_path, piece.start, piece.end) if same else ""
        if digest != piece.sha256:
            raise InputChangedError(
                file=self.plan.path,
                change="content",
                was=piece.sha256,
                now=digest or "(the row groups moved)",
                byte_range=f"{piece.start}-{piece.end}",
            )
        for group in run:
            yield from self._rows(file, group)

    def _carried_rows(self, work: PieceWork) -> Iterator[RowBatch]:
        pa, _ = _pyarrow()
        table = pa.ipc.open_stream(work.data).read_all()
        row = work.piece.first_line
        for batch in table.to_batches(max_chunksize=self.plan.build_batch):
            columns = tuple(batch.column(name) for name in self.plan.fields)
            yield RowBatch(self.plan.index, row, columns, round(batch.num_rows * work.ratio))
            row += batch.num_rows

    def batches(self) -> Generator[RowBatch, None, InputFingerprint]:
        """Every row in batches, row group by row group; returns the stored file's
        fingerprint (hashed after the rows, so a caller that stops early pays nothing for it)."""
        mtime_ns = os.stat(self.plan.abs_path).st_mtime_ns
        file = self._open()
        for group in _groups(file, self.plan.fields):
            yield from self._rows(file, group)
        return _fingerprint(self.plan.abs_path, mtime_ns)

    def parse(self, batch: RowBatch) -> ParsedLines:
        """The rows' field values and texts, up to the first row whose value is no string or
        whose values hold more than ``max_line_bytes``."""
        plan = self.plan
        _, join = plan.template.value_functions(plan.fields)  # the columns are in field order
        count = len(batch.columns[0])
        bad = [_first_bad(column) for column in batch.columns]
        stop = min((row for row in bad if row is not None), default=count)
        large = _first_large([column.slice(0, stop) for column in batch.columns], plan)
        columns = [
            column.slice(0, stop if large is None else large[0]).to_pylist()
            for column in batch.columns
        ]
        values = list(zip(*columns, strict=True))
        texts = [join(sample) for sample in values]
        numbers = list(range(batch.first_line, batch.first_line + len(values)))
        error: MintDimError | None = None
        if large is not None:
            error = _too_large(plan, batch.first_line, large)
        elif stop < count:
            which = bad.index(stop)
            column = batch.columns[which]
            error = FieldValueTypeError(
                file=plan.path,
                line=batch.first_line + stop,
                field=plan.fields[which],
                found_type="null" if column[stop].as_py() is None else _type_name(column.type),
                kind="parquet",
            )
        return ParsedLines(texts, values, numbers, 0, error)

    def records(
        self, fields: Sequence[str] | None = None
    ) -> Generator[Records, None, InputFingerprint]:
        """Every row in batches of ``build_batch`` rows, with the declared columns and those of
        ``fields`` the file has (None: every column); returns the stored file's fingerprint.
        ``max_line_bytes`` bounds the strings a row holds in the columns read."""
        mtime_ns = os.stat(self.plan.abs_path).st_mtime_ns
        file = self._open()
        names = file.schema_arrow.names
        wanted = [*self.plan.fields, *(name for name in fields or () if name in names)]
        columns = None if fields is None else list(dict.fromkeys(wanted))
        pa, _ = _pyarrow()
        row = 1
        try:
            # One thread: the callers read one file at a time beside their own work.
            for batch in file.iter_batches(
                batch_size=self.plan.build_batch, columns=columns, use_threads=False
            ):
                large = _first_large(batch.columns, self.plan)
                if large is not None:
                    rows = batch.slice(0, large[0]).to_pylist()
                    numbers = list(range(row, row + len(rows)))
                    error = _too_large(self.plan, row, large)
                    yield Records(rows, numbers, 0, error, tuple(names))
                    break
                rows = batch.to_pylist()
                yield Records(rows, list(range(row, row + len(rows))), 0, None, tuple(names))
                row += len(rows)
        except (pa.ArrowException, OSError) as err:
            raise ParquetReadError(
                file=self.plan.path, part="row_group", detail=str(err), row=row
            ) from None
        return _fingerprint(self.plan.abs_path, mtime_ns)

    def _open(self) -> Any:
        """The file's ``pyarrow.parquet.ParquetFile``, its declared columns checked."""
        pa, pq = _pyarrow()
        try:
            file = pq.ParquetFile(self.plan.abs_path)
        except (pa.ArrowException, OSError) as err:
            raise ParquetReadError(file=self.plan.path, part="footer", detail=str(err)) from None
        _check_schema(self.plan, file.schema_arrow, pa)
        return file

    def _rows(self, file: Any, group: _Group) -> Iterator[RowBatch]:
        """A row group's rows in batches of ``build_batch`` rows."""
        row = group.first_row
        size = group.end - group.start
        for batch in self._read(file, group, self.plan.build_batch):
            columns = tuple(batch.column(name) for name in self.plan.fields)
            share = size * batch.num_rows // max(group.rows, 1)
            yield RowBatch(self.plan.index, row, columns, share)
            row += batch.num_rows

    def _read(self, file: Any, group: _Group, rows: int) -> Iterator[Any]:
        """A row group's declared columns in record batches of ``rows`` rows."""
        pa, _ = _pyarrow()
        try:
            # One thread: the build already runs one worker process per core.
            yield from file.iter_batches(
                batch_size=rows,
                row_groups=[group.index],
                columns=list(self.plan.fields),
                use_threads=False,
            )
        except (pa.ArrowException, OSError) as err:
            raise ParquetReadError(
                file=self.plan.path, part="row_group", detail=str(err), row=group.first_row
            ) from None


def _pyarrow() -> tuple[Any, Any]:
    """``pyarrow`` and ``pyarrow.parquet``, or ``ParquetMissingError`` saying how to get them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as err:
        raise ParquetMissingError(detail=str(err)) from None
    return pyarrow, pyarrow.parquet


def _check_schema(plan: FilePlan, schema: Any, pa: Any) -> None:
    names = list(schema.names)
    for field in plan.fields:
        if field not in names:
            raise ParquetSchemaError(file=plan.path, field=field, problem="missing", columns=names)
        kind = schema.field(field).type
        if pa.types.is_nested(kind):
            raise ParquetSchemaError(
                file=plan.path, field=field, problem="nested", found_type=str(kind), columns=names
            )


def _groups(file: Any, fields: tuple[str, ...]) -> list[_Group]:
    """Every row group's byte range (from its column chunks), first row, and the uncompressed
    bytes of the columns named ``fields``."""
    metadata = file.metadata
    groups, first_row = [], 1
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        starts, ends, declared = [], [], 0
        for column in (group.column(j) for j in range(group.num_columns)):
            start = column.data_page_offset
            if column.has_dictionary_page and column.dictionary_page_offset:
                start = min(start, column.dictionary_page_offset)
            starts.append(start)
            ends.append(start + column.total_compressed_size)
            if column.path_in_schema in fields:
                declared += column.total_uncompressed_size
        groups.append(_Group(index, min(starts), max(ends), first_row, group.num_rows, declared))
        first_row += group.num_rows
    return groups


def _first_piece(groups: list[_Group], piece_bytes: int) -> int:
    """How many of ``groups`` the next piece takes: up to the first one ending at or past the
    next multiple of ``piece_bytes`` after the piece's start (at least one), and never a group
    cut into row ranges."""
    target = (groups[0].start // piece_bytes + 1) * piece_bytes
    for taken, group in enumerate(groups, start=1):
        if group.end >= target:
            return taken
        if taken < len(groups) and groups[taken].carried(piece_bytes):
            return taken
    return len(groups)


def _first_large(columns: list[Any], plan: FilePlan) -> tuple[int, int] | None:
    """``(row, bytes)`` of the first row whose string values hold more than ``max_line_bytes``
    together, or None (columns of another type hold no string to count)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sizes = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    for column in columns:
        if not _is_strings(column.type) or not len(column):
            continue
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        if pa.types.is_string_view(column.type):  # binary_length has no kernel for views
            column = column.cast(pa.large_string())
        sizes += pc.binary_length(column).fill_null(0).to_numpy(zero_copy_only=False)
    over = np.flatnonzero(sizes > plan.max_line_bytes)
    return (int(over[0]), int(sizes[over[0]])) if over.size else None


def _too_large(plan: FilePlan, first_row: int, large: tuple[int, int]) -> LineTooLongError:
    return LineTooLongError(
        file=plan.path,
        line=first_row + large[0],
        limit=plan.max_line_bytes,
        kind="parquet",
        size=large[1],
    )


def _first_bad(column: Any) -> int | None:
    """The first row whose value is no string (null, or a column of another type), or None."""
    if not _is_strings(column.type):
        return 0 if len(column) else None
    if not column.null_count:
        return None
    return int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])


def _is_strings(kind: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return (
        pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)
    )


def _type_name(kind: Any) -> str:
    """A column type as JSON names it when it has a JSON counterpart, else Arrow's name."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return "number"
    if pa.types.is_boolean(kind):
        return "boolean"
    if pa.types.is_null(kind):
        return "null"
    return str(kind)


def _range_sha256(path: str, start: int, end: int) -> str:
    """SHA-256 of bytes ``start`` to ``end`` of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        handle.seek(start)
        left = end - start
        while left > 0 and (block := handle.read(min(left, _HASH_BLOCK))):
            digest.update(block)
            left -= len(block)
    return digest.hexdigest()


def _fingerprint(path: str, mtime_ns: int) -> InputFingerprint:
    """The stored file's fingerprint: its size and SHA-256 now, its mtime when reading began."""
    digest = hashlib.sha256()
    count = 0
    with open(path, "rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
            count += len(block)
    return InputFingerprint(count, mtime_ns, digest.hexdigest())
