"""The unit-build data flow, top to bottom.

    units/auto (sizes="auto")       run_scan below, then units/optimal plans each output's sizes
    pieces.cut_pieces               each file's source (source/) cuts it into pieces (main
                                      process: one pass that also fingerprints each file for
                                      the manifest)
    executor                        workers.encode_in_order (local: N processes) or
                                      ray_executor.encode_on_ray (Ray actors), each running
      pieces.PieceEncoder             on every piece, fragments back in piece order:
        write/staging.reuse             an intact fragment of this piece (resume=True), else
        Source.piece_batches            the piece's records in batches -> batch.BatchEncoder:
                                        Source.parse -> Template.render -> sha256 -> tokenizer
                                        encode_batch -> units/planner (assign, pad)
        write/staging.write             -> the piece's fragment in <dir>/staging/
      (resumable=False: no pieces, no fragments: Source.batches over each whole file ->
       batch.BatchEncoder on the local workers, batches straight back in order)
    assembly (in input order)       each batch (read back from its fragment) -> write/dir.py.
                                      OutputDirectory: formats/shards.py shards, sample/unk
                                      indexes, digests, stats
    OutputDirectory.finish          duplicate_index, EMPTY_UNIT.md, stats, histogram, manifest
    write/staging.remove            last, once every output's manifest is written
    progress.Progress               a stderr bar over input bytes (a terminal, or when asked)

Whatever the executor, worker count, piece size or retried task, the same samples reach the
same assembly in the same order: the output is byte-identical. A scan (``run_scan``) reads raw
batches with ``batch.BatchCounter``, which stops after the tokenizer and keeps each sample's
count and line: no output directory, nothing written. A build that meets an overlong sample
finishes counting the rest the same way (``_every_overflow``), so its one ``UnitOverflowError``
names every such sample. Both count by the run's executor (``_encode``): under Ray on Ray, so
no process pool is ever forked beside Ray's threads.

Validation (``validate.py``) has already run: nothing here re-checks configuration.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import replace

import numpy as np

from mintdim.build.batch import BatchCounter, BatchEncoder, EncodedBatch
from mintdim.build.contracts import (
    BuildPlan,
    BuildResult,
    FilePlan,
    OutputResult,
    RunOptions,
    ScanResult,
    TokenizerSpec,
    UnitPlan,
    record_kind,
    token_dtype_for,
)
from mintdim.build.pieces import PieceEncoder, cut_pieces, default_piece_bytes
from mintdim.build.progress import Progress
from mintdim.build.signals import StopSignal, stop_signals_ignored
from mintdim.build.source import Batch, InputFingerprint, PieceWork, open_source
from mintdim.build.tokenizer import Encoder
from mintdim.build.units.auto import planned_build, unit_plans
from mintdim.build.units.overflow import OverflowTally
from mintdim.build.workers import Item, Result, encode_in_order
from mintdim.build.write.dir import OutputDirectory
from mintdim.build.write.staging import Staging, job_record
from mintdim.errors import MintDimError, UnitOverflowError

__all__ = ["run_build", "run_scan"]


def run_build(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    options: RunOptions,
    progress: bool | None,
    stop: StopSignal,
) -> BuildResult:
    """Build every output directory of a validated plan (``units="auto"``: scan and plan first).

    A stop (Ctrl-C, or SIGTERM inside ``sigterm_as_interrupt``, which gave ``stop``) marks every
    output failed and leaves as ``BuildInterruptedError`` naming the signal.
    """
    plans: list[UnitPlan | None] = [None] * len(plan.outputs)
    if plan.auto is not None:
        scan = _scan(plan, encoders, options, progress, stop)
        plans = unit_plans(plan, scan)
        plan = planned_build(plan, scan, plans)
    bar = _progress_bar(plan, progress)
    outputs = [
        OutputDirectory(out, [plan.files[i] for i in out.file_indexes], plan.on_overflow)
        for out in plan.outputs
    ]
    try:
        built = _build(plan, encoders, options, outputs, bar)
        return BuildResult(
            outputs=tuple(replace(o, plan=p) for o, p in zip(built, plans, strict=True))
        )
    except BaseException as error:
        failure = stop.error() if isinstance(error, KeyboardInterrupt) else error
        with stop_signals_ignored():
            for output in outputs:
                output.fail(failure)  # a completed output stays complete and unmarked
        completed = tuple(output.plan.path for output in outputs if output.complete)
        if completed and isinstance(failure, MintDimError):
            failure.completed_outputs = completed
        if failure is not error:
            raise failure from None  # where the signal landed is no news to the user
        raise
    finally:
        bar.close()


def _build(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    options: RunOptions,
    outputs: list[OutputDirectory],
    bar: Progress,
) -> tuple[OutputResult, ...]:
    piece_bytes = _piece_bytes(plan, options, outputs)
    for output, size in zip(outputs, piece_bytes, strict=True):
        job = job_record(output.plan, output.files, size) if options.resumable else None
        output.create(job, options.resume)
    # A resumed output already complete (stopped before its fragments were removed) gets no work.
    finished = [output.complete for output in outputs]
    files = [file for file in plan.files if not finished[file.output_index]]
    fingerprints: dict[int, InputFingerprint] = {}
    failed = None
    # closing(): on any error the workers stop now, not when the traceback is collected.
    batches = _encoded_batches(plan, encoders, options, files, piece_bytes, fingerprints)
    with closing(batches):
        for batch in batches:
            outputs[plan.files[batch.file_index].output_index].write(batch)
            bar.advance(batch.input_bytes, batch.sample_count, int(batch.token_counts.sum()))
            if batch.error is not None:
                failed = batch
                break
    if failed is None:
        bar.complete()
        # A file changed under the build may have given samples of two versions (or of
        # neither): no manifest may vouch for that.
        for file in files:
            open_source(file).check_unchanged(fingerprints[file.index])
        results = tuple(
            OutputResult(o.plan.path, o.finished_stats() if done else o.finish(fingerprints))
            for o, done in zip(outputs, finished, strict=True)
        )
        # Only now: a crash before this line leaves complete builds beside their fragments.
        for output in outputs:
            output.staging.remove()
        return results
    if isinstance(failed.error, UnitOverflowError):
        # One error for every overlong sample, not one build per sample: count the rest.
        raise _every_overflow(plan, encoders, options, failed.file_index, failed.error, bar)
    raise failed.error


def _encode(
    work: Callable[[Item], Result], items: Iterable[Item], options: RunOptions
) -> Iterator[Result]:
    """``work`` on every item (pieces to encode, batches to count), results in input order, by
    the executor the run asked for.

    Under Ray, counting (a scan, the rest of an overflow) runs on Ray too: a process pool forked
    from a driver where Ray's threads run (or ran) could inherit a lock one of them held.
    """
    if options.executor == "ray":
        from mintdim.build.ray_executor import encode_on_ray  # an optional extra

        return encode_on_ray(work, items, options.workers, options.ray_address)
    # run() and scan() resolved a local run's count (every core when none was given).
    return encode_in_order(work, items, options.workers)


def _encoded_batches(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    options: RunOptions,
    files: list[FilePlan],
    piece_bytes: list[int],
    fingerprints: dict[int, InputFingerprint],
) -> Iterator[EncodedBatch]:
    """Every encoded batch of ``files`` in input order, for assembly.

    Resumable: each piece's fragment is written to its output's staging area by the executor,
    then read back here. Otherwise the workers' batches come straight from the executor.
    A sample the tokenizer refused raises its error here, in input order, like a failed batch.
    """
    if not options.resumable:
        yield from _encode(BatchEncoder(plan, encoders), _all_batches(files, fingerprints), options)
        return
    pieces = _all_pieces(files, piece_bytes, fingerprints)
    with closing(_encode(PieceEncoder(plan, encoders), pieces, options)) as fragments:
        for fragment in fragments:
            file = plan.files[fragment.piece.file_index]
            staging = Staging(plan.outputs[file.output_index].abs_path)
            yield from staging.read(fragment.piece, file.path)


def _piece_bytes(plan: BuildPlan, options: RunOptions, outputs: list[OutputDirectory]) -> list[int]:
    """Per output directory: the piece size asked for, else a resumed build's, else the default."""
    default = options.piece_bytes or default_piece_bytes(
        sum(os.path.getsize(file.abs_path) for file in plan.files)
    )
    staged = [output.staging.staged_job() if options.resume else None for output in outputs]
    return [
        default if options.piece_bytes or job is None else int(job["piece_bytes"]) for job in staged
    ]


