"""``split=threeway``: the runner builds, groups and splits inside the job directory with the
split group's keys; ``split=none`` (the default) only builds; a bad split setting fails before
the build."""

from __future__ import annotations

import json

import pytest

from mintdim import SplitOptionError, SplitRatioError, open_build, open_split
from mintdim.check.verify import verify_build
from mintdim.runner.app import run_job
from mintdim.split.check import verify_split

from .conftest import run_cli

pytestmark = pytest.mark.usefixtures("english_from_the_repo_root")


def test_the_default_builds_only(compose_cfg, tmp_path) -> None:
    cfg = compose_cfg("source=alpaca", "output=dir", f"output.dir=[{tmp_path}/build]", "workers=1")
    assert cfg.split.name.name == "none"
    summary = run_job(cfg)
    assert "splits" not in summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]


def test_threeway_groups_and_splits_with_the_groups_keys(compose_cfg, tmp_path) -> None:
    cfg = compose_cfg(
        "source=alpaca",
        "output=dir",
        f"output.dir=[{tmp_path}/build]",
        "workers=1",
        "split=threeway",
        "split.seed=7",
        "split.ratios={train:0.8,validation:0.1,test:0.1}",
        "split.window=64",
        "split.keys=[id]",
        "split.stratify=source_file",
    )
    summary = run_job(cfg)
    (done,) = summary["splits"]
    assert done["split"] == str(tmp_path / "split") and done["groups"] == str(tmp_path / "groups")
    assert done["train"] + done["validation"] + done["test"] == len(open_build(tmp_path / "build"))
    assert verify_split(tmp_path / "split").ok
    manifest = json.loads((tmp_path / "split" / "manifest.json").read_text())
    assert manifest["seed"] == 7 and manifest["policy"]["window"] == 64
    assert manifest["policy"]["ratios"] == {"train": 0.8, "validation": 0.1, "test": 0.1}
    assert manifest["policy"]["stratify"] == "source_file"
    assert manifest["groups"]["settings"]["keys"] == ["id"]
    split = open_split(tmp_path / "split")
    assert split.windows("validation") and len(split.train) == done["train"]


@pytest.mark.parametrize(
    ("override", "error"),
    [
        ("split.ratios={train:0.9,validation:0.2}", SplitRatioError),
        ("split.coverage=1.5", SplitOptionError),
    ],
)
def test_a_bad_split_setting_fails_before_the_build(compose_cfg, tmp_path, override, error) -> None:
    cfg = compose_cfg(
        "source=alpaca",
        "output=dir",
        f"output.dir=[{tmp_path}/build]",
        "workers=1",
        "split=threeway",
        override,
    )
    with pytest.raises(error):
        run_job(cfg)
    assert not (tmp_path / "build").exists()


def test_the_command_line_splits_inside_the_job_directory(tmp_path) -> None:
    done = run_cli(
        "source=alpaca",
        "split=threeway",
        "split.seed=7",
        "workers=1",
        f"hydra.run.dir={tmp_path}/job",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    job = tmp_path / "job"
    assert {"build", "groups", "split"} <= {p.name for p in job.iterdir()}
    for name in ("train", "validation", "test"):
        assert verify_build(job / "split" / name).ok
    shown = done.stdout + done.stderr  # Hydra's logging
    assert f"-> {job / 'split'}" in shown and "verified" in shown
    bad = run_cli(
        "source=alpaca",
        "split=threeway",
        "split.seed=-1",
        f"hydra.run.dir={tmp_path}/bad",
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "SplitOptionError" in bad.stderr
    assert not (tmp_path / "bad" / "build").exists()
