"""The independent pass over a split: ``verification.json``, and what ``mintdim verify SPLIT``
checks again.

It trusts none of the writer's bookkeeping. It reads the split's own files back
(``splits.jsonl``, ``group-joins.jsonl``, ``evaluation-windows.jsonl``), opens each of the three
builds with ``open_build`` and reads their sample indexes and records, and, when given, opens
the input build to compare tokens with the records they were copied from. Each check records
its counts, a few examples of what failed, and a boolean:

- ``coverage``: every input sample is in exactly one split, at the id splits.jsonl gives it;
- ``copied_tokens``: each copied sample has its token count and its tokens' SHA-256 (as
  stored, little-endian, without PAD) as in splits.jsonl, and the input build's tokens;
- ``groups``: no group has members in two splits;
- ``joins``: no join edge has its ends in two splits;
- ``windows``: every window lies inside its sample, holds at most ``W + 1`` ids, and the
  predicted positions of each validation or test sample are disjoint and exactly
  ``1 .. token_count - 1`` (with a window; otherwise there is no window file to check).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import sample_index
from mintdim.errors import MintDimError
from mintdim.read.reader import UnitBuild, open_build
from mintdim.split import windows
from mintdim.split.layout import SPLIT_NAMES

__all__ = [
    "FILENAME",
    "GROUP_JOINS",
    "SPLITS",
    "SplitRows",
    "failed_lines",
    "read_splits",
    "verify",
]

FILENAME = "verification.json"
SPLITS = "splits.jsonl"
GROUP_JOINS = "group-joins.jsonl"
_EXAMPLES = 5
"""Failures listed by example in each check; the rest are counted."""


@dataclass(frozen=True, slots=True)
class SplitRows:
    """splits.jsonl as columns, one entry per input sample."""

    split: np.ndarray
    """0 train, 1 validation, 2 test; -1 for a line that names no split."""
    split_sample_id: np.ndarray
    group: np.ndarray
    stratum: list[str]
    token_count: np.ndarray
    token_sha256: list[str]


def read_splits(path: Path) -> SplitRows:
    """Read splits.jsonl (``ValueError`` when a line is out of order or malformed)."""
    names = {name: k for k, name in enumerate(SPLIT_NAMES)}
    columns: dict[str, list] = {key: [] for key in SplitRows.__slots__}
    with open(path, "rb") as handle:
        for number, line in enumerate(handle):
            row = orjson.loads(line)
            if row["sample_id"] != number:
                raise ValueError(f"{SPLITS} line {number + 1}: sample_id {row['sample_id']}")
            columns["split"].append(names.get(row["split"], -1))
            for key in ("split_sample_id", "group", "stratum", "token_count", "token_sha256"):
                columns[key].append(row[key])
    return SplitRows(
        split=np.array(columns["split"], dtype=np.int64),
        split_sample_id=np.array(columns["split_sample_id"], dtype=np.int64),
        group=np.array(columns["group"], dtype=np.int64),
        stratum=columns["stratum"],
        token_count=np.array(columns["token_count"], dtype=np.int64),
        token_sha256=columns["token_sha256"],
    )


class _Check:
    """One check's counts and examples."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: dict[str, int] = {}
        self.examples: list[str] = []
        self.failures = 0

    def count(self, key: str, value: int) -> None:
        self.counts[key] = self.counts.get(key, 0) + int(value)

    def fail(self, examples: Iterable[str], count: int | None = None) -> None:
        listed = list(examples)
        self.failures += len(listed) if count is None else count
        self.examples += listed[: max(0, _EXAMPLES - len(self.examples))]

    def result(self) -> dict[str, object]:
        return {
            "check": self.name,
            "ok": self.failures == 0,
            **self.counts,
            "failures": self.failures,
            "examples": self.examples,
        }


def verify(
    root: Path, window: int | None, source: UnitBuild | None, workers: int = 1
) -> dict[str, object]:
    """Every check over the split in ``root``; ``source``: the input build, when available
    (without it, tokens are compared with splits.jsonl's SHA-256 alone)."""
    checks = {name: _Check(name) for name in ("coverage", "copied_tokens", "groups", "joins")}
    if window is not None:
        checks["windows"] = _Check("windows")
    try:
        rows = read_splits(root / SPLITS)
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError) as err:
        for check in checks.values():
            check.fail([f"{SPLITS}: {err}"])
        return _result(checks, source)
    checks["coverage"].count("samples", rows.split.size)
    builds = _open_builds(root, checks["coverage"])
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        found = list(
            pool.map(
                lambda k: _check_build(k, builds.get(k), rows, source), range(len(SPLIT_NAMES))
            )
        )
    _coverage(rows, [ids for ids, _ in found], checks["coverage"])
    for _, tokens in found:
        checks["copied_tokens"].count("samples", tokens.counts.get("samples", 0))
        checks["copied_tokens"].fail(tokens.examples, tokens.failures)
    _groups(rows, checks["groups"])
    _joins(root / GROUP_JOINS, rows, checks["joins"])
    if window is not None:
        _windows(root / windows.FILENAME, rows, window, checks["windows"])
    return _result(checks, source)