def _every_overflow(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    options: RunOptions,
    file_index: int,
    first: UnitOverflowError,
    bar: Progress,
) -> UnitOverflowError:
    """The build's overflow error, completed by a scan of the input from its sample onwards.

    Nothing is written any more (the build has failed); the scan stops early only at a line
    that cannot be read, and the error then says where counting stopped.
    """
    found = OverflowTally(record_kind(plan.files[file_index]))
    stopped: MintDimError | None = None
    rest = _batches_from(plan, file_index, first.line)
    with closing(_encode(BatchCounter(plan, encoders), rest, options)) as counted:
        for batch in counted:
            file = plan.files[batch.file_index]
            lines = np.asarray(batch.line_numbers, np.int64)
            over = batch.token_counts > file.sizes[-1]
            if batch.file_index == file_index:
                over &= lines >= first.line
            found.add(file.path, lines[over], batch.token_counts[over])
            bar.advance(batch.input_bytes, batch.sample_count, int(batch.token_counts.sum()))
            if batch.error is not None:
                stopped = batch.error
                break
    return found.error(first.max_unit_size, stopped)


def _batches_from(plan: BuildPlan, file_index: int, line: int) -> Iterator[Batch]:
    """The raw batches holding line ``line`` of file ``file_index`` and everything after it."""
    for file in plan.files[file_index:]:
        for raw in open_source(file).batches():
            if file.index > file_index or raw.last_line >= line:
                yield raw


