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

import numpy as np

__all__ = ["Runs", "loss_tokens", "target_positions"]


class Runs:
    """A batch's slots as runs: each sample, then each row's trailing PAD (perhaps empty)."""

    def __init__(self, segments: np.ndarray, rows: int, width: int) -> None:
        self.rows, self.width = rows, width
        row = segments[:, 0]
        per_row = np.bincount(row, minlength=rows)
        ends = np.cumsum(per_row)
        fill = np.zeros(rows, dtype=np.int64)
        has = per_row > 0
        last = ends[has] - 1
        fill[has] = segments[last, 1] + segments[last, 2]
        count = segments.shape[0] + rows
        self.lengths = np.empty(count, dtype=np.int64)
        self.values = np.zeros(count, dtype=np.int32)
        at = np.arange(segments.shape[0]) + row  # each row before adds one PAD run
        self.lengths[at] = segments[:, 2]
        self.values[at] = np.arange(segments.shape[0]) - (ends - per_row)[row] + 1
        self.lengths[ends + np.arange(rows)] = width - fill

    def segment_ids(self) -> np.ndarray:
        """int32 [B, W]."""
        return np.repeat(self.values, self.lengths).reshape(self.rows, self.width)

    def position_ids(self, segment_ids: np.ndarray) -> np.ndarray:
        """int32 [B, W]."""
        starts = np.cumsum(self.lengths) - self.lengths
        positions = np.arange(self.rows * self.width, dtype=np.int64) - np.repeat(
            starts, self.lengths
        )
        positions = positions.astype(np.int32).reshape(self.rows, self.width)
        positions[segment_ids == 0] = 0
        return positions

    def cu_seqlens(self) -> np.ndarray:
        """int32 [sequences + 1], empty runs left out."""
        kept = self.lengths[self.lengths > 0]
        return np.concatenate(([0], np.cumsum(kept))).astype(np.int32)

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
