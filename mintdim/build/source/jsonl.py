"""JSONL reading: raw line batches in the main process, parsing and rendering in whichever process encodes.

Line rules: lines end at ``\\n`` only (U+2028, U+2029, U+0085 and a lone ``\\r`` inside a line are
content, which is why this module splits bytes and never calls ``str.splitlines``); a trailing
``\\r`` is dropped so CRLF files work; a UTF-8 BOM at the start of a file is ignored; lines holding
only ASCII whitespace are skipped but still counted, so line numbers stay 1-based physical lines.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass

import numpy as np
import orjson

from mintdim.build.contracts import FilePlan
from mintdim.errors import (
    FieldValueTypeError,
    InputChangedError,
    LineTooLongError,
    MintDimError,
    SampleSchemaError,
    SourceParseError,
)

__all__ = [
    "InputFingerprint",
    "ParsedLines",
    "RawBatch",
    "check_unchanged",
    "parse_lines",
    "read_raw_batches",
]

_BOM = b"\xef\xbb\xbf"
_READ_BLOCK = 8 << 20
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

    def lines(self) -> list[bytes]:
        """The batch's lines, without their ``\\n``."""
        return self.data.split(b"\n")


@dataclass(slots=True)
class ParsedLines:
    """The rendered texts of a batch up to its first bad line, and that line's error if any."""

    texts: list[str]
    values: list[tuple[str, ...]]
    """Per sample, its field values in declared field order (segments, ``empty_fields``)."""
    line_numbers: list[int]
    blank_lines: int
    error: MintDimError | None


@dataclass(frozen=True, slots=True)
class InputFingerprint:
    """An input file as the build read it: recorded in the manifest, checked at the end."""

    bytes: int
    """Bytes read, BOM included."""
    mtime_ns: int
    """Modification time when the file was opened."""
    sha256: str
    """SHA-256 of the bytes read, taken while reading (no second pass)."""


def read_raw_batches(
    plan: FilePlan, start: int = 0, end: int | None = None, first_line: int = 1
) -> Generator[RawBatch, None, InputFingerprint]:
    """Stream a file (or its bytes ``start`` to ``end``, cut at line ends, whose first line is
    line ``first_line``) as batches of raw lines; memory holds one read block and one batch.

    The generator's return value (``fingerprint = yield from read_raw_batches(plan)``) is the
    fingerprint of the bytes read.
    """
    size = plan.build_batch
    next_line = first_line
    data = b""
    blocks = _Blocks(plan.abs_path, start, end)
    for block in blocks:
        data += block
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE)
        _check_line_lengths(plan, data, newlines, next_line)
        start = 0
        for taken in range(size, newlines.size + 1, size):
            end = int(newlines[taken - 1])
            yield RawBatch(plan.index, next_line, data[start:end])
            next_line += size
            start = end + 1
        data = data[start:]
    if data:  # fewer than build_batch lines, the last one perhaps without a newline
        yield RawBatch(plan.index, next_line, data[:-1] if data.endswith(b"\n") else data)
    return blocks.fingerprint


def _check_line_lengths(plan: FilePlan, data: bytes, newlines: np.ndarray, first_line: int) -> None:
    """``LineTooLongError`` for the first line of ``data`` (which starts at ``first_line``) longer
    than the limit, the unfinished last one included: memory stays bounded by the limit."""
    bounds = np.concatenate(([-1], newlines, [len(data)]))
    over = np.flatnonzero(np.diff(bounds) - 1 > plan.max_line_bytes)
    if over.size:
        raise LineTooLongError(
            file=plan.path, line=first_line + int(over[0]), limit=plan.max_line_bytes
        )


class _Blocks:
    """Bytes ``start`` to ``end`` (None: the end of the file) in blocks of ``_READ_BLOCK`` bytes,
    hashed as read; a UTF-8 BOM at the start of the file is dropped (it is no line's content)."""

    def __init__(self, path: str, start: int = 0, end: int | None = None) -> None:
        self.path = path
        self.start = start
        self.end = end
        self.fingerprint = InputFingerprint(0, 0, "")

    def __iter__(self) -> Iterator[bytes]:
        digest = hashlib.sha256()
        count = 0
        with open(self.path, "rb") as handle:
            mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
            handle.seek(self.start)
            left = -1 if self.end is None else self.end - self.start  # -1: to the end
            head = self.start == 0  # the file's first bytes are read alone, to drop a BOM
            while left and (block := handle.read(_block_size(left, head))):
                digest.update(block)
                count += len(block)
                left -= len(block) if left > 0 else 0
                yield b"" if head and block == _BOM else block
                head = False
        self.fingerprint = InputFingerprint(count, mtime_ns, digest.hexdigest())


def _block_size(left: int, head: bool) -> int:
    size = len(_BOM) if head else _READ_BLOCK
    return size if left < 0 else min(left, size)


def check_unchanged(plan: FilePlan, fingerprint: InputFingerprint) -> None:
    """Raise ``InputChangedError`` when a file's size or mtime differ from when it was read."""
    try:
        status = os.stat(plan.abs_path)
    except OSError as err:
        raise InputChangedError(
            file=plan.path, change="gone", was=str(fingerprint.bytes), now=str(err)
        ) from err
    if status.st_size != fingerprint.bytes:
        raise InputChangedError(
            file=plan.path,
            change="size",
            was=str(fingerprint.bytes),
            now=str(status.st_size),
        )
    if status.st_mtime_ns != fingerprint.mtime_ns:
        raise InputChangedError(
            file=plan.path,
            change="mtime",
            was=str(fingerprint.mtime_ns),
            now=str(status.st_mtime_ns),
        )


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
