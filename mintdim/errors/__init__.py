"""MintDim's errors, one module per stage that raises them; every class is importable from here.

``base`` holds the machinery (facts, texts, examples, the registry). The stage modules follow the
flow of a build and of what comes after it: ``config`` (the declared job), ``source``,
``tokenizer``, ``units``, ``output``, ``execution`` (workers, interrupts, Ray), ``reader`` (a
finished build and its loader), ``split`` (grouping and splitting a build), ``decontaminate`` (benchmark decontamination)
and ``cli`` (the
runner's command line). The catalogue (``docs/error-catalogue.md``, ``python -m
mintdim.errors.catalogue``) lists the classes in that order (``base.STAGES``).
"""

from mintdim.errors.base import MintDimError, error_classes
from mintdim.errors.cli import *  # noqa: F403
from mintdim.errors.config import *  # noqa: F403
from mintdim.errors.config import MappingError
from mintdim.errors.decontaminate import *  # noqa: F403
from mintdim.errors.execution import *  # noqa: F403
from mintdim.errors.output import *  # noqa: F403
from mintdim.errors.reader import *  # noqa: F403
from mintdim.errors.source import *  # noqa: F403
from mintdim.errors.split import *  # noqa: F403
from mintdim.errors.tokenizer import *  # noqa: F403
from mintdim.errors.units import *  # noqa: F403

# The error classes only: the package's public API star-imports this list (the machinery's
# helpers stay in mintdim.errors.base).
__all__ = [
    "MappingError",
    "MintDimError",
    *(cls.__name__ for cls in error_classes()),
]
