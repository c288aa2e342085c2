"""``sample_index.jsonl``: one line per sample, in sample_id order, pointing at its shard record.

Line form (compact JSON, keys in this order)::

    {"sample_id":0,"hash":"<sha256 hex>","token_count":143,"unit_size":192,
     "source_file":"./data/alpaca.jsonl","source_line":1,"empty_fields":["input"],
     "shard_path":"unit_192/shard_000000.bin","shard_row":0}

``empty_fields`` lists, in declared order, the fields whose value was the empty string.

``shard_row`` is the 0-based record number inside the shard file, so the tokens are
``shard[shard_row * unit_size : shard_row * unit_size + token_count]``.

A build made by ``mintdim split`` from another build adds one last key, ``source_sample_id``:
the sample's id in the build it was copied from (:data:`SOURCE_SAMPLE_ID`).

A packed build (``units(pack=True)``) adds one last key, ``row_start`` (:data:`ROW_START`):
``shard_row`` is then the row holding the sample, whose tokens are
``shard[shard_row * unit_size + row_start :][:token_count]``. Its lines are written once the rows
are packed: while the build runs they wait, without their place, in a hidden file
(:data:`PENDING`) beside it.

A copy of some of a build's lines (``mintdim split``, ``mintdim decontaminate``) keeps each line's
middle (``"hash"`` to the ``empty_fields`` value) byte for byte: :class:`MiddleReader` finds the
middles, :meth:`SampleIndexWriter.copy` writes the new lines around them.

Readers get the lines as :class:`Columns`: :class:`ExactReader` straight from the bytes of lines
in exactly this form (whole-column numpy operations, no JSON parse), :func:`parse_rows` from lines
parsed as JSON in any shape.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import orjson

from mintdim.build.formats import line_bytes
from mintdim.build.formats.shards import shard_path
from mintdim.shared import durable

__all__ = [
    "FILENAME",
    "KEYS",
    "PENDING",
    "ROW_START",
    "SOURCE_SAMPLE_ID",
    "Columns",
    "ExactReader",
    "MiddleReader",
    "Middles",
    "SampleIndexWriter",
    "parse_rows",
    "source_ids",
]

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
SOURCE_SAMPLE_ID = "source_sample_id"
"""The key a split's builds add after :data:`KEYS`: the sample's id in the build it came from."""
ROW_START = "row_start"
"""The key a packed build adds after :data:`KEYS`: the sample's first slot in its row."""
PENDING = ".sample_index.partial"
_BLOCK = 1 << 20
"""Bytes of pending lines placed at a time (their Python objects cost several times that)."""
_SAMPLE_ID, _HASH, _TOKEN_COUNT, _UNIT_SIZE, _SOURCE_FILE, _SOURCE_LINE = (
    f'"{key}":' for key in KEYS[:6]
)
_EMPTY_FIELDS, _SHARD_PATH, _SHARD_ROW, _ROW_START = (f'"{key}":' for key in (*KEYS[6:], ROW_START))
"""What stands before each value: the key, quoted, and a colon."""
_COPY_BLOCK = 4 << 20
"""Bytes of an index whose lines are copied at a time (their rows cost about as much again)."""


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

    def __init__(self, directory: Path, packed: bool = False) -> None:
        self._directory = directory
        self._pending = open(directory / PENDING, "xb") if packed else None  # noqa: SIM115
        self.file = None if packed else durable.HashedFile(directory / FILENAME)

    def write_pending(self, first_id: int, parts: list[str]) -> None:
        """A packed build's lines of one batch, up to ``empty_fields``: their places follow
        (:meth:`place_pending`)."""
        self._pending.write(
            "".join(
                [
                    f"{{{_SAMPLE_ID}{sample_id},{part}\n"
                    for sample_id, part in zip(
                        range(first_id, first_id + len(parts)), parts, strict=True
                    )
                ]
            ).encode()
        )

    def place_pending(
        self,
        unit_sizes: Sequence[int],
        units: np.ndarray,
        shard_numbers: np.ndarray,
        shard_rows: np.ndarray,
        row_starts: np.ndarray,
    ) -> dict[str, object]:
        """Write sample_index.jsonl from the pending lines, each sample's place (by id) added:
        ``units`` indexes ``unit_sizes``. The file is closed (fsynced): its size and SHA-256.

        It may run in another process (``shared/beside.py``): so the pending file is
        closed first, here or by ``close_pending`` before that process is forked, and the
        result is what ``placed`` takes back."""
        self.close_pending()
        self.file = durable.HashedFile(self._directory / FILENAME)
        # Each (unit, shard)'s bytes up to its row, made once; bytes formatting beats str and
        # encode. Python lists a block at a time: whole columns would cost ~100 bytes a sample.
        heads: dict[int, bytes] = {}
        tail = b"%s%s%d," + _ROW_START.encode() + b"%d}\n"
        at = 0
        with open(self._directory / PENDING, "rb") as handle:
            for block in _line_blocks(handle):
                lines = block.split(b"\n")[:-1]
                end = at + len(lines)
                places = (units[at:end].astype(np.int64) << 32) | shard_numbers[at:end]
                for place in np.unique(places).tolist():
                    if place not in heads:
                        path = shard_path(unit_sizes[place >> 32], place & 0xFFFFFFFF)
                        heads[place] = f',{_SHARD_PATH}"{path}",{_SHARD_ROW}'.encode()
                self.file.write(
                    b"".join(
                        [
                            tail % (line, heads[place], row, start)
                            for line, place, row, start in zip(
                                lines,
                                places.tolist(),
                                shard_rows[at:end].tolist(),
                                row_starts[at:end].tolist(),
                                strict=True,
                            )
                        ]
                    )
                )
                at = end
        (self._directory / PENDING).unlink()
        self.file.close(sync=True)
        return self.file.record()

    def close_pending(self) -> None:
        """Close the pending lines' file (a fork must not carry its buffer twice)."""
        if not self._pending.closed:
            self._pending.close()

    def placed(self, record: dict[str, object]) -> None:
        """sample_index.jsonl written by ``place_pending`` in another process: its record."""
        self.file = _Placed(FILENAME, record)

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
        self.file.write(
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
            ).encode()
        )

    def copy(
        self,
        middles: Middles,
        lines: np.ndarray,
        first_id: int,
        unit_sizes: np.ndarray,
        shard_numbers: np.ndarray,
        shard_rows: np.ndarray,
        source_ids: np.ndarray,
    ) -> None:
        """Write one line per sample copied from another build: the ids from ``first_id``, the
        middle of line ``lines[i]`` of ``middles`` byte for byte, the shard place, and
        ``source_ids`` (each sample's id in the build it was copied from)."""
        if not lines.size:
            return
        places = (unit_sizes.astype(np.int64) << 32) | shard_numbers
        distinct, which = np.unique(places, return_inverse=True)
        paths = np.array(
            [shard_path(p >> 32, p & 0xFFFFFFFF).encode() for p in distinct.tolist()], dtype="S"
        )
        self.file.write(
            _rows_joined(
                [
                    f"{{{_SAMPLE_ID}".encode(),
                    _digits(np.arange(first_id, first_id + lines.size)),
                    b",",
                    middles.taken(lines),
                    f',{_SHARD_PATH}"'.encode(),
                    _bytes_of(paths[which]),
                    f'",{_SHARD_ROW}'.encode(),
                    _digits(shard_rows),
                    f',"{SOURCE_SAMPLE_ID}":'.encode(),
                    _digits(source_ids),
                    b"}\n",
                ],
                lines.size,
            )
        )

    def close(self) -> None:
        """Flush and close the file (a packed build's pending one, when it was never placed)."""
        if self.file is not None:
            self.file.close()
        elif self._pending is not None:
            self._pending.close()


