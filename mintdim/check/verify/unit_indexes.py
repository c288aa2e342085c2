"""Each filled unit's ``index.npy``: its records' sample ids and token counts, in order."""

from __future__ import annotations

import numpy as np

from mintdim.build.formats import unit_index
from mintdim.check.report import SHOWN_PER_CHECK, VerifyReport
from mintdim.check.verify.index_scan import Index
from mintdim.check.verify.manifest import Build

__all__ = ["check_unit_indexes"]


def check_unit_indexes(build: Build, index: Index, report: VerifyReport) -> None:
    """Each filled unit's index.npy lists its records' sample ids and token counts, in order."""
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
        for key, column in (("sample_id", index.record_ids), ("token_count", index.record_counts)):
            want = np.concatenate([column[p] for p in positions])
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
