"""Fixed evaluation windows over the validation and test samples (``split(..., window=W)``).

A sample of ``n`` tokens is cut into windows of at most ``W + 1`` token ids: window k starts at
``k * W`` and its input is the tokens ``[start, start + length)``; the model predicts the last
``length - 1`` of them, so the positions predicted are ``start + 1 .. start + length - 1``.
The next window starts at the previous one's last token, which it reuses as context: the
predicted positions of one sample's windows are disjoint and together exactly ``1 .. n - 1``.
The last window is as long as what is left (its length is explicit); a sample of fewer than two
tokens predicts nothing and has no window. Windows never cross samples.

``evaluation-windows.jsonl`` has one line per window, validation first then test, each by
sample id then start::

    {"split":"validation","sample_id":3,"start":2048,"length":913,"stratum":"edo","group":57}
"""

from __future__ import annotations

import numpy as np

__all__ = ["FILENAME", "cut"]

FILENAME = "evaluation-windows.jsonl"


def cut(token_counts: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position of the sample in ``token_counts``, start, length) of every window, in order."""
    counts = np.asarray(token_counts, dtype=np.int64)
    per_sample = np.where(counts >= 2, -(-(counts - 1) // window), 0)
    owner = np.repeat(np.arange(counts.size), per_sample)
    index = np.arange(owner.size) - np.repeat(np.cumsum(per_sample) - per_sample, per_sample)
    start = index * window
    length = np.minimum(window + 1, counts[owner] - start)
    return owner, start, length
