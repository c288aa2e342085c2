"""``--match words``: normalised words, and the words of many texts numbered at once.

A text is normalised with NFKC, lower case and every Unicode punctuation character (category P*)
removed, then split on whitespace. Benchmark words are numbered from 1 (the vocabulary); a
training word gets its vocabulary number, or 0, which no benchmark run holds.

Numbering a build's words one ``dict`` lookup at a time costs seconds per million samples. So
a batch of normalised texts is joined into one byte array and its words found as spans between
spaces with numpy. A word of at most 16 bytes is its own key: its bytes 0-7 and 8-15 read as two
integers, every byte past its end 0xFF (a byte UTF-8 never holds, so the key holds the length
too). Keys are looked up in an open-addressing table of the vocabulary's keys and compared
whole: a number is exact, never a hash's guess. The few longer words are looked up by their
bytes in a ``dict``. Every run found through these numbers is still compared with the
benchmark's words byte for byte (``WordSpans.same``) before it counts.
"""

from __future__ import annotations

import string
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache

import numpy as np

__all__ = ["WordNumbers", "WordSpans", "normal_text", "normal_words"]

_ASCII_WHITESPACE = bytes(code for code in range(128) if chr(code).isspace())
"""What ``str.split()`` splits an ASCII text at (``\\x1c``-``\\x1f`` included)."""
_ASCII_TABLE = bytes.maketrans(
    string.ascii_uppercase.encode() + _ASCII_WHITESPACE,
    string.ascii_lowercase.encode() + b" " * len(_ASCII_WHITESPACE),
)
"""Lower case, and every whitespace byte a space: words then end at one byte value."""
_ASCII_PUNCTUATION = bytes(
    code for code in range(128) if unicodedata.category(chr(code)).startswith("P")
)
_SPACE = ord(" ")

_KEY_BYTES = 16
"""The longest word keyed by its own bytes (two 8-byte loads)."""
_PAD = b" " * _KEY_BYTES
"""After a batch's last word: room for its loads, read as whitespace."""
_FULL = (1 << 64) - 1
_FILL = np.array([(_FULL << 8 * kept) & _FULL for kept in range(9)], dtype=np.uint64)
"""``_FILL[n]``: 0xFF in each byte of a little-endian 8-byte load but its first ``n``."""
_NOTHING = np.uint64(_FULL)
"""A load no word has (all 0xFF: no byte of a word)."""
_WORDS = 1 << 16
"""Words looked up at a time: the lookup's temporaries (8 bytes a word each) then stay in a
core's L2 cache; a whole batch's (~900,000 words) at once took ~20% longer, measured."""
_HOME = np.uint64(0x9E3779B97F4A7C15)
"""Multiplicative hashing of a key's first load; its top bits are the home slot."""


@cache
def _unicode_table() -> list[int | None]:
    """``str.translate``'s table for a non-ASCII text: each punctuation code point (P*) to
    None (removed), each whitespace one to a space, any other to itself. A list, not a dict:
    translate looks every character up, and a code point a dict lacks costs a KeyError inside
    (~50 ns a character, most of a Vietnamese text's normalisation), where a list answers by
    index. It ends at the last code point mapped elsewhere: translate leaves the ones past it."""
    table: list[int | None] = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char).startswith("P"):
            table.append(None)
        else:
            table.append(_SPACE if char.isspace() else code)
    while table[-1] == len(table) - 1:
        table.pop()
    return table


def _ascii_normal(text: str) -> bytes:
    """An ASCII text normalised in one C call (NFKC leaves ASCII as it is)."""
    return text.encode().translate(_ASCII_TABLE, _ASCII_PUNCTUATION)


def normal_text(text: str) -> str:
    """NFKC, lower case, punctuation removed, each whitespace character a space."""
    if text.isascii():
        return _ascii_normal(text).decode()
    return unicodedata.normalize("NFKC", text).lower().translate(_unicode_table())


def normal_words(text: str) -> list[str]:
    """``--match words``' words of a text."""
    return normal_text(text).split()


@dataclass(frozen=True, slots=True)
class WordSpans:
    """A block's normalised texts as bytes, and where each of its words lies."""

    data: bytes
    starts: np.ndarray
    ends: np.ndarray
    names: list[bytes]
    """The vocabulary: each number's word (0: none)."""

    def same(self, first: int, numbers: np.ndarray) -> bool:
        """Whether the words from the block's word ``first`` on are the numbered words."""
        last = first + numbers.size
        spans = zip(
            self.starts[first:last].tolist(),
            self.ends[first:last].tolist(),
            numbers.tolist(),
            strict=True,
        )
        return all(self.data[start:end] == self.names[number] for start, end, number in spans)


