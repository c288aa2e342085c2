"""Reading input files, whatever their format, and rendering their samples through user templates.

``open_source(plan)`` gives the ``Source`` (``base.py``) of the format ``plan.format`` names; the
build, the scan, validation and ``verify --deep`` reach every format through it alone. Formats:
``jsonl`` (``jsonl.py``), ``jsonl.gz``, ``jsonl.zst``, ``jsonl.xz``, ``jsonl.bz2``
(``compressed.py``) and ``parquet`` (``parquet.py``); ``validate.file_formats`` tells which one
a declared file is in.
"""

from __future__ import annotations

from mintdim.build.contracts import FilePlan
from mintdim.build.source.base import (
    Batch,
    InputFingerprint,
    ParsedLines,
    Piece,
    PieceWork,
    Records,
    Source,
    check_unchanged,
)
from mintdim.build.source.compressed import CODECS, CompressedJsonlSource
from mintdim.build.source.jsonl import JsonlSource
from mintdim.build.source.parquet import ParquetSource

__all__ = [
    "FORMATS",
    "Batch",
    "InputFingerprint",
    "ParsedLines",
    "Piece",
    "PieceWork",
    "Records",
    "Source",
    "check_unchanged",
    "open_source",
]

_SOURCES: dict[str, type] = {
    "jsonl": JsonlSource,
    **dict.fromkeys(CODECS, CompressedJsonlSource),
    "parquet": ParquetSource,
}
"""The source class of each format a ``FilePlan`` may name."""

FORMATS = tuple(_SOURCES)
"""Every format a ``FilePlan`` (and a manifest's ``source.inputs[i].format``) may name."""


def open_source(plan: FilePlan) -> Source:
    """The source that reads ``plan``'s file in its format (cheap: it opens nothing yet)."""
    return _SOURCES[plan.format](plan)
