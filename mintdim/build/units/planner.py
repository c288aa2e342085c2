"""Unit assignment and padding, in bulk: each sample goes to the smallest unit that holds it.

Everything here works on whole batches with numpy; no loop runs per token. Rows wider than
``_MASKED_WIDTH`` are copied one slice per sample, which beats a mask over every padded slot.
"""

from __future__ import annotations

import numpy as np

__all__ = ["assign_units", "first_overflow", "padded_rows", "selected_tokens"]

_MASKED_WIDTH = 256
"""Up to this width a unit's rows are filled by one masked store, past it by one copy per row:
where the two cost the same on 4096-sample batches (short Alpaca-like and mixed long text)."""


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

    ``flat`` holds every sample's ids back to back, ``lengths`` each sample's count (none of the
    selected over ``width``), and ``selected`` is a boolean mask over samples.
    """
    lens = lengths[selected]
    rows = np.full((lens.size, width), pad_id, dtype=dtype)
    if lens.size and int(lens.max()) > width:
        raise ValueError(f"a selected sample has {int(lens.max())} tokens, over the width {width}")
    if width <= _MASKED_WIDTH:
        # In row-major order the token slots of the mask are exactly the selected samples'
        # tokens one after another, so one masked store fills every row.
        rows[np.arange(width) < lens[:, None]] = flat[np.repeat(selected, lengths)]
        return rows
    # Wide rows: the mask's cost grows with every padded slot, one slice copy per row's does
    # not (a 4096-sample batch of mixed text, units 128-8192: 0.7 against 1.8 µs a sample).
    starts = (np.cumsum(lengths) - lengths)[selected].tolist()
    line = rows.reshape(-1)
    for at, start, count in zip(range(0, rows.size, width), starts, lens.tolist(), strict=True):
        line[at : at + count] = flat[start : start + count]
    return rows


def selected_tokens(
    flat: np.ndarray, lengths: np.ndarray, selected: np.ndarray, dtype: np.dtype
) -> np.ndarray:
    """The selected samples' ids back to back, no PAD: what a packed unit receives from a batch
    (its rows are made once every sample is known, ``write/packed.py``)."""
    return flat[np.repeat(selected, lengths)].astype(dtype, copy=False)
