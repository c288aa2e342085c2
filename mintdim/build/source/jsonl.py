"""JSONL: the line format, read in raw batches and cut into pieces at line ends.

Line rules: lines end at ``\\n`` only (U+2028, U+2029, U+0085 and a lone ``\\r`` inside a line are
content, which is why this module splits bytes and never calls ``str.splitlines``); a trailing
``\\r`` is dropped so CRLF files work; a UTF-8 BOM at the start of a file is ignored; lines holding
only ASCII whitespace are skipped but still counted, so line numbers stay 1-based physical lines.

Pieces (``JsonlSource.pieces``): byte ranges of the file, each cut just after a newline. Piece
boundaries are the ends of the first line ending at or past each multiple of ``piece_bytes`` in
the file (a line longer than that spans several multiples and makes one piece). So the cuts
depend on the file's bytes and ``piece_bytes`` only: never on the worker count, the executor or
the cluster, and an edit inside one piece moves no other cut. The driver's one pass hashes the
file (its fingerprint for the manifest), numbers the lines and hashes each piece; a worker reads
its piece from the file and checks the bytes against the piece's digest.

Raw batches are read in the main process (or a worker, for its piece); parsing and rendering
happen in whichever process encodes. ``cut_lines`` and ``line_batches`` work on any ``Stream``
of bytes: ``compressed.py`` gives them the decompressed stream of a compressed file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import orjson

from mintdim.build.contracts import FilePlan
from mintdim.build.source.base import (
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
    SampleSchemaError,
    SourceParseError,
)

__all__ = [
    "BOM",
    "READ_BLOCK",
    "JsonlSource",
    "RawBatch",
    "Stream",
    "cut_lines",
    "line_batches",
    "parse_lines",
]

BOM = b"\xef\xbb\xbf"
READ_BLOCK = 8 << 20
"""Bytes read (or decompressed) at once."""
_NEWLINE = ord("\n")

_JSON_TYPE_NAMES = {
    dict: "object",
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


@dataclass(frozen=True, slots=True)
class RawBatch:
    """Up to ``build_batch`` consecutive raw lines of one file, joined by ``\\n``.

    One bytes object per batch, not one per line: the main process only finds where batches
    end, and the worker that parses the batch splits it, so splitting costs the main nothing.
    """

    file_index: int
    first_line: int
    data: bytes
    ratio: float = 1.0
    """Stored bytes per byte of ``data``: 1 for a plain file, the compression ratio so far for a
    compressed one (the progress bar counts the file as stored)."""

    def lines(self) -> list[bytes]:
        """The batch's lines, without their ``\\n``."""
        return self.data.split(b"\n")

    @property
    def last_line(self) -> int:
        """The 1-based number of the batch's last line."""
        return self.first_line + self.data.count(b"\n")

    @property
    def input_bytes(self) -> int:
        """Bytes of the stored file the batch consumed: its lines and their newlines."""
        return round((len(self.data) + 1) * self.ratio)


class Stream:
    """Bytes in blocks, for ``cut_lines`` and ``line_batches``: iterate it for the blocks."""

    damage: Callable[[int], MintDimError] | None = None
    """Set when the blocks ended early at a damaged stream: the error, given the last whole line
    read. Only the lines before the damage are records: the partial one after them is not."""
    ratio: float = 1.0
    """Stored bytes per stream byte so far (``RawBatch.ratio``)."""

    def __iter__(self) -> Iterator[bytes]:
        raise NotImplementedError


