"""The unit-build data flow, top to bottom.

    pieces.cut_pieces               cut each file into pieces at line ends, by bytes (main process:
                                      one pass that also fingerprints each file for the manifest)
    executor: workers.encode_in_order (local, N processes) or ray_executor.encode_on_ray (Ray
                                      actors); each runs pieces.PieceEncoder on every piece:
      output/staging.Staging.reuse    an intact fragment of the same piece left by an interrupted
                                      build (resume=True) is used as it is, else
      source/jsonl.read_raw_batches   the piece's lines in batches -> batch.BatchEncoder:
                                      parse_lines -> Template.render -> sha256 -> tokenizer
                                      encode_batch -> units/planner (assign, pad)
      Staging.write                   -> the piece's fragment in <dir>/staging/
    assembly (here, in piece order)   each fragment's batches -> output/dir.OutputDirectory: units/
                                      shard_writer shards, sample/unk indexes, digests, stats
    OutputDirectory.finish          duplicate_index, EMPTY_UNIT.md, stats, histogram, staging
                                      removed, manifest last
    progress.Progress               a stderr bar over input bytes (a terminal, or when asked)

Whatever the executor, the number of workers or retried tasks, the same pieces reach the same
assembly in the same order: the output is byte-identical. Validation (``validate.py``) has
already run: nothing here re-checks configuration.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import closing

from mintdim.pipelines.unit_build.contracts import (
    BuildPlan,
    BuildResult,
    OutputResult,
    RunOptions,
    TokenizerSpec,
)
from mintdim.pipelines.unit_build.output.dir import OutputDirectory
from mintdim.pipelines.unit_build.output.staging import Fragment, Piece, job_record
from mintdim.pipelines.unit_build.pieces import PieceEncoder, cut_pieces, default_piece_bytes
from mintdim.pipelines.unit_build.progress import Progress
from mintdim.pipelines.unit_build.source.jsonl import InputFingerprint, check_unchanged
from mintdim.pipelines.unit_build.tokenizer import Encoder
from mintdim.pipelines.unit_build.workers import encode_in_order
from mintdim.shared.signals import StopSignal, stop_signals_ignored

__all__ = ["run_build"]


def run_build(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    options: RunOptions,
    progress: bool | None,
    stop: StopSignal,
) -> BuildResult:
    """Build every output directory of a validated plan.

    A stop (Ctrl-C, or SIGTERM inside ``sigterm_as_interrupt``, which gave ``stop``) marks every
    output failed and leaves as ``BuildInterruptedError`` naming the signal.
    """
    shown = sys.stderr.isatty() if progress is None else progress
    bar = Progress(sum(os.path.getsize(file.abs_path) for file in plan.files), shown)
    outputs = [
        OutputDirectory(out, [plan.files[i] for i in out.file_indexes]) for out in plan.outputs
    ]
    try:
        return BuildResult(outputs=_build(plan, encoders, options, outputs, bar))
    except BaseException as error:
        failure = stop.error() if isinstance(error, KeyboardInterrupt) else error
        with stop_signals_ignored():
            for output in outputs:
                output.fail(failure)
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
        output.create(job_record(output.plan, output.files, size), options.resume)
    fingerprints: dict[int, InputFingerprint] = {}
    pieces = _all_pieces(plan, piece_bytes, fingerprints)
    # closing(): on any error the workers stop now, not when the traceback is collected.
    with closing(_encode(PieceEncoder(plan, encoders), pieces, options)) as fragments:
        for fragment in fragments:
            output = outputs[plan.files[fragment.piece.file_index].output_index]
            for batch in output.staging.read(fragment.piece):  # raises a sample's error in order
                output.write(batch)
                bar.advance(batch.input_bytes, batch.sample_count, int(batch.token_counts.sum()))
                if batch.error is not None:
                    raise batch.error
    bar.complete()
    # A file changed under the build may have given samples of two versions (or of neither):
    # no manifest may vouch for that.
    for file in plan.files:
        check_unchanged(file, fingerprints[file.index])
    return tuple(OutputResult(o.plan.path, o.finish(fingerprints)) for o in outputs)


def _encode(
    encoder: PieceEncoder, pieces: Iterable[Piece], options: RunOptions
) -> Iterator[Fragment]:
    """Every piece's fragment, in piece order, from the executor the run asked for."""
    if options.executor == "ray":
        from mintdim.pipelines.unit_build.ray_executor import encode_on_ray  # an optional extra

        return encode_on_ray(encoder, pieces, options.workers, options.ray_address)
    return encode_in_order(encoder, pieces, options.workers or 1)


def _piece_bytes(plan: BuildPlan, options: RunOptions, outputs: list[OutputDirectory]) -> list[int]:
    """Per output directory: the piece size asked for, else a resumed build's, else the default."""
    default = options.piece_bytes or default_piece_bytes(
        sum(os.path.getsize(file.abs_path) for file in plan.files)
    )
    staged = [output.staging.staged_job() if options.resume else None for output in outputs]
    return [
        default if options.piece_bytes or job is None else int(job["piece_bytes"]) for job in staged
    ]


def _all_pieces(
    plan: BuildPlan, piece_bytes: list[int], fingerprints: dict[int, InputFingerprint]
) -> Iterator[Piece]:
    """Every file's pieces in order; each file's fingerprint lands in ``fingerprints``."""
    # One stream across files keeps every worker busy at file boundaries.
    for file in plan.files:
        fingerprints[file.index] = yield from cut_pieces(file, piece_bytes[file.output_index])
