"""The shards: each listed shard named and filled as the writer rolls shards, PAD after each
record's tokens, no id outside the vocabulary, and where the UNK ids are."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor

import numpy as np

from mintdim.build.formats import unit_index
from mintdim.build.formats.boundaries import Boundaries
from mintdim.build.formats.shards import shard_path
from mintdim.check.report import SHOWN_PER_CHECK, VerifyReport
from mintdim.check.verify.index_scan import Index
from mintdim.check.verify.manifest import Build, Shard
from mintdim.shared import durable

__all__ = ["check_records", "check_shard", "check_shards", "early_shard_checks"]

_READ_BYTES = 8 << 20
"""Shards are read in blocks of whole records of about this size."""

_buffers = threading.local()
"""Each shard-checking thread's read buffer."""


def check_shards(
    build: Build,
    index: Index,
    report: VerifyReport,
    early: dict[int, tuple],
    rows: dict[int, Boundaries] | None = None,
) -> dict[int, list[int]]:
    """Check each listed shard; return the UNK positions found, by sample id. A shard checked
    early (:func:`early_shard_checks`) with the token counts and sample ids the index gives
    keeps those findings; any other is checked now. A packed build's records are its ``rows``'
    (a row's count is its fill; an UNK id is placed in the sample holding it)."""
    unks: dict[int, list[int]] = {}
    for position, shard in _present_shards(build, index, report, rows or {}):
        counts, ids = index.record_counts[position], index.record_ids[position]
        future, early_counts, early_ids = early.get(position, (None, None, None))
        same = future is not None and np.array_equal(early_counts, counts)
        if same and np.array_equal(early_ids, ids):
            found, part = future.result()
        else:
            locate = _locate(build, shard, rows or {}) if build.packed else None
            found, part = check_shard(build, shard, counts, ids, locate)
        unks.update(found)
        report.absorb(part)
    return unks


def _present_shards(
    build: Build, index: Index, report: VerifyReport, rows: dict[int, Boundaries]
) -> Iterator[tuple]:
    """Each listed shard's entry checked against the writer's rolling of shards; yields the
    (manifest position, shard) of each whose file is there."""
    numbers = dict.fromkeys(build.sizes, 0)
    if build.packed:
        per_unit = np.array([rows[size].rows if size in rows else 0 for size in build.sizes])
    else:
        per_unit = np.bincount(index.units, minlength=len(build.sizes))
    remaining = dict(zip(build.sizes, per_unit.tolist(), strict=True))
    for position, shard in enumerate(build.shards):
        width = shard.unit
        record_bytes = width * build.dtype.itemsize
        number = numbers.get(width, 0)
        numbers[width] = number + 1
        expected_records = min(build.samples_per_shard, remaining.get(width, 0))
        remaining[width] = remaining.get(width, 0) - expected_records
        expected_path = shard_path(width, number)
        expected_samples, records = expected_records, shard.samples
        if build.packed:  # rows, and the samples they hold
            expected_samples = _held(
                rows.get(width), number * build.samples_per_shard, expected_records
            )
            records = -1 if shard.rows is None else shard.rows
        if (
            width not in build.sizes
            or shard.path != expected_path
            or shard.samples != expected_samples
            or records != expected_records
            or shard.bytes != records * record_bytes
        ):
            report.add(
                "shards",
                shard.path,
                "shard_entry",
                position=position,
                expected=expected_path,
                samples=expected_samples,
                records_bytes=expected_records * record_bytes,
            )
        report.shards += 1
        report.shard_bytes += shard.bytes
        if not (build.root / shard.path).is_file():
            report.add("shards", shard.path, "missing")
            continue
        yield position, shard


def _held(own: Boundaries | None, first_row: int, count: int) -> int:
    """Samples held by ``count`` rows of a packed unit from ``first_row``."""
    if own is None or first_row + count >= own.offsets.size:
        return 0
    return int(own.offsets[first_row + count] - own.offsets[first_row])