@dataclass(frozen=True, slots=True)
class _Placed:
    """A closed sample_index.jsonl as ``durable.HashedFile`` describes one."""

    name: str
    facts: dict[str, object]

    def record(self) -> dict[str, object]:
        return self.facts

    def close(self) -> None:
        """Nothing left open."""


def _line_blocks(handle: BinaryIO) -> Iterator[bytes]:
    """The file's bytes in blocks of whole lines."""
    rest = b""
    while block := handle.read(_BLOCK):
        block = rest + block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield block[:cut]
    if rest:
        yield rest


# A copy's lines are assembled a block at a time without a Python step per line: one row per
# line of fixed-width fields side by side, each value shorter than its field padded with zero
# bytes, then every zero byte dropped. The row-major rest is exactly the lines: JSON text never
# holds a zero byte (the copied middles parsed as JSON when the input build was read).


def _rows_joined(fields: list[bytes | np.ndarray], count: int) -> np.ndarray:
    """``count`` rows of ``fields`` side by side (a literal, the same in every row, or one
    ``(count, width)`` array of bytes), their zero bytes dropped: the rows' bytes in order."""
    widths = [len(f) if isinstance(f, bytes) else f.shape[1] for f in fields]
    rows = np.empty((count, sum(widths)), dtype=np.uint8)
    at = 0
    for field, width in zip(fields, widths, strict=True):
        rows[:, at : at + width] = (
            np.frombuffer(field, np.uint8) if isinstance(field, bytes) else field
        )
        at += width
    return rows[rows != 0]


