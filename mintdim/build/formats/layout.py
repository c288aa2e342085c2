"""The layout of a build directory: the audit files beside the manifest and the marker files.

A finished build holds ``manifest.json``, the :data:`AUDIT_FILES` and one ``unit_<size>/`` folder per
unit: its shards and ``index.npy``, or :data:`EMPTY_UNIT` when no sample needed that unit. A build
that failed leaves :data:`UNIT_BUILD_FAILED` in its unit folders and no manifest; one still running
keeps its fragments in :data:`STAGING`. Writers (``build/write``) and readers (``read``, ``check``)
take the names from here.
"""

from __future__ import annotations

from mintdim.build.formats import (
    duplicate_index,
    histogram,
    overflow_index,
    sample_index,
    stats,
    unk_index,
)
from mintdim.shared.lang import Bilingual

__all__ = ["AUDIT_FILES", "EMPTY_UNIT", "STAGING", "UNIT_BUILD_FAILED", "empty_unit_text"]

EMPTY_UNIT = "EMPTY_UNIT.md"
UNIT_BUILD_FAILED = "UNIT_BUILD_FAILED.md"
AUDIT_FILES = (
    sample_index.FILENAME,
    duplicate_index.FILENAME,
    unk_index.FILENAME,
    overflow_index.FILENAME,
    stats.FILENAME,
    histogram.FILENAME,
)
"""The index and summary files beside the manifest; it lists each one's size and SHA-256."""
STAGING = "staging"
"""The folder of a build's staged fragments while it runs (removed when the build finishes)."""

EMPTY_UNIT_TEXT = Bilingual(
    en="# unit_{size} is empty\n\n"
    "No sample of this build has a token count that needs unit size {size}: every sample\n"
    "fitted a smaller declared unit or needed a larger one. The build is complete.",
    vi="# unit_{size} trống\n\n"
    "Không có mẫu nào của lần build này có số token cần đúng unit size {size}: mỗi mẫu\n"
    "vừa một unit khai báo nhỏ hơn hoặc cần một unit lớn hơn. Lần build đã hoàn tất.",
)


def empty_unit_text(size: int) -> str:
    """The text of EMPTY_UNIT.md in a unit no sample needed."""
    return EMPTY_UNIT_TEXT.both(size=size) + "\n"
