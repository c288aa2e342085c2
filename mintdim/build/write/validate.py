"""Output checks: dir/samples_per_shard mapping, settings shared per directory, directories new or empty."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from mintdim.build.formats import manifest
from mintdim.build.formats.layout import STAGING
from mintdim.build.rules import is_positive_int, per_file
from mintdim.build.write import staging
from mintdim.errors import (
    OutputConflictError,
    OutputMappingError,
    OutputValidationError,
    SamplesPerShardError,
)
from mintdim.paths import resolve, same_place_key

__all__ = ["check_directories_usable", "group_outputs", "output_dirs", "samples_per_shard"]


def output_dirs(value: object, file_count: int) -> list[str]:
    """Per file: the declared output directory (a single path is shared by every file)."""
    paths = [value] if isinstance(value, str) else value
    if not isinstance(paths, list | tuple):
        raise _not_a_path("output.dir", value)
    for i, path in enumerate(paths):
        if not isinstance(path, str):
            raise _not_a_path(f"output.dir[{i}]", path)
    return per_file(paths, file_count, OutputMappingError)


def _not_a_path(key: str, value: object) -> OutputValidationError:
    return OutputValidationError(
        directory=repr(value),
        problem="not_a_path",
        cause="not_a_path",
        other=key,
        kind=type(value).__name__,
    )


def samples_per_shard(value: object, file_count: int) -> list[int]:
    """Per file: its samples_per_shard (a list, like every per-file setting but output.dir)."""
    if not isinstance(value, list | tuple):
        raise SamplesPerShardError.not_list(value=value)
    counts = per_file(value, file_count, SamplesPerShardError.arity)
    for i, count in enumerate(value):
        if not is_positive_int(count):
            raise SamplesPerShardError.not_positive(index=i, value=count)
    return [int(count) for count in counts]


def group_outputs(
    dirs: list[str], settings: Sequence[dict[str, str]], files: list[str]
) -> list[list[int]]:
    """File indexes per distinct directory, in order of first declaration.

    ``settings[i]`` maps each setting that must agree inside a directory to a comparable string.
    """
    groups: dict[str, list[int]] = {}
    for index, path in enumerate(dirs):
        groups.setdefault(same_place_key(path, "output.dir"), []).append(index)
    _check_not_nested({key: dirs[members[0]] for key, members in groups.items()})
    for members in groups.values():
        for setting in settings[members[0]]:
            declared = [settings[i][setting] for i in members]
            if len(set(declared)) > 1:
                raise OutputConflictError(
                    directory=dirs[members[0]],
                    setting=setting,
                    values=declared,
                    files=[files[i] for i in members],
                )
    return list(groups.values())


def _check_not_nested(dirs: dict[str, str]) -> None:
    """One build's outputs must not contain one another (their files would mix)."""
    for inner_key, inner in dirs.items():
        for outer_key, outer in dirs.items():
            if inner_key != outer_key and Path(inner_key).is_relative_to(outer_key):
                raise OutputValidationError(
                    directory=inner, problem="nested", cause="inside", other=outer
                )


def check_directories_usable(paths: list[str], resume: bool = False) -> None:
    """Each directory must be empty, or absent and creatable: MintDim never overwrites.

    With ``resume`` a directory may also hold an unfinished build (its staging area's job record
    and no manifest), which the build then continues, or a finished one whose staging area is
    still there (stopped while removing it), which the build then only tidies. Checking creatability here means a second
    unusable directory cannot leave the first one created and half-made.
    """
    for path in paths:
        absolute = resolve(path, "output.dir")
        if not absolute.exists():
            _check_creatable(path, absolute)
            continue
        if not absolute.is_dir():
            raise OutputValidationError(directory=path, problem="not_a_directory")
        with os.scandir(absolute) as entries:
            if any(True for _ in entries):
                _check_resumable(path, absolute, resume)


def _check_resumable(path: str, absolute: Path, resume: bool) -> None:
    if not resume:
        raise OutputValidationError(directory=path, problem="not_empty")
    staged = (absolute / STAGING / staging.JOB).is_file()
    if (absolute / manifest.FILENAME).exists() and not staged:
        raise OutputValidationError(directory=path, problem="finished")
    if not staged:
        raise OutputValidationError(directory=path, problem="not_resumable")


def _check_creatable(path: str, absolute: Path) -> None:
    ancestor = absolute.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        cause = "parent_is_file"
    elif not os.access(ancestor, os.W_OK | os.X_OK):
        cause = "no_permission"
    else:
        return
    raise OutputValidationError(
        directory=path, problem="cannot_create", cause=cause, other=str(ancestor)
    )
