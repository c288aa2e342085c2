"""Reading the parts of many text lines of one known form at once, straight from their bytes.

A block of whole lines is held with a margin of zeros each side. A cursor keeps a position in
every line and reads the next part of all lines at once: one gather of a fixed-width window per
line (numpy copies ``S<width>`` items faster than any other gather), then whole-column work on
the windows: a literal as a few machine-word compares, an integer by SWAR arithmetic on 8-byte
words, a string among known options by binary search. Each part read also says, per line,
whether the bytes had exactly the expected form (``ok``); a caller that needs exactness falls
back to a real parser wherever that is not the case. output/sample_index.py reads its lines so.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["Ahead", "Back", "Block", "Options", "distinct_between", "is_at"]

MAX_DIGITS = 15
"""Longest integer read (two 8-byte words, one digit short: a 16th may be followed by more)."""


class Block:
    """A block of whole lines (``\n``-terminated) in a buffer kept from block to block (fresh
    pages would cost a fault each), with ``margin`` bytes each side so a window read near either
    end stays inside. ``starts`` and ``ends`` (the newlines) are offsets in the block."""

    def __init__(self, margin: int) -> None:
        self.margin = margin
        self._buffer = np.zeros(0, dtype=np.uint8)
        self._first = margin  # the buffer index of the block's first byte
        self.size = 0
        self.starts = self.ends = np.zeros(0, dtype=np.int64)

    def load(self, block: bytes) -> None:
        """Hold a copy of ``block``."""
        self._reserve(len(block))
        self._buffer[self.margin : self.margin + len(block)] = np.frombuffer(block, np.uint8)
        newlines = np.flatnonzero(self._buffer[self.margin : self.margin + len(block)] == 10)
        self._hold(0, len(block), newlines)

    def read_lines(self, fd: int, start: int, end: int) -> int:
        """Read straight into the buffer, and hold, the lines of file ``fd`` that start at an
        offset from ``start`` to ``end`` (exclusive; a line starts at 0 or after a newline), the
        last one whole even past ``end``. Returns the file offset of the first (``size`` is 0
        when no line starts there). Blocks read for consecutive ranges hold every line once."""
        first = max(start - 1, 0)  # the byte before ``start`` says whether a line starts there
        span = end - first
        want = span + 4096
        while True:
            self._reserve(want)
            got = os.preadv(fd, [memoryview(self._buffer)[self.margin : self.margin + want]], first)
            newlines = np.flatnonzero(self._buffer[self.margin : self.margin + got] == 10)
            opening = newlines[newlines < span - 1] if start else np.array([-1])
            if not opening.size:  # one line covers the whole range: it starts before it
                self._hold(0, 0, newlines[:0])
                return start
            closing = newlines[newlines >= span - 1]
            if closing.size or got < want:  # the last line's newline, or the end of the file
                begin = int(opening[0]) + 1
                finish = int(closing[0]) + 1 if closing.size else got
                self._hold(begin, finish, newlines[(newlines >= begin) & (newlines < finish)])
                return first + begin
            want *= 2  # a line longer than what was read: read more

    def bytes_of(self) -> bytes:
        """A copy of the block's bytes."""
        return self._buffer[self._first : self._first + self.size].tobytes()

    def whole_lines(self) -> bool:
        """Whether the block ends with a newline (not so the end of a file without one)."""
        return self.size > 0 and self._buffer[self._first + self.size - 1] == ord("\n")

    def _reserve(self, size: int) -> None:
        if self._buffer.size < size + 2 * self.margin:
            self._buffer = np.zeros(size + 2 * self.margin, dtype=np.uint8)

    def _hold(self, begin: int, finish: int, newlines: np.ndarray) -> None:
        self._first, self.size = self.margin + begin, finish - begin
        self._buffer[self.margin + finish : 2 * self.margin + finish] = 0
        self.ends = newlines - begin
        self.starts = np.r_[0, self.ends[:-1] + 1]

    def windows(self, at: np.ndarray, width: int) -> np.ndarray:
        """The ``width`` bytes from each block offset in ``at``, one row each."""
        items = np.ndarray(
            (self._buffer.size - width + 1,), dtype=f"S{width}", buffer=self._buffer, strides=(1,)
        )
        # Clipped into the buffer: a broken line may point anywhere; it fails anyway (bytes
        # before the block or after it never make a line's parts meet in the middle).
        index = np.clip(at + self._first, 0, items.size - 1)
        return items[index].view(np.uint8).reshape(-1, width)


