"""Training batches from finished builds: one unit size per batch, ranks in lockstep, exact resume.

``build.loader(...)`` (one build) and ``mintdim.loader([a, b], weights=[0.7, 0.3], ...)`` (a
mixture) return a :class:`UnitLoader`. Its order is a pure function of the builds' unit indexes,
the options and ``(seed, epoch)``, computed the same way on every machine:

1. Each unit's records are shuffled: ``argsort`` of raw 64-bit PCG64 draws, the generator
   seeded by ``SeedSequence([seed, epoch, build, unit_size])`` (NumPy keeps the raw streams of its
   bit generators stable across versions and platforms; ``Generator`` methods carry no such
   promise, so none is used).
2. The shuffled records are cut into batches (``batch_size``, or ``max(1, tokens_per_batch //
   unit_size)``), and the batches into groups of ``world_size``: one batch per rank, all of one
   unit. A unit's leftover records (less than a whole group) are dropped with ``drop_last``;
   without it they are split as evenly as possible into one last group, so every record appears
   exactly once across ranks (a rank's share may be smaller, even empty when fewer records than
   ranks are left).
3. Groups of one unit are taken ``accum_steps`` at a time into windows (one optimiser step), and
   the windows of a build are shuffled like the records (their own seed stream).
4. Several builds are merged by weight: build i's k-th window is due at ``(k + u) / weight_i``
   with u a uniform draw from its own stream; windows are taken in order of due time. While every
   build still has windows, each contributes in proportion to its weight; all windows are used.
5. Rank r takes batch r of every group. So every rank has the same number of batches, the same
   unit size at every step and the same optimiser-step boundaries, and ranks never share a record.

A batch is read from the memory-mapped shards in one gather per shard; ``labels`` and
``attention_mask`` are computed on first access (most static-shape training needs only
``input_ids`` and ``lengths``).

The loader is also a map-style dataset of its batches (``len``, ``loader[k]``) that pickles without
its memory maps, so ``torch.utils.data.DataLoader(loader, batch_size=None,
sampler=loader.remaining(), num_workers=2)`` works without MintDim importing torch.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np
import orjson

from mintdim.build.units.packing import spread
from mintdim.errors import LoaderOptionError, LoaderStateError
from mintdim.options import OptionCheck, is_number
from mintdim.options import is_int as _is_int
from mintdim.read.rows import RowRuns, Runs, loss_tokens, target_positions

__all__ = ["Build", "LoaderOptions", "RowColumns", "UnitBatch", "UnitLoader", "new_loader"]

STATE_FORMAT = 1
"""Version of :meth:`UnitLoader.state_dict`; bumped whenever the order algorithm changes."""

_RECORDS, _WINDOWS, _MIXTURE = 0, 1, 2
"""Seed-stream purposes, so no two random streams of one (seed, epoch) coincide."""


class Build(Protocol):
    """What the loader reads of a finished build; ``mintdim.read.reader.UnitBuild`` is one.

    Declared here, not imported, so that the reader (whose ``UnitBuild.loader`` makes loaders)
    sits below the loader without a circle between them.
    """

    path: Path
    manifest: dict
    units: dict[int, int]
    samples_per_shard: int
    dtype: np.dtype
    packed: bool

    def unit_columns(self, unit_size: int) -> tuple[np.ndarray, np.ndarray]: ...

    def records(self) -> dict[int, int]: ...

    def row_columns(self, unit_size: int) -> RowColumns: ...

    def row_runs(self, unit_size: int) -> RowRuns: ...

    def shard(self, unit_size: int, number: int) -> np.ndarray: ...

    def shard_spans(self, unit_size: int, number: int) -> np.ndarray: ...

    def sequence_names(self) -> list[list[str]] | None: ...


@dataclass(frozen=True)
class LoaderOptions:
    """The resolved options that decide which records go in which batch, on which rank."""

    batch_size: int | None
    tokens_per_batch: int | None
    seed: int
    rank: int
    world_size: int
    drop_last: bool
    accum_steps: int
    weights: tuple[float, ...]
    targets: tuple[str, ...] | None
    ignore_id: int
    widen: bool

    def unit_batch_size(self, unit_size: int) -> int:
        """Records per batch in a unit."""
        if self.batch_size is not None:
            return self.batch_size
        return max(1, self.tokens_per_batch // unit_size)


@dataclass(frozen=True, slots=True)
class RowColumns:
    """A packed unit's rows as the loader reads them: plain int64 arrays, row after row."""

    offsets: np.ndarray
    """[rows + 1]: row r holds entries ``offsets[r]:offsets[r + 1]``."""
    entries: np.ndarray
    """[entries, 4]: ``(0, start, length, sample_id)``, a batch's ``segments`` once its rows
    are numbered in the first column."""
    fill: np.ndarray
    """[rows]: tokens before PAD in each row."""


