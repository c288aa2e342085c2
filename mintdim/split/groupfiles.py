"""The files of a groups directory: ``groups.json`` (the frozen membership), ``joins.jsonl`` (the
confirmed edges) and a reviewer's manual joins file.

``groups.json`` is one JSON object, one group per line so it reads (and diffs) well::

    {"format_version":1,"samples":475,"group_count":471,"groups":[
    {"group":0,"members":[0]},
    {"group":1,"members":[1,57]},
    ...
    ]}

Every sample of the build is in exactly one group; a group's id is its smallest member's
sample id, so it is stable (it depends on the membership alone), and groups are listed by id.

``joins.jsonl`` has one line per confirmed edge, ``a < b``, ordered by ``(a, b, kind)``::

    {"a":1,"b":57,"kind":"near","evidence":{"coverage":0.93,...}}

Kinds: ``key`` (a declared field's normalized value), ``alias`` (equal only after the alias
rules), ``exact`` (the same text up to whitespace), ``near`` (split/near.py's rule),
``manual`` (a reviewer's join, with its reason). Members of a class of equal keys or texts
are joined to the class's first sample, so a class of n samples gives n - 1 edges.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from mintdim.errors import GroupsMismatchError, JoinsLineError, MintDimFileNotFoundError

__all__ = [
    "GROUPS",
    "JOINS",
    "KINDS",
    "Edge",
    "group_lines",
    "joins_lines",
    "read_groups",
    "read_joins",
    "read_manual_joins",
]

GROUPS = "groups.json"
JOINS = "joins.jsonl"
KINDS = ("key", "alias", "exact", "near", "manual")
GROUPS_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Edge:
    """A confirmed link between two samples (``a < b``)."""

    a: int
    b: int
    kind: str
    evidence: dict

    def line(self) -> bytes:
        """Its joins.jsonl line."""
        row = {"a": self.a, "b": self.b, "kind": self.kind, "evidence": self.evidence}
        return orjson.dumps(row) + b"\n"

    def order(self) -> tuple[int, int, int]:
        """Its place in joins.jsonl."""
        return self.a, self.b, KINDS.index(self.kind)


def group_lines(samples: int, group_of: np.ndarray) -> Iterator[bytes]:
    """groups.json, piece by piece; ``group_of``: each sample's group id."""
    order = np.argsort(group_of, kind="stable")
    ids = group_of[order]
    cuts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if ids.size else ids
    head = {"format_version": GROUPS_FORMAT, "samples": samples, "group_count": int(cuts.size)}
    yield orjson.dumps(head)[:-1] + b',"groups":[\n'
    bounds = np.r_[cuts, ids.size].tolist()
    members = order.tolist()
    for number, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        row = {"group": members[start], "members": members[start:stop]}
        yield orjson.dumps(row) + (b",\n" if number < cuts.size - 1 else b"\n")
    yield b"]}\n"


def joins_lines(edges: Iterable[Edge]) -> Iterator[bytes]:
    """joins.jsonl's lines, in its order."""
    for edge in sorted(edges, key=Edge.order):
        yield edge.line()


def read_groups(directory: Path, shown: str, build: str, samples: int) -> np.ndarray:
    """Each sample's group id from groups.json; ``GroupsMismatchError`` unless it holds every
    sample of a build of ``samples`` samples exactly once, each group listed under its id."""
    try:
        entries = orjson.loads((directory / GROUPS).read_bytes())["groups"]
        ids = np.array([entry["group"] for entry in entries], dtype=np.int64)
        sizes = np.array([len(entry["members"]) for entry in entries], dtype=np.int64)
        members = np.fromiter(
            itertools.chain.from_iterable(entry["members"] for entry in entries),
            dtype=np.int64,
            count=int(sizes.sum()),
        )
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as err:
        raise _refused(shown, build, "malformed", detail=str(err)) from err
    if (sizes < 1).any() or (members < 0).any() or (members >= samples).any():
        raise _refused(shown, build, "outside", last=samples - 1)
    counts = np.bincount(members, minlength=samples)
    if (counts != 1).any():
        sample = int(np.flatnonzero(counts != 1)[0])
        raise _refused(shown, build, "count", sample=sample, found=str(counts[sample]))
    starts = np.cumsum(sizes) - sizes
    if not np.array_equal(np.minimum.reduceat(members, starts) if members.size else ids, ids):
        raise _refused(shown, build, "not_smallest")
    group_of = np.empty(samples, dtype=np.int64)
    group_of[members] = np.repeat(ids, sizes)
    return group_of


def _refused(shown: str, build: str, problem: str, **facts: object) -> GroupsMismatchError:
    return GroupsMismatchError(groups=shown, build=build, problem=problem, **facts)


def read_joins(directory: Path) -> list[Edge]:
    """The edges of joins.jsonl."""
    edges = []
    with open(directory / JOINS, "rb") as handle:
        for line in handle:
            row = orjson.loads(line)
            edges.append(Edge(int(row["a"]), int(row["b"]), row["kind"], row["evidence"]))
    return edges


def read_manual_joins(path: str | os.PathLike[str], samples: int) -> list[Edge]:
    """A reviewer's joins file: ``{"a": id, "b": id, "reason": "..."}`` per line (blank lines
    are skipped); the first bad line is ``JoinsLineError`` with its file and line."""
    shown = os.fspath(path)
    edges = []
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise MintDimFileNotFoundError(context="joins", path=shown) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            a, b, reason = _manual_line(shown, number, raw, samples)
            if a != b:
                low, high = min(a, b), max(a, b)
                edges.append(Edge(low, high, "manual", {"reason": reason, "line": number}))
    return edges


def _manual_line(shown: str, number: int, raw: bytes, samples: int) -> tuple[int, int, str]:
    def bad(problem: str, **facts: object) -> JoinsLineError:
        return JoinsLineError(file=shown, line=number, problem=problem, **facts)

    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise bad("json", detail=str(err)) from None
    if not isinstance(row, dict):
        raise bad("not_object")
    ids = []
    for key in ("a", "b"):
        if key not in row:
            raise bad("missing", key=key)
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("not_an_id", key=key, value=orjson.dumps(value).decode())
        if not 0 <= value < samples:
            raise bad("unknown_sample", key=key, value=str(value), last=samples - 1)
        ids.append(value)
    reason = row.get("reason", "")
    if not isinstance(reason, str):
        raise bad("reason", value=orjson.dumps(reason).decode())
    return ids[0], ids[1], reason