def _result(checks: dict[str, _Check], source: UnitBuild | None) -> dict[str, object]:
    results = [check.result() for check in checks.values()]
    return {
        "ok": all(result["ok"] for result in results),
        "compared_with_input_build": source is not None,
        "checks": results,
    }


def _open_builds(root: Path, check: _Check) -> dict[int, UnitBuild]:
    builds = {}
    for k, name in enumerate(SPLIT_NAMES):
        try:
            builds[k] = open_build(root / name)
        except MintDimError as err:
            check.fail([f"{name}: {type(err).__name__}: {err.message('en').splitlines()[1]}"])
    return builds


def _check_build(
    k: int, build: UnitBuild | None, rows: SplitRows, source: UnitBuild | None
) -> tuple[np.ndarray, _Check]:
    """The input ids of one split's samples (by its sample ids), and its token check."""
    check = _Check("copied_tokens")
    if build is None:
        return np.zeros(0, dtype=np.int64), check
    ids = np.array(
        [row.get(sample_index.SOURCE_SAMPLE_ID, -1) for row in build.samples()], dtype=np.int64
    )
    name = SPLIT_NAMES[k]
    for size in build.units:
        out_ids, counts = build.unit_columns(size)
        for position, (out_id, count) in enumerate(
            zip(out_ids.tolist(), counts.tolist(), strict=True)
        ):
            tokens = build.unit_record(size, position)[:count]
            check.count("samples", 1)
            original = int(ids[out_id]) if 0 <= out_id < ids.size else -1
            problem = _token_problem(original, tokens, count, rows, source)
            if problem:
                check.fail([f"{name} sample {out_id} (input {original}): {problem}"])
    return ids, check


def _token_problem(
    original: int, tokens: np.ndarray, count: int, rows: SplitRows, source: UnitBuild | None
) -> str:
    if not 0 <= original < rows.split.size:
        return "no source_sample_id of the input build"
    if count != rows.token_count[original]:
        return f"{count} tokens, splits.jsonl says {rows.token_count[original]}"
    if hashlib.sha256(tokens.tobytes()).hexdigest() != rows.token_sha256[original]:
        return "token SHA-256 differs from splits.jsonl"
    if source is not None and not np.array_equal(source[original], tokens):
        return "tokens differ from the input build's"
    return ""


def _coverage(rows: SplitRows, found: list[np.ndarray], check: _Check) -> None:
    seen = np.zeros(rows.split.size, dtype=np.int64)
    for k, ids in enumerate(found):
        check.count(f"{SPLIT_NAMES[k]}_samples", ids.size)
        valid = (ids >= 0) & (ids < rows.split.size)
        check.fail(
            [f"{SPLIT_NAMES[k]} sample {i}: no input sample" for i in np.flatnonzero(~valid)]
        )
        np.add.at(seen, ids[valid], 1)
        where = np.flatnonzero(valid)
        wrong = where[(rows.split[ids[where]] != k) | (rows.split_sample_id[ids[where]] != where)]
        check.fail(
            [
                f"input sample {ids[i]} is {SPLIT_NAMES[k]} sample {i}; splits.jsonl says "
                f"{_split_name(rows.split[ids[i]])} sample {rows.split_sample_id[ids[i]]}"
                for i in wrong.tolist()
            ]
        )
    missing, twice = np.flatnonzero(seen == 0), np.flatnonzero(seen > 1)
    check.count("missing", missing.size)
    check.count("duplicated", twice.size)
    check.fail([f"input sample {i} is in no split" for i in missing.tolist()])
    check.fail([f"input sample {i} is in {seen[i]} places" for i in twice.tolist()])
    unnamed = np.flatnonzero(rows.split < 0)
    check.fail([f"{SPLITS} line {i + 1} names no split" for i in unnamed.tolist()])


def _split_name(k: int) -> str:
    return SPLIT_NAMES[k] if 0 <= k < len(SPLIT_NAMES) else "no split"


