"""Fixtures for the Hydra runner: compose the real conf/, and run the command line in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from mintdim import set_language
from mintdim.runner import config_dir, register_configs, register_resolvers
from tests.waiting import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]

register_resolvers()
register_configs()


@pytest.fixture(autouse=True)
def _hydra_singletons(hydra_restore_singletons: None) -> None:
    """Restore Hydra's global state (GlobalHydra, HydraConfig, ConfigStore) after every test."""


@pytest.fixture
def english_from_the_repo_root(monkeypatch) -> Iterator[None]:
    """Run from the repository root (the runner's relative paths) in English, the language
    chosen afresh before and after."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("MINTDIM_LANG", raising=False)
    set_language(None)
    yield
    set_language(None)


@pytest.fixture
def compose_cfg() -> Callable[..., DictConfig]:
    """Compose ``conf/config.yaml`` with overrides, exactly as the command line would."""

    def _compose(*overrides: str, hydra_cfg: bool = False) -> DictConfig:
        with initialize_config_dir(version_base="1.3", config_dir=config_dir(), job_name="test"):
            return compose(
                config_name="config", overrides=list(overrides), return_hydra_config=hydra_cfg
            )

    return _compose


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a subprocess run: the checkout importable, English, no tracebacks."""
    env = {k: v for k, v in os.environ.items() if k not in ("MINTDIM_LANG", "HYDRA_FULL_ERROR")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env.update(extra)
    return env


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m mintdim.run <args>`` in ``cwd``; returns the finished process."""
    return subprocess.run(
        [sys.executable, "-m", "mintdim.run", *args],
        cwd=cwd,
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=SAFETY_NET,
        check=False,
    )
