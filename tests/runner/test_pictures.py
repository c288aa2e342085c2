"""Pictures are optional: without matplotlib a units=auto build and a sweep still work, draw
nothing, and say (in the user's language) how to get the pictures."""

from __future__ import annotations

import json

from .conftest import REPO, cli_env, run_cli


def _without_matplotlib(tmp_path) -> dict[str, str]:
    """An environment whose ``import matplotlib`` fails, as on a machine without the extra."""
    hidden = tmp_path / "hide"
    (hidden / "matplotlib").mkdir(parents=True)
    (hidden / "matplotlib" / "__init__.py").write_text(
        "raise ImportError('matplotlib is hidden by the test')\n"
    )
    return cli_env(PYTHONPATH=f"{hidden}:{REPO}")


def test_units_auto_builds_without_matplotlib_and_says_how_to_get_pictures(tmp_path) -> None:
    run = tmp_path / "run"
    done = run_cli(
        "units=auto", "units.count=4", "workers=1", "lang=vi", f"hydra.run.dir={run}",
        cwd=tmp_path, env=_without_matplotlib(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads((run / "build" / "manifest.json").read_text())["units"]["planned"]
    assert not list(run.glob("*.png"))
    assert "chưa cài matplotlib" in done.stderr + done.stdout
    assert "pip install matplotlib" in done.stderr + done.stdout


def test_a_sweep_without_matplotlib_has_its_table_and_no_picture(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    done = run_cli(
        "-m", "units=auto,large", "workers=1", f"hydra.sweep.dir={sweep}",
        cwd=tmp_path, env=_without_matplotlib(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads((sweep / "sweep_summary.json").read_text())
    assert doc["jobs_completed"] == 2 and doc["picture"] is None
    assert not list(sweep.rglob("*.png"))
    assert "Pictures:" not in (sweep / "sweep_summary.md").read_text()
    assert "matplotlib is not installed" in done.stderr + done.stdout