def _groups(rows: SplitRows, check: _Check) -> None:
    order = np.lexsort((rows.split, rows.group))
    groups, splits = rows.group[order], rows.split[order]
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if groups.size else groups
    check.count("groups", starts.size)
    mixed = np.flatnonzero((groups[1:] == groups[:-1]) & (splits[1:] != splits[:-1]))
    crossing = np.unique(groups[mixed])
    check.count("crossing", crossing.size)
    check.fail([f"group {g} has members in two splits" for g in crossing.tolist()])


def _joins(path: Path, rows: SplitRows, check: _Check) -> None:
    try:
        edges = [orjson.loads(line) for line in path.read_bytes().splitlines()]
        a = np.array([edge["a"] for edge in edges], dtype=np.int64)
        b = np.array([edge["b"] for edge in edges], dtype=np.int64)
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as err:
        check.fail([f"{GROUP_JOINS}: {err}"])
        return
    check.count("edges", a.size)
    inside = (a >= 0) & (b >= 0) & (a < rows.split.size) & (b < rows.split.size)
    check.fail([f"edge {i + 1} names no input sample" for i in np.flatnonzero(~inside)])
    a, b = a[inside], b[inside]
    crossing = np.flatnonzero(rows.split[a] != rows.split[b])
    check.count("crossing", crossing.size)
    check.fail(
        [
            f"{edges[i]['kind']} edge {a[i]}-{b[i]}: {_split_name(rows.split[a[i]])} and "
            f"{_split_name(rows.split[b[i]])}"
            for i in crossing.tolist()
        ]
    )


def _windows(path: Path, rows: SplitRows, window: int, check: _Check) -> None:
    """Each evaluated sample's windows, compared with the only cut the rule allows."""
    try:
        lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    except (OSError, orjson.JSONDecodeError) as err:
        check.fail([f"{windows.FILENAME}: {err}"])
        return
    check.count("windows", len(lines))
    by_sample: dict[tuple[int, int], list[tuple[int, int]]] = {}
    names = {name: k for k, name in enumerate(SPLIT_NAMES)}
    input_of = {
        (int(k), int(j)): i
        for i, (k, j) in enumerate(
            zip(rows.split.tolist(), rows.split_sample_id.tolist(), strict=True)
        )
    }
    for number, line in enumerate(lines, start=1):
        try:
            key = (names[line["split"]], int(line["sample_id"]))
            by_sample.setdefault(key, []).append((int(line["start"]), int(line["length"])))
            original = input_of[key]
            labels = (line["stratum"], line["group"])
        except (KeyError, TypeError, ValueError):
            check.fail([f"line {number}: not a window of a validation or test sample"])
            continue
        if key[0] == 0 or labels != (rows.stratum[original], int(rows.group[original])):
            check.fail([f"line {number}: split, stratum or group differ from {SPLITS}"])
    evaluated = np.flatnonzero(rows.split > 0)
    check.count("samples", evaluated.size)
    predicted = 0
    for original in evaluated.tolist():
        key = (int(rows.split[original]), int(rows.split_sample_id[original]))
        count = int(rows.token_count[original])
        _, start, length = windows.cut(np.array([count]), window)
        expected = list(zip(start.tolist(), length.tolist(), strict=True))
        got = sorted(by_sample.pop(key, []))
        predicted += sum(length - 1 for _, length in got)
        if got != expected:
            check.fail([_window_problem(key, count, got, window)])
    check.count("predicted_tokens", predicted)
    check.fail([f"{_split_name(k)} sample {j}: windows of no such sample" for k, j in by_sample])


def _window_problem(key: tuple[int, int], count: int, got: list, window: int) -> str:
    where = f"{_split_name(key[0])} sample {key[1]} ({count} tokens)"
    covered = [p for start, length in got for p in range(start + 1, start + length)]
    if any(length > window + 1 or length < 2 for _, length in got):
        return f"{where}: a window holds more than {window + 1} ids or predicts nothing"
    if any(start < 0 or start + length > count for start, length in got):
        return f"{where}: a window lies outside the sample"
    if sorted(covered) != list(range(1, count)):
        return f"{where}: predicted positions are not exactly 1..{count - 1} once each"
    return f"{where}: windows are not the rule's cut"


def failed_lines(result: dict[str, object]) -> list[str]:
    """One line per failed check: its name, failures and first example."""
    found = []
    for check in result["checks"]:
        if not check["ok"]:
            example = check["examples"][0] if check["examples"] else ""
            found.append(f"{check['check']}: {check['failures']} failures ({example})")
    return found
