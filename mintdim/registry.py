"""The registered pipelines: name -> factory. ``pipeline(name)`` looks names up here."""

from __future__ import annotations

from collections.abc import Callable

from mintdim.build.api import UnitBuildPipeline

__all__ = ["PIPELINES", "registered"]

PIPELINES: dict[str, Callable[[], object]] = {
    "unit-build": UnitBuildPipeline,
}


def registered() -> list[str]:
    """Names of every registered pipeline, sorted."""
    return sorted(PIPELINES)