class JsonlSource(FileSource):
    """A plain JSONL file: pieces are byte ranges at line ends, read by the workers themselves."""

    def pieces(self, piece_bytes: int) -> Generator[PieceWork, None, InputFingerprint]:
        """Stream the file's pieces in order; returns the file's fingerprint, as reading it gives.

        Memory holds one piece and one read block.
        """
        blocks = _Blocks(self.plan.abs_path, drop_bom=False)  # offsets count every byte
        yield from cut_lines(self.plan, blocks, piece_bytes, carry=False)
        return blocks.fingerprint

    def piece_batches(self, work: PieceWork) -> Iterator[RawBatch]:
        """The piece's raw batches, read from the file; the bytes must be the ones cut."""
        piece = work.piece
        blocks = _Blocks(self.plan.abs_path, piece.start, piece.end)
        yield from line_batches(self.plan, blocks, piece.first_line)
        _check_same_bytes(self.plan, piece, blocks.fingerprint)
        if work.error is not None:  # a line past the limit just after this piece
            raise work.error

    def batches(self) -> Generator[RawBatch, None, InputFingerprint]:
        """Stream the whole file as batches of raw lines; memory holds one read block and one
        batch. Returns the fingerprint of the bytes read."""
        blocks = _Blocks(self.plan.abs_path)
        yield from line_batches(self.plan, blocks, 1)
        return blocks.fingerprint

    def check(self) -> None:
        """Nothing to check before reading a plain file."""

    def parse(self, batch: RawBatch) -> ParsedLines:
        """``parse_lines``."""
        return parse_lines(batch, self.plan)

    def records(
        self, fields: Sequence[str] | None = None
    ) -> Generator[Records, None, InputFingerprint]:
        """``whole_records`` of ``batches`` (every line is parsed whole: ``fields`` changes
        nothing)."""
        return (yield from whole_records(self.batches(), self.plan))


def cut_lines(plan: FilePlan, stream: Stream, piece_bytes: int, carry: bool) -> Iterator[PieceWork]:
    """The pieces of ``stream``, cut at line ends (module docstring); ``carry``: each piece
    holds its bytes, for a stream no worker can read itself.

    A damaged stream ends with a piece of the whole lines before the damage (if any), then an
    empty piece carrying the error: a piece no intact stream has, so no resume reuses it. A line
    that passes ``max_line_bytes`` before its newline ends the pieces the same way, with its
    ``LineTooLongError``, as soon as it does: the rest of the stream is never read (a one-line
    decompression bomb costs the limit, not its size).
    """
    number = 0
    line = 1
    start = 0  # stream offset of buffer[0], the next piece's start
    buffer = bytearray()
    for block in stream:
        buffer += block
        while (cut := _next_cut(buffer, start, piece_bytes)) is not None:
            work = _work(plan, number, start, cut, line, buffer, carry, stream.ratio)
            line += buffer.count(b"\n", 0, cut - start)
            del buffer[: cut - start]
            start, number = cut, number + 1
            yield work
        if len(buffer) - (buffer.rfind(b"\n") + 1) > plan.max_line_bytes:
            break
    else:
        if stream.damage is None:
            if buffer:  # the last piece, its last line perhaps without a newline
                yield _work(
                    plan, number, start, start + len(buffer), line, buffer, carry, stream.ratio
                )
            return
    whole = buffer.rfind(b"\n") + 1
    if whole:
        yield _work(plan, number, start, start + whole, line, buffer, carry, stream.ratio)
        line += buffer.count(b"\n", 0, whole)
        start, number = start + whole, number + 1
    if stream.damage is not None and len(buffer) - whole <= plan.max_line_bytes:
        error = stream.damage(line - 1)
    else:
        error = LineTooLongError(file=plan.path, line=line, limit=plan.max_line_bytes)
    empty = Piece(plan.index, number, start, start, line, hashlib.sha256().hexdigest())
    yield PieceWork(empty, b"", error)


def _work(
    plan: FilePlan,
    number: int,
    start: int,
    end: int,
    line: int,
    buffer: bytearray,
    carry: bool,
    ratio: float,
) -> PieceWork:
    with memoryview(buffer) as view:
        data = view[: end - start]
        piece = Piece(plan.index, number, start, end, line, hashlib.sha256(data).hexdigest())
        return PieceWork(piece, bytes(data), ratio=ratio) if carry else PieceWork(piece)


