"""``sample_index.jsonl``: one line per sample, in sample_id order, pointing at its shard record.

Line form (compact JSON, keys in this order)::

    {"sample_id":0,"hash":"<sha256 hex>","token_count":143,"unit_size":192,
     "source_file":"./data/alpaca.jsonl","source_line":1,"empty_fields":["input"],
     "shard_path":"unit_192/shard_000000.bin","shard_row":0}

``empty_fields`` lists, in declared order, the fields whose value was the empty string.

``shard_row`` is the 0-based record number inside the shard file, so the tokens are
``shard[shard_row * unit_size : shard_row * unit_size + token_count]``.

Readers get the lines as :class:`Columns`: :class:`ExactReader` straight from the bytes of lines
in exactly this form (whole-column numpy operations, no JSON parse), :func:`parse_rows` from lines
parsed as JSON in any shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
import orjson

from mintdim.pipelines.unit_build.units.shard_writer import shard_path

__all__ = ["FILENAME", "KEYS", "Columns", "ExactReader", "SampleIndexWriter", "parse_rows"]

FILENAME = "sample_index.jsonl"
KEYS = (
    "sample_id",
    "hash",
    "token_count",
    "unit_size",
    "source_file",
    "source_line",
    "empty_fields",
    "shard_path",
    "shard_row",
)
"""The keys of every line, in the order written."""
_SAMPLE_ID, _HASH, _TOKEN_COUNT, _UNIT_SIZE, _SOURCE_FILE, _SOURCE_LINE = (
    f'"{key}":' for key in KEYS[:6]
)
_EMPTY_FIELDS, _SHARD_PATH, _SHARD_ROW = (f'"{key}":' for key in KEYS[6:])
"""What stands before each value: the key, quoted, and a colon."""


def sample_parts(
    hexes: list[str],
    token_counts: list[int],
    unit_sizes: list[int],
    source: str,
    lines: list[int],
    empty_fields: list[str],
) -> list[str]:
    """Per sample, the middle of its line (``"hash"`` to ``"empty_fields"``): everything a worker
    knows. ``source`` is the source file and ``empty_fields`` each sample's list, already as
    JSON. The writer adds the rest."""
    return [
        f'{_HASH}"{h}",{_TOKEN_COUNT}{n},{_UNIT_SIZE}{u},{_SOURCE_FILE}{source},'
        f"{_SOURCE_LINE}{line},{_EMPTY_FIELDS}{e}"
        for h, n, u, line, e in zip(
            hexes, token_counts, unit_sizes, lines, empty_fields, strict=True
        )
    ]


class SampleIndexWriter:
    """Appends sample lines: the sample id, the middle from :func:`sample_parts`, the shard place."""

    def __init__(self, directory: Path) -> None:
        self._handle: TextIO = open(directory / FILENAME, "x", encoding="utf-8", newline="\n")  # noqa: SIM115

    def write(
        self,
        first_id: int,
        parts: list[str],
        unit_sizes: np.ndarray,
        shard_numbers: np.ndarray,
        shard_rows: np.ndarray,
    ) -> None:
        """Write one line per sample of a batch whose first sample has id ``first_id``."""
        # A batch touches few shards: name each once, not once per sample. One int per sample
        # (unit size in the high bits, shard number in the low) keys them as cheaply as possible.
        places = ((unit_sizes.astype(np.int64) << 32) | shard_numbers).tolist()
        paths = {place: shard_path(place >> 32, place & 0xFFFFFFFF) for place in set(places)}
        self._handle.write(
            "".join(
                [
                    f'{{{_SAMPLE_ID}{sample_id},{part},{_SHARD_PATH}"{paths[place]}",'
                    f"{_SHARD_ROW}{row}}}\n"
                    for sample_id, part, place, row in zip(
                        range(first_id, first_id + len(parts)),
                        parts,
                        places,
                        shard_rows.tolist(),
                        strict=True,
                    )
                ]
            )
        )

    def close(self) -> None:
        """Flush and close the file."""
        self._handle.close()


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Columns:
    """The values of consecutive lines, one array entry per line.

    A value that is missing or of another type reads as -1 (a hash as 64 zeros) and is False in
    its ``*_ok`` mask; ``source_file`` and ``shard_path`` are positions in the paths the reader
    was given, -1 for any other value; ``shard_row`` has no mask (-1 stands for "no row").
    """

    sample_id: np.ndarray
    sample_id_ok: np.ndarray
    hash: np.ndarray
    """``S64``: the SHA-256 in lower-case hex (``hash.lower()`` of the line)."""
    hash_ok: np.ndarray
    token_count: np.ndarray
    token_count_ok: np.ndarray
    unit_size: np.ndarray
    unit_size_ok: np.ndarray
    source_file: np.ndarray
    source_line: np.ndarray
    source_line_ok: np.ndarray
    shard_path: np.ndarray
    shard_row: np.ndarray


def parse_rows(rows: Sequence[object], sources: dict[str, int], shards: dict[str, int]) -> Columns:
    """The columns of lines parsed as JSON (any shape: what is not as written reads as -1).

    ``sources`` and ``shards`` number the source files and shard paths a line may name.
    """
    integers = ("sample_id", "token_count", "unit_size", "source_line", "shard_row")
    ints = {key: _ints(rows, key) for key in integers}
    hashes, hashes_ok = _hashes(rows)
    return Columns(
        sample_id=ints["sample_id"][0],
        sample_id_ok=ints["sample_id"][1],
        hash=hashes,
        hash_ok=hashes_ok,
        token_count=ints["token_count"][0],
        token_count_ok=ints["token_count"][1],
        unit_size=ints["unit_size"][0],
        unit_size_ok=ints["unit_size"][1],
        source_file=_lookup(rows, "source_file", sources),
        source_line=ints["source_line"][0],
        source_line_ok=ints["source_line"][1],
        shard_path=_lookup(rows, "shard_path", shards),
        shard_row=ints["shard_row"][0],
    )


def _ints(rows: Sequence[object], key: str) -> tuple[np.ndarray, np.ndarray]:
    """A column of integers and where it holds one; anything else reads as -1."""
    try:
        array = np.array([row[key] for row in rows])
        if array.dtype.kind == "i":
            return array.astype(np.int64), np.ones(array.size, dtype=bool)
    except (KeyError, TypeError, ValueError, OverflowError):
        pass
    values = [row.get(key) if isinstance(row, dict) else None for row in rows]
    ok = np.array([type(v) is int and abs(v) < 1 << 62 for v in values], dtype=bool)
    return np.array([v if k else -1 for v, k in zip(values, ok, strict=True)], dtype=np.int64), ok


def _lookup(rows: Sequence[object], key: str, table: dict[str, int]) -> np.ndarray:
    """A column of strings turned into their numbers in ``table``; anything else is -1."""
    try:
        return np.array([table[row[key]] for row in rows], dtype=np.int64)
    except (KeyError, TypeError):
        values = [row.get(key) if isinstance(row, dict) else None for row in rows]
        return np.array([table.get(v, -1) if isinstance(v, str) else -1 for v in values])


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _hashes(rows: Sequence[object]) -> tuple[np.ndarray, np.ndarray]:
    """The ``hash`` column in lower-case hex, and where a line holds a SHA-256 hex digest."""
    texts = [row.get("hash") if isinstance(row, dict) else None for row in rows]
    ok = [isinstance(t, str) and len(t) == 64 and _HEX_DIGITS.issuperset(t) for t in texts]
    hashes = [t.lower() if k else "0" * 64 for t, k in zip(texts, ok, strict=True)]
    return np.array(hashes, dtype="S64"), np.array(ok, dtype=bool)


class ExactReader:
    """Reads blocks of whole lines straight from their bytes, when every line is exactly as
    :class:`SampleIndexWriter` writes it naming one of ``sources`` and ``shards``.

    Each line is pinned from both ends: from its start the keys in their order (:data:`KEYS`),
    integers in canonical digits, a lower-case hex digest, a source file spelled exactly as
    orjson spells one of ``sources``; from its end the shard row and a shard path spelled as one
    of ``shards``. Only the ``empty_fields`` value between them is free, and each distinct value
    of it must be one JSON value. Such a line parses to exactly these columns, so the result
    equals :func:`parse_rows` of the parsed lines.
    """

    def __init__(self, sources: Sequence[str], shards: Sequence[str]) -> None:
        self.sources = _options([orjson.dumps(path) for path in sources])
        self.shards = _options([orjson.dumps(path) for path in shards])
        # Wider than any window read: a digest and its key, digits and keys, a path and its key.
        self._text = _Text(margin=96 + max([0, *self.sources, *self.shards]))

    def read(self, block: bytes) -> Columns | None:
        """The columns of ``block``'s lines; None when any line is not in the exact form (parse
        its lines as JSON and use :func:`parse_rows`)."""
        if not block.endswith(b"\n"):
            return None
        text = self._text
        text.load(block)
        ends = np.flatnonzero(text.bytes == ord("\n")) - text.margin
        starts = np.r_[0, ends[:-1] + 1]
        # From each line's start up to the empty_fields value.
        ahead = _Ahead(text, starts)
        sample_id = ahead.integer(f"{{{_SAMPLE_ID}", f',{_HASH}"')
        hashes = ahead.hex_digest(f'",{_TOKEN_COUNT}')
        token_count = ahead.integer("", f",{_UNIT_SIZE}")
        unit_size = ahead.integer("", f",{_SOURCE_FILE}")
        source_file = ahead.choice(self.sources, f",{_SOURCE_LINE}")
        source_line = ahead.integer("", f",{_EMPTY_FIELDS}")
        # From each line's end back to the empty_fields value.
        back = _Back(text, ends)
        shard_row = back.integer(f",{_SHARD_ROW}", "}")
        shard = back.choice(f",{_SHARD_PATH}", self.shards)
        if not (ahead.ok.all() and back.ok.all() and _hex_only(hashes)):
            return None
        if not _each_one_json_value(text, ahead.at, back.at):
            return None
        every = np.ones(starts.size, dtype=bool)
        return Columns(
            sample_id=sample_id,
            sample_id_ok=every,
            hash=hashes,
            hash_ok=every,
            token_count=token_count,
            token_count_ok=every,
            unit_size=unit_size,
            unit_size_ok=every,
            source_file=source_file,
            source_line=source_line,
            source_line_ok=every,
            shard_path=shard,
            shard_row=shard_row,
        )


_DIGITS = 18
"""Longest integer read from the bytes: below 2**62 like parse_rows', beyond any real count."""