@dataclass(eq=False)
class UnitBatch:
    """One batch: records (rows) of a single unit size from a single build.

    ``input_ids`` keeps the shard dtype (uint16/uint32) unless the loader was asked to ``widen``
    to int64. ``labels`` follows the transformers convention: same shape as ``input_ids``, the
    model shifts; PAD positions (and, with ``targets``, every position outside the named
    segments) hold ``ignore_id``, and in a packed build's rows so does each sample's first token,
    so no sample is predicted from the one before it.

    ``segments`` says where every sample of the batch lies; ``segment_ids``, ``position_ids``,
    ``cu_seqlens`` and ``max_seqlen`` follow from it (read/rows.py, docs/packing.md), for a
    packed build's rows and an unpacked build's records alike.
    """

    unit_size: int
    input_ids: np.ndarray
    """[B, unit_size]: tokens then PAD (a packed row: whole samples back to back, then PAD)."""
    lengths: np.ndarray
    """int64 [B]: tokens before PAD."""
    packed: bool
    source: int
    """Index of the build in the loader's list (0 for a single build)."""
    epoch: int
    position: int
    """This batch's place in its rank's epoch, from 0: ``state_dict(after=batch)`` resumes after it."""
    step_end: bool
    """Last batch of an optimiser step (of an ``accum_steps`` window)."""
    ignore_id: int = field(repr=False)
    target_mask: np.ndarray | None = field(default=None, repr=False)
    """bool [B, unit_size]: positions inside the target segments, when targets were asked for."""
    step_loss_tokens: int | None = None
    """On a step's last batch (``step_end``): ``loss_tokens`` summed over the batches of its
    ``accum_steps`` window on this rank; None on the others. Dividing the summed loss of the
    window by it gives the exact mean per token under gradient accumulation."""

    row_runs: tuple[RowRuns, np.ndarray] | None = field(default=None, repr=False)
    """A packed batch's unit runs and its rows in the unit: its runs are their slices."""
    find: Callable[[], np.ndarray] | None = field(default=None, repr=False)
    """Makes ``segments`` when first asked for (the loader's; none after pickling)."""

    def __getstate__(self) -> dict:
        # Sent to another process (a DataLoader's workers): the segments go made, without the
        # loader that finds them or the unit's runs (the runs come from the segments there).
        state = dict(self.__dict__)
        state["segments"] = self.segments
        state["find"] = state["row_runs"] = None
        state.pop("_runs", None)
        return state

    @cached_property
    def segments(self) -> np.ndarray:
        """int64 [S, 4]: ``(row, start, length, sample_id)`` of every sample, row after row."""
        return self.find()

    @cached_property
    def sample_ids(self) -> np.ndarray:
        """int64: each record's sample id in its build ([B]); a packed build's: every sample of
        the batch, row after row ([S], ``segments[:, 3]``)."""
        return self.segments[:, 3].copy()

    @cached_property
    def _runs(self) -> Runs:
        if self.row_runs is not None:
            unit, rows = self.row_runs
            return unit.take(rows)
        return Runs.of_rows(self.segments, self.lengths, self.unit_size)[0]

    @cached_property
    def segment_ids(self) -> np.ndarray:
        """int32 [B, unit_size]: 1..k for a row's samples in order, 0 on PAD."""
        return self._runs.segment_ids()

    @cached_property
    def position_ids(self) -> np.ndarray:
        """int32 [B, unit_size]: 0, 1, ... restarting at each sample, 0 on PAD."""
        return self._runs.position_ids(self.lengths)

    @cached_property
    def cu_seqlens(self) -> np.ndarray:
        """int32: flash-attn varlen boundaries over the flattened rows (each sample, then each
        row's PAD run), ``cu_seqlens[-1] == B * unit_size``."""
        return self._runs.cu_seqlens()

    @cached_property
    def max_seqlen(self) -> int:
        """The longest sequence of ``cu_seqlens``."""
        return self._runs.max_seqlen()

    @cached_property
    def loss_tokens(self) -> int:
        """Labels the model's shifted loss uses in this batch: not ``ignore_id``, from a row's
        position 1 on."""
        if self.target_mask is None and self.row_runs is not None:
            unit, rows = self.row_runs
            return int(unit.loss[rows].sum())
        if self.target_mask is None:  # every token but each sample's first (rows.loss_tokens)
            return loss_tokens(self.segments[:, 2])
        return int(np.count_nonzero(self.labels[:, 1:] != self.ignore_id))

    @cached_property
    def token_mask(self) -> np.ndarray:
        """bool [B, unit_size]: True on tokens, False on PAD (by position, not by id: PAD may
        share its id with a real token, as with ``pad_fallback="eos"``)."""
        return np.arange(self.unit_size) < self.lengths[:, None]

    @cached_property
    def attention_mask(self) -> np.ndarray:
        """int64 [B, unit_size]: 1 on tokens, 0 on PAD."""
        return self.token_mask.astype(np.int64)

    @cached_property
    def labels(self) -> np.ndarray:
        """int64 [B, unit_size]: the token where the loss applies, else ``ignore_id``."""
        labels = self.input_ids.astype(np.int64)
        if not self.packed:
            keep = self.token_mask if self.target_mask is None else self.target_mask
            labels[~keep] = self.ignore_id
            return labels
        flat = labels.reshape(-1)
        if self.target_mask is None:  # few PAD slots: set them, no mask over every slot
            flat[self._runs.pad_slots] = self.ignore_id
        else:
            labels[~self.target_mask] = self.ignore_id
        flat[self._runs.sample_starts()] = self.ignore_id
        return labels


