"""The Hydra app behind ``python -m mintdim.run`` and the ``mintdim-run`` console script.

``main()`` runs Hydra with MintDim's ``conf/``; each job calls :func:`run_job`, which checks the
config against the schema, translates it into the fluent API (``mintdim.runner.translate``),
runs the build and returns its padding summary. Errors are reported compactly: a MintDim error
prints its message (in the language of ``lang=`` / ``MINTDIM_LANG``), a Hydra config error prints
Hydra's message plus a line saying what is valid, and neither prints a traceback unless
``HYDRA_FULL_ERROR=1`` or ``MINTDIM_FULL_ERROR=1`` is set.

Exit codes: 0 success; 2 an error found before any work (Hydra's composition errors, the
runner's own config errors, and every error ``run()`` raises while checking the job); 1 an
error during the build, or any failed job of a sweep that ran; 130 interrupted (Ctrl-C or
SIGTERM), which also ends a sweep.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import CompactHydraException, MissingConfigException, OverrideParseException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from mintdim import (
    BuildInterruptedError,
    ConfigValueError,
    DemoFileError,
    MintDimError,
    SweepOutputError,
    UnknownConfigKeyError,
    set_language,
)
from mintdim.build.api import before_work, found_before_work
from mintdim.decontaminate import decontaminate as decontaminate_build
from mintdim.decontaminate.settings import decontaminate_settings
from mintdim.decontaminate.verification import CLEAN
from mintdim.runner import schema as schema_module
from mintdim.runner.callbacks import finish_pending_sweep
from mintdim.runner.confdir import config_dir
from mintdim.runner.demo import register_resolvers
from mintdim.runner.pictures import plan_pictures
from mintdim.runner.schema import MintDimConfig, field_help, node_schema, register_configs
from mintdim.runner.schema import valid_keys as schema_keys
from mintdim.runner.summary import build_summary, show_built
from mintdim.runner.translate import (
    decontaminate_arguments,
    fluent_arguments,
    job_from_arguments,
    run_options,
    split_arguments,
)
from mintdim.shared.lang import Bilingual, get_language
from mintdim.shared.log import get_logger, show
from mintdim.split import group as group_build
from mintdim.split import split as split_build
from mintdim.split.group import group_settings
from mintdim.split.near import NearSettings
from mintdim.split.threeway import split_settings

__all__ = ["check_known_keys", "main", "run_job"]

_log = get_logger("runner")

RESOLVED_CONFIG = "resolved_config.yaml"
"""Written into each Hydra job directory: the config with every interpolation resolved."""

_CONFIG_ERRORS: tuple[type[MintDimError], ...] = (
    UnknownConfigKeyError,
    ConfigValueError,
    DemoFileError,
)
"""The runner's own errors: configuration mistakes found before any work, so they exit with 2
(as does every error ``run()`` finds before any work, see ``found_before_work``)."""

# Both must happen before Hydra composes conf/ (at import, so joblib/Ray workers get them too).
register_resolvers()
register_configs()


# ---------------------------------------------------------------------------
# One job
# ---------------------------------------------------------------------------


def check_known_keys(cfg: DictConfig) -> None:
    """Reject keys the schema does not define (``+units.foo=1`` gets past Hydra's own check)."""
    unknown: dict[str, list[str]] = {}

    def walk(node: DictConfig, schema: Any, prefix: str) -> None:
        known = schema_keys(schema)
        for key in node:
            dotted = f"{prefix}{key}"
            if key not in known:
                unknown[dotted] = known
                continue
            child_schema = node_schema(dotted)
            if schema_keys(child_schema) and OmegaConf.is_dict(node._get_node(key)):
                walk(node[key], child_schema, f"{dotted}.")

    with _no_struct(cfg):
        top = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    walk(top, MintDimConfig, "")
    if unknown:
        raise UnknownConfigKeyError(unknown=unknown)


class _no_struct:
    def __init__(self, cfg: DictConfig) -> None:
        self.cfg = cfg

    def __enter__(self) -> None:
        self.flag = OmegaConf.is_struct(self.cfg)
        OmegaConf.set_struct(self.cfg, False)

    def __exit__(self, *exc: object) -> None:
        OmegaConf.set_struct(self.cfg, self.flag)


def _claim(directories: list[str]) -> None:
    """Create each output directory anew; an existing one fails the job (sweeps only)."""
    for directory in dict.fromkeys(directories):
        path = Path(directory)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir()
        except FileExistsError:
            raise SweepOutputError(directory=directory) from None


def run_job(cfg: DictConfig) -> dict[str, Any]:
    """Check, translate and run one composed config; return its padding summary."""
    set_language(cfg.lang.value if cfg.get("lang") is not None else None)
    check_known_keys(cfg)
    arguments = fluent_arguments(cfg)
    hydra_cfg = HydraConfig.get() if HydraConfig.initialized() else None
    if hydra_cfg is not None:
        job_dir = Path(hydra_cfg.runtime.output_dir)
        job_dir.mkdir(parents=True, exist_ok=True)
        (job_dir / RESOLVED_CONFIG).write_text(OmegaConf.to_yaml(cfg, resolve=True))
        if hydra_cfg.mode == RunMode.MULTIRUN:
            paths = arguments["output.dir"]["path"]
            _claim([paths] if isinstance(paths, str) else list(paths or []))
    cleaning = decontaminate_arguments(cfg)
    splitting = split_arguments(cfg)
    with before_work():  # a bad setting of what follows the build fails before it, not after
        if cleaning is not None:
            decontaminate_settings(**cleaning)
        if splitting is not None:
            _check_split(*splitting)
    result = job_from_arguments(arguments).run(**run_options(cfg))
    summary = build_summary(result)
    if hydra_cfg is not None:
        summary["pictures"] = plan_pictures(result, job_dir)
    show_built(summary)
    builds = list(dict.fromkeys(out.path for out in result.outputs))
    # Into the job directory, or beside each build when no Hydra job runs.
    homes = [job_dir if hydra_cfg is not None else Path(build).parent for build in builds]
    if cleaning is not None:  # decontaminate first: the clean build is what gets split
        summary["decontaminations"] = _decontaminate_outputs(builds, homes, cleaning)
        builds = [done["clean"] for done in summary["decontaminations"]]
    if splitting is not None:
        summary["splits"] = _split_outputs(builds, homes, splitting)
    return summary


def _check_split(grouping: dict[str, Any], options: dict[str, Any]) -> None:
    near = {key: grouping[key] for key in NearSettings.__slots__}
    group_settings(grouping["keys"], grouping["alias_rules"], NearSettings(**near), 1)
    split_settings(**options, workers=1)


_SPLIT_DONE = Bilingual(
    en="split {build} -> {split} (groups: {groups}): train {train:,}, validation {validation:,}, "
    "test {test:,} samples; verified",
    vi="đã chia {build} -> {split} (nhóm: {groups}): train {train:,}, validation {validation:,}, "
    "test {test:,} mẫu; đã kiểm tra",
)


_DECONTAMINATED = Bilingual(
    en="decontaminate {build} -> {out}: {removed:,} samples removed, {items:,} benchmark items "
    "contaminated; verified",
    vi="đã khử nhiễm {build} -> {out}: loại {removed:,} mẫu, {items:,} mục benchmark bị nhiễm; "
    "đã kiểm tra",
)


def _decontaminate_outputs(
    builds: list[str], homes: list[Path], options: dict[str, Any]
) -> list[dict[str, Any]]:
    """Decontaminate each built directory into its home: ``decontaminated``
    (``decontaminated-<i>`` for the i-th of several outputs)."""
    done = []
    for number, (build, home) in enumerate(zip(builds, homes, strict=True)):
        out = home / ("decontaminated" if len(builds) == 1 else f"decontaminated-{number}")
        made = decontaminate_build(build, out, **options)
        items = sum(len(found) for found in made.contaminated_items.values())
        removed = len(made.samples_removed)
        show(_log, _DECONTAMINATED, build=build, out=out, removed=removed, items=items)
        done.append(
            {
                "build": build,
                "decontaminated": str(out),
                "clean": str(out / CLEAN),
                "removed": removed,
                "items": items,
            }
        )
    return done


def _split_outputs(
    builds: list[str], homes: list[Path], splitting: tuple[dict[str, Any], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Group and split each given build into its home: ``groups`` and ``split``
    (``groups-<i>``, ``split-<i>`` for the i-th of several outputs)."""
    grouping, options = splitting
    done = []
    for number, (build, home) in enumerate(zip(builds, homes, strict=True)):
        suffix = "" if len(builds) == 1 else f"-{number}"
        groups, out = home / f"groups{suffix}", home / f"split{suffix}"
        group_build(build, groups, **grouping)
        made = split_build(build, groups, out, **options)
        show(_log, _SPLIT_DONE, build=build, split=out, groups=groups, **made.samples)
        done.append({"build": build, "groups": str(groups), "split": str(out), **made.samples})
    return done


@hydra.main(version_base="1.3", config_path=config_dir(), config_name="config")
def hydra_app(cfg: DictConfig) -> dict[str, Any]:
    """The Hydra task: one build per job."""
    try:
        return run_job(cfg)
    except BuildInterruptedError as stop:
        # Hydra records an Exception as a failed job and goes on with the next job of a sweep;
        # a stop must end the whole launch, so it leaves as a bare KeyboardInterrupt.
        raise KeyboardInterrupt from stop


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------


def _argv_language() -> str | None:
    """``lang=xx`` from the command line (the last one), if it is a single valid value."""
    chosen = None
    for arg in sys.argv[1:]:
        if arg.startswith("lang=") and arg[5:] in ("en", "vi"):
            chosen = arg[5:]
    return chosen


def _lang() -> str:
    return get_language()


_HINTS = {
    "keys": Bilingual("Valid keys in {node}: {keys}", "Các key hợp lệ trong {node}: {keys}"),
    "field": Bilingual("{key}: {help}. Example: {example}", "{key}: {help}. Ví dụ: {example}"),
    "group": Bilingual(
        "Valid options are listed above; add your own with --config-dir <dir> "
        "(e.g. <dir>/{group}/mine.yaml, then {group}=mine).",
        "Các lựa chọn hợp lệ được liệt kê ở trên; thêm lựa chọn riêng bằng --config-dir <dir> "
        "(ví dụ <dir>/{group}/mine.yaml, rồi {group}=mine).",
    ),
    "syntax": Bilingual(
        "Overrides are key=value: e.g. units=small units.sizes=[[128,256]] "
        "source.files=[./data/a.jsonl] workers=1 (see --help).",
        "Override có dạng key=value: ví dụ units=small units.sizes=[[128,256]] "
        "source.files=[./data/a.jsonl] workers=1 (xem --help).",
    ),
}


_TOP_LEVEL = Bilingual("the top level", "cấp ngoài cùng")


def _hint(kind: str, lang: str, **values: object) -> str:
    return "MintDim: " + _HINTS[kind].render(lang, **values)


def hint_lines(error: BaseException, lang: str) -> list[str]:
    """What is valid, for a Hydra composition error: keys, a field's type, or the syntax."""
    if isinstance(error, OverrideParseException):
        return [_hint("syntax", lang)]
    if isinstance(error, MissingConfigException):
        group = (error.missing_cfg_file or "").split("/", 1)[0] or "<group>"
        return [_hint("group", lang, group=group)]
    cause = error.__cause__ if isinstance(error.__cause__, OmegaConfBaseException) else error
    message = str(cause)
    full_key = str(getattr(cause, "full_key", "") or "")
    object_type = getattr(cause, "object_type", None)
    # An error inside a YAML file ("In 'source/mine': ConfigKeyError raised while composing
    # config: ...") carries the facts only in its text.
    if not full_key and (found := re.search(r"full_key: (\S+)", message)):
        full_key = found.group(1)
    if object_type is None and (found := re.search(r"object_type=(\w+)", message)):
        object_type = getattr(schema_module, found.group(1), None)
    unknown_key = re.search(r"Key '[^']*' not in '\w+'", message) is not None
    lines = []
    help_ = field_help(full_key) if full_key else None
    if help_ is not None and not unknown_key:
        lines.append(
            _hint(
                "field",
                lang,
                key=full_key.split("[", 1)[0],
                help=help_[lang],
                example=help_["example"],
            )
        )
    elif object_type is not None and schema_keys(object_type):
        parent = full_key.rpartition(".")[0] if full_key else ""
        node = parent or _TOP_LEVEL
        lines.append(_hint("keys", lang, node=node, keys=", ".join(schema_keys(object_type))))
    if not lines and isinstance(error, CompactHydraException):
        lines.append(_hint("syntax", lang))
    return lines


def _report(error: BaseException, swept: bool) -> int:
    """Print a compact report of ``error``; return the exit code (``swept``: sweep jobs ran)."""
    lang = _lang()
    if isinstance(error, MintDimError):
        print(error.message(lang), file=sys.stderr)
        early = isinstance(error, _CONFIG_ERRORS) or found_before_work(error)
        return 2 if early and not swept else 1
    if isinstance(error, CompactHydraException):
        print(str(error), file=sys.stderr)
        if isinstance(error.__cause__, OmegaConfBaseException):
            print(str(error.__cause__), file=sys.stderr)
        for line in hint_lines(error, lang):
            print(line, file=sys.stderr)
        return 2
    if isinstance(error, OmegaConfBaseException):
        print(str(error), file=sys.stderr)
        return 2
    traceback.print_exception(error)
    return 1


_INTERRUPTED = Bilingual(en="Interrupted.", vi="Đã dừng.")


def main() -> None:
    """Run the app; report errors without a traceback (HYDRA_FULL_ERROR=1 shows it)."""
    full_error = "1" in (os.environ.get("HYDRA_FULL_ERROR"), os.environ.get("MINTDIM_FULL_ERROR"))
    argv_lang = _argv_language()
    if argv_lang is not None:
        set_language(argv_lang)
    # With HYDRA_FULL_ERROR=1 Hydra re-raises instead of printing and exiting, so the error
    # object reaches this function; it is then reported compactly unless the user asked for it.
    previous = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        hydra_app()
    except BrokenPipeError:
        # stdout closed early (e.g. `mintdim-run --help | head`): not an error of the app.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt as interrupt:
        finish_pending_sweep()
        stop = interrupt if isinstance(interrupt, BuildInterruptedError) else interrupt.__cause__
        if isinstance(stop, BuildInterruptedError):
            print(stop.message(_lang()), file=sys.stderr)
        else:  # before or after a build (Hydra composing, the summary ...)
            print(_INTERRUPTED.render(), file=sys.stderr)
        sys.exit(130)
    except Exception as error:  # noqa: BLE001 - every error is reported, then the exit code
        swept = finish_pending_sweep() is not None
        if full_error:
            raise
        sys.exit(_report(error, swept))
    finally:
        if previous is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = previous
