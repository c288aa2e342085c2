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
from mintdim.shared.lang import Bilingual
from mintdim.split import windows
from mintdim.split.layout import SPLIT_NAMES

__all__ = [
    "FILENAME",
    "GROUP_JOINS",
    "SPLITS",
    "EXAMPLES",
    "SplitRows",
    "describe",
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
    data = path.read_bytes()
    rows = orjson.loads(b"[" + data.rstrip(b"\n").replace(b"\n", b",") + b"]") if data else []
    ids = np.array([row["sample_id"] for row in rows], dtype=np.int64)
    wrong = np.flatnonzero(ids != np.arange(ids.size))
    if wrong.size:
        raise ValueError(f"{SPLITS} line {int(wrong[0]) + 1}: sample_id {int(ids[wrong[0]])}")
    return SplitRows(
        split=np.array([names.get(row["split"], -1) for row in rows], dtype=np.int64),
        split_sample_id=np.array([row["split_sample_id"] for row in rows], dtype=np.int64),
        group=np.array([row["group"] for row in rows], dtype=np.int64),
        stratum=[row["stratum"] for row in rows],
        token_count=np.array([row["token_count"] for row in rows], dtype=np.int64),
        token_sha256=[row["token_sha256"] for row in rows],
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

    def fail(self, code: str, items: Iterable[dict], count: int | None = None) -> None:
        """Count failures of one kind; keep the first few as examples (``code`` and facts)."""
        listed = [{"code": code, **facts} for facts in items]
        self.failures += len(listed) if count is None else count
        self.examples += listed[: max(0, _EXAMPLES - len(self.examples))]

    def absorb(self, other: _Check) -> None:
        """Take another part's failures (a build checked on another thread)."""
        self.failures += other.failures
        self.examples += other.examples[: max(0, _EXAMPLES - len(self.examples))]

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
            check.fail("unreadable", [{"file": SPLITS, "detail": str(err)}])
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
        checks["copied_tokens"].absorb(tokens)
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
            said = {lang: " ".join(err.message(lang).splitlines()[1:3]) for lang in ("en", "vi")}
            check.fail("no_build", [{"split": name, "en": said["en"], "vi": said["vi"]}])
    return builds


def _check_build(
    k: int, build: UnitBuild | None, rows: SplitRows, source: UnitBuild | None
) -> tuple[np.ndarray, _Check]:
    """The input ids of one split's samples (by its sample ids), and its token check: shard by
    shard, each record's count and token SHA-256 against splits.jsonl, and the whole record
    (tokens, then PAD) against the input build's record of the same sample."""
    check = _Check("copied_tokens")
    if build is None:
        return np.zeros(0, dtype=np.int64), check
    ids = np.array(
        [row.get(sample_index.SOURCE_SAMPLE_ID, -1) for row in build.samples()], dtype=np.int64
    )
    places = _Places(source) if source is not None else None
    for size in build.units:
        out_ids, counts = build.unit_columns(size)
        per_shard = build.samples_per_shard
        for start in range(0, out_ids.size, per_shard):
            records = build.shard(size, start // per_shard)
            chunk = slice(start, start + records.shape[0])
            found = _shard_problems(records, out_ids[chunk], counts[chunk], ids, rows, places, size)
            check.count("samples", records.shape[0])
            for row, problem in found:
                out_id = int(out_ids[start + row])
                original = int(ids[out_id]) if 0 <= out_id < ids.size else -1
                facts = {"split": SPLIT_NAMES[k], "sample": out_id, "input": original}
                check.fail(problem, [{**facts, "count": int(counts[start + row])}])
    return ids, check


class _Places:
    """Where each sample of the input build is: its unit and record position."""

    def __init__(self, source: UnitBuild) -> None:
        self.source = source
        count = len(source)
        self.unit = np.full(count, -1, dtype=np.int64)
        self.position = np.full(count, -1, dtype=np.int64)
        for size in source.units:
            sample_ids, _ = source.unit_columns(size)
            self.unit[sample_ids] = size
            self.position[sample_ids] = np.arange(sample_ids.size)

    def records(self, size: int, originals: np.ndarray) -> np.ndarray:
        """The input's records of ``originals`` (all of unit ``size``), in order."""
        per_shard = self.source.samples_per_shard
        numbers, rows = np.divmod(self.position[originals], per_shard)
        out = np.empty((originals.size, size), dtype=self.source.dtype)
        for number in np.unique(numbers).tolist():
            chosen = numbers == number
            out[chosen] = self.source.shard(size, number)[rows[chosen]]
        return out


def _shard_problems(
    records: np.ndarray,
    out_ids: np.ndarray,
    counts: np.ndarray,
    ids: np.ndarray,
    rows: SplitRows,
    places: _Places | None,
    size: int,
) -> list[tuple[int, str]]:
    """(row, problem) of each record of one output shard that is not its input's copy."""
    known = (out_ids >= 0) & (out_ids < ids.size)
    originals = np.where(known, ids[np.clip(out_ids, 0, max(ids.size - 1, 0))], -1)
    valid = (originals >= 0) & (originals < rows.split.size)
    safe = np.where(valid, originals, 0)
    problems = np.full(records.shape[0], "", dtype=object)
    problems[~valid] = "no_source_id"
    problems[valid & (counts != rows.token_count[safe])] = "token_count"
    digests = rows.token_sha256
    for row in np.flatnonzero(problems == "").tolist():
        tokens = records[row, : counts[row]].tobytes()
        if hashlib.sha256(tokens).hexdigest() != digests[originals[row]]:
            problems[row] = "token_sha256"
    if places is not None:
        clean = np.flatnonzero(problems == "")
        same_unit = places.unit[originals[clean]] == size
        problems[clean[~same_unit]] = "token_input"
        clean = clean[same_unit]
        copied = places.records(size, originals[clean])
        differ = (copied != records[clean]).any(axis=1)
        problems[clean[differ]] = "token_input"
    return [(row, problems[row]) for row in np.flatnonzero(problems != "").tolist()]


def _coverage(rows: SplitRows, found: list[np.ndarray], check: _Check) -> None:
    seen = np.zeros(rows.split.size, dtype=np.int64)
    places = []
    for k, ids in enumerate(found):
        check.count(f"{SPLIT_NAMES[k]}_samples", ids.size)
        valid = (ids >= 0) & (ids < rows.split.size)
        np.add.at(seen, ids[valid], 1)
        where = np.flatnonzero(valid)
        wrong = where[(rows.split[ids[where]] != k) | (rows.split_sample_id[ids[where]] != where)]
        places.append((k, ids, valid, wrong))
    # What is missing or twice first: a sample out of place follows from those.
    missing, twice = np.flatnonzero(seen == 0), np.flatnonzero(seen > 1)
    check.count("missing", missing.size)
    check.count("duplicated", twice.size)
    check.fail("missing", [{"input": i} for i in missing.tolist()])
    check.fail("duplicated", [{"input": i, "places": int(seen[i])} for i in twice.tolist()])
    unnamed = np.flatnonzero(rows.split < 0)
    check.fail("no_split", [{"line": i + 1} for i in unnamed.tolist()])
    for k, ids, valid, wrong in places:
        name = SPLIT_NAMES[k]
        check.fail(
            "no_source_id", [{"split": name, "sample": i} for i in np.flatnonzero(~valid).tolist()]
        )
        check.fail(
            "misplaced",
            [
                {
                    "input": int(ids[i]),
                    "split": name,
                    "sample": i,
                    "listed_split": _split_name(rows.split[ids[i]]),
                    "listed_sample": int(rows.split_sample_id[ids[i]]),
                }
                for i in wrong.tolist()
            ],
        )


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
    check.fail("group_crossing", [{"group": g} for g in crossing.tolist()])


def _joins(path: Path, rows: SplitRows, check: _Check) -> None:
    try:
        edges = [orjson.loads(line) for line in path.read_bytes().splitlines()]
        a = np.array([edge["a"] for edge in edges], dtype=np.int64)
        b = np.array([edge["b"] for edge in edges], dtype=np.int64)
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as err:
        check.fail("unreadable", [{"file": GROUP_JOINS, "detail": str(err)}])
        return
    check.count("edges", a.size)
    inside = (a >= 0) & (b >= 0) & (a < rows.split.size) & (b < rows.split.size)
    check.fail("edge_outside", [{"line": i + 1} for i in np.flatnonzero(~inside).tolist()])
    a, b = a[inside], b[inside]
    crossing = np.flatnonzero(rows.split[a] != rows.split[b])
    check.count("crossing", crossing.size)
    check.fail(
        "edge_crossing",
        [
            {
                "kind": edges[i]["kind"],
                "a": int(a[i]),
                "b": int(b[i]),
                "split_a": _split_name(rows.split[a[i]]),
                "split_b": _split_name(rows.split[b[i]]),
            }
            for i in crossing.tolist()
        ],
    )


def _windows(path: Path, rows: SplitRows, window: int, check: _Check) -> None:
    """Each evaluated sample's windows, compared with the only cut the rule allows."""
    try:
        lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    except (OSError, orjson.JSONDecodeError) as err:
        check.fail("unreadable", [{"file": windows.FILENAME, "detail": str(err)}])
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
            check.fail("window_line", [{"line": number}])
            continue
        if key[0] == 0 or labels != (rows.stratum[original], int(rows.group[original])):
            check.fail("window_labels", [{"line": number}])
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
            code = _window_problem(count, got, window)
            check.fail(code, [{"split": _split_name(key[0]), "sample": key[1], "count": count}])
    check.count("predicted_tokens", predicted)
    check.fail("window_orphan", [{"split": _split_name(k), "sample": j} for k, j in by_sample])


def _window_problem(count: int, got: list, window: int) -> str:
    covered = [p for start, length in got for p in range(start + 1, start + length)]
    if any(length > window + 1 or length < 2 for _, length in got):
        return "window_size"
    if any(start < 0 or start + length > count for start, length in got):
        return "window_outside"
    if sorted(covered) != list(range(1, count)):
        return "window_coverage"
    return "window_cut"


_SAMPLE = "{split} sample {sample} (input {input})"
_SAMPLE_VI = "mẫu {sample} của {split} (đầu vào {input})"
EXAMPLES: dict[str, Bilingual] = {
    "unreadable": Bilingual("{file}: {detail}", "{file}: {detail}"),
    "no_build": Bilingual("{split}: {en}", "{split}: {vi}"),
    "no_source_id": Bilingual(
        "{split} sample {sample} names no input sample (source_sample_id)",
        "mẫu {sample} của {split} không chỉ tới mẫu đầu vào nào (source_sample_id)",
    ),
    "token_count": Bilingual(
        _SAMPLE + ": {count} tokens, splits.jsonl says otherwise",
        _SAMPLE_VI + ": {count} token, splits.jsonl ghi khác",
    ),
    "token_sha256": Bilingual(
        _SAMPLE + ": token SHA-256 differs from splits.jsonl",
        _SAMPLE_VI + ": SHA-256 của token khác với splits.jsonl",
    ),
    "token_input": Bilingual(
        _SAMPLE + ": its record (tokens, then PAD) differs from the input build's",
        _SAMPLE_VI + ": bản ghi (token, rồi PAD) khác với bản ghi của bản build đầu vào",
    ),
    "missing": Bilingual(
        "input sample {input} is in no split", "mẫu đầu vào {input} không nằm trong phần nào"
    ),
    "duplicated": Bilingual(
        "input sample {input} is in {places} places", "mẫu đầu vào {input} nằm ở {places} chỗ"
    ),
    "no_split": Bilingual(
        "splits.jsonl line {line} names no split", "dòng {line} của splits.jsonl không ghi phần nào"
    ),
    "misplaced": Bilingual(
        "input sample {input} is {split} sample {sample}; splits.jsonl says {listed_split} "
        "sample {listed_sample}",
        "mẫu đầu vào {input} là mẫu {sample} của {split}; splits.jsonl ghi mẫu {listed_sample} "
        "của {listed_split}",
    ),
    "group_crossing": Bilingual(
        "group {group} has members in two splits", "nhóm {group} có thành viên ở hai phần"
    ),
    "edge_outside": Bilingual(
        "group-joins.jsonl line {line} names no input sample",
        "dòng {line} của group-joins.jsonl không chỉ tới mẫu đầu vào nào",
    ),
    "edge_crossing": Bilingual(
        "{kind} edge {a}-{b} joins {split_a} and {split_b}",
        "liên kết {kind} {a}-{b} nối {split_a} và {split_b}",
    ),
    "window_line": Bilingual(
        "evaluation-windows.jsonl line {line} is no window of a validation or test sample",
        "dòng {line} của evaluation-windows.jsonl không phải cửa sổ của mẫu validation hay test",
    ),
    "window_labels": Bilingual(
        "evaluation-windows.jsonl line {line}: split, stratum or group differ from splits.jsonl",
        "dòng {line} của evaluation-windows.jsonl: phần, tầng hoặc nhóm khác với splits.jsonl",
    ),
    "window_size": Bilingual(
        "{split} sample {sample} ({count} tokens): a window holds too many ids or predicts nothing",
        "mẫu {sample} của {split} ({count} token): một cửa sổ chứa quá nhiều id hoặc không dự đoán gì",
    ),
    "window_outside": Bilingual(
        "{split} sample {sample} ({count} tokens): a window lies outside the sample",
        "mẫu {sample} của {split} ({count} token): một cửa sổ nằm ngoài mẫu",
    ),
    "window_coverage": Bilingual(
        "{split} sample {sample} ({count} tokens): predicted positions are not 1..count-1 once each",
        "mẫu {sample} của {split} ({count} token): các vị trí được dự đoán không phải 1..count-1, "
        "mỗi vị trí một lần",
    ),
    "window_cut": Bilingual(
        "{split} sample {sample} ({count} tokens): the windows are not the rule's cut",
        "mẫu {sample} của {split} ({count} token): các cửa sổ không đúng cách cắt của quy tắc",
    ),
    "window_orphan": Bilingual(
        "windows of {split} sample {sample}, which is no validation or test sample",
        "cửa sổ của mẫu {sample} thuộc {split}, không phải mẫu validation hay test",
    ),
}
"""How each failure example of verification.json reads (its ``code`` and facts)."""


def describe(example: dict, lang: str | None = None) -> str:
    """One failure example of verification.json in ``lang``."""
    facts = {key: value for key, value in example.items() if key != "code"}
    return EXAMPLES[example["code"]].render(lang, **facts)


def failed_lines(result: dict[str, object], lang: str) -> list[str]:
    """One line per failed check in ``lang``: its name, failures and examples."""
    found = []
    for check in result["checks"]:
        if not check["ok"]:
            examples = "; ".join(describe(example, lang) for example in check["examples"])
            found.append(f"{check['check']}: {check['failures']} ({examples})")
    return found