def run_scan(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    workers: int,
    progress: bool | None,
    stop: StopSignal,
) -> ScanResult:
    """Every sample's exact token count and line, per file, from a validated plan.

    A stop leaves as ``BuildInterruptedError`` naming the signal, as in a build.
    """
    return _scan(plan, encoders, RunOptions(workers), progress, stop)


def _scan(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    options: RunOptions,
    progress: bool | None,
    stop: StopSignal,
) -> ScanResult:
    """``run_scan`` by the executor of ``options`` (``units="auto"`` under Ray: on Ray)."""
    counts: list[list[np.ndarray]] = [[] for _ in plan.files]
    lines: list[list[np.ndarray]] = [[] for _ in plan.files]
    bar = _progress_bar(plan, progress)
    counter = BatchCounter(plan, encoders)
    try:
        batches = _all_batches(list(plan.files), {})
        with closing(_encode(counter, batches, options)) as counted:
            for batch in counted:
                counts[batch.file_index].append(batch.token_counts)
                lines[batch.file_index].append(np.asarray(batch.line_numbers, np.int64))
                bar.advance(batch.input_bytes, batch.sample_count, int(batch.token_counts.sum()))
                if batch.error is not None:
                    raise batch.error
        bar.complete()
    except KeyboardInterrupt:
        raise stop.error() from None
    finally:
        bar.close()
    return ScanResult(
        files=tuple(f.path for f in plan.files),
        by_file=tuple(_joined(parts) for parts in counts),
        lines_by_file=tuple(_joined(parts) for parts in lines),
        bytes_per_token=max(_slot_bytes(encoders[f.tokenizer]) for f in plan.files),
    )


def _slot_bytes(encoder: Encoder) -> int:
    # Validation of a scan does not refuse a vocabulary no dtype holds: count it as uint32.
    return np.dtype(token_dtype_for(encoder.vocab_size) or "uint32").itemsize


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.empty(0, np.int64)


def _all_pieces(
    files: list[FilePlan], piece_bytes: list[int], fingerprints: dict[int, InputFingerprint]
) -> Iterator[PieceWork]:
    """Every file's pieces in order; each file's fingerprint lands in ``fingerprints``."""
    # One stream across files keeps every worker busy at file boundaries.
    for file in files:
        fingerprints[file.index] = yield from cut_pieces(file, piece_bytes[file.output_index])


def _all_batches(
    files: list[FilePlan], fingerprints: dict[int, InputFingerprint]
) -> Iterator[Batch]:
    """Every file's batches in order; each file's fingerprint lands in ``fingerprints``."""
    # One stream across files keeps every worker busy at file boundaries.
    for file in files:
        fingerprints[file.index] = yield from open_source(file).batches()


def _progress_bar(plan: BuildPlan, progress: bool | None) -> Progress:
    shown = sys.stderr.isatty() if progress is None else progress
    return Progress(sum(os.path.getsize(file.abs_path) for file in plan.files), shown)
