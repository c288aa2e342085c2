"""The order of verify's checks, declared once: :data:`STEPS`, run by ``verify_build`` in order
over one :class:`Run` (and iterated by ``benchmarks/verify.py --parts``, which times each).

Hashing every byte is the bound (benchmarks/verify.py measures the whole check against a bare
SHA-256 of the same bytes), so from the start one thread hashes every listed file and another
checks the shards' records with the token counts and sample ids of the unit indexes (kept where
they equal the ones of sample_index.jsonl), while a third parses the index's lines: hashlib and
numpy release the GIL. The steps marked "beside" hand their work to one of those threads
(:class:`Pools`); the main thread runs the others and takes every finding in order, so the
report reads as if one thread had done everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mintdim.build.formats.boundaries import Boundaries
from mintdim.check.deep_verify import deep_check
from mintdim.check.report import VerifyReport, apart
from mintdim.check.verify.audit_indexes import (
    check_duplicates,
    check_overflow_index,
    check_unk_index,
)
from mintdim.check.verify.digests import Digests
from mintdim.check.verify.files import check_audit_files, check_unlisted
from mintdim.check.verify.index_scan import Index, check_sample_index
from mintdim.check.verify.manifest import Build, read_manifest
from mintdim.check.verify.packed import check_rows, read_rows
from mintdim.check.verify.shards import check_shards, early_shard_checks
from mintdim.check.verify.spans import check_spans
from mintdim.check.verify.stats import check_stats
from mintdim.check.verify.unit_indexes import check_unit_indexes
from mintdim.read.reader import require_build

__all__ = ["STEPS", "Pools", "Run", "Step", "verify_build"]


@dataclass(frozen=True, slots=True)
class Pools:
    """Where steps hand work beside the main thread: one worker each (the machine verify is
    tuned for has two cores; benchmarks/RESULTS.md)."""

    hashing: Executor
    shards: Executor
    lines: Executor


@dataclass(slots=True)
class Run:
    """One verify under way: the build, its report, the pools, and what each step leaves for the
    steps after it (unset until that step ran: a step out of order fails at once)."""

    build: Build
    report: VerifyReport
    pools: Pools
    digests: Digests = field(init=False)
    early: dict[int, tuple] = field(init=False)
    """Shards checked from the start on the shards' thread (:func:`early_shard_checks`)."""
    rows: dict[int, Boundaries] = field(init=False)
    """A packed build's rows, by unit size (empty for an unpacked build)."""
    index: Index = field(init=False)
    duplicates: Future[tuple[list[list[int]], VerifyReport]] = field(init=False)
    unks: dict[int, list[int]] = field(init=False)
    """The UNK positions found in the shards, by sample id."""
    unk_index: Future[VerifyReport] = field(init=False)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of verify: ``run(state)``; its name is what the benchmark prints."""

    name: str
    run: Callable[[Run], None]


def _hash_files(run: Run) -> None:
    run.digests = Digests(run.build, run.pools.hashing)


def _early_shards(run: Run) -> None:
    run.rows = read_rows(run.build, run.report)
    run.early = {} if run.build.packed else early_shard_checks(run.build, run.pools.shards)


def _sample_index(run: Run) -> None:
    run.index = check_sample_index(run.build, run.report, run.pools.lines, run.rows)
    if run.build.packed:
        check_rows(run.build, run.rows, run.index.units, run.index.token_counts, run.report)


def _duplicates(run: Run) -> None:
    # On the shards' thread, beside the main thread's check of the shards not checked early.
    run.duplicates = run.pools.shards.submit(check_duplicates, run.build, run.index)


def _shards(run: Run) -> None:
    run.unks = check_shards(run.build, run.index, run.report, run.early, run.rows)


def _unk_index(run: Run) -> None:
    run.unk_index = run.pools.lines.submit(apart, check_unk_index, run.build, run.index, run.unks)


def _stats(run: Run) -> None:
    groups, duplicates_part = run.duplicates.result()
    check_stats(run.build, run.index, run.unks, groups, run.report, run.rows)
    run.report.absorb(duplicates_part)


STEPS: tuple[Step, ...] = (
    Step("hash every listed file (beside)", _hash_files),
    Step("packed rows; shard records by the unit indexes (beside)", _early_shards),
    Step("sample_index.jsonl (its lines read beside); packed rows", _sample_index),
    Step("duplicate groups, duplicate_index (beside)", _duplicates),
    Step("shard entries, records left", _shards),
    Step("unk_index.jsonl (beside)", _unk_index),
    Step("unit indexes", lambda run: check_unit_indexes(run.build, run.index, run.report)),
    Step("spans", lambda run: check_spans(run.build, run.index, run.report, run.rows)),
    Step(
        "overflow_index.jsonl", lambda run: check_overflow_index(run.build, run.index, run.report)
    ),
    Step("files in the directory", lambda run: check_unlisted(run.build, run.report)),
    Step("audit files present", lambda run: check_audit_files(run.build, run.report)),
    Step("stats, histogram; take duplicates", _stats),
    Step("take unk_index's findings", lambda run: run.report.absorb(run.unk_index.result())),
    Step("compare the digests", lambda run: run.digests.compare(run.build.root, run.report)),
)
"""Every check of a plain verify after the manifest's, in the order ``verify_build`` runs them."""


@contextmanager
def _threads() -> Iterator[Pools]:
    """The pools verify runs with. On the way out each waits for its work; hashes not started yet
    are dropped, so an error leaves no thread hashing for nothing."""
    hashing = ThreadPoolExecutor(max_workers=1)
    try:
        with (
            ThreadPoolExecutor(max_workers=1) as shards,
            ThreadPoolExecutor(max_workers=1) as lines,
        ):
            yield Pools(hashing=hashing, shards=shards, lines=lines)
    finally:
        hashing.shutdown(wait=True, cancel_futures=True)


def verify_build(
    directory: str | Path, *, deep: bool = False, workers: int | None = None
) -> VerifyReport:
    """Check a finished build; raises ``NotABuildError`` when ``directory`` holds none.
    ``deep`` also re-derives every record from the inputs, on ``workers`` processes (None:
    every core; the report is the same for every count)."""
    root = require_build(directory)
    report = VerifyReport(directory=str(directory), deep=deep)
    build = read_manifest(root, report)
    if build is None:
        report.skipped = "manifest"
        return report
    with _threads() as pools:
        run = Run(build, report, pools)
        for step in STEPS:
            step.run(run)
    if deep:
        if report.ok:
            deep_check(build.root, build.content, report, workers)
        else:
            report.skipped = "deep"
    return report
