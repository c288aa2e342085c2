"""Each filled unit's ``index.npy``: its records' sample ids and token counts, in order."""

from __future__ import annotations

import numpy as np

from mintdim.build.formats import unit_index
from mintdim.check.report import SHOWN_PER_CHECK, VerifyReport
from mintdim.check.verify.index_scan import Index
from mintdim.check.verify.manifest import Build

__all__ = ["check_unit_indexes"]


def check_unit_indexes(build: Build, index: Index, report: VerifyReport) -> None:
    """Each filled unit's index.npy lists its records' sample ids and token counts, in order (a
    packed unit's: its samples in id order)."""
    listed = {entry.unit: entry for entry in build.unit_indexes}
    for size in build.sizes:
        positions = [p for p, shard in enumerate(build.shards) if shard.unit == size]
        if not positions:
            continue
        relative = unit_index.index_path(size)
        entry = listed.get(size)
        if entry is None or entry.path != relative:
            report.add("unit_index", relative, "missing")
            continue
        path = build.root / relative
        if not path.is_file():
            report.add("unit_index", relative, "missing")
            continue
        try:
            entries = unit_index.load(path)
        except (ValueError, OSError) as err:
            report.add("unit_index", relative, "index_line", line=1, problem=str(err))
            continue
        wanted = _packed(build, index, size) if build.packed else _records(index, positions)
        for key, want in zip(("sample_id", "token_count"), wanted, strict=True):
            got = np.asarray(entries[key], dtype=np.int64)
            if got.shape != want.shape:
                report.add(
                    "unit_index", relative, "index_file_count", actual=got.size, expected=want.size
                )
                break
            for record in np.flatnonzero(got != want)[:SHOWN_PER_CHECK].tolist():
                report.add(
                    "unit_index",
                    relative,
                    "index_file_line",
                    line=record,
                    actual=f"{key} {got[record]}",
                    expected=f"{key} {want[record]}",
                )


def _records(index: Index, positions: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """A unit's sample ids and token counts, record after record of its shards."""
    return tuple(
        np.concatenate([column[p] for p in positions])
        for column in (index.record_ids, index.record_counts)
    )


def _packed(build: Build, index: Index, size: int) -> tuple[np.ndarray, np.ndarray]:
    """A packed unit's samples and token counts in id order (the order the unit received them)."""
    ids = np.flatnonzero(index.units == build.sizes.index(size))
    return ids, index.token_counts[ids]