class Options:
    """Strings a part may be, grouped by length: each length's texts sorted, with their numbers."""

    def __init__(self, texts: list[bytes]) -> None:
        self.by_length: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for length in sorted({len(text) for text in texts}):
            numbers = np.array([n for n, t in enumerate(texts) if len(t) == length])
            sorted_texts = np.array([texts[n] for n in numbers], dtype=f"S{length}")
            order = np.argsort(sorted_texts)
            self.by_length[length] = (sorted_texts[order], numbers[order])
        self.longest = max(self.by_length, default=0)

    def at(self, rows: np.ndarray, column: int, length: int) -> np.ndarray:
        """The number of the option of ``length`` bytes at ``column`` of each row, or -1."""
        texts, numbers = self.by_length[length]
        found = np.full(rows.shape[0], -1, dtype=np.int64)
        if column < 0:
            return found
        if texts.size <= _COMPARED_ONE_BY_ONE:
            for text, number in zip(texts.tolist(), numbers.tolist(), strict=True):
                found[is_at(rows, column, text)] = number
            return found
        items = _items(rows, column, length)
        # An "S" compare ignores trailing NULs; no option ends in one, and the data's NULs differ.
        where = np.minimum(np.searchsorted(texts, items), texts.size - 1)
        return np.where(texts[where] == items, numbers[where], -1)


_COMPARED_ONE_BY_ONE = 8
"""Up to this many options of one length, word compares beat a binary search of each row."""


class Ahead:
    """A position in each line, moved forward over its parts; ``ok`` where all matched so far.
    Each part is a ``lead`` literal and a value right after it."""

    def __init__(self, block: Block, at: np.ndarray) -> None:
        self.block, self.at = block, at
        self.ok = np.ones(at.size, dtype=bool)

    def integer(self, lead: bytes) -> np.ndarray:
        """``lead``, then a canonical JSON integer: its value."""
        rows = self._part(lead, 16)
        value, width, canonical = _integer(_word(rows, len(lead)), _word(rows, len(lead) + 8))
        self.ok &= canonical
        self.at = self.at + len(lead) + width
        return value

    def text(self, lead: bytes, width: int) -> np.ndarray:
        """``lead``, then ``width`` bytes: them, as ``S<width>`` items."""
        rows = self._part(lead, width)
        self.at = self.at + len(lead) + width
        return np.ascontiguousarray(rows[:, len(lead) :]).view(f"S{width}")[:, 0]

    def choice(self, lead: bytes, options: Options) -> np.ndarray:
        """``lead``, then one of ``options``: its number (-1 for none)."""
        rows = self._part(lead, options.longest)
        found = np.full(self.at.size, -1, dtype=np.int64)
        width = np.zeros(self.at.size, dtype=np.int64)
        # Options that are JSON strings end at their first unescaped quote: one matches at most.
        for length in options.by_length:
            number = options.at(rows, len(lead), length)
            hit = number >= 0
            found[hit], width[hit] = number[hit], length
        self.ok &= found >= 0
        self.at = self.at + len(lead) + width
        return found

    def _part(self, lead: bytes, width: int) -> np.ndarray:
        rows = self.block.windows(self.at, len(lead) + width)
        self.ok &= is_at(rows, 0, lead)
        return rows


class Back:
    """A position in each line (where a part ends), moved backward over its parts; ``ok`` where
    all matched so far. Each part is a value and a ``tail`` literal right after it."""

    def __init__(self, block: Block, at: np.ndarray) -> None:
        self.block, self.at = block, at
        self.ok = np.ones(at.size, dtype=bool)

    def integer(self, tail: bytes) -> np.ndarray:
        """A canonical JSON integer, then ``tail``: its value."""
        rows = self._part(16, tail)
        value, width, canonical = _integer(_word(rows, 8), _word(rows, 0), backward=True)
        self.ok &= canonical
        self.at = self.at - len(tail) - width
        return value

    def choice(self, options: Options, tail: bytes) -> np.ndarray:
        """One of ``options``, then ``tail``: its number (-1 for none)."""
        rows = self._part(options.longest, tail)
        found = np.full(self.at.size, -1, dtype=np.int64)
        width = np.zeros(self.at.size, dtype=np.int64)
        for length in options.by_length:
            number = options.at(rows, options.longest - length, length)
            hit = number >= 0
            found[hit], width[hit] = number[hit], length
        self.ok &= found >= 0
        self.at = self.at - len(tail) - width
        return found

    def _part(self, width: int, tail: bytes) -> np.ndarray:
        rows = self.block.windows(self.at - width - len(tail), width + len(tail))
        self.ok &= is_at(rows, width, tail)
        return rows


def distinct_between(
    block: Block, starts: np.ndarray, ends: np.ndarray, lead: bytes, tail: bytes
) -> list[bytes] | None:
    """The distinct values between ``lead`` (at ``starts``) and ``tail`` (ending at ``ends``),
    byte for byte; None when some line does not hold ``lead`` and ``tail`` there."""
    lengths = ends - starts - len(lead) - len(tail)
    if lengths.size and lengths.min() < 0:
        return None
    found: list[bytes] = []
    for length in np.flatnonzero(np.bincount(lengths)).tolist():
        rows = block.windows(starts[lengths == length], len(lead) + length + len(tail))
        if not (is_at(rows, 0, lead) & is_at(rows, len(lead) + length, tail)).all():
            return None
        values = _items(rows, len(lead), length)
        # Lines hold few distinct values: take the first, drop its equals, repeat. (Items of one
        # length compare equal exactly when their bytes are: only trailing NULs are ignored.)
        while values.size:
            found.append(values[:1].tobytes())
            values = values[values != values[0]]
    return found


