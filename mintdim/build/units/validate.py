"""Unit checks: sizes are non-empty, strictly ascending lists of positive ints up to MAX_UNIT_SIZE;
build_batch positive ints; the exact planner's options (count or unit_cost, align, max_size,
cost, the token counts)."""

from __future__ import annotations

from functools import partial

import numpy as np

from mintdim.build.contracts import AutoUnits
from mintdim.build.rules import is_positive_int, per_file
from mintdim.errors import UnitMappingError, UnitPlanError, UnitValidationError
from mintdim.options import OptionCheck, is_int, is_number

__all__ = [
    "AUTO_COUNT",
    "COSTS",
    "MAX_UNIT_SIZE",
    "auto_units",
    "build_batches",
    "plan_options",
    "token_counts",
    "unit_pack",
    "unit_settings",
]

MAX_UNIT_SIZE = 1 << 24
"""Largest unit size: a record holds unit_size slots, so 2**24 is already 64 MiB per uint32
sample, and no model has a context that long. Far larger values (2**40) would otherwise pass
validation and fail in numpy once the output directory exists."""

COSTS = ("tokens", "attention")
"""What a slot of a unit of size u costs in a plan: 1 (``tokens``) or u (``attention``)."""

AUTO_COUNT = 8
"""Units ``sizes="auto"`` plans when neither ``count`` nor ``unit_cost`` is given."""


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
    batches = build_batches(build_batch, file_count)
    return [(tuple(map(int, size_lists[i])), batches[i]) for i in range(file_count)]


def unit_pack(pack: object) -> bool:
    """``units(pack=...)``: a bool (None, never declared: False)."""
    if pack is None:
        return False
    if not isinstance(pack, bool):
        raise UnitValidationError(key="units.pack", value=pack, rule="bool")
    return pack


def build_batches(build_batch: object, file_count: int) -> list[int]:
    """Per file: raw lines per tokenizer batch."""
    if not isinstance(build_batch, list | tuple):
        raise UnitValidationError(key="units.build_batch", value=build_batch, rule="list_of_ints")
    batches = per_file(build_batch, file_count, partial(UnitMappingError, key="units.build_batch"))
    for i, value in enumerate(build_batch):
        _positive_int(value, f"units.build_batch[{i}]")
    return [int(batch) for batch in batches]


def _positive_int(value: object, key: str) -> None:
    if not is_positive_int(value):
        raise UnitValidationError(key=key, value=value, rule="positive_int")


def plan_options(
    count: object,
    align: object,
    max_size: object,
    cost: object,
    unit_cost: object,
    prefix: str = "",
) -> AutoUnits:
    """The planner's options, checked, as plain Python values (numpy integers are integers);
    ``prefix`` names where they were given (``units.``)."""
    check = OptionCheck(
        lambda option, value, rule: UnitPlanError(key=prefix + option, value=value, rule=rule)
    )
    if count is None:
        if isinstance(unit_cost, bool | np.bool_) or not is_number(unit_cost):
            # A number that is not finite (nan, inf) breaks the rule below, anything else this.
            real = isinstance(unit_cost, float | np.floating)
            rule = "non_negative" if real else "count_or_cost"
            raise UnitPlanError(key=f"{prefix}unit_cost", value=unit_cost, rule=rule)
        if unit_cost < 0:
            raise UnitPlanError(key=f"{prefix}unit_cost", value=unit_cost, rule="non_negative")
        unit_cost = int(unit_cost) if is_int(unit_cost) else float(unit_cost)
    else:
        count = check.integer("count", count, "positive_int")
        if unit_cost is not None:
            raise UnitPlanError(key=f"{prefix}unit_cost", value=unit_cost, rule="count_or_cost")
    align = check.integer("align", align, "positive_int")
    max_size = check.integer("max_size", max_size, "positive_int", optional=True)
    if max_size is not None and max_size < align:
        raise UnitPlanError(key=f"{prefix}max_size", value=max_size, rule="below_align")
    if not isinstance(cost, str) or cost not in COSTS:
        raise UnitPlanError(key=f"{prefix}cost", value=cost, rule="cost")
    return AutoUnits(count, align, max_size, cost, unit_cost)


def token_counts(counts: object) -> np.ndarray:
    """Check the counts handed to the planner: a 1-D array of integers >= 0, as int64."""
    array = np.asarray(counts)
    if array.ndim != 1 or not (array.dtype.kind in "iu" or array.size == 0):
        # A description without words, so that it reads the same in every language.
        shown = f"ndarray shape={array.shape} dtype={array.dtype}"
        raise UnitPlanError(key="counts", value=shown, rule="counts")
    if array.size and array.min() < 0:
        raise UnitPlanError(key="counts", value=int(array.min()), rule="counts")
    return array.astype(np.int64, copy=False)


def auto_units(sizes: object, options: object) -> AutoUnits | None:
    """``sizes="auto"`` and its planner options, checked; None for declared sizes.

    The options apply only to ``"auto"``: given beside a list of sizes they are refused.
    """
    given = dict(options or {})
    if sizes != "auto":
        if given:
            key = next(iter(given))
            raise UnitPlanError(key=f"units.{key}", value=given[key], rule="auto_only")
        return None
    return plan_options(
        given.get("count", None if "unit_cost" in given else AUTO_COUNT),
        given.get("align", 1),
        given.get("max_size"),
        given.get("cost", "tokens"),
        given.get("unit_cost"),
        "units.",
    )