def _digits(values: np.ndarray) -> np.ndarray:
    """Each value (>= 0) in decimal, one row each, right-aligned: zero bytes before the digits."""
    number = values.astype(np.uint64)
    width = len(str(int(number.max(initial=0))))
    digits = np.zeros((number.size, width), dtype=np.uint8)
    for column in range(width - 1, -1, -1):
        shown = (number > 0) | (column == width - 1)  # a leading zero is no digit, but 0 is
        number, digit = np.divmod(number, 10)
        digits[:, column] = np.where(shown, digit + ord("0"), 0)
    return digits


def _bytes_of(items: np.ndarray) -> np.ndarray:
    """``S<width>`` items as ``(count, width)`` bytes (numpy pads shorter ones with zero bytes)."""
    return items.view(np.uint8).reshape(items.size, items.dtype.itemsize)


@dataclass(frozen=True, slots=True)
class Middles:
    """The middles of a block of consecutive lines of an index: line ``i`` of the block (line
    ``first + i`` of the file) has ``data[starts[i] : starts[i] + lengths[i]]``. ``data`` ends
    with as many zero bytes as the longest middle, so a window that wide from any start is in it."""

    first: int
    data: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray

    @property
    def count(self) -> int:
        """Lines in the block."""
        return int(self.starts.size)

    def taken(self, lines: np.ndarray) -> np.ndarray:
        """The middles of ``lines`` (positions in the block), one row each, zero bytes after."""
        lengths = self.lengths[lines]
        width = int(lengths.max(initial=0))
        windows = np.ndarray(
            (self.data.size - width + 1,), dtype=f"S{width}", buffer=self.data, strides=(1,)
        )
        rows = _bytes_of(windows[self.starts[lines]])
        # Each window runs on past its middle, into the next line: those bytes become zeros.
        # (Compared in the narrowest type that holds the width: a quarter of int64's work.)
        narrow = np.min_scalar_type(width)
        rows[np.arange(width, dtype=narrow) >= lengths.astype(narrow)[:, None]] = 0
        return rows


