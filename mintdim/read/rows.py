"""Where each sample of a batch lies in its rows, and what attention and loss need from that.

A batch's ``segments`` (int64 ``[S, 4]``: ``row, start, length, sample_id``, row after row)
say everything: a packed build's rows hold several samples back to back, an unpacked build's
one each, at start 0. From them, all in bulk (no loop per row or sample):

- ``segment_ids`` ``[B, W]`` int32: 1..k for a row's samples in order, 0 on PAD (JAX/Pallas
  splash attention's segment ids);
- ``position_ids`` ``[B, W]`` int32: 0, 1, ... restarting at each sample, 0 on PAD (the
  transformers padding-free and flash-attention convention);
- ``cu_seqlens`` int32 and ``max_seqlen``: flash-attn varlen over the row-major flattening of
  ``input_ids``, each sample a sequence and each row's trailing PAD run its own, so
  ``cu_seqlens[-1] == B * W``;
- the loss count: the positions whose label the model's shifted loss uses (``labels`` not
  ``ignore_id`` at positions 1.. of a row), from the segments and span records alone, without
  reading any token, so a step's total is known when its last batch is read.
"""

from __future__ import annotations

import functools

import numpy as np

from mintdim.build.units.packing import spread

__all__ = ["RowRuns", "Runs", "loss_tokens", "target_positions"]

_SLICED_PADS = 32
"""Up to this many rows a batch's PAD positions are zeroed a row at a time."""


class Runs:
    """A batch's slots as runs: each sample, then each row's trailing PAD; empty runs left out."""

    def __init__(self, lengths: np.ndarray, values: np.ndarray, rows: int, width: int) -> None:
        """``lengths`` and ``values`` (1.. per sample of a row, 0 for PAD) of the runs in order."""
        self.lengths, self.values, self.rows, self.width = lengths, values, rows, width

    @classmethod
    def of_rows(cls, segments: np.ndarray, fill: np.ndarray, width: int) -> tuple[Runs, np.ndarray]:
        """The runs of rows holding ``segments`` (row numbers from 0, in order) with ``fill``
        tokens each before PAD; and each run's row."""
        rows = fill.size
        row = segments[:, 0]
        count = segments.shape[0]
        ends = np.searchsorted(row, np.arange(1, rows + 1))
        lengths = np.empty(count + rows, dtype=np.int64)
        values = np.zeros(lengths.size, dtype=np.int32)
        run_row = np.empty(lengths.size, dtype=np.int64)
        at = np.arange(count) + row  # each row before adds one PAD run
        pads = ends + np.arange(rows)
        lengths[at], run_row[at] = segments[:, 2], row
        values[at] = np.arange(count) - np.concatenate(([0], ends[:-1]))[row] + 1
        lengths[pads], run_row[pads] = width - fill, np.arange(rows)
        kept = lengths > 0
        return cls(lengths[kept], values[kept], rows, width), run_row[kept]

    @functools.cached_property
    def starts(self) -> np.ndarray:
        """Each run's first flat slot."""
        return np.cumsum(self.lengths, dtype=np.int32) - self.lengths

    @functools.cached_property
    def pad_slots(self) -> np.ndarray:
        """The flat positions of every PAD slot."""
        pad = self.values == 0
        return spread(self.starts[pad], self.lengths[pad])

    def segment_ids(self) -> np.ndarray:
        """int32 [B, W]."""
        return np.repeat(self.values, self.lengths).reshape(self.rows, self.width)

    def position_ids(self, fill: np.ndarray) -> np.ndarray:
        """int32 [B, W]: each slot's distance from its run's start, 0 on PAD (from ``fill``,
        each row's tokens before it)."""
        positions = np.repeat(self.starts, self.lengths)
        np.subtract(_slots(positions.size), positions, out=positions)
        positions = positions.reshape(self.rows, self.width)
        if self.rows > _SLICED_PADS:
            positions.reshape(-1)[self.pad_slots] = 0
        else:  # a few wide rows: a slice store per row's PAD beats building their slots
            for row, end in enumerate(fill.tolist()):
                positions[row, end:] = 0
        return positions

    def sample_starts(self) -> np.ndarray:
        """The flat slot of each sample's first token."""
        return self.starts[self.values > 0]

    def cu_seqlens(self) -> np.ndarray:
        """int32 [sequences + 1]."""
        bounds = np.zeros(self.lengths.size + 1, dtype=np.int32)
        np.cumsum(self.lengths, out=bounds[1:])
        return bounds

    def max_seqlen(self) -> int:
        """The longest sequence of ``cu_seqlens``."""
        return int(self.lengths.max()) if self.lengths.size else 0


def target_positions(records: np.ndarray, wanted: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """bool [S, max length]: per sample, the positions (from its start) inside a target segment.

    ``records``: each sample's span record (``build/formats/spans.py``); ``wanted``: per input
    file, which segment index is a target, with one more column (False) past the last stop.
    """
    width = int(lengths.max()) if lengths.size else 0
    passed = records[:, None, 1:] <= np.arange(width)[None, :, None]
    return wanted[records[:, :1], passed.sum(axis=2)]


def loss_tokens(
    lengths: np.ndarray, records: np.ndarray | None = None, wanted: np.ndarray | None = None
) -> int:
    """How many labels of these samples the shifted loss uses: each sample's positions from 1
    (an unpacked row's position 0 is dropped by the shift, a packed row's samples each hold
    ``ignore_id`` there), inside a target segment when ``records`` and ``wanted`` are given."""
    if records is None:
        return int(lengths.sum() - np.count_nonzero(lengths))
    stops = records[:, 1:].astype(np.int64)
    sizes = np.diff(stops, axis=1, prepend=0)
    chosen = wanted[records[:, :1], np.arange(stops.shape[1])[None, :]]
    inside = int((sizes * chosen).sum())
    # The segment holding a sample's position 0: how many stops are <= 0.
    at_zero = wanted[records[:, 0], (stops <= 0).sum(axis=1)] & (lengths > 0)
    return inside - int(np.count_nonzero(at_zero))


class RowRuns:
    """A packed unit's runs, row by row, made once: a batch's runs are then its rows' slices."""

    def __init__(self, segments: np.ndarray, fill: np.ndarray, width: int) -> None:
        """``segments``: every entry of the unit's rows (row numbers in the first column)."""
        runs, run_row = Runs.of_rows(segments, fill, width)
        self.lengths, self.values, self.width = runs.lengths.astype(np.int32), runs.values, width
        offsets = np.searchsorted(run_row, np.arange(fill.size + 1))
        self.first, self.counts = offsets[:-1], np.diff(offsets)
        # Per row: labels its shifted loss uses, every token but each sample's first.
        held = self.values > 0
        per_run = np.where(held, self.lengths.astype(np.int64) - 1, 0)
        self.loss = np.bincount(run_row, weights=per_run, minlength=fill.size).astype(np.int64)

    def take(self, rows: np.ndarray) -> Runs:
        """The runs of a batch of these rows (unit row numbers), in order."""
        picked = spread(self.first[rows], self.counts[rows])
        return Runs(self.lengths[picked], self.values[picked], rows.size, self.width)


_ramp = np.zeros(0, dtype=np.int32)


def _slots(count: int) -> np.ndarray:
    """``arange(count)`` as int32, a view of one array kept for every batch (read-only use)."""
    global _ramp
    if _ramp.size < count:
        _ramp = np.arange(max(count, 2 * _ramp.size), dtype=np.int32)
    return _ramp[:count]
