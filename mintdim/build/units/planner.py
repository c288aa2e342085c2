"""Unit assignment and padding, in bulk: each sample goes to the smallest unit that holds it.

Everything here works on whole batches with numpy; no loop runs per token or per padded row.
"""

from __future__ import annotations

import numpy as np

__all__ = ["assign_units", "first_overflow", "padded_rows"]


def assign_units(lengths: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Index into ``sizes`` of the smallest unit >= each length; ``len(sizes)`` means overflow."""
    return np.searchsorted(sizes, lengths, side="left")


def first_overflow(unit_indexes: np.ndarray, unit_count: int) -> int | None:
    """Position of the first sample longer than the largest unit, if any."""
    over = np.flatnonzero(unit_indexes >= unit_count)
    return int(over[0]) if over.size else None


def padded_rows(
    flat: np.ndarray,
    lengths: np.ndarray,
    selected: np.ndarray,
    width: int,
    pad_id: int,
    dtype: np.dtype,
) -> np.ndarray:
    """A ``(selected.sum(), width)`` array: each selected sample's tokens, then ``pad_id``.

    ``flat`` holds every sample's ids back to back, ``lengths`` each sample's count, and
    ``selected`` is a boolean mask over samples.
    """
    lens = lengths[selected]
    rows = np.full((lens.size, width), pad_id, dtype=dtype)
    # In row-major order the token slots of the mask are exactly the selected samples' tokens
    # one after another, so one masked store fills every row.
    rows[np.arange(width) < lens[:, None]] = flat[np.repeat(selected, lengths)]
    return rows