class _Text:
    """A block's bytes with a margin of zeros each side, read as fixed-width windows at many
    positions at once (one gather of ``S<width>`` items, the cheapest numpy copy of them). The
    buffer is kept from block to block: fresh pages would cost a fault each."""

    def __init__(self, margin: int) -> None:
        self.margin = margin
        self._buffer = self.bytes = np.zeros(0, dtype=np.uint8)

    def load(self, block: bytes) -> None:
        end = self.margin + len(block)
        if self._buffer.size < end + self.margin:
            self._buffer = np.zeros(end + self.margin, dtype=np.uint8)
        self._buffer[self.margin : end] = np.frombuffer(block, dtype=np.uint8)
        self._buffer[end : end + self.margin] = 0
        self.bytes = self._buffer[: end + self.margin]

    def windows(self, at: np.ndarray, width: int) -> np.ndarray:
        """The ``width`` bytes from each block offset in ``at``, one row each."""
        items = np.ndarray(
            (self.bytes.size - width + 1,), dtype=f"S{width}", buffer=self.bytes, strides=(1,)
        )
        # Clipped into the margins: a broken line may point anywhere; it fails anyway.
        index = np.clip(at + self.margin, 0, items.size - 1)
        return items[index].view(np.uint8).reshape(-1, width)


