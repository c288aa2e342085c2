"""``mintdim.group(build, out, ...)`` / ``mintdim group BUILD --out GROUPS``: link the samples
of a finished build into frozen groups that a split never separates.

Four kinds of link, unioned into groups (connected components):

- declared keys: each ``keys`` field read from the sample's source record, normalized
  (split/text.py); equal values link (``key``), values equal only after the ``alias_rules``
  link too (``alias``); a missing or empty value links nothing;
- exact text: the same rendered text up to whitespace (``exact``);
- near-duplicates: split/near.py's bounded search and exact rule (``near``);
- manual joins: a reviewer's ``{"a", "b", "reason"}`` lines (``manual``).

Everything is read and computed before the output directory is made; it then receives
``groups.json``, ``joins.jsonl`` (split/groupfiles.py), ``report.json``, ``REPORT.md`` and,
last, ``manifest.json`` (split/layout.py). A bounded candidate search is not an exhaustive
identity guarantee: the report says what it compared and what its caps skipped.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mintdim.errors import SplitOptionError
from mintdim.shared import durable
from mintdim.split import layout, report
from mintdim.split.groupfiles import (
    GROUPS,
    JOINS,
    KINDS,
    Edge,
    group_lines,
    joins_lines,
    read_manual_joins,
)
from mintdim.split.near import NearIndex, NearSettings, Prepared, prepare
from mintdim.split.samples import BuildSamples, RecordBatch, read_build, read_records
from mintdim.split.text import (
    AliasRule,
    canonical,
    exact_digest,
    normalize,
    parse_alias_rules,
    warm,
)
from mintdim.split.text import value_text as _value_text

__all__ = ["GroupResult", "group", "group_settings"]

_LARGEST = 20
"""Groups the report lists, largest first."""
_SHOWN_MEMBERS = 5
"""Members the report shows of each of them."""


@dataclass(frozen=True, slots=True)
class GroupResult:
    """What ``group()`` wrote."""

    path: str
    samples: int
    groups: int
    edges: dict[str, int]
    """Confirmed edges by kind."""
    report: dict = field(repr=False)
    """The content of report.json."""


def group(
    build: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    keys: Sequence[str] = (),
    alias_rules: Sequence[str] = (),
    near_duplicates: bool = True,
    joins: str | os.PathLike[str] | None = None,
    min_chars: int = 200,
    min_distinct: int = 100,
    coverage: float = 0.9,
    sketch_size: int = 40,
    band_rows: int = 5,
    min_shared: int = 1,
    max_postings: int = 128,
    max_candidates: int = 128,
    workers: int | None = 1,
) -> GroupResult:
    """Group the samples of the finished build ``build`` into the fresh directory ``out``.

    ``keys``: source-record fields whose equal (normalized) values link samples;
    ``alias_rules``: ``'REGEX=>REPLACEMENT'`` strings canonicalizing those values further;
    ``near_duplicates``: search and confirm near-duplicates (the rule's ``min_chars``,
    ``min_distinct``, ``coverage``; the search's MinHash ``sketch_size`` in bands of
    ``band_rows``, ``min_shared`` buckets per pair, ``max_postings`` per bucket,
    ``max_candidates`` per sample); ``joins``: a reviewer's
    JSONL of manual joins; ``workers``: processes computing sketches (None: every core). The
    output is the same for every worker count.
    """
    keys, rules, settings, workers = group_settings(
        keys,
        alias_rules,
        NearSettings(
            min_chars,
            min_distinct,
            coverage,
            sketch_size,
            band_rows,
            min_shared,
            max_postings,
            max_candidates,
        ),
        workers,
    )
    samples = read_build(build)
    layout.check_fresh(out, {os.fspath(build): samples.path})
    manual = [] if joins is None else read_manual_joins(joins, samples.count)
    linker = _Linker(samples, keys, rules, settings if near_duplicates else None)
    for batch, prepared in _prepared(samples, keys, settings, near_duplicates, workers):
        linker.add(batch, prepared)
    edges = [*linker.edges(), *manual]
    group_of = components(samples.count, edges)
    content = _report(samples, keys, rules, linker, edges, manual, joins, group_of)
    path = layout.fresh_directory(out, {os.fspath(build): samples.path})
    with layout.running(path, "mintdim group"):
        _write_lines(path / GROUPS, group_lines(samples.count, group_of))
        _write_lines(path / JOINS, joins_lines(edges))
        durable.write_json_atomic(path / report.REPORT_JSON, content)
        markdown = report.groups_markdown(content, samples.row_files())
        (path / report.REPORT_MD).write_text(markdown, encoding="utf-8")
        policy = {
            "keys": list(keys),
            "alias_rules": [rule.text for rule in rules],
            "near_duplicates": near_duplicates,
            **settings.as_dict(),
            "joins": None if joins is None else os.fspath(joins),
        }
        layout.write_manifest(path, _manifest(path, samples, policy, joins))
    counts = content["edges"]
    return GroupResult(
        os.fspath(out), samples.count, content["groups"]["count"], dict(counts), content
    )


def group_settings(
    keys: Sequence[str] | str,
    alias_rules: Sequence[str],
    settings: NearSettings,
    workers: int | None,
) -> tuple[tuple[str, ...], tuple[AliasRule, ...], NearSettings, int]:
    """``group()``'s options checked (named errors) and resolved, before any work: the runner
    checks them before it builds."""
    names = (keys,) if isinstance(keys, str) else tuple(keys)
    for name in names:
        if not isinstance(name, str) or not name:
            raise SplitOptionError(option="keys", value=name, rule="field_name")
    if workers is None:
        workers = os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise SplitOptionError(option="workers", value=workers, rule="positive")
    return tuple(dict.fromkeys(names)), parse_alias_rules(alias_rules), settings, workers


# ---------------------------------------------------------------------------
# Reading and preparing
# ---------------------------------------------------------------------------


def _prepare_batch(
    texts: list[str], settings: NearSettings, near: bool
) -> tuple[list[bytes], Prepared | None]:
    """What a worker computes for one batch: exact digests and near-duplicate sketches."""
    return [exact_digest(text) for text in texts], prepare(texts, settings) if near else None


def _prepared(
    samples: BuildSamples,
    keys: tuple[str, ...],
    settings: NearSettings,
    near: bool,
    workers: int,
) -> Iterator[tuple[RecordBatch, tuple[list[bytes], Prepared | None]]]:
    """Each batch of source records with its prepared digests and sketches, in order."""
    batches = read_records(samples, [(name, "key") for name in keys])
    if workers == 1:
        for batch in batches:
            yield batch, _prepare_batch(batch.texts, settings, near)
        return
    warm()
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending = []
        for batch in batches:
            pending.append((batch, pool.submit(_prepare_batch, batch.texts, settings, near)))
            if len(pending) > 2 * workers:  # bounded: a few batches in flight
                done, future = pending.pop(0)
                yield done, future.result()
        for done, future in pending:
            yield done, future.result()


# ---------------------------------------------------------------------------
# Linking
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class _KeyClasses:
    """One key field's values seen so far: the first sample of each value, plain and canonical."""

    first: dict[str, int] = field(default_factory=dict)
    canonical_first: dict[str, tuple[int, str]] = field(default_factory=dict)
    with_value: int = 0
    edges: list[Edge] = field(default_factory=list)