def _locate(build: Build, shard: Shard, rows: dict[int, Boundaries]) -> Callable | None:
    """For a packed shard: ``(rows, slots) -> (sample ids, positions in them, their counts)``."""
    own = rows.get(shard.unit)
    number = _writer_number(shard)
    if own is None or number is None:
        return None
    offsets = own.offsets
    first_row = number * build.samples_per_shard

    def locate(at_rows: np.ndarray, slots: np.ndarray) -> tuple[np.ndarray, ...]:
        row = first_row + at_rows
        lo, hi = offsets[row], offsets[row + 1]
        # The entry of the row whose start is the last at or before the slot.
        ends = own.start + own.length
        entry = lo + np.array(
            [
                np.searchsorted(own.start[a:b], s, "right") - 1
                for a, b, s in zip(lo, hi, slots, strict=True)
            ],
            dtype=np.int64,
        )
        inside = (entry >= lo) & (slots < ends[np.maximum(entry, 0)])
        entry = np.where(inside, entry, -1)
        safe = np.maximum(entry, 0)
        return (
            np.where(inside, own.sample_id[safe], -1),
            slots - own.start[safe],
            np.where(inside, own.length[safe], -1),
        )

    return locate


def early_shard_checks(build: Build, pool: Executor) -> dict[int, tuple]:
    """Each shard's records checked on ``pool`` from the start, before sample_index.jsonl is
    read, with the token counts and sample ids its unit's index.npy gives (record k of a unit
    is row k % samples_per_shard of shard k // samples_per_shard). By manifest position:
    (future of the findings, the counts and ids used). A shard named otherwise than the writer
    names it, or whose unit index cannot be read, is left for later."""
    early: dict[int, tuple] = {}
    listed = {entry.unit: entry for entry in build.unit_indexes}
    entries: dict[int, np.ndarray | None] = {}
    per_shard = build.samples_per_shard
    for position, shard in enumerate(build.shards):
        entry = listed.get(shard.unit)
        if entry is None or entry.path != unit_index.index_path(shard.unit):
            continue
        if shard.unit not in entries:
            try:
                entries[shard.unit] = unit_index.load(build.root / entry.path)
            except (ValueError, OSError):
                entries[shard.unit] = None
        records = entries[shard.unit]
        number = _writer_number(shard)
        if records is None or number is None or not (build.root / shard.path).is_file():
            continue
        rows = slice(number * per_shard, number * per_shard + shard.samples)
        counts = records["token_count"][rows].astype(np.int64)
        ids = records["sample_id"][rows].astype(np.int64)
        if counts.size == shard.samples:
            early[position] = (pool.submit(check_shard, build, shard, counts, ids), counts, ids)
    return early


def _writer_number(shard: Shard) -> int | None:
    """The shard's number within its unit when its path is the one the writer gives it."""
    name = shard.path.rpartition("_")[2].removesuffix(".bin")
    if name.isdigit() and shard_path(shard.unit, int(name)) == shard.path:
        return int(name)
    return None