def _is(rows: np.ndarray, column: int | np.ndarray, text: bytes) -> np.ndarray:
    """Where ``text`` stands in each row from ``column`` (one column, or one per row)."""
    if isinstance(column, np.ndarray):  # few distinct columns: compare all rows at each
        found = np.zeros(rows.shape[0], dtype=bool)
        for value in range(max(0, int(column.min(initial=0))), int(column.max(initial=-1)) + 1):
            found |= (column == value) & _is(rows, value, text)
        return found
    if column < 0 or column + len(text) > rows.shape[1]:
        return np.zeros(rows.shape[0], dtype=bool)
    if not text:
        return np.ones(rows.shape[0], dtype=bool)
    # Compared as a few little-endian words (the last one overlapping the one before): whole
    # integers compare five times faster than "S" items.
    size = 8 if len(text) >= 8 else 4 if len(text) >= 4 else 2 if len(text) >= 2 else 1
    found = np.ones(rows.shape[0], dtype=bool)
    for start in [*range(0, len(text) - size, size), len(text) - size]:
        words = np.ndarray(
            (rows.shape[0],),
            dtype=f"<u{size}",
            buffer=rows,
            offset=column + start,
            strides=(rows.shape[1],),
        )
        found &= words == int.from_bytes(text[start : start + size], "little")
    return found


