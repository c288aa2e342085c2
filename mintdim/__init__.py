"""MintDim: JSONL datasets -> exact tokens -> fixed-width, low-padding binary token shards.

Public API: ``pipeline("unit-build")`` (the fluent builder), the result types, ``open_build`` (read
a finished build back), ``loader`` (training batches over one or more builds), ``plan_units``
(the exact unit-size planner), ``group``, ``split`` and ``open_split`` (leakage-free train /
validation / test splits of a build; ``mintdim.split`` is that function, the room's modules are importable as
``mintdim.split.<module>``), the error classes (every one derives from ``MintDimError``) and
``set_language`` for error messages.
"""

from mintdim import errors as _errors
from mintdim._version import __version__
from mintdim.build.contracts import BuildResult, LongSample, OutputResult, ScanResult, UnitPlan
from mintdim.build.tokenizer.validate import TemplateLiteralWarning
from mintdim.build.units.optimal import plan_units
from mintdim.errors import *  # noqa: F403 - the error catalogue is public API
from mintdim.pipeline import pipeline
from mintdim.read.loader import UnitBatch, UnitLoader, loader
from mintdim.read.reader import UnitBuild, open_build
from mintdim.split import GroupResult, Split, SplitResult, group, open_split, split

__all__ = [
    "BuildResult",
    "GroupResult",
    "LongSample",
    "OutputResult",
    "ScanResult",
    "Split",
    "SplitResult",
    "TemplateLiteralWarning",
    "UnitBatch",
    "UnitBuild",
    "UnitLoader",
    "UnitPlan",
    "__version__",
    "group",
    "loader",
    "open_build",
    "open_split",
    "pipeline",
    "plan_units",
    "split",
    *_errors.__all__,
]