class _Linker:
    """Collects the key, alias, exact and near-duplicate edges batch by batch."""

    def __init__(
        self,
        samples: BuildSamples,
        keys: tuple[str, ...],
        rules: tuple[AliasRule, ...],
        near: NearSettings | None,
    ) -> None:
        self.samples = samples
        self.rules = rules
        self.keys = {name: _KeyClasses() for name in keys}
        self.exact_first: dict[bytes, int] = {}
        self.exact_class = np.arange(samples.count, dtype=np.int64)
        self.exact_edges: list[Edge] = []
        self.near = None if near is None else NearIndex(near)

    def add(self, batch: RecordBatch, prepared: tuple[list[bytes], Prepared | None]) -> None:
        digests, sketches = prepared
        ids = batch.ids.tolist()
        for name, classes in self.keys.items():
            for sample_id, value in zip(ids, batch.values[name], strict=True):
                text = _value_text(value)
                if text is not None and (plain := normalize(text)):
                    self._key(name, classes, sample_id, plain)
        for sample_id, digest in zip(ids, digests, strict=True):
            first = self.exact_first.setdefault(digest, sample_id)
            if first != sample_id:
                self.exact_class[sample_id] = first
                self.exact_edges.append(Edge(first, sample_id, "exact", {"sha256": digest.hex()}))
        if self.near is not None and sketches is not None:
            self.near.add(batch.ids, sketches)

    def _key(self, name: str, classes: _KeyClasses, sample_id: int, plain: str) -> None:
        classes.with_value += 1
        first = classes.first.setdefault(plain, sample_id)
        if first != sample_id:
            classes.edges.append(Edge(first, sample_id, "key", {"field": name, "value": plain}))
            return
        if not self.rules:
            return
        value = canonical(plain, self.rules)
        if not value:
            return
        owner, owner_plain = classes.canonical_first.setdefault(value, (sample_id, plain))
        if owner != sample_id:  # a new plain value, equal to an earlier one only after the rules
            evidence = {"field": name, "value": plain, "joined_value": owner_plain}
            classes.edges.append(Edge(owner, sample_id, "alias", {**evidence, "canonical": value}))

    def edges(self) -> list[Edge]:
        """Every edge found; a near-duplicate pair already joined as exact text is left out."""
        found = [edge for classes in self.keys.values() for edge in classes.edges]
        found += self.exact_edges
        if self.near is not None:
            near = list(self.near.edges())
            kept = [(a, b, e) for a, b, e in near if self.exact_class[a] != self.exact_class[b]]
            self.near.stats["confirmed_but_exact_text"] = len(near) - len(kept)
            found += [Edge(a, b, "near", evidence) for a, b, evidence in kept]
        return found


