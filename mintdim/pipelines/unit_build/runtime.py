"""The unit-build data flow, top to bottom.

    source/jsonl.read_raw_batches   stream each file as raw line batches (main process)
    workers.encode_in_order         on N processes, in input order, each batch goes through
      batch.BatchEncoder              source/jsonl.parse_lines -> Template.render -> sha256
                                      -> tokenizer encode_batch -> units/planner (assign, pad)
    output/dir.OutputDirectory      units/shard_writer shards, sample/unk indexes, digests, stats
    OutputDirectory.finish          duplicate_index, EMPTY_UNIT.md, stats, histogram, manifest last
    progress.Progress               a stderr bar over input bytes (a terminal, or when asked)

Validation (``validate.py``) has already run: nothing here re-checks configuration.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import closing

from mintdim.pipelines.unit_build.batch import BatchEncoder
from mintdim.pipelines.unit_build.contracts import (
    BuildPlan,
    BuildResult,
    OutputResult,
    TokenizerSpec,
)
from mintdim.pipelines.unit_build.output.dir import OutputDirectory
from mintdim.pipelines.unit_build.progress import Progress
from mintdim.pipelines.unit_build.source.jsonl import (
    InputFingerprint,
    RawBatch,
    check_unchanged,
    read_raw_batches,
)
from mintdim.pipelines.unit_build.tokenizer import Encoder
from mintdim.pipelines.unit_build.workers import encode_in_order
from mintdim.shared.errors import MintDimError
from mintdim.shared.signals import StopSignal, stop_signals_ignored

__all__ = ["run_build"]


def run_build(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    workers: int,
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
        return BuildResult(outputs=_build(plan, encoders, workers, outputs, bar))
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
    workers: int,
    outputs: list[OutputDirectory],
    bar: Progress,
) -> tuple[OutputResult, ...]:
    for output in outputs:
        output.create()
    encoder = BatchEncoder(plan, encoders)
    fingerprints: dict[int, InputFingerprint] = {}
    # closing(): on any error the workers stop now, not when the traceback is collected.
    with closing(encode_in_order(encoder, _all_batches(plan, fingerprints), workers)) as encoded:
        for batch in encoded:
            outputs[plan.files[batch.file_index].output_index].write(batch)
            bar.advance(batch.input_bytes, batch.sample_count, int(batch.token_counts.sum()))
            if batch.error is not None:
                raise batch.error
    bar.complete()
    # A file changed under the build may have given samples of two versions (or of neither):
    # no manifest may vouch for that.
    for file in plan.files:
        check_unchanged(file, fingerprints[file.index])
    return tuple(OutputResult(o.plan.path, o.finish(fingerprints)) for o in outputs)


def _all_batches(plan: BuildPlan, fingerprints: dict[int, InputFingerprint]) -> Iterator[RawBatch]:
    """Every file's batches in order; each file's fingerprint lands in ``fingerprints``."""
    # One stream across files keeps every worker busy at file boundaries.
    for file in plan.files:
        fingerprints[file.index] = yield from read_raw_batches(file)
