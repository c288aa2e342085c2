"""Config -> fluent API: the only place that maps the runner's config onto ``pipeline(...)`` calls.

The composed config is turned into plain Python values (lists stay lists, exactly as written)
and handed to the public fluent API, step by step::

    pipeline("unit-build")
      .source.<source.kind>(files=source.files, fields=source.fields, templates=source.templates,
                            max_line_bytes=source.max_line_bytes)
      .tokenizer.<tokenizer.type>([{"path": p, <tokenizer options set>} for p in tokenizer.path])
      .units(sizes=units.sizes, build_batch=units.build_batch, count=units.count, ...)
      .output.dir(output.dir, samples_per_shard=output.samples_per_shard)
      .run(workers=workers, progress=progress, on_overflow=on_overflow, executor=executor.name,
           ray_address=executor.address, resume=resume, piece_bytes=piece_bytes,
           resumable=resumable)

and, with ``decontaminate=ngrams``, for each output directory (:func:`decontaminate_arguments`)::

    mintdim.decontaminate(build, out, against=decontaminate.against, ngram=..., match=...)

and, with ``split=threeway``, for each output directory (its clean build when decontaminated;
:func:`split_arguments`)::

    mintdim.group(build, groups, keys=split.keys, alias_rules=split.alias_rules, ...)
    mintdim.split(build, groups, out, seed=split.seed, ratios=split.ratios, ...)

A value left as ``???`` in the config is passed as ``None``, so the core's
``PipelineValidationError`` lists everything that is missing, in the current language. All
validation of values (list lengths, sizes, paths ...) is the core's: there is no second code
path into the build.
"""

from __future__ import annotations

from dataclasses import asdict
from enum import Enum
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from mintdim import ConfigValueError, MintDimError, pipeline
from mintdim.build.api import UnitBuildPipeline
from mintdim.build.contracts import ParityGuard
from mintdim.build.validate import SCAN_BUILD_BATCH
from mintdim.runner.confdir import config_dir
from mintdim.runner.demo import register_resolvers
from mintdim.runner.schema import field_help, register_configs

__all__ = [
    "BUILD_KEYS",
    "TOKENIZER_OPTIONS",
    "fluent_arguments",
    "job_from_arguments",
    "job_from_config",
    "run_options",
    "scan_job",
    "decontaminate_arguments",
    "split_arguments",
]

TOKENIZER_OPTIONS = ("engine", "encode", "append_eos", "pad_fallback", "unk_fallback", "parity")
"""Tokenizer keys shared by every path: each is added to every ``{"path": ...}`` dict when set."""

_PARITY_DEFAULTS = asdict(ParityGuard())
"""The runner's ``tokenizer.parity`` as declared by default: left out, as the API's own."""

BUILD_KEYS = {
    "source": ("files", "fields", "templates", "max_line_bytes", "kind"),
    "tokenizer": ("type", "path", *TOKENIZER_OPTIONS),
    "units": ("sizes", "build_batch", "count", "align", "max_size", "cost", "unit_cost", "pack"),
    "output": ("dir", "samples_per_shard"),
}
"""Every config key that reaches the fluent API, by group."""

GROUP_KEYS = (
    "keys",
    "alias_rules",
    "near_duplicates",
    "joins",
    "min_chars",
    "min_distinct",
    "coverage",
    "sketch_size",
    "band_rows",
    "min_shared",
    "max_postings",
    "max_candidates",
)
"""The ``split`` group's keys that ``mintdim.group`` takes (the others go to ``mintdim.split``)."""
SPLIT_KEYS = ("seed", "ratios", "stratify", "ratios_by_stratum", "window")
DECONTAMINATE_KEYS = ("against", "ngram", "match")


def _value(cfg: DictConfig, group: str, key: str) -> Any:
    """One leaf as plain Python: resolved, enums as their names, ``???`` as None."""
    node = cfg.get(group)
    if node is None or OmegaConf.is_missing(cfg, group) or OmegaConf.is_missing(node, key):
        return None
    try:
        value = OmegaConf.select(node, key, throw_on_missing=True)
        if OmegaConf.is_config(value):
            return OmegaConf.to_container(value, resolve=True, enum_to_str=True)
    except OmegaConfBaseException as err:
        raise _config_error(f"{group}.{key}", err) from err
    return value.name if isinstance(value, Enum) else value


def _config_error(key: str, err: BaseException) -> MintDimError:
    # A resolver that raised a MintDim error (an unknown ${mintdim_demo:...} name) is shown as
    # itself; anything else becomes a ConfigValueError naming the key.
    # OmegaConf drops __cause__ (unless OC_CAUSE=1) but the implicit __context__ remains.
    cause: BaseException | None = err
    seen = 0
    while cause is not None and seen < 10:
        if isinstance(cause, MintDimError):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    help_ = field_help(key) or {}
    detail = str(err).splitlines()[0] if str(err) else type(err).__name__
    return ConfigValueError(key=key, detail=detail, expected=help_.get("example", ""))


