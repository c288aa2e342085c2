"""Unit checks: sizes are non-empty, strictly ascending lists of positive ints up to MAX_UNIT_SIZE;
build_batch positive ints."""

from __future__ import annotations

from functools import partial

from mintdim.pipelines.unit_build.rules import is_positive_int, per_file
from mintdim.shared.errors import UnitMappingError, UnitValidationError

__all__ = ["MAX_UNIT_SIZE", "unit_settings"]

MAX_UNIT_SIZE = 1 << 24
"""Largest unit size: a record holds unit_size slots, so 2**24 is already 64 MiB per uint32
sample, and no model has a context that long. Far larger values (2**40) would otherwise pass
validation and fail in numpy once the output directory exists."""


def unit_settings(
    sizes: object, build_batch: object, file_count: int
) -> list[tuple[tuple[int, ...], int]]:
    """Per file: its unit sizes and build_batch."""
    # Shape before arity: a flat sizes=[128, 256] is the common mistake, not a count problem.
    if not isinstance(sizes, list | tuple):
        raise UnitValidationError(key="units.sizes", value=sizes, rule="list_of_lists")
    for i, entry in enumerate(sizes):
        if not isinstance(entry, list | tuple):
            raise UnitValidationError(key=f"units.sizes[{i}]", value=entry, rule="list_of_lists")
    size_lists = per_file(sizes, file_count, partial(UnitMappingError, key="units.sizes"))
    for i, entry in enumerate(sizes):
        key = f"units.sizes[{i}]"
        if not entry:
            raise UnitValidationError(key=key, value=entry, rule="non_empty")
        for j, size in enumerate(entry):
            _positive_int(size, f"{key}[{j}]")
            if size > MAX_UNIT_SIZE:
                raise UnitValidationError(key=f"{key}[{j}]", value=size, rule="too_large")
        for j in range(1, len(entry)):
            if entry[j] <= entry[j - 1]:
                raise UnitValidationError(key=f"{key}[{j}]", value=entry[j], rule="ascending")
    if not isinstance(build_batch, list | tuple):
        raise UnitValidationError(key="units.build_batch", value=build_batch, rule="list_of_ints")
    batches = per_file(build_batch, file_count, partial(UnitMappingError, key="units.build_batch"))
    for i, value in enumerate(build_batch):
        _positive_int(value, f"units.build_batch[{i}]")
    return [(tuple(size_lists[i]), batches[i]) for i in range(file_count)]


def _positive_int(value: object, key: str) -> None:
    if not is_positive_int(value):
        raise UnitValidationError(key=key, value=value, rule="positive_int")
