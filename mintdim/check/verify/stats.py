"""``stats.json`` and ``histogram.json``: the totals recounted from the index, the shards' UNK ids
and the duplicate groups."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import histogram, stats
from mintdim.build.formats.boundaries import Boundaries
from mintdim.check.report import VerifyReport
from mintdim.check.verify.index_scan import Index
from mintdim.check.verify.manifest import Build
from mintdim.check.verify.packed import packing_stats
from mintdim.shared import durable

__all__ = ["check_stats"]


def check_stats(
    build: Build,
    index: Index,
    unks: dict[int, list[int]],
    groups: list[list[int]],
    report: VerifyReport,
    rows: dict[int, Boundaries] | None = None,
) -> None:
    """Recount stats.json from the index, the shards' UNK ids and the duplicate groups (and a
    packed build's ``rows``)."""
    actual = _read_json(build.root / stats.FILENAME, report, "stats")
    if actual is None:
        return
    counter = stats.StatsCounter(
        tuple(build.sizes), policy=build.policy, extended=list(build.extended_sizes)
    )
    counter.overflow(len(build.overflows))
    # blank_lines comes from the inputs alone: only a deep verify can count it again.
    blank_lines = actual.get("blank_lines") if isinstance(actual.get("blank_lines"), int) else 0
    counter.add(
        index.token_counts,
        index.units,
        blank_lines,
        sum(len(positions) for positions in unks.values()),
    )
    expected = counter.as_dict(
        token_dtype=build.content["token_storage"]["dtype"],
        bytes_per_token=build.dtype.itemsize,
        duplicate_groups=len(groups),
        duplicate_samples=sum(len(group) for group in groups),
        samples_with_unk=len(unks),
        shard_count=len(build.shards),
        shard_bytes=sum(shard.bytes for shard in build.shards),
        packing=(
            packing_stats(
                build,
                rows or {},
                np.bincount(index.units, index.token_counts, len(build.sizes)).astype(np.int64),
            )
            if build.packed
            else None
        ),
    )
    for key in sorted(set(expected) | set(actual)):
        if actual.get(key) != expected.get(key):
            report.add(
                "stats",
                stats.FILENAME,
                "total",
                key=key,
                actual=actual.get(key),
                expected=expected.get(key),
            )
    shown = _read_json(build.root / histogram.FILENAME, report, "stats")
    wanted = histogram.histogram(build.sizes, counter.unit_counts.tolist())
    if shown is not None and shown != wanted:
        report.add("stats", histogram.FILENAME, "total", key="units", actual=shown, expected=wanted)


def _read_json(path: Path, report: VerifyReport, check: str) -> dict | None:
    if not path.is_file():
        return None  # reported by the digest check
    raw = path.read_bytes()
    try:
        content = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        report.add(check, path.name, "manifest_json", detail=str(err))
        return None
    if durable.json_bytes(content) != raw:
        report.add(check, path.name, "json_form")
    return content if isinstance(content, dict) else None