class MiddleReader:
    """Finds the middle of every line of an index being copied (``"hash"`` to the
    ``empty_fields`` value): what a copy keeps of each line (:meth:`SampleIndexWriter.copy`).

    A line's middle is the bytes between its first comma and its last ``,"shard_path":`` when
    it opens with ``{"sample_id":`` and ``"hash":`` follows that comma (the writer's exact form:
    the input index's digest matched its manifest, so MintDim wrote it), else it is rebuilt from
    the line parsed as JSON (:func:`sample_parts`). Most lines are read straight from their bytes,
    pinned from both ends (``line_bytes``): from the start the sample id, from the end the shard
    place, which is one of ``shards`` (the input build's) and then holds no other shard key,
    after it ``source_sample_id`` when the input is itself a copy. Any other line is taken
    alone.
    """

    def __init__(self, shards: Sequence[str]) -> None:
        self._shards = line_bytes.Options([orjson.dumps(path) for path in shards])
        # Wider than any window read: an integer with its key, a path with its key.
        self._block = line_bytes.Block(margin=64 + self._shards.longest)

    def blocks(self, data: bytes) -> Iterator[Middles]:
        """The middles of ``data``'s lines (an index, whole), in blocks of consecutive lines."""
        view, at, first = memoryview(data), 0, 0
        while at < len(data):
            # Whole lines, up to _COPY_BLOCK bytes (or one longer line); a last line unended.
            cut = data.rfind(b"\n", at, at + _COPY_BLOCK) + 1 or data.find(b"\n", at) + 1
            middles = self._middles(view[at:cut] if cut else data[at:] + b"\n", first)
            yield middles
            at, first = cut or len(data), first + middles.count

    def _middles(self, block: memoryview | bytes, first: int) -> Middles:
        self._block.load(block)
        lines = self._block
        starts, stops = self._bounds()
        alone = np.flatnonzero(stops <= starts)
        rebuilt = [
            _middle(bytes(block[start:end]))
            for start, end in zip(
                lines.starts[alone].tolist(), lines.ends[alone].tolist(), strict=True
            )
        ]
        lengths = stops - starts
        sizes = np.array([len(middle) for middle in rebuilt], dtype=np.int64)
        # The rebuilt middles go after the block's bytes.
        starts[alone] = len(block) + np.cumsum(sizes) - sizes
        lengths[alone] = sizes
        end = len(block) + int(sizes.sum())
        data = np.zeros(end + int(lengths.max(initial=0)), dtype=np.uint8)
        data[: len(block)] = np.frombuffer(block, np.uint8)
        data[len(block) : end] = np.frombuffer(b"".join(rebuilt), np.uint8)
        return Middles(first, data, starts, lengths)

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each line's middle from its bytes: where it starts and stops (stop <= start where
        the line is to be taken alone)."""
        lines = self._block
        ahead = line_bytes.Ahead(lines, lines.starts)
        ahead.integer(f"{{{_SAMPLE_ID}".encode())
        opened = ahead.ok & line_bytes.is_at(lines.windows(ahead.at, 8), 0, f",{_HASH}".encode())
        stops = np.full(lines.starts.size, -1, dtype=np.int64)
        key = f",{_SHARD_PATH}".encode()
        # The integers each line ends with: its shard row, or that and a copy's source id.
        for ending in ((b"}",), (b"}", f',"{SOURCE_SAMPLE_ID}":'.encode())):
            todo = np.flatnonzero(stops < 0)
            if not todo.size:
                break
            back = line_bytes.Back(lines, lines.ends[todo])
            for tail in ending:
                back.integer(tail)
            back.choice(self._shards, f",{_SHARD_ROW}".encode())
            stop = back.at - len(key)
            found = back.ok & line_bytes.is_at(lines.windows(stop, len(key)), 0, key)
            stops[todo[found]] = stop[found]
        return ahead.at + 1, np.where(opened, stops, -1)


def _middle(line: bytes) -> bytes:
    """A line's middle, taken alone (:class:`MiddleReader`'s rule)."""
    start, stop = line.find(b",") + 1, line.rfind(f",{_SHARD_PATH}".encode())
    opened = line.startswith(f"{{{_SAMPLE_ID}".encode()) and line.startswith(_HASH.encode(), start)
    if opened and stop > start:
        return line[start:stop]
    row = orjson.loads(line)
    (part,) = sample_parts(
        [row["hash"]],
        [row["token_count"]],
        [row["unit_size"]],
        orjson.dumps(row["source_file"]).decode(),
        [row["source_line"]],
        [orjson.dumps(row["empty_fields"]).decode()],
    )
    return part.encode()


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
    row_start: np.ndarray
    """A packed build's ``row_start``; -1 where a line has none (an unpacked build's lines)."""


def parse_rows(rows: Sequence[object], sources: dict[str, int], shards: dict[str, int]) -> Columns:
    """The columns of lines parsed as JSON (any shape: what is not as written reads as -1).

    ``sources`` and ``shards`` number the source files and shard paths a line may name.
    """
    integers = ("sample_id", "token_count", "unit_size", "source_line", "shard_row", ROW_START)
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
        row_start=ints[ROW_START][0],
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

    def __init__(self, sources: Sequence[str], shards: Sequence[str], packed: bool = False) -> None:
        self.packed = packed
        """Lines end with ``row_start`` (a packed build's)."""
        self.sources = line_bytes.Options([orjson.dumps(path) for path in sources])
        self.shards = line_bytes.Options([orjson.dumps(path) for path in shards])
        # Wider than any window read: a digest or integer with its key, a path with its key.
        self._block = line_bytes.Block(margin=96 + max(self.sources.longest, self.shards.longest))

    def read(self, block: bytes) -> Columns | None:
        """The columns of ``block``'s lines; None when any line is not in the exact form (parse
        its lines as JSON and use :func:`parse_rows`)."""
        self._block.load(block)
        return self._columns()

    def read_lines(self, fd: int, start: int, end: int) -> tuple[int, int, Columns | None]:
        """The lines of file ``fd`` that start from offset ``start`` to ``end`` (exclusive), read
        straight into the buffer: their file offset and size, and their columns or None as
        :meth:`read` (re-read the bytes to parse them another way)."""
        offset = self._block.read_lines(fd, start, end)
        return offset, self._block.size, self._columns() if self._block.size else None

    def _columns(self) -> Columns | None:
        lines = self._block
        if not lines.whole_lines():
            return None
        # From each line's start up to the empty_fields value ...
        ahead = line_bytes.Ahead(lines, lines.starts)
        sample_id = ahead.integer(f"{{{_SAMPLE_ID}".encode())
        hashes = ahead.text(f',{_HASH}"'.encode(), 64)
        token_count = ahead.integer(f'",{_TOKEN_COUNT}'.encode())
        unit_size = ahead.integer(f",{_UNIT_SIZE}".encode())
        source_file = ahead.choice(f",{_SOURCE_FILE}".encode(), self.sources)
        source_line = ahead.integer(f",{_SOURCE_LINE}".encode())
        # ... and from its end back to it.
        back = line_bytes.Back(lines, lines.ends)
        row_start = back.integer(b"}") if self.packed else None
        shard_row = back.integer(f",{_ROW_START}".encode() if self.packed else b"}")
        shard = back.choice(self.shards, f",{_SHARD_ROW}".encode())
        if not (ahead.ok.all() and back.ok.all() and _hex_only(hashes)):
            return None
        if not _each_one_json_value(lines, ahead.at, back.at):
            return None
        every = np.ones(lines.starts.size, dtype=bool)
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
            row_start=np.full(every.size, -1, np.int64) if row_start is None else row_start,
        )