def _is_view(rows: np.ndarray, column: int, width: int) -> np.ndarray:
    """The ``width`` bytes of each row from ``column`` as one ``S<width>`` item per row (a view)."""
    return np.ndarray(
        (rows.shape[0],), dtype=f"S{width}", buffer=rows, offset=column, strides=(rows.shape[1],)
    )


def _integer(rows: np.ndarray, column: int, step: int) -> tuple[np.ndarray, ...]:
    """The run of digits in each row from ``column`` on (``step`` -1: leftwards, so the last
    digit first): its value, its width, and where it is a canonical JSON integer (1 to
    ``_DIGITS`` digits, no leading zero). One column at a time, as far as any row has digits."""
    value = np.zeros(rows.shape[0], dtype=np.int64)
    width = np.zeros(rows.shape[0], dtype=np.int64)
    going = np.ones(rows.shape[0], dtype=bool)
    for place in range(_DIGITS + 1):
        digit = (rows[:, column + step * place] - _ZERO).astype(np.int64)
        going &= digit < 10
        if not going.any():
            break
        if step > 0:
            value = np.where(going, value * 10 + digit, value)
        elif place < _DIGITS:  # a 19th digit only makes the run too long
            value += np.where(going, digit * 10**place, 0)
        width += going
    # The most significant digit: the first one read forward, the last one read backward.
    first = column if step > 0 else column - np.maximum(width - 1, 0)
    leading = rows[np.arange(rows.shape[0]), first]
    canonical = (width >= 1) & (width <= _DIGITS) & ((width == 1) | (leading != ord("0")))
    return value, width, canonical


