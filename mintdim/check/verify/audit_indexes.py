"""The audit indexes: ``overflow_index.jsonl``, ``duplicate_index.jsonl`` and ``unk_index.jsonl``
equal, line for line, what the index and the shards give."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import duplicate_index, overflow_index, unk_index
from mintdim.check.report import VerifyReport, apart
from mintdim.check.verify.index_scan import Index
from mintdim.check.verify.manifest import Build

__all__ = ["check_duplicates", "check_overflow_index", "check_unk_index"]


def check_overflow_index(build: Build, index: Index, report: VerifyReport) -> None:
    """Each overflow line names a sample of this build (or none, when skipped) at its place."""
    largest = max(build.planned_sizes)
    for line, row in enumerate(build.overflows, start=1):
        sample_id = row.get("sample_id")
        expected = {
            "action": build.policy,
            "max_unit_size": largest,
            "sample_id is null": build.policy == "skip",
        }
        actual = {
            "action": row.get("action"),
            "max_unit_size": row.get("max_unit_size"),
            "sample_id is null": sample_id is None,
        }
        if isinstance(sample_id, int) and 0 <= sample_id < index.token_counts.size:
            expected["source_line"] = int(index.lines[sample_id])
            actual["source_line"] = row.get("source_line")
            expected["source_file"] = build.sources[index.files[sample_id]]
            actual["source_file"] = row.get("source_file")
            if build.policy == "extend":
                expected["new_unit_size"] = build.sizes[index.units[sample_id]]
                actual["new_unit_size"] = row.get("new_unit_size")
        for key in expected:
            if actual[key] != expected[key]:
                report.add(
                    "overflow_index",
                    overflow_index.FILENAME,
                    "index_place",
                    line=line,
                    sample_id=sample_id,
                    key=key,
                    actual=actual[key],
                    expected=expected[key],
                )


def check_duplicates(build: Build, index: Index) -> tuple[list[list[int]], VerifyReport]:
    """The duplicate groups of the index's hashes, and duplicate_index.jsonl checked against
    them (any thread: a report of its own, for the caller to take in order)."""
    groups = duplicate_index.groups([index.hashes.view(np.uint8).reshape(-1, 64)])
    return groups, apart(_check_duplicate_index, build, index, groups)


def _check_duplicate_index(
    build: Build, index: Index, groups: list[list[int]], report: VerifyReport
) -> None:
    members = [i for ids in groups for i in ids]
    places = zip(members, index.files[members].tolist(), index.lines[members].tolist(), strict=True)
    locations = {i: {"source_file": build.sources[f], "source_line": n} for i, f, n in places}
    hashes = index.hashes[[ids[0] for ids in groups]].tolist()
    expected = [
        duplicate_index.group_line(digest.decode(), ids, locations)
        for digest, ids in zip(hashes, groups, strict=True)
    ]
    _compare_lines(build.root, duplicate_index.FILENAME, expected, report, "duplicate_index")


def check_unk_index(
    build: Build, index: Index, unks: dict[int, list[int]], report: VerifyReport
) -> None:
    sources = [orjson.dumps(path).decode() for path in build.sources]
    ids = sorted(unks)
    hashes, files, lines = (
        column[ids].tolist() for column in (index.hashes, index.files, index.lines)
    )
    parts: list[str] = []
    # unk_parts takes samples of one source file: consecutive ids of one file at a time.
    for file, group in itertools.groupby(range(len(ids)), key=files.__getitem__):
        run = list(group)
        parts += unk_index.unk_parts(
            [hashes[k].decode() for k in run],
            sources[file],
            [lines[k] for k in run],
            [unks[ids[k]] for k in run],
        )
    expected = [unk_index.unk_line(i, part).encode() for i, part in zip(ids, parts, strict=True)]
    _compare_lines(build.root, unk_index.FILENAME, expected, report, "unk_index")


def _compare_lines(
    root: Path, name: str, expected: list[bytes], report: VerifyReport, check: str
) -> None:
    """The file must be exactly the ``expected`` lines (each with its newline), as their
    module writes them; a file that is not is compared line by line to say where."""
    path = root / name
    if not path.is_file():
        return  # reported by the digest check
    data = path.read_bytes()
    if data == b"".join(expected):
        return
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, (line, wanted) in enumerate(zip(lines, expected, strict=False), start=1):
        if line + b"\n" != wanted:
            report.add(
                check,
                name,
                "index_file_line",
                line=number,
                actual=line.decode("utf-8", "replace"),
                expected=wanted.decode().removesuffix("\n"),
            )
    if len(lines) != len(expected):
        report.add(check, name, "index_file_count", actual=len(lines), expected=len(expected))
