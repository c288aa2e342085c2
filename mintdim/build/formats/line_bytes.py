"""Reading the parts of many text lines of one known form at once, straight from their bytes.

A block of whole lines is held with a margin of zeros each side. A cursor keeps a position in
every line and reads the next part of all lines at once: one gather of a fixed-width window per
line (numpy copies ``S<width>`` items faster than any other gather), then whole-column work on
the windows: a literal as a few machine-word compares, an integer by SWAR arithmetic on 8-byte
words, a string among known options by binary search. Each part read also says, per line,
whether the bytes had exactly the expected form (``ok``); a caller that needs exactness falls
back to a real parser wherever that is not the case. build/formats/sample_index.py reads its lines so.
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

    def load(self, block: bytes | memoryview) -> None:
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
    """Strings a part may be, grouped by length. A row's words that differ among the options of
    a length are mixed into one key and looked up among the options' keys by binary search;
    then every word is compared with the option found (the others are the same in all)."""

    def __init__(self, texts: list[bytes]) -> None:
        self.by_length: dict[int, tuple[np.ndarray, list[np.ndarray], list[int], np.ndarray]] = {}
        for length in sorted({len(text) for text in texts}):
            numbers = np.array([n for n, t in enumerate(texts) if len(t) == length])
            table = np.frombuffer(b"".join(texts[n] for n in numbers), np.uint8)
            words = _words(table.reshape(numbers.size, length), 0, length)
            varying = [i for i, word in enumerate(words) if (word != word[0]).any()]
            keys = _mix([words[i] for i in varying], numbers.size)
            order = np.argsort(keys)
            words = [word[order] for word in words]
            self.by_length[length] = (keys[order], words, varying, numbers[order])
        self.longest = max(self.by_length, default=0)

    def at(self, rows: np.ndarray, column: int, length: int) -> np.ndarray:
        """The number of the option of ``length`` bytes at ``column`` of each row, or -1."""
        keys, option_words, varying, numbers = self.by_length[length]
        found = np.full(rows.shape[0], -1, dtype=np.int64)
        if column < 0:
            return found
        words = _words(rows, column, length)
        if np.unique(keys).size < keys.size:  # two options share a key: try each in turn
            for k in range(keys.size):
                found[_same(words, [word[k] for word in option_words])] = numbers[k]
            return found
        where = np.searchsorted(keys, _mix([words[i] for i in varying], rows.shape[0]))
        where = np.minimum(where, keys.size - 1)
        # The words all options share are compared with a value, the others row by row.
        wanted = [word[where] if i in varying else word[0] for i, word in enumerate(option_words)]
        return np.where(_same(words, wanted), numbers[where], -1)


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
    """Where ``text`` stands in each row from ``column``, compared as a few machine words:
    integers compare five times faster than ``S`` items."""
    row = np.frombuffer(text, dtype=np.uint8).reshape(1, len(text))
    return _same(_words(rows, column, len(text)), [w[0] for w in _words(row, 0, len(text))])


def _same(words: list[np.ndarray], expected: list) -> np.ndarray:
    """Where every word equals its expected one (a value, or one per row)."""
    found = np.ones(words[0].shape if words else 0, dtype=bool)
    for word, value in zip(words, expected, strict=True):
        found &= word == value
    return found


def _words(rows: np.ndarray, column: int, length: int) -> list[np.ndarray]:
    """The ``length`` bytes from ``column`` of each row as a few little-endian words (views; the
    last word overlaps the one before when the length is no multiple of its size)."""
    if not length:
        return []
    size = 8 if length >= 8 else 4 if length >= 4 else 2 if length >= 2 else 1
    return [
        np.ndarray(
            (rows.shape[0],),
            dtype=f"<u{size}",
            buffer=rows,
            offset=column + start,
            strides=(rows.shape[1],),
        )
        for start in [*range(0, length - size, size), length - size]
    ]


def _mix(words: list[np.ndarray], count: int) -> np.ndarray:
    """One 64-bit key per row of a few words (multiplicative hashing; zeros for none)."""
    key = np.zeros(count, dtype=np.uint64)
    for word in words:
        key = (key ^ word) * 0x9E3779B97F4A7C15
    return key


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
    near = near ^ (0x30 * _LANES)  # '0'..'9' become 0..9
    width = _digits_from_edge(near, backward)
    value = _value(near, width, backward)
    leading = _first_digit(near, width, backward)
    full = width == 8
    if full.any():  # more than 8 digits: the far word's join them
        far = far ^ (0x30 * _LANES)
        more = np.where(full, _digits_from_edge(far, backward), 0)
        beyond = _value(far, more, backward)
        joined = beyond * 10**8 + value if backward else value * 10**more + beyond
        value = np.where(full, joined, value)
        if backward:  # the run's most significant digit is in the far word
            leading = np.where(more > 0, _first_digit(far, more, backward), leading)
        width = width + more
    canonical = (width >= 1) & (width <= MAX_DIGITS) & ((width == 1) | (leading != 0))
    return value.astype(np.int64), width.astype(np.int64), canonical


def _digits_from_edge(lanes: np.ndarray, backward: bool) -> np.ndarray:
    """How many lanes from the lowest (``backward``: the highest) hold 0..9: 0 to 8."""
    # A lane's top bit, once 0x76 is added to its low 7 bits, is set when they are 10 or more
    # (the sum stays inside the lane); a lane whose own top bit is set is no digit either.
    flags = (((lanes & (0x7F * _LANES)) + 0x76 * _LANES) | lanes) & (0x80 * _LANES)
    if backward:
        flags = flags.byteswap()  # the highest lane becomes the lowest
    lowest = flags & (~flags + 1)  # the nearest non-digit lane's flag alone: 2**(8 * lane + 7)
    # 2**(8 * lane) times 0x0001020304050607 holds the lane's number in its top byte.
    lane = ((lowest >> 7) * 0x0001020304050607) >> 56
    return np.where(flags == 0, 8, lane)


def _first_digit(lanes: np.ndarray, width: np.ndarray, backward: bool) -> np.ndarray:
    """The most significant of the run's digits: the lowest lane, or (``backward``) the lowest
    of the ``width`` highest lanes."""
    if not backward:
        return lanes & 0xFF
    return (lanes >> (8 * (8 - np.maximum(width, 1)))) & 0xFF


def _value(lanes: np.ndarray, width: np.ndarray, backward: bool) -> np.ndarray:
    """The number in the ``width`` lowest lanes (``backward``: highest) of ``lanes`` (values
    0..9, lower lanes more significant)."""
    unused = 8 * (8 - width)  # 64 for an empty run: numpy shifts it to 0
    # Kept and moved to the top lanes: the lanes below become leading zeros of 8 digits.
    top = (lanes >> unused) << unused if backward else lanes << unused
    # Neighbour lanes combined in pairs, pairs of pairs, then halves (10, 100, 10000 apart).
    top = ((top * (10 * 256 + 1)) >> 8) & 0x00FF00FF00FF00FF
    top = ((top * (100 * 65536 + 1)) >> 16) & 0x0000FFFF0000FFFF
    return ((top * (10000 * (1 << 32) + 1)) >> 32) & 0xFFFFFFFF
