"""A copied build's records against its input build's, byte for byte: the verification pass's
proof that the clean build holds exactly the records it searched (``retained_tokens``).

Both builds are read a unit at a time, their shards whole and checked against their manifests,
the next unit of each read on a thread while this one is compared (hashing and reading release
the GIL). Within a unit a copy keeps its records in input order, so its rows are long runs of
consecutive input rows, broken only where a removed sample was or a shard ends: each run is
compared as one slice of each build (no gather of a million rows), and a run that differs is
compared row by row to name its samples.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from mintdim.split.samples import BuildSamples
from mintdim.split.write import BuildFiles, ShardRecords, shard_records

__all__ = ["differing"]

_T = TypeVar("_T")


def differing(
    samples: BuildSamples,
    copy: BuildFiles,
    source: Future[np.ndarray],
    kept: dict[str, bytes] | None = None,
) -> np.ndarray:
    """The input ids of the copy's samples whose record is not their input's: another unit,
    another token count, another slot (PAD included), or no input sample at all (an input id
    out of range, reported as it is). ``source``: each copied sample's input id, by its id in
    the copy, still being read when the shards' reading starts; a copied sample beyond it is
    not the records' to report (the copy's index does not list it). ``kept``: the input's shards as read and checked already
    in this process (the copy's reading)."""
    order = {int(size): k for k, size in enumerate(samples.manifest["units"]["sizes"])}
    found = [np.zeros(0, dtype=np.int64)]
    with ThreadPoolExecutor(2) as pool:
        inputs = _read_ahead(pool, _units(samples, kept))
        held = next(inputs, None)
        for size, copies in _read_ahead(pool, _units(copy)):
            # Both builds list their units in one order; a unit the input lacks holds no copy.
            while held is not None and order[held[0]] < order.get(size, len(order)):
                held = next(inputs, None)
            same_unit = held is not None and held[0] == size
            inputs_of_unit = held[1] if same_unit else []
            found.append(_unit(inputs_of_unit, copies, source.result(), samples.count))
    return np.unique(np.concatenate(found))


def _units(
    build: BuildSamples | BuildFiles, kept: dict[str, bytes] | None = None
) -> Iterator[tuple[int, list[ShardRecords]]]:
    """Each unit's size and shards, in row order."""
    for size, shards in itertools.groupby(shard_records(build, kept), key=lambda s: s.unit_size):
        yield size, list(shards)


def _read_ahead(pool: ThreadPoolExecutor, items: Iterator[_T]) -> Iterator[_T]:
    """``items``, the next one made on ``pool`` while the caller works on this one."""
    pending = pool.submit(next, items, None)
    while (item := pending.result()) is not None:
        pending = pool.submit(next, items, None)
        yield item


def _unit(
    inputs: list[ShardRecords], copies: list[ShardRecords], source: np.ndarray, count: int
) -> np.ndarray:
    """The input ids of one unit's copied samples whose record differs (see ``differing``)."""
    new_ids = np.concatenate([c.sample_ids for c in copies])
    if not new_ids.size:
        return new_ids
    known = (new_ids >= 0) & (new_ids < source.size)
    ids = np.where(known, source[np.where(known, new_ids, 0)], -1)
    row_of = np.full(count + 1, -1, dtype=np.int64)  # [-1]: the row of "no input sample"
    input_ids = np.concatenate([np.zeros(0, np.int64), *(s.sample_ids for s in inputs)])
    row_of[input_ids] = np.arange(input_ids.size)
    rows = row_of[np.where((ids >= 0) & (ids < count), ids, -1)]
    input_counts = np.concatenate([np.zeros(1, np.int64), *(s.token_counts for s in inputs)])
    copy_counts = np.concatenate([c.token_counts for c in copies])
    bad = (rows < 0) | (input_counts[rows + 1] != copy_counts)
    # Runs of rows consecutive in both builds, inside one shard of each.
    input_first = np.cumsum([0] + [s.sample_ids.size for s in inputs])
    copy_first = np.cumsum([0] + [c.sample_ids.size for c in copies])
    input_shard = np.searchsorted(input_first, rows, side="right") - 1
    copy_shard = np.searchsorted(copy_first, np.arange(rows.size), side="right") - 1
    cut = np.flatnonzero(
        (rows[1:] != rows[:-1] + 1)
        | (input_shard[1:] != input_shard[:-1])
        | (copy_shard[1:] != copy_shard[:-1])
        | (bad[1:] != bad[:-1])
    )
    starts, stops = np.r_[0, cut + 1], np.r_[cut + 1, rows.size]
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        if bad[start]:
            continue
        shard, row = int(copy_shard[start]), start - int(copy_first[copy_shard[start]])
        mine = copies[shard].records[row : row + stop - start]
        shard, row = int(input_shard[start]), int(rows[start] - input_first[input_shard[start]])
        theirs = inputs[shard].records[row : row + stop - start]
        if not np.array_equal(mine, theirs):
            bad[start:stop] = (mine != theirs).any(axis=1)
    return ids[bad & known]