def fluent_arguments(
    cfg: DictConfig, groups: tuple[str, ...] = tuple(BUILD_KEYS)
) -> dict[str, Any]:
    """The arguments of each fluent step, as plain Python, exactly as the config gives them.

    Only the keys of ``groups`` are read (a scan needs no output); the others are None.
    """
    v = {
        (g, k): _value(cfg, g, k) if g in groups else None
        for g, keys in BUILD_KEYS.items()
        for k in keys
    }
    paths = v["tokenizer", "path"]
    # Options left at their defaults stay out: the API's own defaults apply.
    options = {
        key: v["tokenizer", key]
        for key in TOKENIZER_OPTIONS
        if v["tokenizer", key] not in (None, False, "reference", _PARITY_DEFAULTS)
    }
    tokenizer = [{"path": p, **options} for p in paths] if isinstance(paths, list) else paths
    return {
        "source": {key: v["source", key] for key in BUILD_KEYS["source"]},
        "tokenizer": {"type": v["tokenizer", "type"], "config": tokenizer},
        "units": {key: v["units", key] for key in BUILD_KEYS["units"]},
        "output.dir": {
            "path": v["output", "dir"],
            "samples_per_shard": v["output", "samples_per_shard"],
        },
    }


def job_from_config(cfg: DictConfig) -> UnitBuildPipeline:
    """The declared (not yet run) fluent job for a composed config."""
    return job_from_arguments(fluent_arguments(cfg))


def job_from_arguments(args: dict[str, Any]) -> UnitBuildPipeline:
    """The fluent job for the output of :func:`fluent_arguments`."""
    job = _source_step(args["source"])
    kind = args["tokenizer"]["type"]
    if kind is not None:
        # kind is one of the schema's TokenizerType names: "sentencepiece" or "hf_json".
        job = getattr(job.tokenizer, kind)(args["tokenizer"]["config"])
    job = job.units(**args["units"])
    return job.output.dir(**args["output.dir"])


def _source_step(source: dict[str, Any]) -> UnitBuildPipeline:
    """``pipeline("unit-build").source.<kind>(...)``."""
    arguments = {key: value for key, value in source.items() if key != "kind"}
    step = pipeline("unit-build").source
    return (step.parquet if source["kind"] == "parquet" else step.jsonl)(**arguments)


def scan_job(overrides: list[str]) -> tuple[UnitBuildPipeline, int]:
    """The job of ``python -m mintdim.run <overrides>`` as far as a scan reads it, and the
    build_batch its units declare (the first one)."""
    register_resolvers()
    register_configs()
    with initialize_config_dir(version_base="1.3", config_dir=config_dir(), job_name="scan"):
        cfg = compose(config_name="config", overrides=overrides)
    arguments = fluent_arguments(cfg, groups=("source", "tokenizer", "units"))
    batches = arguments["units"]["build_batch"] or [SCAN_BUILD_BATCH]
    return job_from_arguments(arguments), int(batches[0])


def split_arguments(cfg: DictConfig) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The keyword arguments of ``mintdim.group`` and ``mintdim.split`` for ``split=threeway``
    (plain Python, exactly as the config gives them); None for ``split=none``."""
    if _value(cfg, "split", "name") in (None, "none"):
        return None
    grouping = {key: _value(cfg, "split", key) for key in GROUP_KEYS}
    splitting = {key: _value(cfg, "split", key) for key in SPLIT_KEYS}
    return grouping, splitting


def decontaminate_arguments(cfg: DictConfig) -> dict[str, Any] | None:
    """The keyword arguments of ``mintdim.decontaminate`` for ``decontaminate=ngrams`` (plain
    Python, exactly as the config gives them); None for ``decontaminate=none``."""
    if _value(cfg, "decontaminate", "name") in (None, "none"):
        return None
    return {key: _value(cfg, "decontaminate", key) for key in DECONTAMINATE_KEYS}


def run_options(cfg: DictConfig) -> dict[str, Any]:
    """The keyword arguments of ``job.run()``: ``workers``, ``progress``, ``on_overflow``,
    ``executor`` (with its ``address``), ``resume``, ``piece_bytes`` and ``resumable``."""
    policy = cfg.get("on_overflow")
    executor = cfg.get("executor") or {}
    name = executor.get("name", "local")
    return {
        "workers": cfg.get("workers"),
        "progress": cfg.get("progress"),
        "on_overflow": policy.name if isinstance(policy, Enum) else policy or "abort",
        "executor": name.value if isinstance(name, Enum) else name,
        "ray_address": executor.get("address"),
        "resume": cfg.get("resume", False),
        "piece_bytes": cfg.get("piece_bytes"),
        "resumable": cfg.get("resumable", True),
    }