def components(samples: int, edges: Iterable[Edge]) -> np.ndarray:
    """Each sample's group id: the smallest sample id of its connected component."""
    # Imported here: scipy costs 0.4 s of CPU, which every `import mintdim` (each CLI call, each
    # spawned Ray worker) would pay for a step only grouping takes.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    pairs = np.array([(edge.a, edge.b) for edge in edges], dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix(
        (np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(samples, samples)
    )
    count, labels = connected_components(graph, directed=False)
    smallest = np.full(count, samples, dtype=np.int64)
    np.minimum.at(smallest, labels, np.arange(samples, dtype=np.int64))
    return smallest[labels]


# ---------------------------------------------------------------------------
# Report and manifest
# ---------------------------------------------------------------------------


def _report(
    samples: BuildSamples,
    keys: tuple[str, ...],
    rules: tuple[AliasRule, ...],
    linker: _Linker,
    edges: list[Edge],
    manual: list[Edge],
    joins: str | os.PathLike[str] | None,
    group_of: np.ndarray,
) -> dict[str, object]:
    sizes = np.bincount(group_of, minlength=samples.count) if samples.count else group_of
    listed = sizes[sizes > 0]
    kinds = {kind: sum(edge.kind == kind for edge in edges) for kind in KINDS}
    near = linker.near
    return {
        "build": samples.record(),
        "groups": {
            "count": int(listed.size),
            "singletons": int((listed == 1).sum()),
            "samples_in_shared_groups": int(listed[listed > 1].sum()),
            "largest": int(listed.max()) if listed.size else 0,
        },
        "edges": kinds,
        "keys": {
            name: {
                "samples_with_value": classes.with_value,
                "missing_or_empty": samples.count - classes.with_value,
                "distinct_values": len(classes.first),
                "distinct_after_alias_rules": len(classes.canonical_first) if rules else None,
            }
            for name, classes in linker.keys.items()
        },
        "alias_rules": [rule.text for rule in rules],
        "exact": _exact_counts(linker.exact_class),
        "near_duplicates": (
            {"enabled": False}
            if near is None
            else {"enabled": True, **near.settings.as_dict(), **near.stats}
        ),
        "manual": {"file": None if joins is None else os.fspath(joins), "edges": len(manual)},
        "largest_groups": _largest(samples, edges, group_of, sizes),
        "guarantee": report.BOUNDED_SEARCH.en,
    }


def _exact_counts(classes: np.ndarray) -> dict[str, int]:
    counts = np.bincount(classes) if classes.size else classes
    shared = counts[counts > 1]
    return {"texts_shared": int(shared.size), "samples": int(shared.sum())}


def _largest(
    samples: BuildSamples, edges: list[Edge], group_of: np.ndarray, sizes: np.ndarray
) -> list[dict[str, object]]:
    ids = np.flatnonzero(sizes > 1)
    chosen = ids[np.lexsort((ids, -sizes[ids]))][:_LARGEST].tolist()
    kinds = {gid: dict.fromkeys(KINDS, 0) for gid in chosen}
    for edge in edges:
        counts = kinds.get(int(group_of[edge.a]))
        if counts is not None:
            counts[edge.kind] += 1
    shown = []
    for gid in chosen:
        members = np.flatnonzero(group_of == gid)
        shown.append(
            {
                "group": gid,
                "size": int(sizes[gid]),
                "edges": kinds[gid],
                "members": [samples.where(int(i)) for i in members[:_SHOWN_MEMBERS]],
            }
        )
    return shown


def _manifest(
    path: Path,
    samples: BuildSamples,
    policy: dict[str, object],
    joins: str | os.PathLike[str] | None,
) -> dict[str, object]:
    files = [GROUPS, JOINS, report.REPORT_JSON, report.REPORT_MD]
    return {
        **layout.header(layout.GROUPS_KIND),
        "build": samples.record(),
        "settings": policy,
        "joins_file": None if joins is None else layout.file_record(Path(joins)),
        "files": {name: layout.file_record(path / name) for name in files},
    }


def _write_lines(path: Path, lines: Iterable[bytes]) -> None:
    with open(path, "xb") as handle:
        for line in lines:
            handle.write(line)
