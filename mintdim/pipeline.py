"""``pipeline(name)``: the entry point of the fluent API."""

from __future__ import annotations

from mintdim.build.api import UnitBuildPipeline
from mintdim.errors import UnknownPipelineError
from mintdim.registry import PIPELINES, registered

__all__ = ["pipeline"]


def pipeline(name: str) -> UnitBuildPipeline:
    """A new, empty pipeline of a registered kind (today: ``"unit-build"``)."""
    if not isinstance(name, str) or name not in PIPELINES:
        raise UnknownPipelineError(name=name, registered=registered())
    return PIPELINES[name]()
