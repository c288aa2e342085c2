"""The fluent unit-build API: ``pipeline("unit-build").source....tokenizer....units(...).output....run()``.

Each step returns a new pipeline object (the old one is unchanged, so a base job can be reused
for variations); nothing is read, loaded or written until ``run()`` (or ``scan()``, which only reads).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

from mintdim.build.config import UnitBuildConfig
from mintdim.build.contracts import BuildResult, RunOptions, ScanResult
from mintdim.build.ray_executor import check_ray_installed
from mintdim.build.runtime import run_build, run_scan
from mintdim.build.signals import sigterm_as_interrupt
from mintdim.build.validate import validate, validate_scan
from mintdim.errors import BuildInterruptedError, MintDimError, RunOptionError
from mintdim.options import OptionCheck
from mintdim.shared.types import OVERFLOW_POLICIES

__all__ = ["UnitBuildPipeline", "before_work", "found_before_work"]

T = TypeVar("T")


class UnitBuildPipeline:
    """A declared unit-build job."""

    def __init__(self, config: UnitBuildConfig | None = None) -> None:
        self._config = config or UnitBuildConfig()

    @property
    def config(self) -> UnitBuildConfig:
        """The declarations so far, exactly as given."""
        return self._config

    def _with(self, **changes: object) -> UnitBuildPipeline:
        # Deep copies: later edits to the caller's lists must not change a declared job.
        return UnitBuildPipeline(replace(self._config, **copy.deepcopy(changes)))

    @property
    def source(self) -> _SourceStep:
        """``.source.jsonl(files=[...], fields=[[...]], templates=[...])`` (plain or compressed
        JSONL) or ``.source.parquet(...)`` with the same arguments."""
        return _SourceStep(self)

    @property
    def tokenizer(self) -> _TokenizerStep:
        """``.tokenizer.sentencepiece({"path": ...})`` or ``.tokenizer.hf_json({"path": ...})``."""
        return _TokenizerStep(self)

    def units(
        self,
        sizes: object = None,
        build_batch: object = None,
        *,
        count: object = None,
        align: object = None,
        max_size: object = None,
        cost: object = None,
        unit_cost: object = None,
        pack: object = False,
    ) -> UnitBuildPipeline:
        """Unit sizes (``[[128, 256], ...]``) and raw samples per tokenizer batch (``[4096]``).

        ``sizes="auto"`` plans the sizes from the data when the job runs: a scan counts every
        sample exactly, ``mintdim.plan_units`` picks the optimal sizes for each output directory
        (at most ``count`` of them, multiples of ``align`` (default 1), none above ``max_size``,
        ``cost="tokens"`` or ``"attention"``; or ``unit_cost=lambda`` instead of ``count`` to
        choose how many), then the build runs with them. The manifest records the plan and
        its predicted padding, which the build meets exactly.

        ``pack=True`` puts several whole samples in each row of a unit (best-fit decreasing,
        docs/packing.md): each sample still goes to the smallest unit that holds it, and its
        unit's rows are filled with whole samples back to back, PAD only at a row's end.
        """
        options = {"count": count, "align": align, "max_size": max_size, "cost": cost}
        options["unit_cost"] = unit_cost
        given = {key: value for key, value in options.items() if value is not None}
        return self._with(sizes=sizes, build_batch=build_batch, unit_plan=given or None, pack=pack)

    @property
    def output(self) -> _OutputStep:
        """``.output.dir("./out", samples_per_shard=[10000])`` or a list of directories."""
        return _OutputStep(self)

    def run(
        self,
        workers: int | None = None,
        progress: bool | None = None,
        on_overflow: str = "abort",
        executor: str = "local",
        ray_address: str | None = None,
        resume: bool = False,
        piece_bytes: int | None = None,
        resumable: bool = True,
    ) -> BuildResult:
        """Validate everything, then build; returns each output directory's path and stats.

        ``workers``: processes that parse, render, hash, encode and pad (default: every core;
        1 runs in this process), or with ``executor="ray"`` Ray actors (default: every CPU of
        the cluster). ``progress``: a bar on stderr; None shows it when stderr is a terminal.
        ``on_overflow``: what a sample longer than the largest unit does: ``"abort"`` the build
        (default), ``"skip"`` it, ``"truncate"`` it to the largest unit, or ``"extend"`` the
        units with one of its size; each such sample gets a line in overflow_index.jsonl.
        ``executor``: ``"local"`` or ``"ray"`` (the ``[ray]`` extra), which joins or starts the
        cluster at ``ray_address`` (None, ``"auto"`` or ``"ray://head:10001"``; inputs,
        tokenizer and output must be at the same paths on every node). ``resume``: continue an
        unfinished build in the output directories, reusing every intact fragment it staged.
        ``piece_bytes``: input bytes per unit of work (default: from the input's size).
        ``resumable``: True (default) stages every piece's encoded records in the output's
        ``staging/`` until the build completes (the peak disk use is about twice the output);
        False streams them straight into the output (about once the output, local executor
        only, and an interrupted build cannot resume). The output is byte-identical whatever
        the workers, executor, resume, piece size and resumable.

        Raises the named ``MintDimError`` of the first problem (see :func:`found_before_work`
        for whether it came before any data was read or written), and ``BuildInterruptedError``
        (a ``KeyboardInterrupt`` too) when Ctrl-C or SIGTERM stops the run.
        """

        def check() -> tuple:
            options = _run_options(workers, executor, ray_address, resume, piece_bytes, resumable)
            shown = _progress(progress)
            if not isinstance(on_overflow, str) or on_overflow not in OVERFLOW_POLICIES:
                raise RunOptionError(
                    option="on_overflow", value=on_overflow, rule="overflow_policy"
                )
            plan, encoders = validate(self._config, options.resume)
            return replace(plan, on_overflow=on_overflow), encoders, options, shown

        return _checked_then(check, run_build)

    def scan(self, workers: int | None = None, progress: bool | None = None) -> ScanResult:
        """Every sample's exact token count, by the build's own reader, template and tokenizer.

        Writes nothing; the units and output steps may be omitted (``units.build_batch``, when
        declared, sets the lines per batch). Costs about what a build costs minus hashing,
        padding and writing. ``result.token_counts`` feeds ``mintdim.plan_units``;
        ``result.longer_than(size)`` lists every sample a unit of ``size`` cannot hold.
        ``workers`` and ``progress`` as in :meth:`run`.
        """

        def check() -> tuple:
            count = _workers(workers)
            shown = _progress(progress)
            return (*validate_scan(self._config), count, shown)

        return _checked_then(check, run_scan)


def _checked_then(check: Callable[[], tuple], work: Callable[..., T]) -> T:
    """``work(*check(), stop)``: a MintDim error of ``check`` is marked found before any work,
    and a stop (Ctrl-C, SIGTERM) anywhere leaves as ``BuildInterruptedError`` naming the signal."""
    with sigterm_as_interrupt() as stop:
        try:
            with before_work():
                checked = check()
            return work(*checked, stop)
        except BuildInterruptedError:
            raise
        except KeyboardInterrupt:  # during validation, e.g. while a tokenizer loads
            raise stop.error() from None


_FOUND_BEFORE_WORK = "_mintdim_found_before_work"


@contextmanager
def before_work() -> Iterator[None]:
    """Mark a MintDim error raised inside as found before any work (:func:`found_before_work`):
    ``run()``'s checks, and the runner's own checks of what follows the build."""
    try:
        yield
    except MintDimError as error:
        setattr(error, _FOUND_BEFORE_WORK, True)
        raise


def found_before_work(error: BaseException) -> bool:
    """Whether ``run()`` raised ``error`` while checking the job, before any data was read or
    written: a configuration error (the runner exits 2 for it, 1 for errors during the build)."""
    return getattr(error, _FOUND_BEFORE_WORK, False)


class _SourceStep:
    def __init__(self, job: UnitBuildPipeline) -> None:
        self._job = job

    def jsonl(
        self,
        files: object = None,
        fields: object = None,
        templates: object = None,
        max_line_bytes: object = None,
    ) -> UnitBuildPipeline:
        """JSONL inputs: ``files[i]`` is read with ``fields[i]`` and rendered with ``templates[i]``.

        A file may be plain or compressed with gzip, zstandard, xz or bzip2 (recognised by its
        first bytes); line numbers are lines of the decompressed stream.
        ``max_line_bytes``: the longest line MintDim reads (default 64 MiB, far above any real
        sample): a line still without its newline past it is ``LineTooLongError``, not a
        MemoryError.
        """
        return self._job._with(
            source_kind="jsonl",
            files=files,
            fields=fields,
            templates=templates,
            max_line_bytes=max_line_bytes,
        )

    def parquet(
        self,
        files: object = None,
        fields: object = None,
        templates: object = None,
        max_line_bytes: object = None,
    ) -> UnitBuildPipeline:
        """Parquet inputs (the ``[parquet]`` extra): ``files[i]`` is read with ``fields[i]`` (its
        columns) and rendered with ``templates[i]``, by the rules of ``jsonl``; each sample's
        ``source_line`` is its 1-based row. Row groups are read one at a time.
        ``max_line_bytes``: the most bytes a row's declared values may hold together (default
        64 MiB): a larger row is ``LineTooLongError`` naming its row.
        """
        return self._job._with(
            source_kind="parquet",
            files=files,
            fields=fields,
            templates=templates,
            max_line_bytes=max_line_bytes,
        )


class _TokenizerStep:
    def __init__(self, job: UnitBuildPipeline) -> None:
        self._job = job

    def sentencepiece(self, config: object = None) -> UnitBuildPipeline:
        """A SentencePiece ``.model``: one ``{"path": ...}`` shared, or a list mapped by file."""
        return self._job._with(tokenizer_kind="sentencepiece", tokenizer=config)

    def hf_json(self, config: object = None) -> UnitBuildPipeline:
        """A Hugging Face ``tokenizer.json``: one ``{"path": ...}`` shared, or a list mapped by file."""
        return self._job._with(tokenizer_kind="hf_json", tokenizer=config)


class _OutputStep:
    def __init__(self, job: UnitBuildPipeline) -> None:
        self._job = job

    def dir(self, path: object = None, samples_per_shard: object = None) -> UnitBuildPipeline:
        """Output directory (or one per file) and records per shard (one shared or one per file)."""
        return self._job._with(output_dir=path, samples_per_shard=samples_per_shard)


_CHECK = OptionCheck(
    lambda option, value, rule: RunOptionError(option=option, value=value, rule=rule)
)


def _progress(progress: object) -> bool | None:
    return _CHECK.flag("progress", progress, optional=True)


def _run_options(
    workers: object,
    executor: object,
    address: object,
    resume: object,
    piece_bytes: object,
    resumable: object,
) -> RunOptions:
    if not isinstance(executor, str) or executor not in ("local", "ray"):
        raise RunOptionError(option="executor", value=executor, rule="executor")
    if address is not None and not (isinstance(address, str) and address):
        raise RunOptionError(option="ray_address", value=address, rule="address")
    if address is not None and executor != "ray":
        raise RunOptionError(option="ray_address", value=address, rule="ray_only")
    resume = _CHECK.flag("resume", resume)
    piece_bytes = _CHECK.integer("piece_bytes", piece_bytes, "positive_int", optional=True)
    resumable = _CHECK.flag("resumable", resumable)
    if not resumable and executor == "ray":
        raise RunOptionError(option="resumable", value=resumable, rule="ray_stages")
    if not resumable and resume:
        raise RunOptionError(option="resumable", value=resumable, rule="resume_stages")
    if executor == "ray":
        check_ray_installed()  # before any work, with the way to get it
        count = None if workers is None else _workers(workers)  # None: the cluster's CPUs
    else:
        count = _workers(workers)
    return RunOptions(count, executor, address, resume, piece_bytes, resumable)


def _workers(workers: object) -> int:
    if workers is None:
        # The cores this process may run on (a container or taskset may allow fewer than exist).
        return (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
    return _CHECK.integer("workers", workers, "positive_int")