@dataclass(frozen=True, slots=True)
class _Planned:
    source: int
    unit_size: int
    records: np.ndarray
    """This rank's records of the unit in this epoch, batch after batch (shared by its batches)."""
    start: int
    stop: int
    step_end: bool

    @property
    def positions(self) -> np.ndarray:
        """Record positions inside the unit, ascending (sequential reads)."""
        return self.records[self.start : self.stop]


class UnitLoader:
    """This rank's batches of one epoch, in order; iterate it, index it, or save its place."""

    def __init__(
        self, builds: Sequence[Build], options: LoaderOptions, epoch: int, position: int
    ) -> None:
        self.builds = tuple(builds)
        self.options = options
        self.epoch = epoch
        self.position = position
        """Batches of this epoch already yielded by iteration (where iteration continues)."""
        self._plan: list[_Planned] | None = None
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        self._wanted: dict[int, np.ndarray] = {}

    def __getstate__(self) -> dict:
        # The plan is recomputed where needed; builds pickle without their memory maps.
        return {**self.__dict__, "_plan": None, "_maps": {}, "_wanted": {}}

    def set_epoch(self, epoch: int) -> None:
        """Move to ``epoch`` (its own order) from its first batch; the same epoch keeps its place."""
        epoch = _non_negative("epoch", epoch)
        if epoch != self.epoch:
            self.epoch, self.position, self._plan = epoch, 0, None

    def __len__(self) -> int:
        """Batches this rank gets in one epoch (the same on every rank)."""
        return len(self._batches())

    def __getitem__(self, index: int) -> UnitBatch:
        """Batch ``index`` of the current epoch (from 0, whatever the iteration position)."""
        plan = self._batches()
        return self._read(plan[index], range(len(plan))[index])

    def __iter__(self) -> Iterator[UnitBatch]:
        """The epoch's batches from the current position; nothing once the epoch is finished.

        A finished epoch stays finished (``set_epoch`` moves on): starting it over here would
        train it twice after resuming from a state saved after its last batch.
        """
        plan = self._batches()
        while self.position < len(plan):
            batch = self._read(plan[self.position], self.position)
            self.position += 1
            yield batch

    def remaining(self) -> range:
        """Indexes of the batches iteration has not yielded yet: a sampler for a DataLoader."""
        return range(self.position, len(self))

    def state_dict(self, after: UnitBatch | None = None) -> dict:
        """A small JSON-safe dict from which ``loader(..., state=...)`` continues exactly.

        It resumes after ``after`` when given (a batch that came back from DataLoader workers),
        else after the last batch this object's iteration yielded. A state saved after an epoch's
        last batch means "nothing left in this epoch": the resumed loader yields nothing until
        ``set_epoch`` moves it on, which the usual loop does (``for epoch in range(loader.epoch,
        epochs)``, ``set_epoch(epoch)``, then iterate).
        """
        epoch, position = (
            (self.epoch, self.position) if after is None else (after.epoch, after.position + 1)
        )
        return {"format": STATE_FORMAT, "epoch": epoch, "position": position, **self._identity()}

    def _identity(self) -> dict:
        """Everything the order depends on besides the epoch: a saved state must match it."""
        o = self.options
        return {
            "seed": o.seed,
            "rank": o.rank,
            "world_size": o.world_size,
            "batch_size": o.batch_size,
            "tokens_per_batch": o.tokens_per_batch,
            "drop_last": o.drop_last,
            "accum_steps": o.accum_steps,
            "weights": list(o.weights),
            "builds": [_fingerprint(build) for build in self.builds],
        }

    def _batches(self) -> list[_Planned]:
        if self._plan is None:
            counts = [build.records() for build in self.builds]
            self._plan = epoch_plan(counts, self.options, self.epoch)
        return self._plan

    def _read(self, planned: _Planned, position: int) -> UnitBatch:
        source, unit, positions = planned.source, planned.unit_size, planned.positions
        build = self.builds[source]
        input_ids = _gather(
            positions, build.samples_per_shard, lambda number: self._shard(source, unit, number)
        )
        if input_ids is None:
            input_ids = np.empty((0, unit), build.dtype)
        if self.options.widen:
            input_ids = input_ids.astype(np.int64)
        step_loss = None
        if planned.step_end:
            window = self._window(position)
            step_loss = sum(self._loss_tokens(self._batches()[k]) for k in window)
        if build.packed:
            lengths = build.row_columns(unit).fill[positions]
        else:
            lengths = build.unit_columns(unit)[1][positions]
        batch = UnitBatch(
            unit_size=unit,
            input_ids=input_ids,
            lengths=lengths,
            packed=build.packed,
            source=source,
            epoch=self.epoch,
            position=position,
            step_end=planned.step_end,
            ignore_id=self.options.ignore_id,
            step_loss_tokens=step_loss,
            row_runs=(build.row_runs(unit), positions) if build.packed else None,
            find=functools.partial(self._segments_only, planned),
        )
        if self.options.targets is not None:
            segments, _, entries = self._segments(planned)
            batch.segments = segments
            batch.target_mask = self._target_mask(planned, segments, entries)
        return batch

    def _segments_only(self, planned: _Planned) -> np.ndarray:
        return self._segments(planned)[0]

    def _segments(self, planned: _Planned) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The batch's segments ``[S, 4]``, its rows' fill, and each segment's entry: its
        position in the unit (an unpacked record) or in the boundary index (a packed row's)."""
        build = self.builds[planned.source]
        positions = planned.positions
        if not build.packed:
            sample_ids, lengths = build.unit_columns(planned.unit_size)
            fill = lengths[positions]
            segments = np.zeros((positions.size, 4), dtype=np.int64)
            segments[:, 0] = np.arange(positions.size)
            segments[:, 2] = fill
            segments[:, 3] = sample_ids[positions]
            return segments, fill, positions
        rows = build.row_columns(planned.unit_size)
        first = rows.offsets[positions]
        counts = rows.offsets[positions + 1] - first
        entries = spread(first, counts)
        segments = rows.entries[entries]
        segments[:, 0] = np.repeat(np.arange(positions.size), counts)
        return segments, rows.fill[positions], entries

    def _window(self, position: int) -> range:
        """The batches of the ``accum_steps`` window ending with batch ``position``."""
        plan = self._batches()
        start = position
        while start > 0 and not plan[start - 1].step_end:
            start -= 1
        return range(start, position + 1)

    def _loss_tokens(self, planned: _Planned) -> int:
        """A batch's ``loss_tokens`` from its rows, or its segments and span records: no token
        read."""
        build = self.builds[planned.source]
        if self.options.targets is None:
            if build.packed:
                return int(build.row_runs(planned.unit_size).loss[planned.positions].sum())
            return loss_tokens(build.unit_columns(planned.unit_size)[1][planned.positions])
        segments, _, entries = self._segments(planned)
        records = self._span_records(planned, entries)
        return loss_tokens(segments[:, 2], records, self._wanted_segments(planned.source))

    def _shard(self, source: int, unit_size: int, number: int) -> np.ndarray:
        key = (source, unit_size, number)
        if key not in self._maps:
            self._maps[key] = self.builds[source].shard(unit_size, number)
        return self._maps[key]

    def _wanted_segments(self, source: int) -> np.ndarray:
        """Per input file of build ``source``, which segment index is a target; one more
        column, always False, for the positions past the last stop (PAD)."""
        if source not in self._wanted:
            build = self.builds[source]
            names = build.sequence_names()
            width = build.manifest["segment_spans"]["record_width"]
            wanted = np.zeros((len(names), width + 1), dtype=bool)
            for file, file_names in enumerate(names):
                wanted[file, : len(file_names)] = [n in self.options.targets for n in file_names]
            self._wanted[source] = wanted
        return self._wanted[source]

    def _span_records(self, planned: _Planned, entries: np.ndarray) -> np.ndarray | None:
        """The span records of a batch's samples (``entries``: ``_segments``'s), in order."""
        build = self.builds[planned.source]
        unit = planned.unit_size
        firsts = None
        if build.packed:  # one record per sample, row after row, in each shard
            offsets = build.row_columns(unit).offsets
            firsts = offsets[: -1 : build.samples_per_shard]
        return _gather(
            entries,
            build.samples_per_shard,
            lambda number: build.shard_spans(unit, number),
            firsts,
        )

    def _target_mask(
        self, planned: _Planned, segments: np.ndarray, entries: np.ndarray
    ) -> np.ndarray:
        """bool [B, unit_size]: the positions inside a target segment, from the stored spans."""
        unit = planned.unit_size
        rows = planned.positions.size
        records = self._span_records(planned, entries)
        if records is None:
            return np.zeros((rows, unit), dtype=bool)
        # Segment k holds [stop_{k-1}, stop_k): a position's segment is how many stops it passed.
        wanted = self._wanted_segments(planned.source)
        inside = target_positions(records, wanted, np.full(records.shape[0], unit))
        if not self.builds[planned.source].packed:
            return inside
        mask = np.zeros(rows * unit, dtype=bool)
        lengths = segments[:, 2]
        slots = spread(segments[:, 0] * unit + segments[:, 1], lengths)
        mask[slots] = inside[np.arange(unit)[None, :] < lengths[:, None]]
        return mask.reshape(rows, unit)


def _gather(
    positions: np.ndarray,
    per_shard: int,
    shard: Callable[[int], np.ndarray],
    firsts: np.ndarray | None = None,
) -> np.ndarray | None:
    """The rows of the records at ``positions`` (ascending) in their shards' arrays
    (``shard(number)``), in order; None for no records. Shard n's first record is
    ``n * per_shard``, or ``firsts[n]`` when given (a packed unit's span records, one per
    sample, in shards of ``per_shard`` rows)."""
    if not positions.size:
        return None
    if firsts is None:
        first, last = int(positions[0]) // per_shard, int(positions[-1]) // per_shard
        starts = np.arange(last + 2) * per_shard
    else:
        first, last = (int(n) - 1 for n in np.searchsorted(firsts, positions[[0, -1]], "right"))
        starts = firsts
    # np.take copies whole rows, several times faster than fancy indexing on narrow records.
    if first == last:
        return np.take(shard(first), positions - int(starts[first]), axis=0)
    cuts = [0, *np.searchsorted(positions, starts[first + 1 : last + 1]).tolist(), positions.size]
    return np.concatenate(
        [
            np.take(shard(number), positions[start:stop] - int(starts[number]), axis=0)
            for number, (start, stop) in enumerate(itertools.pairwise(cuts), start=first)
            if start < stop
        ]
    )


# ---------------------------------------------------------------------------
# The order: a pure function of the unit counts, the options and the epoch
# ---------------------------------------------------------------------------


def epoch_plan(
    unit_counts: Sequence[dict[int, int]], options: LoaderOptions, epoch: int
) -> list[_Planned]:
    """One rank's batches of one epoch, from each build's ``{unit_size: records}``."""
    windows = [
        _windows(counts, options, epoch, source) for source, counts in enumerate(unit_counts)
    ]
    plan = []
    for source, (unit_size, records, batches) in _merge(windows, options, epoch):
        for number, (start, stop) in enumerate(batches):
            plan.append(
                _Planned(
                    source=source,
                    unit_size=unit_size,
                    records=records,
                    start=start,
                    stop=stop,
                    step_end=number == len(batches) - 1,
                )
            )
    return plan


def _windows(
    counts: dict[int, int], options: LoaderOptions, epoch: int, source: int
) -> list[tuple[int, np.ndarray, list[tuple[int, int]]]]:
    """One build's optimiser-step windows in shuffled order: (unit_size, this rank's records of
    the unit, each of the window's batches as a slice ``(start, stop)`` of them)."""
    ranks, rank = options.world_size, options.rank
    units, draws, starts, wanted = [], [], [], []
    for unit_size, count in counts.items():
        size = options.unit_batch_size(unit_size)
        whole = count // (size * ranks)
        cut = whole * ranks * size
        # The shuffled records are cut into chunks: group g's batch for rank r is chunk
        # g * ranks + r; then the leftover, split among the ranks (chunk whole * ranks + r is
        # rank r's share), or one chunk nobody takes.
        kept = count > cut and not options.drop_last
        if not whole + kept:
            continue
        batches = [(group * size, (group + 1) * size) for group in range(whole)]
        tail = [cut] if count > cut else []
        if kept:
            share, more = divmod(count - cut, ranks)
            tail = [cut + r * share + min(r, more) for r in range(ranks)]
            batches.append((whole * size, whole * size + share + (rank < more)))
        units.append((unit_size, batches))
        draws.append(_draws(count, options.seed, epoch, _RECORDS, source, unit_size))
        starts.append(np.concatenate((np.arange(0, cut, size), np.array(tail, dtype=np.int64))))
        wanted.append(np.arange(rank, (whole + kept) * ranks, ranks))
    windows = []
    steps = options.accum_steps
    for (unit_size, batches), records in zip(units, _chunks(draws, starts, wanted), strict=True):
        windows += [
            (unit_size, records, batches[i : i + steps]) for i in range(0, len(batches), steps)
        ]
    shuffle = _shuffled(len(windows), options.seed, epoch, _WINDOWS, source)
    return [windows[i] for i in shuffle.tolist()]


def _chunks(
    draws: list[np.ndarray], starts: list[np.ndarray], wanted: list[np.ndarray]
) -> list[np.ndarray]:
    """Per unit u, the records (positions) in chunks ``wanted[u]`` (ascending) of the order of
    ``draws[u]``, chunk after chunk, each ascending; chunk c holds the places
    ``[starts[u][c], starts[u][c + 1])`` of ``argsort(draws[u], kind="stable")``
    (``starts[u][0] == 0``, ascending; a repeated start is an empty chunk).

    The same records as sorting would give, found without sorting them all (sorting was most of
    an epoch's plan): records are counted into buckets by the top bits of their draws, so bucket
    b's records take places ``[low[b], high[b])`` in order. A bucket inside one chunk needs no
    order at all; only the few buckets a chunk start falls inside are sorted, ties in draws by
    position like the stable sort. The units are done together (the fixed cost of each step
    is paid once), one after another in buckets, places and chunks.
    """
    if not draws:
        return []
    offsets = [0, *itertools.accumulate(unit.size for unit in draws)]
    bucket = np.empty(offsets[-1], dtype=np.int64)
    buckets = 0
    for unit, (lo, hi) in enumerate(itertools.pairwise(offsets)):
        # About 16 records a bucket (a small table), and buckets enough that few hold a start.
        bits = min(max((hi - lo) // 16, 2 * starts[unit].size).bit_length(), 20)
        # The top bits (the sign bit clear: the same numbers in the int64 buffer), after the
        # buckets of the units before.
        part = bucket[lo:hi]
        np.right_shift(draws[unit], np.uint64(64 - bits), out=part.view(np.uint64))
        part += buckets
        buckets += 1 << bits
    sizes = np.bincount(bucket, minlength=buckets)
    high = np.cumsum(sizes)
    low = high - sizes
    places = np.concatenate([offset + own for offset, own in zip(offsets, starts, strict=False)])
    # Each record's key: the number of its chunk among the wanted ones; `others` (sorted after
    # them) for a chunk not wanted, `inside` for a bucket a chunk start falls inside.
    first_chunks = itertools.accumulate((own.size for own in starts), initial=0)
    picked = np.concatenate([first + own for first, own in zip(first_chunks, wanted, strict=False)])
    others, inside = picked.size, picked.size + 1
    number = np.full(places.size, others, dtype=np.min_scalar_type(inside))
    number[picked] = np.arange(others)
    # A bucket's first place is in the last chunk starting at or before it (a repeated start
    # is an empty chunk); a chunk start strictly inside the bucket splits it.
    passed = np.searchsorted(places, low, "right")
    table = number[passed - 1]
    table[np.searchsorted(places, high, "left") > passed] = inside
    keys = table[bucket]
    members = np.flatnonzero(keys == inside)
    if members.size:
        # By bucket (so by unit), then draw; lexsort is stable: ties stay by position.
        unit_of = np.searchsorted(offsets, members, "right") - 1
        member_draws = np.concatenate(
            [draws[u][members[unit_of == u] - offsets[u]] for u in np.unique(unit_of).tolist()]
        )
        ordered = members[np.lexsort((member_draws, bucket[members]))]
        held = bucket[ordered]
        place = low[held] + np.arange(ordered.size) - np.searchsorted(held, held)
        keys[ordered] = number[np.searchsorted(places, place, "right") - 1]
    result = []
    for lo, hi in itertools.pairwise(offsets):
        own = keys[lo:hi]
        # A stable sort of small keys is a radix sort: each chunk's records stay ascending.
        result.append(np.argsort(own, kind="stable")[: np.count_nonzero(own < others)])
    return result


def _merge(windows: list[list[tuple]], options: LoaderOptions, epoch: int) -> list[tuple]:
    """All builds' windows in one sequence: (source, window)."""
    if len(windows) == 1:
        # One build's due times (k + u) / weight grow with k: its windows keep their order.
        return [(0, window) for window in windows[0]]
    due = [
        (np.arange(len(own)) + _uniform(len(own), options.seed, epoch, _MIXTURE, source)) / weight
        for source, (own, weight) in enumerate(zip(windows, options.weights, strict=True))
    ]
    order = np.argsort(np.concatenate([np.zeros(0), *due]), kind="stable")
    flat = [(source, window) for source, own in enumerate(windows) for window in own]
    return [flat[i] for i in order.tolist()]


def _draws(count: int, *key: int) -> np.ndarray:
    """``count`` raw uint64 draws of the PCG64 stream of ``key``: the same on every machine."""
    return np.random.PCG64(np.random.SeedSequence(list(key))).random_raw(count)


def _shuffled(count: int, *key: int) -> np.ndarray:
    """A permutation of ``range(count)``: the order of the raw draws of ``key`` (stable sort)."""
    return np.argsort(_draws(count, *key), kind="stable")


def _uniform(count: int, *key: int) -> np.ndarray:
    """Uniform floats in [0, 1) from the top 53 bits of the raw draws (exact in float64)."""
    return (_draws(count, *key) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _fingerprint(build: Build) -> str:
    """Identifies which records a build holds and where (its unit indexes' checksums)."""
    listed = [build.manifest.get(key, []) for key in ("unit_indexes", "boundary_indexes")]
    listing = orjson.dumps(listed if listed[1] else listed[0], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(listing).hexdigest()[:16]


# ---------------------------------------------------------------------------
# Construction: options checked once, with errors that say what to change
# ---------------------------------------------------------------------------


_CHECK = OptionCheck(
    lambda option, value, rule: LoaderOptionError(option=option, value=value, problem=rule)
)


def new_loader(
    builds: Sequence[Build],
    *,
    weights: Sequence[float] | None = None,
    batch_size: int | None = None,
    tokens_per_batch: int | None = None,
    seed: int = 0,
    epoch: int = 0,
    rank: int = 0,
    world_size: int = 1,
    drop_last: bool = True,
    accum_steps: int = 1,
    targets: Sequence[str] | None = None,
    ignore_id: int = -100,
    widen: bool = False,
    state: dict | None = None,
) -> UnitLoader:
    """Unit-homogeneous training batches over one or more finished builds (paths too, through
    ``mintdim.loader``).

    Give exactly one of ``batch_size`` (records per batch) and ``tokens_per_batch`` (a unit's
    batch size is ``max(1, tokens_per_batch // unit_size)``). ``weights`` (one positive number per
    build, default equal) sets each build's share of optimiser steps. ``targets`` names the
    template segments whose tokens carry labels (needs a build that stores segment spans).
    ``widen`` gives ``input_ids`` as int64. ``state`` is a ``state_dict()`` to continue from; it
    must come from a loader with the same builds and options.
    """
    opened = list(builds)
    if not opened:
        raise LoaderOptionError(option="builds", value=[], problem="empty")
    options = LoaderOptions(
        batch_size=_batch_option("batch_size", batch_size, tokens_per_batch),
        tokens_per_batch=_batch_option("tokens_per_batch", tokens_per_batch, batch_size),
        seed=_non_negative("seed", seed),
        rank=_rank(rank, world_size),
        world_size=_positive("world_size", world_size),
        drop_last=_CHECK.flag("drop_last", drop_last),
        accum_steps=_positive("accum_steps", accum_steps),
        weights=_weights(weights, len(opened)),
        targets=_targets(targets, opened),
        ignore_id=_CHECK.integer("ignore_id", ignore_id, "int64"),
        widen=_CHECK.flag("widen", widen),
    )
    result = UnitLoader(opened, options, _non_negative("epoch", epoch), 0)
    if state is not None:
        _resume(result, state)
    return result


def _resume(target: UnitLoader, state: dict) -> None:
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise LoaderStateError(key="format", saved=_get(state, "format"), current=STATE_FORMAT)
    for key, current in target._identity().items():
        if state.get(key) != current:
            raise LoaderStateError(key=key, saved=state.get(key), current=current)
    epoch, position = state.get("epoch"), state.get("position")
    if not (isinstance(epoch, int) and epoch >= 0):
        raise LoaderStateError(key="epoch", saved=epoch, current=None)
    target.set_epoch(epoch)
    # A place past the epoch's end cannot come from a loader with these builds and options.
    if not (isinstance(position, int) and 0 <= position <= len(target)):
        raise LoaderStateError(key="position", saved=position, current=len(target))
    target.position = position


def _get(state: object, key: str) -> object:
    return state.get(key) if isinstance(state, dict) else state


def _positive(name: str, value: object) -> int:
    return _CHECK.integer(name, value, "positive_int")


def _non_negative(name: str, value: object) -> int:
    return _CHECK.integer(name, value, "non_negative_int")


def _batch_option(name: str, value: object, other: object) -> int | None:
    if (value is None) == (other is None):
        raise LoaderOptionError(
            option="batch_size / tokens_per_batch", value=[value, other], problem="one_of"
        )
    return None if value is None else _positive(name, value)


def _rank(rank: object, world_size: object) -> int:
    _positive("world_size", world_size)
    if not _is_int(rank) or not 0 <= rank < world_size:
        raise LoaderOptionError(option="rank", value=rank, problem="rank", limit=world_size)
    return int(rank)


def _weights(weights: Sequence[float] | None, count: int) -> tuple[float, ...]:
    if weights is None:
        return (1.0,) * count
    values = list(weights) if isinstance(weights, Sequence | np.ndarray) else [weights]
    if len(values) != count:
        raise LoaderOptionError(option="weights", value=values, problem="count", limit=count)
    for value in values:
        if not is_number(value) or value <= 0:
            raise LoaderOptionError(option="weights", value=values, problem="weights")
    return tuple(float(v) for v in values)


def _targets(targets: Sequence[str] | None, builds: Sequence[Build]) -> tuple[str, ...] | None:
    if targets is None:
        return None
    names = [targets] if isinstance(targets, str) else list(targets)
    if not names or not all(isinstance(name, str) for name in names):
        raise LoaderOptionError(option="targets", value=targets, problem="targets")
    for build in builds:
        sequences = build.sequence_names()
        if sequences is None:
            raise LoaderOptionError(
                option="targets", value=names, problem="no_spans", build=str(build.path)
            )
        known = {name for sequence in sequences for name in sequence}
        unknown = [name for name in names if name not in known]
        if unknown:
            raise LoaderOptionError(
                option="targets",
                value=unknown,
                problem="unknown_segment",
                build=str(build.path),
                known=sorted(known),
            )
    return tuple(names)
