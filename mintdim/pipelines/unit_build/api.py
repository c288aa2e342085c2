"""The fluent unit-build API: ``pipeline("unit-build").source....tokenizer....units(...).output....run()``.

Each step returns a new pipeline object (the old one is unchanged, so a base job can be reused
for variations); nothing is read, loaded or written until ``run()``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from mintdim.pipelines.unit_build.config import UnitBuildConfig
from mintdim.pipelines.unit_build.contracts import BuildResult, RunOptions
from mintdim.pipelines.unit_build.ray_executor import check_ray_installed
from mintdim.pipelines.unit_build.rules import is_positive_int
from mintdim.pipelines.unit_build.runtime import run_build
from mintdim.pipelines.unit_build.validate import validate
from mintdim.shared.errors import BuildInterruptedError, MintDimError, RunOptionError
from mintdim.shared.signals import sigterm_as_interrupt

__all__ = ["UnitBuildPipeline", "found_before_work"]


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
        """``.source.jsonl(files=[...], fields=[[...]], templates=[...])``."""
        return _SourceStep(self)

    @property
    def tokenizer(self) -> _TokenizerStep:
        """``.tokenizer.sentencepiece({"path": ...})`` or ``.tokenizer.hf_json({"path": ...})``."""
        return _TokenizerStep(self)

    def units(self, sizes: object = None, build_batch: object = None) -> UnitBuildPipeline:
        """Unit sizes (``[[128, 256], ...]``) and raw samples per tokenizer batch (``[4096]``)."""
        return self._with(sizes=sizes, build_batch=build_batch)

    @property
    def output(self) -> _OutputStep:
        """``.output.dir("./out", samples_per_shard=[10000])`` or a list of directories."""
        return _OutputStep(self)

    def run(
        self,
        workers: int | None = None,
        progress: bool | None = None,
        *,
        executor: str = "local",
        ray_address: str | None = None,
        resume: bool = False,
        piece_bytes: int | None = None,
    ) -> BuildResult:
        """Validate everything, then build; returns each output directory's path and stats.

        ``workers``: processes that parse, render, hash, encode and pad (default: every core;
        1 runs in this process), or with ``executor="ray"`` Ray actors (default: every CPU of
        the cluster). ``executor``: ``"local"`` or ``"ray"`` (the ``[ray]`` extra), which joins
        or starts the cluster at ``ray_address`` (None, ``"auto"`` or ``"ray://head:10001"``;
        inputs, tokenizer and output must be at the same paths on every node). ``resume``:
        continue an unfinished build in the output directories, reusing every intact fragment
        it staged. ``piece_bytes``: input bytes per unit of work (default: from the input's
        size). ``progress``: a bar on stderr; None shows it when stderr is a terminal. The
        output is byte-identical whatever these are.

        Raises the named ``MintDimError`` of the first problem (see :func:`found_before_work`
        for whether it came before any data was read or written), and ``BuildInterruptedError``
        (a ``KeyboardInterrupt`` too) when Ctrl-C or SIGTERM stops the run.
        """
        with sigterm_as_interrupt() as stop:
            try:
                with _before_work():
                    options = _run_options(workers, executor, ray_address, resume, piece_bytes)
                    if progress is not None and not isinstance(progress, bool):
                        raise RunOptionError(option="progress", value=progress, rule="bool")
                    plan, encoders = validate(self._config, options.resume)
                return run_build(plan, encoders, options, progress, stop)
            except BuildInterruptedError:
                raise
            except KeyboardInterrupt:  # during validation, e.g. while a tokenizer loads
                raise stop.error() from None


_FOUND_BEFORE_WORK = "_mintdim_found_before_work"


@contextmanager
def _before_work() -> Iterator[None]:
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
        self, files: object = None, fields: object = None, templates: object = None
    ) -> UnitBuildPipeline:
        """JSONL inputs: ``files[i]`` is read with ``fields[i]`` and rendered with ``templates[i]``."""
        return self._job._with(files=files, fields=fields, templates=templates)


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


def _run_options(
    workers: object, executor: object, address: object, resume: object, piece_bytes: object
) -> RunOptions:
    if executor not in ("local", "ray"):
        raise RunOptionError(option="executor", value=executor, rule="executor")
    if address is not None and not (isinstance(address, str) and address):
        raise RunOptionError(option="ray_address", value=address, rule="address")
    if address is not None and executor != "ray":
        raise RunOptionError(option="ray_address", value=address, rule="ray_only")
    if not isinstance(resume, bool):
        raise RunOptionError(option="resume", value=resume, rule="bool")
    if piece_bytes is not None and not is_positive_int(piece_bytes):
        raise RunOptionError(option="piece_bytes", value=piece_bytes, rule="positive_int")
    if executor == "ray":
        check_ray_installed()  # before any work, with the way to get it
        count = None if workers is None else _workers(workers)  # None: the cluster's CPUs
    else:
        count = _workers(workers)
    return RunOptions(count, executor, address, resume, piece_bytes)


def _workers(workers: object) -> int:
    if workers is None:
        # The cores this process may run on (a container or taskset may allow fewer than exist).
        return (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
    if not is_positive_int(workers):
        raise RunOptionError(option="workers", value=workers, rule="positive_int")
    return workers