def _options(options: list[bytes]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The options by length: each length's texts, sorted, and their positions in ``options``."""
    table = {}
    for length in sorted({len(option) for option in options}):
        numbers = [n for n, option in enumerate(options) if len(option) == length]
        texts = np.array([options[n] for n in numbers], dtype=f"S{length}")
        order = np.argsort(texts)
        table[length] = (texts[order], np.array(numbers, dtype=np.int64)[order])
    return table


def _which(rows: np.ndarray, column: int, texts: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Which of ``texts`` (sorted, all of one length) stands in each row from ``column``: its
    number, or -1. One binary search per row, however many options there are."""
    if column < 0:
        return np.full(rows.shape[0], -1, dtype=np.int64)
    items = _is_view(rows, column, texts.itemsize)
    where = np.minimum(np.searchsorted(texts, items), texts.size - 1)
    return np.where(texts[where] == items, numbers[where], -1)


_ZERO = np.uint8(ord("0"))


class _Ahead:
    """A position in each line, moved forward over its parts; ``ok`` where all matched so far."""

    def __init__(self, text: _Text, at: np.ndarray) -> None:
        self.text, self.at = text, at
        self.ok = np.ones(at.size, dtype=bool)

    def integer(self, before: str, after: str) -> np.ndarray:
        """``before``, an integer, ``after``; the position moves past all three."""
        lead, tail = before.encode(), after.encode()
        rows = self.text.windows(self.at, len(lead) + _DIGITS + 1 + len(tail))
        value, width, canonical = _integer(rows, len(lead), step=1)
        self.ok &= _is(rows, 0, lead) & canonical & _is(rows, len(lead) + width, tail)
        self.at = self.at + len(lead) + width + len(tail)
        return value

    def hex_digest(self, after: str) -> np.ndarray:
        """64 characters (checked by :func:`_hex_only`), then ``after``."""
        tail = after.encode()
        rows = self.text.windows(self.at, 64 + len(tail))
        self.ok &= _is(rows, 64, tail)
        self.at = self.at + 64 + len(tail)
        return np.ascontiguousarray(rows[:, :64]).view("S64")[:, 0]

    def choice(self, options: dict[int, tuple[np.ndarray, np.ndarray]], after: str) -> np.ndarray:
        """One of ``options`` (by :func:`_options`), then ``after``: which (-1 for none)."""
        tail = after.encode()
        rows = self.text.windows(self.at, max(options, default=0) + len(tail))
        found = np.full(self.at.size, -1, dtype=np.int64)
        width = np.zeros(self.at.size, dtype=np.int64)
        # A JSON string ends at its first unescaped quote: at most one option matches.
        for length, (texts, numbers) in options.items():
            number = _which(rows, 0, texts, numbers)
            hit = (number >= 0) & _is(rows, length, tail)
            found[hit], width[hit] = number[hit], length
        self.ok &= found >= 0
        self.at = self.at + width + len(tail)
        return found


class _Back:
    """A position in each line, moved backward over its parts (the position ends the part)."""

    def __init__(self, text: _Text, at: np.ndarray) -> None:
        self.text, self.at = text, at
        self.ok = np.ones(at.size, dtype=bool)

    def integer(self, before: str, after: str) -> np.ndarray:
        """``before``, an integer, ``after`` end at the position; it moves before all three."""
        lead, tail = before.encode(), after.encode()
        span = len(lead) + _DIGITS + 1 + len(tail)
        rows = self.text.windows(self.at - span, span)
        last = span - len(tail) - 1  # the column of the last digit
        value, width, canonical = _integer(rows, last, step=-1)
        first = last + 1 - width
        self.ok &= _is(rows, last + 1, tail) & canonical & _is(rows, first - len(lead), lead)
        self.at = self.at - len(tail) - width - len(lead)
        return value

    def choice(self, before: str, options: dict[int, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """``before`` and one of ``options`` (by :func:`_options`) end at the position: which
        option (-1 for none)."""
        lead = before.encode()
        span = len(lead) + max(options, default=0)
        rows = self.text.windows(self.at - span, span)
        found = np.full(self.at.size, -1, dtype=np.int64)
        width = np.zeros(self.at.size, dtype=np.int64)
        for length, (texts, numbers) in options.items():
            number = _which(rows, span - length, texts, numbers)
            hit = (number >= 0) & _is(rows, span - length - len(lead), lead)
            found[hit], width[hit] = number[hit], length
        self.ok &= found >= 0
        self.at = self.at - width - len(lead)
        return found


def _hex_only(hashes: np.ndarray) -> bool:
    """Whether every hash is lower-case hex (one C pass: delete the hex digits, nothing stays)."""
    return not hashes.tobytes().translate(None, b"0123456789abcdef")


def _each_one_json_value(text: _Text, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Whether each line's bytes from ``starts`` to ``ends`` are one JSON value (the free
    empty_fields value). Lines hold few distinct values: each is parsed once."""
    lengths = ends - starts
    if (lengths < 1).any():
        return False
    for length in np.unique(lengths).tolist():
        values = np.unique(text.windows(starts[lengths == length], length).view(f"S{length}"))
        for value in values.tolist():
            try:
                orjson.loads(value)
            except orjson.JSONDecodeError:
                return False
            if len(value) != length:  # numpy dropped trailing NULs, which JSON does not allow
                return False
    return True
