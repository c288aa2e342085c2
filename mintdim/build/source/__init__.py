"""Reading input files, whatever their format, and rendering their samples through user templates.

``open_source(plan)`` gives the ``Source`` (``base.py``) of the format ``plan.format`` names; the
build, the scan, validation and ``verify --deep`` reach every format through it alone.
"""

from __future__ import annotations

from mintdim.build.contracts import FilePlan
from mintdim.build.source.base import (
    Batch,
    InputFingerprint,
    ParsedLines,
    Piece,
    PieceWork,
    Source,
    check_unchanged,
)
from mintdim.build.source.jsonl import JsonlSource

__all__ = [
    "Batch",
    "InputFingerprint",
    "ParsedLines",
    "Piece",
    "PieceWork",
    "Source",
    "check_unchanged",
    "open_source",
]

_SOURCES: dict[str, type] = {"jsonl": JsonlSource}
"""The source class of each format a ``FilePlan`` may name."""


def open_source(plan: FilePlan) -> Source:
    """The source that reads ``plan``'s file in its format (cheap: it opens nothing yet)."""
    return _SOURCES[plan.format](plan)
