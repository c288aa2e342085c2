"""Packing whole samples into fixed-width rows: best-fit decreasing, exact and deterministic.

A packed unit of width ``W`` holds several whole samples per row, back to back, PAD after the
last. ``pack`` decides the rows from the samples' token counts alone:

- samples are taken longest first, ties by sample id (the position in ``lengths``);
- each goes to the open row with the least room that still holds it (best fit); among rows
  with that same room, to the one that reached it last; when no row holds it, a new row opens;
- rows are numbered in the order they open, and a row's samples are in the order they came.

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
VERSION = 1
"""Bumped whenever a change could move any sample to another row or place."""


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


def spread(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``start, start + 1, ..., start + size - 1`` for every ``(start, size)``, in order: the
    slots of samples in their rows, or of their ids in a flat array."""
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if ends.size else 0
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - sizes), sizes)
