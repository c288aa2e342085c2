"""``mintdim verify --deep``: every record derived again from the inputs and compared.

After the plain checks hold, the deep check reads each input file again (its size and SHA-256
must equal the manifest's fingerprint, taken while the build read it), renders every sample
with the manifest's template, encodes it one text at a time with the tokenizer's plain
``encode`` (the reference path, not the build's batch call), and demands that its
sample_index line (hash, token_count, unit_size, source) and its whole record (tokens, then
PAD) are exactly what that gives. The tokenizer file must match its recorded SHA-256 first.

The SFT settings the manifest records are applied the same way, one sample at a time:
``encode: "segments"`` encodes each template segment alone, ``append_eos`` appends the EOS id,
and ``on_overflow`` skips, truncates or extends (``_Reference``).

The expensive part, parsing, rendering, hashing and encoding each batch of an input, runs on
``workers`` processes (every core by default), forked after the tokenizer is loaded so each
inherits it. This process reads the raw batches, hands them out a few per worker, and takes the
results back strictly in input order: placement (``extend`` sizes appear in input order) and
the comparison with the sample index and the shards are the same, in the same order, for any
worker count, so the report is too.

Paths in the manifest are as the user declared them: relative ones resolve from the current
directory, so run the deep check from where the build ran.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import sys
from array import array
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import cast

import numpy as np
import orjson

from mintdim.build.contracts import FilePlan
from mintdim.build.formats import boundaries, manifest, stats
from mintdim.build.source import Batch, InputFingerprint, Source, open_source
from mintdim.build.tokenizer import Encoder, load_encoder
from mintdim.build.units.packing import ALGORITHM, pack
from mintdim.check.report import VerifyReport
from mintdim.errors import MintDimError, WorkerError
from mintdim.read.reader import UnitBuild, open_build
from mintdim.shared import durable

__all__ = ["default_workers", "deep_check"]

_BATCH_LINES = 1024
"""Lines per read batch; changes nothing but memory."""
_IN_FLIGHT_PER_WORKER = 3
"""Batches handed out per worker: enough to keep each busy while this process compares."""
_START_METHOD = "fork" if sys.platform == "linux" else "spawn"
_JOIN_SECONDS = 10.0
"""How long a broken pool's workers may take to end (they are dead or being terminated)."""


