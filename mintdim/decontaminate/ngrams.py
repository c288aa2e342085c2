"""The n-gram machinery of decontamination: rolling hashes over id arrays, the content rule,
and the table of benchmark runs a build is searched for.

Ids are token ids (``--match tokens``) or word numbers (``--match words``, words.py). A *run* is
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

import threading
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
    "inside_runs",
    "value_runs",
]

FINDER_BASE = 0x9E3779B97F4A7C15
"""The finder's base (odd): the golden-ratio constant."""
VERIFIER_BASE = 0xC2B2AE3D27D4EB4F
"""The verification pass's own base, so a hashing slip is not shared by both."""
_FILTER_BITS = 26
"""A bitmap of 2**26 bits (8 MiB) of the hash's top bits screens every window before the sorted
table is searched: a gather per window, where a binary search per window would cost ~20. Packed
bits, not bools: 8 MiB stays in cache where 64 MiB of bools does not (13 against 19 ns a window,
measured). A second bitmap of its low bits screens the few percent that pass, so that only
about one window in 10,000 reaches the binary search (which cost half the scan without it)."""
_SHIFT = np.uint64(64 - _FILTER_BITS)
_LOW = np.uint64((1 << _FILTER_BITS) - 1)
_ROWS_IDS = 1 << 18
"""Ids of a matrix hashed at a time by ``Hasher.rows``."""


