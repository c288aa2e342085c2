"""Packing whole samples into fixed-width rows: best-fit decreasing, exact and deterministic.

A packed unit of width ``W`` holds several whole samples per row, back to back, PAD after the
last. ``pack`` decides the rows from the samples' token counts alone:

- samples are taken longest first, ties by sample id (the position in ``lengths``);
- each goes to the open row with the least room that still holds it (best fit); among rows
  with that same room, to the one that reached it last; when no row holds it, a new row opens;
- rows are numbered in the order they open, and a row's samples are in the order they came
  (longest first, ties by sample id);
- a unit of at most ``POLISH_SAMPLES`` samples whose rows exceed the lower bound is then
  polished (``_polish``): samples move or trade places towards fuller rows until rows empty
  out, and the rows that kept samples are numbered again in order.

So the rows depend only on the list of ``(sample id, token count)``: never on workers, batches,
pieces or executor. A sample is never split; one longer than ``W`` is the caller's to refuse.

The cost is O(n log n) for the sort and O(n log W) for the placement: rows are kept in
buckets by their room (one list per room, 0 to ``W``), and the rooms that have rows in a sorted
list, which ``bisect`` searches for the least room at least the sample's length. A run of
samples of one length that a single room takes one after the other is placed in bulk, since
short samples of equal length are most of a fine-tuning corpus.

Best-fit decreasing uses at most 11/9 of the optimal rows plus a constant (Dósa, 2007), and on
short samples far less: the rows are compared with the lower bound ``ceil(total tokens / W)``
(``Packing.lower_bound``), which ``mintdim plan --pack`` and the build report print.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

__all__ = ["ALGORITHM", "VERSION", "Packing", "pack", "spread"]

ALGORITHM = "best-fit-decreasing"
VERSION = 2
"""Bumped whenever a change could move any sample to another row or place (2: the polish)."""


@dataclass(frozen=True, slots=True, eq=False)
class Packing:
    """Rows of one packed unit, as a CSR: row ``r`` holds samples
    ``samples[offsets[r]:offsets[r + 1]]``, in order, each at ``starts`` of the same slice."""

    width: int
    offsets: np.ndarray
    """int64 [rows + 1]."""
    samples: np.ndarray
    """int32 [n]: positions in the ``lengths`` given to ``pack``, row after row."""
    starts: np.ndarray
    """int32 [n]: each entry's first slot in its row."""
    lengths: np.ndarray
    """int32 [n]: each entry's token count."""

    @property
    def rows(self) -> int:
        """Rows used."""
        return int(self.offsets.size - 1)

    @property
    def tokens(self) -> int:
        """Tokens packed."""
        return int(self.lengths.sum())

    @property
    def lower_bound(self) -> int:
        """The fewest rows any packing could use: ``ceil(tokens / width)``."""
        return -(-self.tokens // self.width)

    @property
    def padding_ratio(self) -> float:
        """PAD slots over all slots of the rows."""
        slots = self.rows * self.width
        return (slots - self.tokens) / slots if slots else 0.0

    def row_of(self) -> np.ndarray:
        """int64 [n]: per entry of ``samples``, its row."""
        return np.repeat(np.arange(self.rows, dtype=np.int64), np.diff(self.offsets))


def pack(lengths: np.ndarray, width: int) -> Packing:
    """Pack samples of ``lengths`` tokens (each at most ``width``) into rows of ``width`` slots
    (module docstring); ``ValueError`` for a sample longer than ``width``."""
    lengths = np.asarray(lengths)
    if lengths.dtype != np.int32:  # int32 holds any count up to a unit's 2**24 slots
        lengths = lengths.astype(np.int64)
    if width < 1:
        raise ValueError(f"width must be positive, got {width}")
    if lengths.size and (int(lengths.max()) > width or int(lengths.min()) < 0):
        raise ValueError(f"a sample of {int(lengths.max())} tokens is longer than {width}")
    # Longest first, ties by sample id: a stable sort of the negated lengths. (Temporaries are
    # dropped as soon as they are used: a build packs millions of samples in its main process.)
    order = np.argsort(-lengths, kind="stable")
    row_of = _place(lengths[order], width)
    if row_of.size and row_of.size <= POLISH_SAMPLES:
        row_of = _polish(lengths[order].astype(np.int64), row_of.astype(np.int64), width)
    # Rows in the order they opened, each row's samples in the order they came (stable).
    samples = order[np.argsort(row_of, kind="stable")].astype(np.int32)
    del order
    counts = np.bincount(row_of, minlength=int(row_of.max()) + 1 if row_of.size else 0)
    del row_of
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    sizes = lengths[samples].astype(np.int32)
    ends = np.cumsum(sizes, dtype=np.int64)
    ends -= sizes
    ends -= np.repeat(np.concatenate(([0], ends + sizes))[offsets[:-1]], counts)
    return Packing(width, offsets, samples, ends.astype(np.int32), sizes)


POLISH_SAMPLES = 50_000
"""Units of at most this many samples are polished after best-fit decreasing (``_polish``)."""
_POLISH_PASSES = 64
_PLACE_BLOCK = 1 << 16
"""Sizes read into a Python list at a time (the loop reads lists fastest; a block at a time, a
million samples never hold a million int objects at once)."""


def _place(ordered: np.ndarray, width: int) -> np.ndarray:
    """Each size's row, best fit, sizes in the order given (longest first)."""
    rooms: list[int] = []
    """The rooms some row has, ascending."""
    bucket: list[list[int]] = [[] for _ in range(width + 1)]
    """Per room, the rows with it, the one that reached it last at the end."""
    room_of: list[int] = []
    placed = np.empty(ordered.size, dtype=np.int32)
    for first in range(0, ordered.size, _PLACE_BLOCK):
        sizes = ordered[first : first + _PLACE_BLOCK].tolist()
        position = 0
        total = len(sizes)
        while position < total:
            size = sizes[position]
            at = bisect.bisect_left(rooms, size)
            if at == len(rooms):  # no row holds it: a new one
                row = len(room_of)
                room_of.append(width)
                room = width
            else:
                room = rooms[at]
                row = bucket[room].pop()
                if not bucket[room]:
                    del rooms[at]
            # The same row takes the following samples of this size while it holds them, and
            # none has less room that holds one: rooms only shrink, so the best fit stays this
            # row while no other row's room lies between ``size`` and this row's room. (A run
            # cut by a block's end goes on in the next block: the same rows, one at a time.)
            take = 1
            if size:
                limit = room // size
                fits = rooms and rooms[-1] >= size
                lower = rooms[bisect.bisect_left(rooms, size)] if fits else None
                while (
                    take < limit
                    and position + take < total
                    and sizes[position + take] == size
                    and (lower is None or lower >= room - take * size)
                ):
                    take += 1
            else:
                while position + take < total and sizes[position + take] == 0:
                    take += 1
            placed[first + position : first + position + take] = row
            position += take
            room -= take * size
            room_of[row] = room
            if not bucket[room]:
                bisect.insort(rooms, room)
            bucket[room].append(row)
    return placed


def _polish(sizes: np.ndarray, row_of: np.ndarray, width: int) -> np.ndarray:
    """Fewer rows where best-fit decreasing left room spread over many: each sample's row,
    renumbered from 0 in the order of the rows that kept samples.

    ``sizes`` are longest first (ties by sample id), ``row_of`` their rows. A pass takes the
    rows emptiest first (ties by row number) and each of their samples longest first: it moves
    to the row with the least room that holds it among rows at least as full as its own (ties
    by row number), else trades places with the shorter sample of such a row that leaves that
    row the least room (ties by order) while the row still holds it. Both make full rows fuller
    and empty ones emptier, so rows empty out; passes repeat until one changes nothing (at
    most ``_POLISH_PASSES``). Each step looks at every sample (numpy, O(n)), so only units of
    at most ``POLISH_SAMPLES`` samples are polished: on xquad_th (1,174 Thai contexts of
    1,000-3,700 byte-level tokens) it takes best-fit decreasing's 450 rows to 445 (the bound is
    440) in 0.12 s; short samples already sit at the bound.
    """
    rows = int(row_of.max()) + 1
    if rows <= -(-int(sizes.sum()) // width):
        return row_of  # at the lower bound: nothing to gain
    fill = np.bincount(row_of, weights=sizes, minlength=rows).astype(np.int64)
    for _ in range(_POLISH_PASSES):
        changed = False
        for own in np.argsort(fill, kind="stable").tolist():
            for i in np.flatnonzero(row_of == own).tolist():
                changed |= _improve(i, own, sizes, row_of, fill, width)
        if not changed:
            break
    _, row_of = np.unique(row_of, return_inverse=True)  # emptied rows drop out, in order
    return row_of.astype(np.int32)


def _improve(
    i: int, own: int, sizes: np.ndarray, row_of: np.ndarray, fill: np.ndarray, width: int
) -> bool:
    """One move or trade for sample ``i`` of row ``own`` (``_polish``); whether one was made."""
    size = int(sizes[i])
    room = width - fill
    fuller = fill >= fill[own]
    fits = fuller & (room >= size)
    fits[own] = False
    if fits.any():
        target = int(np.flatnonzero(fits)[np.argmin(room[fits])])
        row_of[i] = target
        fill[own] -= size
        fill[target] += size
        return True
    rooms = room[row_of]
    trades = (row_of != own) & fuller[row_of] & (sizes < size) & (sizes >= size - rooms)
    if not trades.any():
        return False
    candidates = np.flatnonzero(trades)
    other = int(candidates[np.argmin(rooms[candidates] - (size - sizes[candidates]))])
    target, swapped = int(row_of[other]), int(sizes[other])
    row_of[i], row_of[other] = target, own
    fill[own] += swapped - size
    fill[target] += size - swapped
    return True


def spread(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``start, start + 1, ..., start + size - 1`` for every ``(start, size)``, in order: the
    slots of samples in their rows, or of their ids in a flat array."""
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if ends.size else 0
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - sizes), sizes)