def _next_cut(buffer: bytearray, start: int, piece_bytes: int) -> int | None:
    """The stream offset where the piece starting at ``start`` ends, if ``buffer`` reaches it."""
    target = (start // piece_bytes + 1) * piece_bytes  # the next multiple past this piece's start
    newline = buffer.find(b"\n", max(0, target - 1 - start))
    return start + newline + 1 if newline >= 0 else None


def _check_same_bytes(plan: FilePlan, piece: Piece, read: InputFingerprint) -> None:
    """The bytes encoded must be the bytes the driver cut (another node, or a later moment)."""
    if read.sha256 != piece.sha256:
        raise InputChangedError(
            file=plan.path,
            change="content",
            was=piece.sha256,
            now=read.sha256,
            byte_range=f"{piece.start}-{piece.end}",
        )


def line_batches(plan: FilePlan, stream: Stream, first_line: int) -> Iterator[RawBatch]:
    """The lines of ``stream`` (whose first line is line ``first_line``) as batches of
    ``plan.build_batch`` raw lines; memory holds one block and one batch. A damaged stream's
    error is raised after the batches of its whole lines."""
    size = plan.build_batch
    next_line = first_line
    data = b""
    for block in stream:
        data += block
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE)
        _check_line_lengths(plan, data, newlines, next_line)
        start = 0
        for taken in range(size, newlines.size + 1, size):
            end = int(newlines[taken - 1])
            yield RawBatch(plan.index, next_line, data[start:end], stream.ratio)
            next_line += size
            start = end + 1
        data = data[start:]
    if stream.damage is not None:
        whole = data[: data.rfind(b"\n") + 1]
        if whole:
            yield RawBatch(plan.index, next_line, whole[:-1], stream.ratio)
        raise stream.damage(next_line + whole.count(b"\n") - 1)
    if data:  # fewer than build_batch lines, the last one perhaps without a newline
        data = data[:-1] if data.endswith(b"\n") else data
        yield RawBatch(plan.index, next_line, data, stream.ratio)


def _check_line_lengths(plan: FilePlan, data: bytes, newlines: np.ndarray, first_line: int) -> None:
    """``LineTooLongError`` for the first line of ``data`` (which starts at ``first_line``) longer
    than the limit, the unfinished last one included: memory stays bounded by the limit."""
    bounds = np.concatenate(([-1], newlines, [len(data)]))
    over = np.flatnonzero(np.diff(bounds) - 1 > plan.max_line_bytes)
    if over.size:
        raise LineTooLongError(
            file=plan.path, line=first_line + int(over[0]), limit=plan.max_line_bytes
        )


class _Blocks(Stream):
    """Bytes ``start`` to ``end`` (None: the end of the file) in blocks of ``READ_BLOCK`` bytes,
    hashed as read; unless ``drop_bom`` is False, a UTF-8 BOM at the start of the file is
    dropped (it is no line's content)."""

    def __init__(
        self, path: str, start: int = 0, end: int | None = None, drop_bom: bool = True
    ) -> None:
        self.path = path
        self.start = start
        self.end = end
        self.drop_bom = drop_bom
        self.fingerprint = InputFingerprint(0, 0, "")

    def __iter__(self) -> Iterator[bytes]:
        digest = hashlib.sha256()
        count = 0
        with open(self.path, "rb") as handle:
            mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
            handle.seek(self.start)
            left = -1 if self.end is None else self.end - self.start  # -1: to the end
            head = self.drop_bom and self.start == 0  # the first bytes alone, to drop a BOM
            while left and (block := handle.read(_block_size(left, head))):
                digest.update(block)
                count += len(block)
                left -= len(block) if left > 0 else 0
                yield b"" if head and block == BOM else block
                head = False
        self.fingerprint = InputFingerprint(count, mtime_ns, digest.hexdigest())


def _block_size(left: int, head: bool) -> int:
    size = len(BOM) if head else READ_BLOCK
    return size if left < 0 else min(left, size)


def parse_lines(batch: RawBatch, plan: FilePlan) -> ParsedLines:
    """Parse and render each line in order, stopping at the first line that breaks a rule."""
    get, join = plan.template.value_functions(plan.fields)
    loads, lines = orjson.loads, batch.lines()
    try:
        # Nearly every batch is samples only: two comprehensions cost a third less per line than
        # a loop that catches each line's failure. Any blank or bad line takes the loop below.
        values = [get(loads(raw)) for raw in lines]
        texts = [join(sample) for sample in values]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return _parse_each(batch, plan)
    numbers = list(range(batch.first_line, batch.first_line + len(lines)))
    return ParsedLines(texts, values, numbers, 0, None)