def default_workers() -> int:
    """Every core this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def deep_check(root: Path, content: dict, report: VerifyReport, workers: int | None = None) -> None:
    """Add a failure to ``report`` for every record that is not its input's reference encoding,
    re-deriving the records on ``workers`` processes (None: every core)."""
    encoder = _encoder(content, report)
    if encoder is None:
        return
    reference = _Reference(content, encoder)
    build = open_build(root)
    rows = build.samples()
    source = content["source"]
    plans = [
        manifest.recorded_input(content, index, encoder.spec, _BATCH_LINES)
        for index in range(len(source["files"]))
    ]
    blank_lines = 0
    with _Derivation(reference, plans, default_workers() if workers is None else workers) as derive:
        try:
            for plan in plans:
                listed = source["inputs"][plan.index]
                blank_lines += _check_file(plan, listed, derive, reference, build, rows, report)
        except WorkerError as err:
            # The proof stopped short: never an OK, and the report says why.
            report.add("deep", "workers", "deep_error", error=str(err))
            return
    if next(rows, None) is not None:
        report.add("deep", "sample_index.jsonl", "deep_extra")
    if build.packed:
        _check_rows(build, reference, report)
    expected_blank = _stats_blank_lines(root)
    if expected_blank != blank_lines:
        report.add(
            "deep",
            "stats.json",
            "total",
            key="blank_lines",
            actual=expected_blank,
            expected=blank_lines,
        )


def _encoder(content: dict, report: VerifyReport) -> Encoder | None:
    tokenizer = content["tokenizer"]
    spec = manifest.recorded_tokenizer(content)
    if not Path(spec.abs_path).is_file():
        report.add("deep", spec.path, "deep_input_missing")
        return None
    digest = durable.file_sha256(Path(spec.abs_path))
    if digest != tokenizer["sha256"]:
        report.add("deep", spec.path, "sha256", actual=digest, listed=tokenizer["sha256"])
        return None
    try:
        return load_encoder(spec)
    except MintDimError as err:
        report.add("deep", spec.path, "deep_error", error=str(err))
        return None


class _Reference:
    """One sample's expected ids and unit, by the manifest's settings, in input order."""

    def __init__(self, content: dict, encoder: Encoder) -> None:
        units = content["units"]
        self.encoder = encoder
        self.segments = encoder.spec.encode == "segments"
        self.eos = encoder.eos_id
        self.policy = units["on_overflow"]
        self.planned = np.asarray(units["planned_sizes"], dtype=np.int64)
        self.align = int((units.get("planned") or {}).get("align", 1))
        self.extended: list[int] = []
        self.units, self.stored = array("q"), array("q")
        """Unit and tokens stored of every sample derived, in sample id order (8 bytes each,
        where a tuple per sample cost ~70)."""

    def ids(self, plan: FilePlan, text: str, values: tuple[str, ...]) -> list[int]:
        """The sample's ids before any overflow policy."""
        if self.segments:
            pieces = [
                value if kind == "literal" else values[plan.fields.index(value)]
                for kind, value in plan.template.segments()
            ]
            ids = [i for piece in pieces for i in self.encoder.encode(piece)]
        else:
            ids = self.encoder.encode(text)
        return ids if self.eos is None else [*ids, self.eos]

    def place(self, count: int) -> tuple[int, int] | None:
        """``(tokens stored, unit)`` of a sample of ``count`` ids (the stored ones are its first),
        or None when ``skip`` left it out."""
        index = int(np.searchsorted(self.planned, count))
        if index < self.planned.size:
            return count, int(self.planned[index])
        if self.policy == "skip":
            return None
        if self.policy == "truncate":
            return int(self.planned[-1]), int(self.planned[-1])
        if self.policy == "extend":
            fitting = [size for size in self.extended if size >= count]
            if not fitting:
                fitting = [-(-count // self.align) * self.align]
                self.extended.append(fitting[0])
            return count, min(fitting)
        return count, int(self.planned[-1])  # abort: a complete build holds no such sample


@dataclass(frozen=True, slots=True)
class _Derived:
    """One raw batch derived again: its samples up to the first bad record, and that error."""

    lines: list[int]
    hashes: list[str]
    """Each sample's rendered-text SHA-256, lower-case hex."""
    ids: array
    """Every sample's reference ids back to back (``q``)."""
    counts: array
    blank_lines: int
    error: str | None


@dataclass(slots=True)
class _Worker:
    """What each worker process holds (inherited by fork, or set here with one worker)."""

    reference: _Reference
    plans: list[FilePlan]
    sources: dict[int, Source]


_worker: _Worker | None = None


def _start_worker(reference: _Reference, plans: list[FilePlan]) -> None:
    global _worker
    _worker = _Worker(reference, plans, {})


def _derive(index: int, batch: Batch) -> _Derived:
    """Parse, render, hash and encode one raw batch of input ``index`` (in a worker)."""
    worker = cast(_Worker, _worker)  # set by _start_worker before any batch
    plan = worker.plans[index]
    if index not in worker.sources:
        worker.sources[index] = open_source(plan)
    parsed = worker.sources[index].parse(batch)
    ids, counts = array("q"), array("q")
    for text, values in zip(parsed.texts, parsed.values, strict=True):
        sample = worker.reference.ids(plan, text, values)
        ids.extend(sample)
        counts.append(len(sample))
    return _Derived(
        lines=parsed.line_numbers[: len(parsed.texts)],
        hashes=[hashlib.sha256(text.encode("utf-8")).hexdigest() for text in parsed.texts],
        ids=ids,
        counts=counts,
        blank_lines=parsed.blank_lines,
        error=None if parsed.error is None else str(parsed.error),
    )


class _Derivation:
    """Raw batches derived on ``workers`` processes, their results taken back in input order."""

    def __init__(self, reference: _Reference, plans: list[FilePlan], workers: int) -> None:
        self.workers = max(1, workers)
        self._pool: ProcessPoolExecutor | None = None
        self._workers: dict[int, BaseProcess] = {}
        """The pool's processes seen so far (the pool forgets a broken one's)."""
        self._reference, self._plans = reference, plans

    def __enter__(self) -> _Derivation:
        if self.workers == 1:
            _start_worker(self._reference, self._plans)
        else:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context(_START_METHOD),
                initializer=_start_worker,
                initargs=(self._reference, self._plans),
            )
        return self

    def __exit__(self, *_: object) -> None:
        global _worker
        _worker = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def batches(self, plan: FilePlan, end: _End) -> Iterator[_Derived]:
        """Every batch of ``plan``'s input derived again, in order; ``end`` then holds the
        file's fingerprint, or the error that stopped its reading."""
        batches = open_source(plan).batches()
        if self._pool is None:
            yield from map(lambda batch: _derive(plan.index, batch), _read(batches, end))
            return
        pending: deque[Future[_Derived]] = deque()
        try:
            for batch in _read(batches, end):
                pending.append(self._pool.submit(_derive, plan.index, batch))
                self._workers.update(getattr(self._pool, "_processes", None) or {})
                if len(pending) >= self.workers * _IN_FLIGHT_PER_WORKER:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenProcessPool as err:  # a worker killed (the OOM killer, a signal)
            raise WorkerError(
                cause="process_ended", detail=str(err), exitcode=self._exitcode()
            ) from None
        finally:
            for future in pending:
                future.cancel()

    def _exitcode(self) -> int | None:
        """How the first worker that died ended: the signal that killed it, as multiprocessing
        says it (negative), leaving out the SIGTERM the pool then sends to the others."""
        for process in self._workers.values():
            process.join(timeout=_JOIN_SECONDS)
        codes = [process.exitcode for process in self._workers.values()]
        return next((code for code in codes if code and code != -signal.SIGTERM), None)


@dataclass(slots=True)
class _End:
    """How an input's reading ended: its fingerprint, or the error that stopped it."""

    fingerprint: InputFingerprint | None = None
    error: MintDimError | None = None


def _read(batches: Iterator[Batch], end: _End) -> Iterator[Batch]:
    while True:
        try:
            yield next(batches)
        except StopIteration as done:
            end.fingerprint = done.value
            return
        except MintDimError as err:  # a line past the build's max_line_bytes, an unreadable file
            end.error = err
            return


def _check_file(
    plan: FilePlan,
    listed: dict,
    derive: _Derivation,
    reference: _Reference,
    build: UnitBuild,
    rows: Iterator[dict],
    report: VerifyReport,
) -> int:
    """Compare one input's samples with their rows and records; return its blank lines."""
    if not Path(plan.abs_path).is_file():
        report.add("deep", plan.path, "deep_input_missing")
        return 0
    blank_lines = 0
    end = _End()
    for derived in derive.batches(plan, end):
        blank_lines += derived.blank_lines
        ids = np.frombuffer(derived.ids, dtype=np.int64)
        starts = np.cumsum(derived.counts) - derived.counts
        for line, digest, start, count in zip(
            derived.lines, derived.hashes, starts.tolist(), derived.counts, strict=True
        ):
            placed = reference.place(count)
            if placed is None:
                continue
            row = next(rows, None)
            if row is None:
                report.add("deep", plan.path, "deep_missing", line=line)
                return blank_lines
            stored, unit = placed
            reference.units.append(unit)
            reference.stored.append(stored)
            expected = (digest, stored, unit, line)
            _check_sample(plan, expected, row, ids[start : start + stored], build, report)
        if derived.error is not None:
            report.add("deep", plan.path, "deep_error", error=derived.error)
            return blank_lines
    fingerprint = end.fingerprint
    if fingerprint is None:  # the reading stopped before the end
        report.add("deep", plan.path, "deep_error", error=str(end.error))
        return blank_lines
    if (fingerprint.bytes, fingerprint.sha256) != (listed["bytes"], listed["sha256"]):
        report.add(
            "deep",
            plan.path,
            "deep_fingerprint",
            bytes=fingerprint.bytes,
            sha256=fingerprint.sha256,
            listed_bytes=listed["bytes"],
            listed_sha256=listed["sha256"],
        )
    return blank_lines


def _check_sample(
    plan: FilePlan,
    expected: tuple[str, int, int, int],
    row: dict,
    ids: np.ndarray,
    build: UnitBuild,
    report: VerifyReport,
) -> None:
    """``expected``: the sample's text SHA-256, tokens stored, unit and line; ``ids`` its
    stored ids."""
    digest, stored, unit, line = expected
    wanted = {
        "hash": digest,
        "token_count": stored,
        "unit_size": unit,
        "source_file": plan.path,
        "source_line": line,
    }
    wrong = [key for key, value in wanted.items() if row.get(key) != value]
    if not wrong and build.packed:  # the row's PAD is the plain check's: after its last sample
        if np.array_equal(build.tokens(row), ids):
            return
    elif not wrong:
        record = build.record(row)
        if np.array_equal(record[:stored], ids) and not (record[stored:] != build.pad_id).any():
            return
    report.add(
        "deep",
        row.get("shard_path", plan.path),
        "deep_record",
        sample_id=row.get("sample_id"),
        file=plan.path,
        line=line,
        keys=", ".join(wrong) or "tokens",
    )


def _check_rows(build: UnitBuild, reference: _Reference, report: VerifyReport) -> None:
    """Each packed unit's rows packed again from the derived token counts, and compared."""
    units = np.frombuffer(reference.units, dtype=np.int64)
    counts = np.frombuffer(reference.stored, dtype=np.int64)
    for size in build.units:
        members = np.flatnonzero(units == size)
        if build.boundaries(size).holds(pack(counts[members], size), members):
            continue
        report.add(
            "deep", boundaries.samples_path(size), "deep_rows", unit=size, algorithm=ALGORITHM
        )


def _stats_blank_lines(root: Path) -> object:
    return orjson.loads((root / stats.FILENAME).read_bytes()).get("blank_lines")
