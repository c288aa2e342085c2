"""``--match words``: normalised words, and the words of many texts numbered at once.

A text is normalised with NFKC, lower case and every Unicode punctuation character (category P*)
removed, then split on whitespace. Benchmark words are numbered from 1 (the vocabulary); a
training word gets its vocabulary number, or 0, which no benchmark run holds.

Numbering a build's words one ``dict`` lookup at a time costs seconds per million samples. So
a batch of normalised texts is joined into one byte array, its words found as spans between
whitespace bytes with numpy, each span hashed (``Hasher.spans``) and looked up among the
vocabulary's hashes with one binary search. A hash only proposes a number: every run found
through these numbers is compared with the benchmark's words byte for byte (``WordSpans.same``)
before it counts.
"""

from __future__ import annotations

import string
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache

import numpy as np

from mintdim.decontaminate.ngrams import Hasher

__all__ = ["WordNumbers", "WordSpans", "normal_text", "normal_words"]

_WORD_BASE = 0xD6E8FEB86659FD93
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


@cache
def _punctuation() -> dict[int, None]:
    """Every Unicode punctuation code point (category P*), to be removed."""
    return {
        code: None
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)).startswith("P")
    }


def _ascii_normal(text: str) -> bytes:
    """An ASCII text normalised in one C call (NFKC leaves ASCII as it is)."""
    return text.encode().translate(_ASCII_TABLE, _ASCII_PUNCTUATION)


def normal_text(text: str) -> str:
    """NFKC, lower case, punctuation removed, whitespace made spaces (a non-ASCII text's single
    spaces)."""
    if text.isascii():
        return _ascii_normal(text).decode()
    text = unicodedata.normalize("NFKC", text).lower().translate(_punctuation())
    return " ".join(text.split())


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


class WordNumbers:
    """The vocabulary's hashes, to number the words of many texts at once."""

    def __init__(self, vocabulary: dict[str, int]) -> None:
        self.names = [b""] * (len(vocabulary) + 1)
        for word, number in vocabulary.items():
            self.names[number] = word.encode("utf-8")
        self.hasher = Hasher.of(_WORD_BASE)
        hashes = self._hashes(b" ".join(self.names[1:]))[0]
        # An open-addressing table (linear probing, at most a quarter full): about one gather
        # per word, where a binary search over the vocabulary costs ~15.
        self._bits = max(4, int(hashes.size * 4).bit_length())
        self._keys = np.zeros(1 << self._bits, dtype=np.uint64)
        self._numbers = np.zeros(1 << self._bits, dtype=np.int64)
        mask = (1 << self._bits) - 1
        for number, key in enumerate(hashes.tolist(), start=1):
            slot = key >> (64 - self._bits)
            while self._numbers[slot] and self._keys[slot] != key:
                slot = (slot + 1) & mask
            self._keys[slot], self._numbers[slot] = key, number

    def _hashes(self, data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every word of ``data`` (split at spaces): its hash, start and end."""
        raw = np.frombuffer(data, dtype=np.uint8)
        space = np.concatenate([[True], raw == _SPACE, [True]])
        starts = np.flatnonzero(space[:-2] & ~space[1:-1])
        ends = np.flatnonzero(~space[1:-1] & space[2:]) + 1
        prefix = self.hasher.prefix(raw)
        return self.hasher.spans(prefix, starts, ends - starts), starts, ends

    def number(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, WordSpans]:
        """Each text's words as numbers (back to back), its word count, and the spans."""
        # An ASCII text straight to bytes, without normal_text's round trip through str.
        encoded = [_ascii_normal(t) if t.isascii() else normal_text(t).encode() for t in texts]
        data = b" ".join(encoded)
        hashes, starts, ends = self._hashes(data)
        numbers = np.zeros(hashes.size, dtype=np.int64)
        slot = (hashes >> np.uint64(64 - self._bits)).astype(np.int64)
        waiting = np.arange(hashes.size)
        mask = (1 << self._bits) - 1
        while waiting.size:  # probe until the key or an empty slot
            found = self._keys[slot] == hashes[waiting]
            filled = self._numbers[slot] != 0
            numbers[waiting[found & filled]] = self._numbers[slot[found & filled]]
            going = filled & ~found
            waiting, slot = waiting[going], (slot[going] + 1) & mask
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        text_starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        first = np.searchsorted(starts, text_starts)
        counts = np.diff(np.concatenate([first, [starts.size]]))
        return numbers, counts, WordSpans(data, starts, ends, self.names)