def _hex_only(hashes: np.ndarray) -> bool:
    """Whether every hash is lower-case hex (one C pass: delete the hex digits, nothing stays)."""
    return not hashes.tobytes().translate(None, b"0123456789abcdef")


def _each_one_json_value(lines: line_bytes.Block, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Whether each line holds ``,"empty_fields":``, one JSON value, ``,"shard_path":`` from
    ``starts`` to ``ends`` (each distinct value is parsed once)."""
    values = line_bytes.distinct_between(
        lines, starts, ends, f",{_EMPTY_FIELDS}".encode(), f",{_SHARD_PATH}".encode()
    )
    if not values:
        return False
    try:
        for value in values:
            orjson.loads(value)
    except orjson.JSONDecodeError:
        return False
    return True


def source_ids(path: Path) -> np.ndarray:
    """Each line's ``source_sample_id`` (the index of a split's build or a clean build: the writer
    puts it last), read from the lines' ends straight from their bytes, a block of lines at a
    time (parsing a million lines as JSON costs seconds). ``ValueError`` naming the first line
    that does not end with it."""
    key = f',"{SOURCE_SAMPLE_ID}":'.encode()
    block = line_bytes.Block(margin=64)
    found: list[np.ndarray] = []
    lines = 0
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        for start in range(0, size, _BLOCK):
            block.read_lines(handle.fileno(), start, start + _BLOCK)
            if not block.size:
                continue
            back = line_bytes.Back(block, block.ends)
            ids = back.integer(b"}")
            ok = back.ok & line_bytes.is_at(block.windows(back.at - len(key), len(key)), 0, key)
            if not (ok.all() and block.whole_lines()):
                bad = int(np.flatnonzero(~ok)[0]) if not ok.all() else ok.size - 1
                raise ValueError(
                    f"{FILENAME} line {lines + bad + 1}: no {SOURCE_SAMPLE_ID} at its end"
                )
            found.append(ids)
            lines += ids.size
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
