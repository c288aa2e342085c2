"""Unit checks: sizes are non-empty, positive, strictly ascending lists; build_batch positive ints."""

from __future__ import annotations

from mintdim.shared.errors import UnitMappingError, UnitValidationError

__all__ = ["unit_settings"]


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
    size_lists = _mapped(sizes, "sizes", file_count)
    for i, entry in enumerate(size_lists):
        key = f"units.sizes[{i}]"
        if not entry:
            raise UnitValidationError(key=key, value=entry, rule="non_empty")
        for j, size in enumerate(entry):
            _positive_int(size, f"{key}[{j}]")
        for j in range(1, len(entry)):
            if entry[j] <= entry[j - 1]:
                raise UnitValidationError(key=f"{key}[{j}]", value=entry[j], rule="ascending")
    if not isinstance(build_batch, list | tuple):
        raise UnitValidationError(key="units.build_batch", value=build_batch, rule="list_of_ints")
    batches = _mapped(build_batch, "build_batch", file_count)
    for i, value in enumerate(batches):
        _positive_int(value, f"units.build_batch[{i}]")
    return [
        (tuple(size_lists[i if len(size_lists) > 1 else 0]), batches[i if len(batches) > 1 else 0])
        for i in range(file_count)
    ]


def _mapped(value: list | tuple, name: str, file_count: int) -> list:
    if len(value) not in (1, file_count):
        raise UnitMappingError(file_count=file_count, got=len(value), key=f"units.{name}")
    return list(value)


def _positive_int(value: object, key: str) -> None:
    # bool is an int subclass; True is not a size.
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise UnitValidationError(key=key, value=value, rule="positive_int")
