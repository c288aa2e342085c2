"""``units(sizes="auto")``: each output directory's sizes, planned exactly from a scan of its files.

The files writing into one directory share its sizes, so their counts are planned together
(``units/optimal.plan_units``). The plan's figures are what the build then writes: the manifest
records them as ``units.planned`` and ``stats.json`` shows the same padding.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mintdim.build.contracts import BuildPlan, ScanResult, UnitPlan, record_kind
from mintdim.build.units.optimal import plan_units
from mintdim.build.units.overflow import OverflowTally
from mintdim.build.units.validate import MAX_UNIT_SIZE
from mintdim.errors import UnitOverflowError, UnitPlanError

__all__ = ["planned_build", "unit_plans"]


def unit_plans(plan: BuildPlan, scan: ScanResult) -> list[UnitPlan]:
    """One exact plan per output directory of an auto plan, from the scan of its input."""
    auto = plan.auto
    plans = []
    for output in plan.outputs:
        counts = np.concatenate([scan.by_file[i] for i in output.file_indexes])
        if not counts.size:
            raise UnitPlanError(key="units.sizes", value="auto", rule="nothing_to_plan")
        plans.append(
            plan_units(
                counts,
                auto.count,
                align=auto.align,
                max_size=auto.max_size,
                cost=auto.cost,
                unit_cost=auto.unit_cost,
            )
        )
    return plans


def planned_build(plan: BuildPlan, scan: ScanResult, plans: list[UnitPlan]) -> BuildPlan:
    """The build plan with every output's planned sizes. Under ``on_overflow="abort"`` samples
    over ``max_size`` overflow here, from the scan; samples no unit may hold at all (over
    ``MAX_UNIT_SIZE``) overflow under every policy."""
    auto = plan.auto
    for output, unit_plan in zip(plan.outputs, plans, strict=True):
        if unit_plan.too_long.size and plan.on_overflow == "abort":
            # Known from the scan: fail before anything is written. Other policies deal with
            # these samples in the build (skip, truncate, or extend a unit).
            raise _overflow(plan, scan, output.file_indexes, unit_plan.max_fitting)
        if unit_plan.sizes[-1] > MAX_UNIT_SIZE:
            limit = MAX_UNIT_SIZE - MAX_UNIT_SIZE % auto.align
            raise _overflow(plan, scan, output.file_indexes, limit)
    outputs = tuple(
        replace(output, sizes=unit_plan.sizes, planned=unit_plan.manifest_record())
        for output, unit_plan in zip(plan.outputs, plans, strict=True)
    )
    files = tuple(replace(f, sizes=outputs[f.output_index].sizes) for f in plan.files)
    return replace(plan, files=files, outputs=outputs)


def _overflow(
    plan: BuildPlan, scan: ScanResult, file_indexes: tuple[int, ...], largest: int
) -> UnitOverflowError:
    tally = OverflowTally(record_kind(plan.files[file_indexes[0]]))
    for i in file_indexes:
        over = scan.by_file[i] > largest
        tally.add(plan.files[i].path, scan.lines_by_file[i][over], scan.by_file[i][over])
    return tally.error(largest)
