"""The n-gram machinery of decontamination: rolling hashes over id arrays, the content rule,
and the table of benchmark runs a build is searched for.

Ids are token ids (``--match tokens``) or word numbers (``--match words``, words.py). A *run* is
what is looked for: an n-gram of a value, or a whole value shorter than ``n`` but at least
``min_tokens`` long. Only runs that carry content are kept: at least ⌈L/2⌉ distinct ids in a
run of L.

Hashing is a polynomial hash modulo 2**64 computed for the windows of a block at once: ``H`` is
the prefix sum of ``x[k] * B**k``, and the window ``[i, i+L)`` hashes to
``(H[i+L] - H[i]) * B**-i`` (B is odd, so it has an inverse modulo 2**64): one cumulative sum per
block, then a subtraction and a multiplication per window hashed (every ``Table.stride``-th).
A hash only proposes a candidate: every candidate is compared with the run's ids before it
counts (``Table.find``).
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
bits, not bools: 8 MiB stays in cache where 64 MiB of bools does not (6 against 13 ns a window,
measured on a build's windows). A second bitmap of its low bits screens the few percent that
pass, so that only about one window in 10,000 reaches the binary search (which cost half the
scan without it)."""
_SHIFT = np.uint64(64 - _FILTER_BITS)
_LOW = np.uint64((1 << _FILTER_BITS) - 1)
_STRIDE = 4
"""Windows hashed and screened: one position in 4 (``Table``): 4 keys a run in the table, and a
quarter of the windows to hash and screen (the screen is most of a search's time)."""
_SCREENED = 8
"""The shortest window screened: a stride that would leave fewer ids is made shorter (runs of
8 ids, whole values of ``min_tokens``, get stride 1), so candidates stay as rare as they are."""
_ROWS_IDS = 1 << 18
"""Ids of a matrix hashed at a time by ``Hasher.row_windows``."""


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
        prefix = np.empty(ids.size + 1, dtype=np.uint64)
        prefix[0] = 0
        # In place: one pass each for the products and their sum (the ids widen as they go).
        np.multiply(ids, powers[: ids.size], out=prefix[1:], dtype=np.uint64, casting="unsafe")
        np.cumsum(prefix[1:], out=prefix[1:])
        return prefix

    def windows(self, prefix: np.ndarray, length: int, step: int = 1) -> np.ndarray:
        """The hash of every ``step``-th window of ``length`` ids (those starting at 0, ``step``,
        ``2 * step`` ... that fit in the ``prefix.size - 1`` ids)."""
        last = prefix.size - 1 - length  # the last start that fits
        if last < 0:
            return np.zeros(0, dtype=np.uint64)
        _, inverses = self._powers(prefix.size)
        stop = last - last % step + 1
        hashes = prefix[length : length + stop : step] - prefix[:stop:step]
        hashes *= inverses[:stop:step]
        return hashes

    def rows(self, matrix: np.ndarray) -> np.ndarray:
        """The hash of each row of a ``(k, L)`` matrix, equal to ``windows``' for the same ids."""
        return self.row_windows(matrix, matrix.shape[1], 1)[0]

    def row_windows(self, matrix: np.ndarray, width: int, offsets: int) -> np.ndarray:
        """The hashes of each row's windows of ``width`` ids at offsets 0 to ``offsets - 1`` of a
        ``(k, L)`` matrix, shape ``(offsets, k)``: the windows of the rows back to back, every
        L-th kept (contiguous passes, where a sum along the rows costs several times more)."""
        rows, length = matrix.shape
        step = max(1, _ROWS_IDS // max(length, 1))  # the power tables stay that small
        parts = [np.zeros((offsets, 0), dtype=np.uint64)]
        for start in range(0, rows, step):
            prefix = self.prefix(np.ascontiguousarray(matrix[start : start + step]).reshape(-1))
            _, inverses = self._powers(prefix.size)
            # From offset j the windows' hashes come out multiplied by B**j: undone by B**-j.
            parts.append(
                np.stack(
                    [self.windows(prefix[j:], width, length) * inverses[j] for j in range(offsets)]
                )
            )
        return np.concatenate(parts, axis=1)


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
    build is hashed once, for windows of one length w, and only at every ``stride``-th position:
    with m the shortest run length and s the stride, w = m - s + 1, and each run is looked up by
    the hashes of its s windows of w ids at offsets 0 to s - 1. A run that occurs at p covers
    exactly one position q = p + j (0 <= j < s) that is a multiple of s, and the window there is
    the run's window at offset j: so a candidate is (q, run, j), its start p = q - j, and it is
    then compared with the whole run. One pass over the build's ids whatever the number of
    lengths, and s times fewer windows hashed and screened (the table holds s keys a run).
    """

    def __init__(self, runs: list[Runs], hasher: Hasher) -> None:
        self.runs = {r.length: r for r in runs if r.grams.shape[0]}
        self.hasher = hasher
        width = min(self.runs, default=1)
        self.stride = max(1, min(_STRIDE, width - _SCREENED + 1))
        self.screened = width - self.stride + 1
        heads, lengths, grams, offsets = [], [], [], []
        for r in self.runs.values():
            count = r.grams.shape[0]
            heads.append(hasher.row_windows(r.grams, self.screened, self.stride).reshape(-1))
            lengths.append(np.full(count * self.stride, r.length, np.int32))
            grams.append(np.tile(np.arange(count, dtype=np.int32), self.stride))
            offsets.append(np.repeat(np.arange(self.stride, dtype=np.int8), count))
        keys = np.concatenate(heads) if heads else np.zeros(0, np.uint64)
        # Sorted with each entry's number in the hash's low bits: a sort of the keys alone (8x
        # faster than an argsort) gives both the order and the entries. Lookups then compare
        # the hashes without those bits, which only lets a few more candidates through to the
        # comparison with the ids.
        self._mask = np.uint64((1 << max(1, keys.size.bit_length())) - 1)
        packed = np.sort((keys & ~self._mask) | np.arange(keys.size, dtype=np.uint64))
        order = (packed & self._mask).astype(np.int64)
        self._keys = packed & ~self._mask
        self._lengths = np.concatenate(lengths)[order] if lengths else np.zeros(0, np.int32)
        self._grams = np.concatenate(grams)[order] if grams else np.zeros(0, np.int32)
        self._offsets = np.concatenate(offsets)[order] if offsets else np.zeros(0, np.int8)
        # Two independent parts of the hash.
        self._bitmaps = (_packed_bits(self._keys >> _SHIFT), _packed_bits(keys & _LOW))

    def find(
        self, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray, prefix: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Every run of the table found in ``ids`` (``prefix``: their ``Hasher.prefix``),
        confirmed on the ids: per length, the positions and gram numbers. ``starts``, ``ends``:
        where each sample's ids start and end, ascending; a run must lie inside one sample
        (not across two, nor over what lies between them)."""
        if not ids.size or not self.runs:
            return []
        hashes = self.hasher.windows(prefix, self.screened, self.stride)
        at = np.flatnonzero(_marked(self._bitmaps[0], hashes >> _SHIFT))
        at = at[_marked(self._bitmaps[1], hashes[at] & _LOW)]
        wanted = hashes[at] & ~self._mask
        left = np.searchsorted(self._keys, wanted, side="left")
        many = np.searchsorted(self._keys, wanted, side="right") - left
        # Each window with every (run, offset) whose window has its hash (almost always 0 or 1).
        at = np.repeat(at, many) * self.stride
        entry = np.repeat(left, many) + np.arange(at.size)
        entry -= np.repeat(np.cumsum(many) - many, many)
        lengths, grams = self._lengths[entry], self._grams[entry]
        begin = at - self._offsets[entry]
        # The run must lie inside the sample that holds the window: the first that ends after
        # the window's start (none: the window lies past the last sample, in PAD).
        owner = np.minimum(np.searchsorted(ends, at, side="right"), ends.size - 1)
        inside = begin >= starts[owner]
        room = ends[owner] - begin
        found = []
        for length, r in self.runs.items():
            chosen = (lengths == length) & inside & (room >= length)
            first, gram = begin[chosen], grams[chosen]
            same = (ids[first[:, None] + np.arange(length)] == r.grams[gram]).all(axis=1)
            found.append((length, first[same], gram[same].astype(np.int64)))
        return found


def _packed_bits(slots: np.ndarray) -> np.ndarray:
    """A bitmap of ``2**_FILTER_BITS`` bits with ``slots`` set, packed 8 to a byte (little bit
    order: slot s is bit s & 7 of byte s >> 3): the bits of each byte OR-ed together over the
    sorted slots (no 64 MiB of bools to fault in and pack)."""
    marks = np.zeros(1 << _FILTER_BITS - 3, dtype=np.uint8)
    if not slots.size:
        return marks
    if (slots[1:] < slots[:-1]).any():
        slots = np.sort(slots)
    byte = slots >> np.uint64(3)
    bits = np.left_shift(np.uint8(1), (slots & np.uint64(7)).astype(np.uint8))
    first = np.flatnonzero(np.r_[True, byte[1:] != byte[:-1]])
    marks[byte[first]] = np.bitwise_or.reduceat(bits, first)
    return marks


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
    row, where ``np.unique(axis=0)`` compares rows and costs ten times more), a group's rows
    put in row order by one more sort of integers (the vectorised sorts are unstable: a stable
    one costs three times more), every row then compared with its group's first; should two
    distinct runs share a hash (practically never), they are grouped by their ids instead."""
    rows = matrix.shape[0]
    hashes = Hasher.of(FINDER_BASE).rows(matrix)
    order = np.argsort(hashes)
    ordered = hashes[order]
    opens = np.r_[True, ordered[1:] != ordered[:-1]] if rows else ordered > 0
    owner_gram = np.cumsum(opens) - 1
    order = np.sort(owner_gram * rows + order) % max(rows, 1)
    first = order[opens]
    sizes = np.diff(np.r_[np.flatnonzero(opens), rows])
    shared = np.flatnonzero(np.repeat(sizes > 1, sizes))  # a row alone is its group's first
    if not (matrix[order[shared]] == matrix[first[owner_gram[shared]]]).all():
        _, first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
        order = np.argsort(inverse.reshape(-1), kind="stable")
        owner_gram = inverse.reshape(-1)[order]
    grams = matrix[first].reshape(-1, length)
    start = np.searchsorted(owner_gram, np.arange(grams.shape[0] + 1))
    return Runs(length, grams, owner_gram, values[order], offsets[order], start)
