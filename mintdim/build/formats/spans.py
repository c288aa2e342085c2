"""Segment-span files: ``unit_<size>/shard_<6 digits>.spans.bin`` beside each shard, when the
tokenizer key ``encode`` is set.

Layout: little-endian int32 records, one per record of the shard beside it and in the same
order, each ``1 + span_width`` values wide::

    [source, stop_0, stop_1, ..., stop_{span_width-1}]

``source`` is the position of the sample's input file in the manifest's ``source.files`` (its
``source.sequence_templates`` entry names the segments); segment ``k`` holds the sample's tokens
``[stop_{k-1}, stop_k)`` with ``stop_{-1} = 0``. A file with fewer segments than ``span_width``
repeats its last stop (the token count), so the extra segments are empty. Shard records stay
pure tokens then PAD: a static-shape loader still memmaps a shard straight into a batch, and a
loss mask is one comparison against the stops.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DTYPE", "SUFFIX", "read_records", "records"]

DTYPE = np.dtype("<i4")
SUFFIX = ".spans.bin"
"""Replaces ``.bin`` of the shard file name."""


def records(stops: np.ndarray, source: int, width: int) -> np.ndarray:
    """The span records of samples whose segment stops are ``stops`` (one row each)."""
    out = np.empty((stops.shape[0], 1 + width), dtype=DTYPE)
    out[:, 0] = source
    out[:, 1 : 1 + stops.shape[1]] = stops
    if stops.shape[1] < width:
        out[:, 1 + stops.shape[1] :] = stops[:, -1:] if stops.shape[1] else 0
    return out


def read_records(data: np.ndarray, record_width: int) -> np.ndarray:
    """A spans file's int32 values as ``(records, record_width)`` (manifest ``record_width``)."""
    return data.reshape(-1, record_width)
