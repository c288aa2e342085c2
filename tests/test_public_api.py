"""The public API is what ``mintdim.__all__`` says, and nothing else sits at the package's top.

The names below are deliberately public; the error classes are public by declaration (every
concrete class the catalogue lists, plus the two bases a caller catches by). A helper that leaks
into the package (by a star import) or a public name that goes missing fails here.
"""

from __future__ import annotations

import inspect

import mintdim
from mintdim.errors import error_classes

PUBLIC = {
    "__version__",
    # building
    "pipeline",
    "BuildResult",
    "OutputResult",
    "ScanResult",
    "LongSample",
    "UnitPlan",
    "plan_units",
    # reading and training
    "open_build",
    "UnitBuild",
    "loader",
    "UnitLoader",
    "UnitBatch",
    # splitting
    "group",
    "split",
    "open_split",
    "GroupResult",
    "SplitResult",
    "Split",
    # decontamination
    "decontaminate",
    "DecontaminationResult",
    # messages
    "set_language",
    "MintDimWarning",
    "TemplateLiteralWarning",
    "MintDimError",
    "MappingError",
}


def test_all_lists_exactly_the_public_names():
    errors = {cls.__name__ for cls in error_classes()}
    assert not errors & PUBLIC
    assert sorted(mintdim.__all__) == sorted(PUBLIC | errors)
    assert len(mintdim.__all__) == len(set(mintdim.__all__))


def test_every_public_name_exists_and_nothing_else_is_at_the_top():
    for name in mintdim.__all__:
        assert hasattr(mintdim, name), name
    top = {
        name
        for name in dir(mintdim)
        if not name.startswith("_") and not inspect.ismodule(getattr(mintdim, name))
    }
    assert top == set(mintdim.__all__) - {"__version__"}


def test_the_warnings_and_errors_are_what_they_say():
    assert issubclass(mintdim.TemplateLiteralWarning, mintdim.MintDimWarning)
    assert issubclass(mintdim.MintDimWarning, UserWarning)
    assert all(issubclass(cls, mintdim.MintDimError) for cls in error_classes())
    assert issubclass(mintdim.MappingError, mintdim.MintDimError)
