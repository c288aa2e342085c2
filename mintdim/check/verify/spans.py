"""Each shard's segment-span file: listed, and each record's stops rising to its token count."""

from __future__ import annotations

import numpy as np

from mintdim.build.formats import spans
from mintdim.build.formats.boundaries import Boundaries
from mintdim.check.report import SHOWN_PER_CHECK, VerifyReport
from mintdim.check.verify.index_scan import Index
from mintdim.check.verify.manifest import Build, Shard

__all__ = ["check_spans"]


def check_spans(
    build: Build, index: Index, report: VerifyReport, rows: dict[int, Boundaries] | None = None
) -> None:
    """Each shard's spans file: listed, intact, and each record's stops rising to its count (a
    packed shard's: one record per sample its rows hold, row after row)."""
    for position, shard in enumerate(build.shards):
        if not build.span_width:
            continue
        entry = shard.spans
        relative = shard.path.removesuffix(".bin") + spans.SUFFIX
        if entry is None or entry.path != relative or not (build.root / relative).is_file():
            report.add("spans", relative, "missing")
            continue
        data = np.fromfile(build.root / relative, dtype=spans.DTYPE)
        width = build.span_width
        if data.size != shard.samples * width:
            continue  # a size failure already
        records = spans.read_records(data, width)
        counts, ids = index.record_counts[position], index.record_ids[position]
        if build.packed:
            counts, ids = _packed_samples(build, shard, (rows or {}).get(shard.unit))
            if counts.size != records.shape[0]:
                continue  # the shard entry's failure already
        stops = records[:, 1:]
        bad_source = (records[:, 0] < 0) | (records[:, 0] >= len(build.sources))
        rising = (stops[:, :1] >= 0) & (np.diff(stops, axis=1) >= 0).all(axis=1)[:, None]
        bad_stops = ~rising[:, 0] | (stops[:, -1] != counts)
        for row in np.flatnonzero(bad_source)[:SHOWN_PER_CHECK].tolist():
            report.add(
                "spans",
                relative,
                "spans_source",
                row=row,
                sample_id=int(ids[row]),
                source=int(records[row, 0]),
                count=len(build.sources),
            )
        for row in np.flatnonzero(bad_stops & (counts >= 0))[:SHOWN_PER_CHECK].tolist():
            report.add(
                "spans",
                relative,
                "spans_record",
                row=row,
                sample_id=int(ids[row]),
                stops=stops[row].tolist(),
                token_count=int(counts[row]),
            )


def _packed_samples(build: Build, shard: Shard, own: Boundaries | None) -> tuple[np.ndarray, ...]:
    """The token counts and ids of the samples a packed shard's rows hold, in order."""
    name = shard.path.rpartition("_")[2].removesuffix(".bin")
    if own is None or not name.isdigit() or shard.rows is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first = int(name) * build.samples_per_shard
    last = min(first + shard.rows, own.rows)
    lo, hi = int(own.offsets[min(first, own.rows)]), int(own.offsets[last])
    return own.length[lo:hi], own.sample_id[lo:hi]
