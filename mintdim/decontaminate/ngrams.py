"""The n-gram machinery of decontamination: rolling hashes over id arrays, the content rule,
normalised words, and the table of benchmark runs a build is searched for.

Ids are token ids (``--match tokens``) or word ids (``--match words``: each distinct normalised
benchmark word numbered from 1, every other word 0, which no benchmark run holds). A *run* is
what is looked for: an n-gram of a value, or a whole value shorter than ``n`` but at least
``min_tokens`` long. Only runs that carry content are kept: at least ⌈L/2⌉ distinct ids in a
run of L.

Hashing is a polynomial hash modulo 2**64 computed for every window of a block at once:
``H`` is the prefix sum of ``x[k] * B**k``, and the window ``[i, i+L)`` hashes to
``(H[i+L] - H[i]) * B**-i`` (B is odd, so it has an inverse modulo 2**64): one cumulative sum per
block, then two multiplications per position and run length. A hash only proposes a candidate:
every candidate is compared with the run's ids before it counts (``Table.find``).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache

import numpy as np

__all__ = [
    "FINDER_BASE",
    "VERIFIER_BASE",
    "Hasher",
    "Runs",
    "Table",
    "content_mask",
    "normal_words",
    "value_runs",
]

FINDER_BASE = 0x9E3779B97F4A7C15
"""The finder's base (odd): the golden-ratio constant."""
VERIFIER_BASE = 0xC2B2AE3D27D4EB4F
"""The verification pass's own base, so a hashing slip is not shared by both."""
_FILTER_BITS = 26
"""A bitmap of 2**26 entries (64 MiB of bools) screens every window before the sorted table is
searched: a gather per window, where a binary search per window would cost ~20."""