def _spans(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Where each word of ``data`` (words between spaces; a space first and last) starts, ends."""
    inside = np.frombuffer(data, dtype=np.uint8) != _SPACE
    edge = np.empty(inside.size, dtype=bool)  # edge[i]: byte i starts or ends a word
    edge[0] = False
    np.not_equal(inside[1:], inside[:-1], out=edge[1:])  # no "+ 1" pass over the edges
    edges = np.flatnonzero(edge)
    return edges[0::2], edges[1::2]


def _loads(data: bytes) -> np.ndarray:
    """Every (unaligned) 8-byte window of ``data`` as a little-endian integer, no copy."""
    return np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))


def _load(loads: np.ndarray, starts: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The 8 bytes from each start, each byte past the first ``kept`` (clipped to 0-8) 0xFF."""
    return loads[starts] | _FILL.take(kept, mode="clip")  # take clips in the same pass


class WordNumbers:
    """The vocabulary's keys, to number the words of many texts at once."""

    def __init__(self, vocabulary: dict[str, int]) -> None:
        self.names = [b""] * (len(vocabulary) + 1)
        for word, number in vocabulary.items():
            self.names[number] = word.encode("utf-8")
        self._long = {name: n for n, name in enumerate(self.names) if len(name) > _KEY_BYTES}
        lengths = np.array([len(name) for name in self.names[1:]], dtype=np.int64)
        loads = _loads(b"".join([*self.names[1:], _PAD]))
        starts = np.cumsum(lengths) - lengths
        low = _load(loads, starts, lengths)
        high = _load(loads, starts + 8, lengths - 8)
        # Linear probing, at most a quarter full: a word not in the vocabulary mostly finds its
        # home slot empty, one in it mostly finds itself there.
        bits = max(4, (lengths.size * 4).bit_length())
        self._shift = np.uint64(64 - bits)
        self._mask = (1 << bits) - 1
        slots = np.zeros(1 << bits, dtype=np.int64)  # each slot's vocabulary number (0: empty)
        for number, slot in enumerate(self._home(low).tolist(), start=1):
            while slots[slot]:
                slot = (slot + 1) & self._mask
            slots[slot] = number
        # A word longer than 16 bytes holds its slot (probes walk past it) under a key no word
        # has: it is looked up by its bytes. ``first`` is what the lookup's one gather compares:
        # a word of at most 7 bytes is its first load whole (0xFF after it); a longer one
        # needs both loads, so its ``first`` is a key no word has.
        low[lengths > _KEY_BYTES] = high[lengths > _KEY_BYTES] = _NOTHING
        first = np.where(lengths < 8, low, _NOTHING)
        empty = np.zeros(1, dtype=np.uint64)
        self._first, self._low, self._high = (
            np.concatenate([empty, keys])[slots] for keys in (first, low, high)
        )
        self._numbers = slots

    def _home(self, low: np.ndarray) -> np.ndarray:
        """Each key's home slot, from its first load."""
        return ((low * _HOME) >> self._shift).view(np.int64)

    def number(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, WordSpans]:
        """Each text's words as numbers (back to back), its word count, and the spans."""
        # An ASCII text straight to bytes, without normal_text's round trip through str.
        encoded = [_ascii_normal(t) if t.isascii() else normal_text(t).encode() for t in texts]
        data = b" ".join([b"", *encoded, _PAD])
        starts, ends = _spans(data)
        numbers = np.concatenate(
            [
                self._lookup(data, starts[at : at + _WORDS], ends[at : at + _WORDS])
                for at in range(0, starts.size or 1, _WORDS)
            ]
        )
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        firsts = np.cumsum(lengths + 1) - lengths  # each text's first byte in data
        counts = np.diff(np.searchsorted(starts, firsts), append=starts.size)
        return numbers, counts, WordSpans(data, starts, ends, self.names)

    def _lookup(self, data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The number of each word ``data[start:end]`` (0: not in the vocabulary)."""
        loads, lengths = _loads(data), ends - starts
        low = _load(loads, starts, lengths)
        home = self._home(low)
        # One gather settles a word of at most 7 bytes whose home slot holds it, and any word
        # whose home slot is empty (no vocabulary word has that home). The others are probed.
        found = self._numbers[home]
        numbers = found * (self._first[home] == low)
        rest = np.flatnonzero(numbers != found)  # neither the word nor empty
        high = _load(loads, starts[rest] + 8, lengths[rest] - 8)
        numbers[rest] = self._probe(home[rest], low[rest], high)
        long = rest[lengths[rest] > _KEY_BYTES]  # their loads hold only their first 16 bytes
        numbers[long] = [
            self._long.get(data[start:end], 0)
            for start, end in zip(starts[long].tolist(), ends[long].tolist(), strict=True)
        ]
        return numbers

    def _probe(self, slot: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Each key's number, probing from ``slot`` on to the key or an empty slot (0)."""
        numbers = np.zeros(slot.size, dtype=np.int64)
        waiting = np.arange(slot.size)
        while waiting.size:
            found = self._numbers[slot]
            same = (self._low[slot] == low[waiting]) & (self._high[slot] == high[waiting])
            settled = same | (found == 0)
            numbers[waiting[settled]] = found[settled]
            waiting, slot = waiting[~settled], (slot[~settled] + 1) & self._mask
        return numbers