def _items(rows: np.ndarray, column: int, width: int) -> np.ndarray:
    """The ``width`` bytes from ``column`` of each row as one ``S<width>`` item (a view)."""
    return np.ndarray(
        (rows.shape[0],), dtype=f"S{width}", buffer=rows, offset=column, strides=(rows.shape[1],)
    )


def is_at(rows: np.ndarray, column: int, text: bytes) -> np.ndarray:
    """Where ``text`` stands in each row from ``column``, compared as a few little-endian words
    (the last one overlapping the one before): integers compare five times faster than ``S``
    items."""
    if not text:
        return np.ones(rows.shape[0], dtype=bool)
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


def _word(rows: np.ndarray, column: int) -> np.ndarray:
    """The 8 bytes at ``column`` of each row as a little-endian integer (its first byte lowest)."""
    return np.ndarray(
        (rows.shape[0],), dtype="<u8", buffer=rows, offset=column, strides=(rows.shape[1],)
    ).copy()


# SWAR ("SIMD within a register"): each 8-byte word holds 8 characters, one per byte lane;
# masks and arithmetic that never carry from one lane into the next treat all 8 at once.
_LANES = 0x0101010101010101


def _integer(near: np.ndarray, far: np.ndarray, backward: bool = False) -> tuple[np.ndarray, ...]:
    """The run of ASCII digits that starts (``backward``: ends) at the edge of the 8-byte word
    ``near`` and may go on into the word ``far`` beyond it: its value, its width, and where it
    is a canonical JSON integer (1 to MAX_DIGITS digits, no leading zero)."""
    near, far = near ^ (0x30 * _LANES), far ^ (0x30 * _LANES)  # '0'..'9' become 0..9
    width = _digits_from_edge(near, backward)
    value = _value(near, width, backward)
    full = width == 8
    more = np.where(full, _digits_from_edge(far, backward), 0) if full.any() else 0 * width
    if full.any():  # more than 8 digits: the far word's join them
        beyond = _value(far, more, backward)
        joined = beyond * 10**8 + value if backward else value * 10**more + beyond
        value = np.where(full, joined, value)
    if backward:  # the most significant digit is the run's lowest lane, maybe in the far word
        in_far = more > 0
        top, top_width = np.where(in_far, far, near), np.where(in_far, more, width)
        leading = (top >> (8 * (8 - np.clip(top_width, 1, 8)))) & 0xFF
    else:
        leading = near & 0xFF
    width = width + more
    canonical = (width >= 1) & (width <= MAX_DIGITS) & ((width == 1) | (leading != 0))
    return value.astype(np.int64), width.astype(np.int64), canonical


def _digits_from_edge(lanes: np.ndarray, backward: bool) -> np.ndarray:
    """How many lanes from the lowest (``backward``: the highest) hold 0..9: 0 to 8."""
    # A lane is no digit if its high nibble is set, or its low nibble + 6 reaches 16 (10..15).
    low = lanes & (0x0F * _LANES)
    bad = (lanes & (0xF0 * _LANES)) | ((low + 0x06 * _LANES) & (0x10 * _LANES))
    # Its top bit set for each lane that is not zero (adding 0x7F carries into bit 7 only).
    flags = (((bad & (0x7F * _LANES)) + 0x7F * _LANES) | bad) & (0x80 * _LANES)
    if backward:
        flags = flags.byteswap()  # the highest lane becomes the lowest
    lowest = flags & (~flags + 1)  # the nearest bad lane's flag alone: 2**(8 * lane + 7)
    lane = (np.log2(lowest | (flags == 0)).astype(np.uint64) - 7) // 8
    return np.where(flags == 0, 8, lane).astype(np.uint64)


def _value(lanes: np.ndarray, width: np.ndarray, backward: bool) -> np.ndarray:
    """The number in the ``width`` lowest lanes (``backward``: highest) of ``lanes`` (values
    0..9, lower lanes more significant)."""
    width = np.minimum(width, 8)
    unused = 8 * (8 - width)
    # Kept and moved to the top lanes: the lanes below become leading zeros of 8 digits.
    top = np.where(width == 0, 0, (lanes >> unused) << unused if backward else lanes << unused)
    # Neighbour lanes combined in pairs, pairs of pairs, then halves (10, 100, 10000 apart).
    top = ((top * (10 * 256 + 1)) >> 8) & 0x00FF00FF00FF00FF
    top = ((top * (100 * 65536 + 1)) >> 16) & 0x0000FFFF0000FFFF
    return ((top * (10000 * (1 << 32) + 1)) >> 32) & 0xFFFFFFFF