class Hasher:
    """Window hashes of one base (see the module docstring); ``Hasher.of(base)`` shares one
    per base, so its power tables are grown once per process."""

    @staticmethod
    @cache
    def of(base: int) -> Hasher:
        """The process's hasher of ``base``."""
        return Hasher(base)

    def __init__(self, base: int) -> None:
        self.base = base
        one = np.ones(1, dtype=np.uint64)
        self._tables = (one, one)
        """B**k and B**-k for k < their size: one tuple, swapped whole, so a thread never sees
        the powers of one size with the inverses of another."""
        self._lock = threading.Lock()

    def _powers(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        tables = self._tables
        if tables[0].size >= size:
            return tables
        with self._lock:
            if self._tables[0].size < size:
                size = max(size, 2 * self._tables[0].size)
                one = np.ones(1, dtype=np.uint64)
                # cumprod wraps modulo 2**64 in uint64, which is the ring the hash lives in.
                steps = np.full(size - 1, self.base, dtype=np.uint64)
                powers = np.concatenate([one, np.cumprod(steps)])
                steps[:] = pow(self.base, -1, 1 << 64)
                self._tables = (powers, np.concatenate([one, np.cumprod(steps)]))
            return self._tables

    def prefix(self, ids: np.ndarray) -> np.ndarray:
        """``H`` of ``ids`` (length ``ids.size + 1``)."""
        powers, _ = self._powers(ids.size + 1)
        prefix = np.zeros(ids.size + 1, dtype=np.uint64)
        np.cumsum(ids.astype(np.uint64) * powers[: ids.size], out=prefix[1:])
        return prefix

    def windows(self, prefix: np.ndarray, length: int) -> np.ndarray:
        """The hash of every window of ``length`` ids (``prefix.size - length`` of them)."""
        count = prefix.size - 1 - length + 1
        if count <= 0:
            return np.zeros(0, dtype=np.uint64)
        _, inverses = self._powers(prefix.size)
        return (prefix[length : length + count] - prefix[:count]) * inverses[:count]

    def spans(self, prefix: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The hash of each span ``[starts[k], starts[k] + counts[k])`` (a whole sample)."""
        _, inverses = self._powers(prefix.size)
        return (prefix[starts + counts] - prefix[starts]) * inverses[starts]

    def rows(self, matrix: np.ndarray) -> np.ndarray:
        """The hash of each row of a ``(k, L)`` matrix, equal to ``windows``' for the same ids
        (the windows of the rows back to back, every L-th kept: contiguous passes, where a sum
        along the rows costs several times more)."""
        rows, width = matrix.shape
        step = max(1, _ROWS_IDS // max(width, 1))  # the power tables stay that small
        parts = [np.zeros(0, dtype=np.uint64)]
        for start in range(0, rows, step):
            flat = np.ascontiguousarray(matrix[start : start + step]).reshape(-1)
            parts.append(self.windows(self.prefix(flat), width)[::width])
        return np.concatenate(parts)


def content_mask(matrix: np.ndarray) -> np.ndarray:
    """Which rows of a ``(k, L)`` matrix of runs carry content: at least ⌈L/2⌉ distinct ids."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    ordered = np.sort(matrix, axis=1)
    distinct = 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(axis=1)
    return distinct >= -(-matrix.shape[1] // 2)


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
    """Every content run of the benchmarks, with a hash table to find them.

    Runs have several lengths (n, and the whole values from ``min_tokens`` to n - 1), but the
    build is hashed once, for windows of the shortest length m: a run is looked up by the hash
    of its first m ids, and a candidate is then compared with the whole run. One pass over the
    build's ids whatever the number of lengths.
    """

    def __init__(self, runs: list[Runs], hasher: Hasher) -> None:
        self.runs = {r.length: r for r in runs if r.grams.shape[0]}
        self.hasher = hasher
        self.width = min(self.runs, default=1)
        heads = [hasher.rows(r.grams[:, : self.width]) for r in self.runs.values()]
        lengths = [np.full(r.grams.shape[0], r.length, np.int64) for r in self.runs.values()]
        grams = [np.arange(r.grams.shape[0], dtype=np.int64) for r in self.runs.values()]
        keys = np.concatenate(heads) if heads else np.zeros(0, np.uint64)
        order = np.argsort(keys, kind="stable")
        self._keys = keys[order]
        self._lengths = np.concatenate(lengths)[order] if lengths else np.zeros(0, np.int64)
        self._grams = np.concatenate(grams)[order] if grams else np.zeros(0, np.int64)
        self._bitmaps = []
        for slot in (keys >> _SHIFT, keys & _LOW):  # two independent parts of the hash
            slot = np.unique(slot)
            # Distinct bits of one byte add up to their OR (no 64 MiB of bools to pack).
            bits = np.left_shift(1, (slot & np.uint64(7)).astype(np.int64))
            marks = np.bincount(slot >> np.uint64(3), weights=bits, minlength=1 << _FILTER_BITS - 3)
            self._bitmaps.append(marks.astype(np.uint8))

    def find(
        self, ids: np.ndarray, room: np.ndarray, prefix: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Every run of the table found in ``ids`` (int64; ``prefix``: their ``Hasher.prefix``),
        confirmed on the ids: per length, the positions and gram numbers. ``room[i]``: how many
        ids from ``i`` on belong to the same sample (a window that crosses into the next sample
        is none)."""
        if not ids.size or not self.runs:
            return []
        hashes = self.hasher.windows(prefix, self.width)
        positions = np.flatnonzero(_marked(self._bitmaps[0], hashes >> _SHIFT))
        positions = positions[_marked(self._bitmaps[1], hashes[positions] & _LOW)]
        positions = positions[room[positions] >= self.width]
        wanted = hashes[positions]
        left = np.searchsorted(self._keys, wanted, side="left")
        many = np.searchsorted(self._keys, wanted, side="right") - left
        # Each position with every run whose head has its hash (almost always 0 or 1).
        positions = np.repeat(positions, many)
        entry = np.repeat(left, many) + np.arange(positions.size)
        entry -= np.repeat(np.cumsum(many) - many, many)
        lengths, grams = self._lengths[entry], self._grams[entry]
        found = []
        for length, r in self.runs.items():
            chosen = (lengths == length) & (room[positions] >= length)
            at, gram = positions[chosen], grams[chosen]
            same = (ids[at[:, None] + np.arange(length)] == r.grams[gram]).all(axis=1)
            found.append((length, at[same], gram[same]))
        return found


def _marked(bitmap: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """Whether each slot's bit is set in a packed bitmap."""
    byte = bitmap[slot >> np.uint64(3)]
    return ((byte >> (slot & np.uint64(7)).astype(np.uint8)) & np.uint8(1)).astype(bool)


def value_runs(
    values: list[np.ndarray], ngram: int, min_tokens: int
) -> tuple[list[Runs], np.ndarray, np.ndarray, np.ndarray]:
    """The content runs of benchmark values (each an id array), by length; per value, its
    checked ids (ids inside a content run), whether it was too short to check, and the n-grams
    skipped for carrying no content."""
    lengths = np.array([v.size for v in values], dtype=np.int64)
    flat = np.concatenate(values) if values else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
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
    skipped += np.bincount(owner_value[~keep], minlength=len(values))
    runs.append(_runs(ngram, matrix[keep], owner_value[keep], offset[keep]))
    # Whole values shorter than n, matched as one run each.
    for length in range(max(min_tokens, 1), ngram):
        chosen = np.flatnonzero(lengths == length)
        if not chosen.size:
            continue
        matrix = flat[starts[chosen][:, None] + np.arange(length)]
        keep = content_mask(matrix)
        skipped += np.bincount(chosen[~keep], minlength=len(values))
        runs.append(_runs(length, matrix[keep], chosen[keep], np.zeros(keep.sum(), np.int64)))
    begins = [starts[r.owner_value] + r.owner_offset for r in runs]
    checked_ids = inside_runs(flat.size, begins, [r.length for r in runs])
    return runs, checked_ids, short, skipped


def inside_runs(size: int, begins: list[np.ndarray], lengths: list[int]) -> np.ndarray:
    """Which of ``size`` positions lie inside a run (runs of ``lengths[k]`` starting at
    ``begins[k]``): a difference array, +1 where a run starts and -1 where it ends."""
    change = np.zeros(size + 1, dtype=np.int64)
    for begin, length in zip(begins, lengths, strict=True):
        change += np.bincount(begin, minlength=size + 1)
        change -= np.bincount(begin + length, minlength=size + 1)
    return np.cumsum(change)[:-1] > 0


def _runs(length: int, matrix: np.ndarray, values: np.ndarray, offsets: np.ndarray) -> Runs:
    """Each distinct run once: rows grouped by a hash of their ids (a sort of one uint64 per
    row, where ``np.unique(axis=0)`` compares rows and costs ten times more), a row that differs
    from its group's first (a collision) made a group of its own."""
    hashes = Hasher.of(FINDER_BASE).rows(matrix)
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    apart = np.flatnonzero((matrix != matrix[first[inverse]]).any(axis=1))
    for row in apart.tolist():  # collisions: practically never
        same = np.flatnonzero((matrix[first] == matrix[row]).all(axis=1))
        if same.size:
            inverse[row] = same[0]
        else:
            first = np.append(first, row)
            inverse[row] = first.size - 1
    grams = matrix[first].reshape(-1, length)
    order = np.argsort(inverse, kind="stable")
    owner_gram = inverse[order]
    start = np.searchsorted(owner_gram, np.arange(grams.shape[0] + 1))
    return Runs(length, grams, owner_gram, values[order], offsets[order], start)
