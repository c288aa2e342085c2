"""``python -m mintdim.run units=auto``: scan, plan, build; pictures and the sweep table."""

from __future__ import annotations

import json

import numpy as np

from mintdim import plan_units, plots
from tests.cli.test_plan import demo_counts  # noqa: F401 - the fixture: reference token counts

from .conftest import run_cli


def test_units_auto_builds_the_exact_plan_and_meets_its_prediction(tmp_path, demo_counts) -> None:  # noqa: F811
    run = tmp_path / "run"
    done = run_cli(
        "units=auto",
        "units.count=5",
        "units.align=64",
        "workers=1",
        f"hydra.run.dir={run}",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((run / "build" / "manifest.json").read_text())
    stats = json.loads((run / "build" / "stats.json").read_text())
    expected = plan_units(demo_counts, 5, align=64)
    assert manifest["units"]["sizes"] == list(expected.sizes)
    assert all(size % 64 == 0 for size in expected.sizes)
    planned = manifest["units"]["planned"]
    assert (planned["method"], planned["count"], planned["align"], planned["cost"]) == (
        "exact",
        5,
        64,
        "tokens",
    )
    assert planned["predicted_pad_tokens"] == stats["pad_tokens"] == expected.pad_tokens
    assert planned["predicted_padding_ratio"] == stats["padding_ratio"]
    picture = run / "units_plan.png"
    if plots.available():  # the [plot] extra; without it the build says how to get pictures
        assert picture.read_bytes()[:4] == b"\x89PNG"
    else:
        assert not picture.exists() and "pip install matplotlib" in done.stderr


def test_sweep_table_says_why_a_job_failed_and_how_many_samples_overflowed(
    tmp_path,
    demo_counts,  # noqa: F811
) -> None:
    sweep = tmp_path / "sweep"
    done = run_cli(
        "-m",
        "units.sizes=[[128]],[[300]]",
        "workers=1",
        f"hydra.sweep.dir={sweep}",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    doc = json.loads((sweep / "sweep_summary.json").read_text())
    assert doc["jobs_failed"] == 2
    table = (sweep / "sweep_summary.md").read_text()
    for row, size in zip(sorted(doc["jobs"], key=lambda r: r["job"]), (128, 300), strict=True):
        over = int(np.sum(demo_counts > size))
        assert row["overflowing_samples"] == over
        assert f"({over:,} overflowing samples)" in table
        assert f"{over} (every sample longer than {size} tokens)" in row["error"]