def whole_records(
    batches: Generator[RawBatch, None, InputFingerprint], plan: FilePlan
) -> Generator[Records, None, InputFingerprint]:
    """Each raw batch's lines as whole records (``parse_records``); returns the fingerprint
    ``batches`` returns."""
    while True:
        try:
            batch = next(batches)
        except StopIteration as done:
            return done.value
        yield parse_records(batch, plan)


def parse_records(batch: RawBatch, plan: FilePlan) -> Records:
    """Every line of the batch as the JSON object it holds, blank lines counted, up to the first
    line that holds no object (its error named as the build names it)."""
    records: list[dict[str, object]] = []
    numbers: list[int] = []
    blank = 0
    loads = orjson.loads
    for line_number, raw in enumerate(batch.lines(), start=batch.first_line):
        try:
            record = loads(raw)
        except orjson.JSONDecodeError as err:
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line.strip():
                blank += 1
                continue
            return Records(records, numbers, blank, _parse_error(plan, line_number, line, err))
        if not isinstance(record, dict):
            error = SourceParseError(
                file=plan.path, line=line_number, reason="not_object", detail=_type_name(record)
            )
            return Records(records, numbers, blank, error)
        records.append(record)
        numbers.append(line_number)
    return Records(records, numbers, blank, None)


def _parse_each(batch: RawBatch, plan: FilePlan) -> ParsedLines:
    """``parse_lines`` line by line: blank lines counted, the first bad line's error named."""
    texts: list[str] = []
    values: list[tuple[str, ...]] = []
    numbers: list[int] = []
    blank = 0
    get, join = plan.template.value_functions(plan.fields)
    for line_number, raw in enumerate(batch.lines(), start=batch.first_line):
        # A well-formed sample renders directly (orjson takes a trailing \r as JSON whitespace).
        # Rendering fails exactly when the line is blank or breaks a rule; only then is it looked
        # at again, to say which.
        try:
            sample = get(orjson.loads(raw))
            texts.append(join(sample))
        except (orjson.JSONDecodeError, KeyError, TypeError):
            error = _line_error(raw, plan, line_number)
            if error is not None:
                return ParsedLines(texts, values, numbers, blank, error)
            blank += 1
            continue
        values.append(sample)
        numbers.append(line_number)
    return ParsedLines(texts, values, numbers, blank, None)


def _line_error(raw: bytes, plan: FilePlan, line_number: int) -> MintDimError | None:
    """The rule a line that failed to render breaks, or None when it is blank."""
    line = raw[:-1] if raw.endswith(b"\r") else raw
    if not line.strip():
        return None
    try:
        sample = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        return _parse_error(plan, line_number, line, err)
    return _sample_error(sample, plan, line_number)


def _sample_error(sample: object, plan: FilePlan, line_number: int) -> MintDimError:
    if not isinstance(sample, dict):
        return SourceParseError(
            file=plan.path, line=line_number, reason="not_object", detail=_type_name(sample)
        )
    fields = plan.fields
    missing = [name for name in fields if name not in sample]
    if missing:
        return SampleSchemaError(
            file=plan.path,
            line=line_number,
            declared_fields=list(fields),
            missing_fields=missing,
            available_keys=list(sample),
        )
    # Rendering failed with every field present, so some value is not a string (next() has
    # nothing to fall back on: a sample that renders never comes here).
    name = next(name for name in fields if not isinstance(sample[name], str))
    return FieldValueTypeError(
        file=plan.path, line=line_number, field=name, found_type=_type_name(sample[name])
    )


def _parse_error(
    plan: FilePlan, line_number: int, line: bytes, err: orjson.JSONDecodeError
) -> SourceParseError:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        return SourceParseError(
            file=plan.path,
            line=line_number,
            reason="invalid_utf8",
            byte=line[bad.start],
            offset=bad.start,
        )
    return SourceParseError(
        file=plan.path, line=line_number, reason="invalid_json", detail=str(err)
    )


def _type_name(value: object) -> str:
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
