"""Building blocks shared by every MintDim pipeline; re-exports the error hierarchy."""

from mintdim.shared.errors import *  # noqa: F403
from mintdim.shared.errors import __all__ as _errors_all

__all__ = list(_errors_all)
