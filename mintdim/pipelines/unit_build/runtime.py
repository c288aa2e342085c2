"""The unit-build data flow, top to bottom.

    source/jsonl.read_raw_batches   stream each file as raw line batches (main process)
    workers.encode_in_order         on N processes, in input order, each batch goes through
      batch.BatchEncoder              source/jsonl.parse_lines -> Template.render -> sha256
                                      -> tokenizer encode_batch -> units/planner (assign, pad)
    output/dir.OutputDirectory      units/shard_writer shards, sample/unk indexes, digests, stats
    OutputDirectory.finish          duplicate_index, EMPTY_UNIT.md, stats, histogram, manifest last

Validation (``validate.py``) has already run: nothing here re-checks configuration.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import closing

from tqdm import tqdm

from mintdim.pipelines.unit_build.batch import BatchEncoder
from mintdim.pipelines.unit_build.contracts import (
    BuildPlan,
    BuildResult,
    OutputResult,
    TokenizerSpec,
)
from mintdim.pipelines.unit_build.output.dir import OutputDirectory
from mintdim.pipelines.unit_build.source.jsonl import (
    InputFingerprint,
    RawBatch,
    check_unchanged,
    read_raw_batches,
)
from mintdim.pipelines.unit_build.tokenizer import Encoder
from mintdim.pipelines.unit_build.workers import encode_in_order
from mintdim.shared.errors import BuildInterruptedError
from mintdim.shared.signals import sigterm_as_interrupt, stop_signals_ignored

__all__ = ["run_build"]


def run_build(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    workers: int,
    progress: bool | None,
) -> BuildResult:
    """Build every output directory of a validated plan."""
    bar = _Progress() if (sys.stderr.isatty() if progress is None else progress) else None
    log = bar.write if bar is not None else _stderr
    outputs = [
        OutputDirectory(out, [plan.files[i] for i in out.file_indexes], log) for out in plan.outputs
    ]
    with sigterm_as_interrupt() as stop:
        try:
            return BuildResult(outputs=_build(plan, encoders, workers, outputs, bar))
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt):
                error = BuildInterruptedError(signal_name=stop.name)
            with stop_signals_ignored():
                for output in outputs:
                    output.fail(error)
            raise
        finally:
            if bar is not None:
                bar.close()


def _build(
    plan: BuildPlan,
    encoders: dict[TokenizerSpec, Encoder],
    workers: int,
    outputs: list[OutputDirectory],
    bar: _Progress | None,
) -> tuple[OutputResult, ...]:
    for output in outputs:
        output.create()
    encoder = BatchEncoder(plan, encoders)
    fingerprints: dict[int, InputFingerprint] = {}
    # closing(): on any error the workers stop now, not when the traceback is collected.
    with closing(encode_in_order(encoder, _all_batches(plan, fingerprints), workers)) as encoded:
        for batch in encoded:
            outputs[plan.files[batch.file_index].output_index].write(batch)
            if bar is not None:
                bar.advance(batch.sample_count, int(batch.token_counts.sum()))
            if batch.error is not None:
                raise batch.error
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


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Bar(tqdm):
    # No monitor thread: worker processes are forked, and a fork should not copy a live thread.
    monitor_interval = 0


class _Progress:
    """A stderr bar of samples with the whole build's tokens/s."""

    def __init__(self) -> None:
        self._bar = _Bar(unit=" samples", file=sys.stderr, dynamic_ncols=True, desc="unit-build")
        self._tokens = 0
        self._started = time.perf_counter()

    def advance(self, samples: int, tokens: int) -> None:
        self._tokens += tokens
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        self._bar.set_postfix_str(f"{self._tokens / elapsed:,.0f} tokens/s", refresh=False)
        self._bar.update(samples)

    def write(self, line: str) -> None:
        self._bar.write(line, file=sys.stderr)

    def close(self) -> None:
        self._bar.close()