class Hasher:
    """Window hashes of one base (see the module docstring)."""

    def __init__(self, base: int) -> None:
        self.base = base
        self._powers = np.ones(1, dtype=np.uint64)
        self._inverses = np.ones(1, dtype=np.uint64)

    def _grow(self, size: int) -> None:
        if self._powers.size >= size:
            return
        size = max(size, 2 * self._powers.size)
        one = np.ones(1, dtype=np.uint64)
        # cumprod wraps modulo 2**64 in uint64, which is the ring the hash lives in.
        steps = np.full(size - 1, self.base, dtype=np.uint64)
        self._powers = np.concatenate([one, np.cumprod(steps)])
        steps[:] = pow(self.base, -1, 1 << 64)
        self._inverses = np.concatenate([one, np.cumprod(steps)])

    def prefix(self, ids: np.ndarray) -> np.ndarray:
        """``H`` of ``ids`` (length ``ids.size + 1``)."""
        self._grow(ids.size + 1)
        prefix = np.zeros(ids.size + 1, dtype=np.uint64)
        np.cumsum(ids.astype(np.uint64) * self._powers[: ids.size], out=prefix[1:])
        return prefix

    def windows(self, prefix: np.ndarray, length: int) -> np.ndarray:
        """The hash of every window of ``length`` ids (``prefix.size - length`` of them)."""
        count = prefix.size - 1 - length + 1
        if count <= 0:
            return np.zeros(0, dtype=np.uint64)
        return (prefix[length : length + count] - prefix[:count]) * self._inverses[:count]

    def spans(self, prefix: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The hash of each span ``[starts[k], starts[k] + counts[k])`` (a whole sample)."""
        return (prefix[starts + counts] - prefix[starts]) * self._inverses[starts]

    def rows(self, matrix: np.ndarray) -> np.ndarray:
        """The hash of each row of a ``(k, L)`` matrix, equal to ``windows``' for the same ids."""
        self._grow(matrix.shape[1])
        return (matrix.astype(np.uint64) * self._powers[: matrix.shape[1]]).sum(
            axis=1, dtype=np.uint64
        )


def content_mask(matrix: np.ndarray) -> np.ndarray:
    """Which rows of a ``(k, L)`` matrix of runs carry content: at least ⌈L/2⌉ distinct ids."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    ordered = np.sort(matrix, axis=1)
    distinct = 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(axis=1)
    return distinct >= -(-matrix.shape[1] // 2)


@cache
def _punctuation() -> dict[int, None]:
    """Every Unicode punctuation code point (category P*), to be removed."""
    return {
        code: None
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)).startswith("P")
    }


_SPACE = re.compile(r"\s+")


def normal_words(text: str) -> list[str]:
    """``--match words``' words of a text: NFKC, lower case, punctuation removed, split on
    whitespace (which collapses it)."""
    return unicodedata.normalize("NFKC", text).lower().translate(_punctuation()).split()


@dataclass(frozen=True, slots=True)
class Runs:
    """The content runs of one length: each distinct run once (``grams``), and where each
    occurs in the benchmark values (the *owners*, sorted by gram)."""

    length: int
    grams: np.ndarray
    """``(g, length)`` ids of each distinct run."""
    owner_gram: np.ndarray
    owner_value: np.ndarray
    """The value (its global number) holding the run."""
    owner_offset: np.ndarray
    """Where in the value the run starts."""
    owner_start: np.ndarray
    """``owner_gram``'s CSR: the owners of gram ``g`` are ``owner_start[g]:owner_start[g+1]``."""


class Table:
    """Every content run of the benchmarks, by length, with a hash table to find them."""

    def __init__(self, runs: list[Runs], hasher: Hasher) -> None:
        self.runs = {r.length: r for r in runs if r.grams.shape[0]}
        self.hasher = hasher
        self._keys: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for length, r in self.runs.items():
            hashes = hasher.rows(r.grams)
            order = np.argsort(hashes, kind="stable")
            bitmap = np.zeros(1 << _FILTER_BITS, dtype=bool)
            bitmap[hashes >> np.uint64(64 - _FILTER_BITS)] = True
            self._keys[length] = (hashes[order], order, bitmap)

    def find(self, ids: np.ndarray, room: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Every run of the table found in ``ids``, confirmed on the ids: per length, the
        positions and gram numbers. ``room[i]``: how many ids from ``i`` on belong to the same
        sample (a window that crosses into the next sample is none)."""
        found = []
        if not ids.size:
            return found
        prefix = self.hasher.prefix(ids)
        for length, r in self.runs.items():
            keys, order, bitmap = self._keys[length]
            hashes = self.hasher.windows(prefix, length)
            if not hashes.size:
                continue
            screened = bitmap[hashes >> np.uint64(64 - _FILTER_BITS)]
            screened &= room[: hashes.size] >= length
            positions = np.flatnonzero(screened)
            wanted = hashes[positions]
            left = np.searchsorted(keys, wanted, side="left")
            right = np.searchsorted(keys, wanted, side="right")
            many = right - left
            # Expand each position to every table entry of its hash (almost always 0 or 1).
            positions = np.repeat(positions, many)
            first = np.repeat(left, many)
            step = np.arange(positions.size) - np.repeat(np.cumsum(many) - many, many)
            grams = order[first + step]
            same = (ids[positions[:, None] + np.arange(length)] == r.grams[grams]).all(axis=1)
            found.append((length, positions[same], grams[same]))
        return found


def value_runs(
    values: list[np.ndarray], ngram: int, min_tokens: int
) -> tuple[list[Runs], np.ndarray, np.ndarray, np.ndarray]:
    """The content runs of benchmark values (each an id array), by length; per value, its
    checked ids (ids inside a content run), whether it was too short to check, and the n-grams
    skipped for carrying no content."""
    lengths = np.array([v.size for v in values], dtype=np.int64)
    flat = np.concatenate(values) if values else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    checked = np.zeros(flat.size + 1, dtype=np.int64)
    skipped = np.zeros(len(values), dtype=np.int64)
    short = lengths < min(ngram, min_tokens)
    runs = []
    # n-grams of the values at least n long.
    long = np.flatnonzero(lengths >= ngram)
    per = lengths[long] - ngram + 1
    owner_value = np.repeat(long, per)
    offset = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    matrix = flat[(starts[owner_value] + offset)[:, None] + np.arange(ngram)]
    keep = content_mask(matrix)
    np.add.at(skipped, owner_value[~keep], 1)
    runs.append(_runs(ngram, matrix[keep], owner_value[keep], offset[keep]))
    # Whole values shorter than n, matched as one run each.
    for length in range(max(min_tokens, 1), ngram):
        chosen = np.flatnonzero(lengths == length)
        if not chosen.size:
            continue
        matrix = flat[starts[chosen][:, None] + np.arange(length)]
        keep = content_mask(matrix)
        np.add.at(skipped, chosen[~keep], 1)
        runs.append(_runs(length, matrix[keep], chosen[keep], np.zeros(keep.sum(), np.int64)))
    for r in runs:  # a difference array: +1 where a run starts, -1 where it ends
        begin = starts[r.owner_value] + r.owner_offset
        np.add.at(checked, begin, 1)
        np.add.at(checked, begin + r.length, -1)
    checked_ids = np.cumsum(checked)[:-1] > 0
    return runs, checked_ids, short, skipped


def _runs(length: int, matrix: np.ndarray, values: np.ndarray, offsets: np.ndarray) -> Runs:
    if matrix.shape[0]:
        grams, inverse = np.unique(matrix, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
    else:
        grams, inverse = matrix.reshape(0, length), np.zeros(0, dtype=np.int64)
    order = np.argsort(inverse, kind="stable")
    owner_gram = inverse[order]
    start = np.searchsorted(owner_gram, np.arange(grams.shape[0] + 1))
    return Runs(length, grams, owner_gram, values[order], offsets[order], start)
