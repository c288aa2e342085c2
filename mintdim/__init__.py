"""MintDim: JSONL datasets -> exact tokens -> fixed-width, low-padding binary token shards.

The package reads as the flow. ``build/`` writes a build (source -> render -> tokenize -> units
-> shards and indexes -> manifest; ``build/runtime.py`` is its map, ``build/formats/`` the format
of every file it writes). ``read/`` opens a finished build and feeds training (``open_build``,
the loader and mixtures); ``check/`` verifies one (``verify``, the deep check); ``split/``
cuts one into leakage-free train, validation and test builds; ``decontaminate/`` removes the
samples that hold benchmark items. ``errors/`` holds
every error, one module per stage; ``shared/`` the building blocks below all. On top: the
``mintdim`` command (``cli/``) and the Hydra runner (``runner/``, ``python -m mintdim.run``). The
layers are contracts in ``pyproject.toml``, checked by ``lint-imports`` in ``make test``.

Public API: ``pipeline("unit-build")`` (the fluent builder), the result types, ``open_build`` (read
a finished build back), ``loader`` (training batches over one or more builds), ``plan_units``
(the exact unit-size planner), ``group``, ``split`` and ``open_split`` (leakage-free train /
validation / test splits of a build; ``mintdim.split`` is that function, the room's modules are
importable as ``mintdim.split.<module>``), ``decontaminate`` (benchmark decontamination, the
same way), the error classes (every one derives from
``MintDimError``), the warnings (every one derives from ``MintDimWarning``) and
``set_language`` for every text MintDim shows. ``__all__`` lists exactly that.
"""

from mintdim import errors as _errors
from mintdim._version import __version__
from mintdim.build.contracts import BuildResult, LongSample, OutputResult, ScanResult, UnitPlan
from mintdim.build.tokenizer.validate import TemplateLiteralWarning
from mintdim.build.units.optimal import plan_units
from mintdim.decontaminate import DecontaminationResult, decontaminate
from mintdim.errors import *  # noqa: F403 - the error catalogue is public API
from mintdim.pipeline import pipeline
from mintdim.read.loader import UnitBatch, UnitLoader
from mintdim.read.reader import UnitBuild, loader, open_build
from mintdim.shared.lang import set_language
from mintdim.shared.log import MintDimWarning
from mintdim.split import GroupResult, Split, SplitResult, group, open_split, split

__all__ = [
    "BuildResult",
    "DecontaminationResult",
    "GroupResult",
    "LongSample",
    "MintDimWarning",
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
    "decontaminate",
    "group",
    "loader",
    "open_build",
    "open_split",
    "pipeline",
    "plan_units",
    "set_language",
    "split",
    *_errors.__all__,
]
