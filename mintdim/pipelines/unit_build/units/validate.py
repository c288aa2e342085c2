"""Unit checks: sizes are non-empty, positive, strictly ascending lists; build_batch positive ints."""

from __future__ import annotations

from mintdim.shared.errors import UnitMappingError, UnitValidationError

__all__ = ["unit_settings"]


def unit_settings(
    sizes: object, build_batch: object, file_count: int
) -> list[tuple[tuple[int, ...], int]]:
    """Per file: its unit sizes and build_batch."""
    size_lists = _mapped(sizes, "sizes", file_count)
    for i, entry in enumerate(size_lists):
        key = f"units.sizes[{i}]"
        if not isinstance(entry, list | tuple):
            raise UnitValidationError(key=key, value=entry, rule="list_of_lists")
        if not entry:
            raise UnitValidationError(key=key, value=entry, rule="non_empty")
        for j, size in enumerate(entry):
            _positive_int(size, f"{key}[{j}]")
        for j in range(1, len(entry)):
            if entry[j] <= entry[j - 1]:
                raise UnitValidationError(key=f"{key}[{j}]", value=entry[j], rule="ascending")
    batches = _mapped(build_batch, "build_batch", file_count)
    for i, value in enumerate(batches):
        _positive_int(value, f"units.build_batch[{i}]")
    return [
        (tuple(size_lists[i if len(size_lists) > 1 else 0]), batches[i if len(batches) > 1 else 0])
        for i in range(file_count)
    ]


def _mapped(value: object, name: str, file_count: int) -> list:
    if not isinstance(value, list | tuple):
        raise UnitValidationError(key=f"units.{name}", value=value, rule="list_of_lists")
    if len(value) not in (1, file_count):
        raise UnitMappingError(file_count=file_count, got=len(value), key=name)
    return list(value)


def _positive_int(value: object, key: str) -> None:
    # bool is an int subclass; True is not a size.
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise UnitValidationError(key=key, value=value, rule="positive_int")
