"""The runner's pictures: each ``units=auto`` output's token-length histogram with its planned unit
boundaries (in the job directory) and a sweep's padding per unit set (in the sweep directory).

matplotlib is an optional extra (``mintdim/plots.py``): without it the build still runs, nothing
is drawn, and one bilingual line per process says how to get the pictures.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mintdim import plots

__all__ = ["PLAN_PICTURE", "SWEEP_PICTURE", "plan_pictures", "sweep_picture"]

PLAN_PICTURE = "units_plan.png"
"""A units=auto job's histogram (``units_plan_<n>.png`` for output directory n > 0)."""
SWEEP_PICTURE = "sweep_padding.png"

log = logging.getLogger("mintdim")
_told: set[str] = set()


def plan_pictures(result: Any, job_dir: Path) -> list[str]:
    """Draw the length histogram of every output whose sizes were planned; their file names."""
    planned = [(i, out) for i, out in enumerate(result.outputs) if out.plan is not None]
    if not planned or not _can_draw("units=auto"):
        return []
    names = []
    for i, out in planned:
        name = PLAN_PICTURE if i == 0 else PLAN_PICTURE.replace(".png", f"_{i}.png")
        plan = out.plan
        plots.length_histogram(
            job_dir / name, plan.lengths, plan.length_samples, plan.sizes, plan.padding_ratio
        )
        names.append(name)
    return names


def sweep_picture(sweep_dir: Path, doc: dict[str, Any]) -> str | None:
    """Draw the padding ratio of every completed job of a sweep; the file name, or None."""
    done = [row for row in doc["jobs"] if row["status"] == "completed"]
    if not done or not _can_draw("sweep"):
        return None
    labels = [" ".join(row["overrides"]) or "(defaults)" for row in done]
    plots.sweep_padding(sweep_dir / SWEEP_PICTURE, labels, [row["padding_ratio"] for row in done])
    return SWEEP_PICTURE


def _can_draw(what: str) -> bool:
    if plots.available():
        return True
    if what not in _told:  # once per process and kind, not once per job
        _told.add(what)
        log.warning(plots.NO_MATPLOTLIB.render(what=what))
    return False
