"""Fixtures every unit-build test module shares."""

from __future__ import annotations

from pathlib import Path

import pytest

import mintdim


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch):
    """Each test starts in English whatever the environment says, and leaves no language set."""
    monkeypatch.delenv("MINTDIM_LANG", raising=False)
    mintdim.set_language(None)
    yield
    mintdim.set_language(None)


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from a fresh temporary directory, so relative paths land there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