def check_shard(
    build: Build,
    shard: Shard,
    counts: np.ndarray,
    ids: np.ndarray,
    locate: Callable | None = None,
) -> tuple[dict[int, list[int]], VerifyReport]:
    """Check one shard's records, given the token count and sample id of each (any thread):
    the UNK positions found and a report of its own, for the caller to take in order.
    ``locate``: a packed shard's (:func:`_locate`)."""
    record_bytes = shard.unit * build.dtype.itemsize
    step = max(1, _READ_BYTES // record_bytes)
    # Read into this thread's buffer, reused: fresh pages would cost a fault each.
    buffer = getattr(_buffers, "buffer", None)
    if buffer is None or buffer.size < step * record_bytes:
        buffer = _buffers.buffer = np.empty(step * record_bytes, np.uint8)
    unks: dict[int, list[int]] = {}
    part = VerifyReport(directory="", deep=False)
    first = 0
    with durable.open_sequential(build.root / shard.path) as handle:
        # Until the end of the file: rows past the listed samples are a size failure already.
        while (
            whole := os.preadv(
                handle.fileno(), [buffer[: step * record_bytes]], first * record_bytes
            )
            // record_bytes
        ):
            records = buffer[: whole * record_bytes].view(build.dtype).reshape(whole, shard.unit)
            rows = slice(first, first + whole)
            placed = None if locate is None else _shifted(locate, first)
            check_records(
                build, shard.path, records, (counts[rows], ids[rows]), first, unks, part, placed
            )
            first += whole
    return unks, part


def check_records(
    build: Build,
    path: str,
    records: np.ndarray,
    samples: tuple[np.ndarray, np.ndarray],
    first_row: int,
    unks: dict[int, list[int]],
    report: VerifyReport,
    locate: Callable | None = None,
) -> None:
    """PAD after each record's tokens, ids inside the vocabulary, and where UNK ids are (in a
    packed row, ``locate`` says in which sample and where in it).

    ``samples``: the token count and sample id of each record, from the index. The extremes of
    each record's tokens and tail prove the common case in two read-only passes; the slots at
    fault are looked for only where they prove nothing.
    """
    counts, ids = samples
    records = records[: counts.size]  # rows past the listed samples are a size failure already
    if not records.size:
        return
    width = records.shape[1]
    token_min, token_max, tail_min, tail_max = _extremes(records, counts)
    pad = build.pad_id
    # A record no sample points at (count -1) is an index failure already: no PAD check for it.
    no_tail = (counts < 0) | (counts >= width)
    if not (no_tail | ((tail_min == pad) & (tail_max == pad))).all():
        tail = (np.arange(width) >= counts[:, None]) & (counts >= 0)[:, None]
        bad = (records != pad) & tail
        _slot_failures(report, "padding", path, records, bad, samples, first_row, pad_id=pad)
    # Every slot is in one record's tokens or tail, so this is the largest id of the block.
    if max(int(token_max.max()), int(tail_max.max())) >= build.vocab_size:
        outside = records >= build.vocab_size
        _slot_failures(
            report, "vocabulary", path, records, outside, samples, first_row, vocab=build.vocab_size
        )
    if build.unk_id is None:  # the UNK tier is off
        return
    # UNK ids are rare: look for them only in records whose tokens span the UNK id (all slots
    # of a record no sample points at), then keep those inside their record's tokens.
    unk = build.unk_id
    maybe = np.flatnonzero((counts < 0) | ((counts > 0) & (token_min <= unk) & (token_max >= unk)))
    hit_rows, slots_hit = np.divmod(np.flatnonzero(records[maybe] == unk), width)
    rows = maybe[hit_rows]
    listed = counts[rows]
    hits = (slots_hit < listed) | (listed < 0)
    rows, slots_hit = rows[hits], slots_hit[hits]
    owners = ids[rows]
    if locate is not None and rows.size:
        owners, slots_hit, listed = locate(rows, slots_hit)
        kept = owners >= 0
        owners, slots_hit, listed = owners[kept], slots_hit[kept], listed[kept]
    else:
        listed = counts[rows]
    if build.eos_is_unk:
        # The appended EOS is not field text, unless truncation cut it off the record.
        eos = (slots_hit == listed - 1) & ~np.isin(owners, build.truncated)
        owners, slots_hit = owners[~eos], slots_hit[~eos]
    slots_hit = slots_hit.tolist()
    if not slots_hit:
        return
    # Hits come sample by sample: cut the slot list where the sample changes.
    cuts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]]).tolist()
    stops = [*cuts[1:], len(slots_hit)]
    for sample_id, start, stop in zip(owners[cuts].tolist(), cuts, stops, strict=True):
        unks[sample_id] = slots_hit[start:stop]


def _extremes(records: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per record: the smallest and largest id of its tokens, then of its tail (the slots from
    its token count on). An empty part gives some id of the record, which callers mask out.

    One ``reduceat`` per extreme over the flat block, cut at every record start and token
    count, reads each slot once and writes nothing per slot.
    """
    flat = records.reshape(-1)
    width = records.shape[1]
    cuts = np.repeat(np.arange(0, flat.size, width, dtype=np.int64), 2)
    cuts[1::2] += np.clip(counts, 0, width)
    # reduceat cannot start a part at the very end: a full last record's empty tail starts at
    # its last slot instead, so that slot joins its tokens below.
    full_last = cuts[-1] == flat.size
    cuts[-1] -= full_last
    parts = []
    for reduce in (np.minimum, np.maximum):
        extremes = reduce.reduceat(flat, cuts)
        if full_last:
            extremes[-2] = reduce(extremes[-2], extremes[-1])
        parts += [extremes[0::2], extremes[1::2]]
    token_min, tail_min, token_max, tail_max = parts
    return token_min, token_max, tail_min, tail_max


def _slot_failures(
    report: VerifyReport,
    code: str,
    path: str,
    records: np.ndarray,
    mask: np.ndarray,
    samples: tuple[np.ndarray, np.ndarray],
    first_row: int,
    **facts: int,
) -> None:
    """One failure per slot of ``mask`` (up to the shown limit), naming record, sample and id."""
    counts, ids = samples
    for row, slot in np.argwhere(mask)[:SHOWN_PER_CHECK].tolist():
        report.add(
            code,
            path,
            code,
            row=first_row + row,
            sample_id=int(ids[row]),
            value=int(records[row, slot]),
            slot=slot,
            token_count=int(counts[row]),
            **facts,
        )


def _shifted(locate: Callable, first: int) -> Callable:
    """``locate`` for a block whose first record is row ``first`` of its shard."""
    return lambda rows, slots: locate(rows + first, slots)
