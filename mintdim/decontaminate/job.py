"""``mintdim.decontaminate(build, out, against=[...])`` / ``mintdim decontaminate BUILD --against
FILE:FIELD,... --out DIR``: find, report and remove the training samples that hold benchmark
items, and prove it.

The directory gets, each file written once, the manifest last::

    contamination.jsonl   one line per (sample, item) hit
    items/NAME.jsonl      one line per item of benchmark NAME, in its order
    clean/                the build without the contaminated samples (not with --report-only)
    verification.json     the independent pass (decontaminate/verification.py)
    report.json REPORT.md per benchmark and input file; a few hits side by side
    manifest.json         sealed: the build's manifest, benchmarks' and tokenizer's SHA-256,
                          the options, every file's size and SHA-256

``contamination.jsonl`` (keys in this order)::

    {"sample_id":12,"source_file":"./data/a.jsonl","source_line":13,"benchmark":"gsm8k_test",
     "item":7,"ngrams_shared":41,"longest_shared_run":53}

``item`` is the item's 1-based line (row) in its benchmark file. The same inputs and options give
a byte-identical directory, whatever the worker count.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import orjson

from mintdim.decontaminate import report
from mintdim.decontaminate.catalogue import Catalogue
from mintdim.decontaminate.findings import Pairs, coverage, pairs
from mintdim.decontaminate.ngrams import FINDER_BASE, Hasher, Table
from mintdim.decontaminate.prepare import Prepared, prepare
from mintdim.decontaminate.scan import scan, token_blocks, word_blocks
from mintdim.decontaminate.settings import decontaminate_settings
from mintdim.decontaminate.verification import (
    CLEAN,
    CONTAMINATION,
    FILENAME,
    failed_lines,
    input_pass,
    verify,
)
from mintdim.errors import DecontaminationVerificationError
from mintdim.shared import durable
from mintdim.shared.beside import Beside
from mintdim.split import layout
from mintdim.split.samples import BuildSamples
from mintdim.split.threeway import build_files
from mintdim.split.write import Written, write_builds

__all__ = ["DecontaminationResult", "decontaminate"]

ITEMS = "items"


@dataclass(frozen=True, slots=True)
class DecontaminationResult:
    """What ``decontaminate()`` wrote."""

    path: str
    samples_removed: tuple[int, ...]
    """The input build's sample ids removed (ascending)."""
    contaminated_items: dict[str, tuple[int, ...]]
    """Per benchmark, the 1-based lines (rows) of its contaminated items."""
    report: dict = field(repr=False)
    """The content of report.json."""


def decontaminate(
    build: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    against: Sequence[Mapping[str, object] | str],
    ngram: int = 13,
    min_matches: int = 1,
    min_tokens: int = 8,
    item_coverage: float = 0.5,
    match: str = "tokens",
    report_only: bool = False,
    workers: int = 1,
) -> DecontaminationResult:
    """Check the finished build ``build`` against benchmark files and write the fresh directory
    ``out`` (see the module docstring and docs/decontamination.md).

    ``against``: per benchmark ``{"path": ..., "fields": [...], "name": ...}`` (name: the file's
    stem by default) or ``"PATH:FIELD,FIELD"``; ``ngram``: run length; ``min_matches``: distinct
    runs of one item a sample must hold to be removed; ``min_tokens``: the shortest value
    matched whole; ``item_coverage``: the coverage that marks an item contaminated;
    ``match``: ``tokens`` (the build's own ids) or ``words`` (normalised words);
    ``report_only``: no clean build; ``workers``: threads (the output is the same for every
    count).
    """
    settings = decontaminate_settings(
        against,
        ngram=ngram,
        min_matches=min_matches,
        min_tokens=min_tokens,
        item_coverage=item_coverage,
        match=match,
        report_only=report_only,
        workers=workers,
    )
    layout.check_fresh(out, {os.fspath(build): Path(build)})  # before the reading, and again
    prepared = prepare(build, settings)
    samples, cat = prepared.samples, prepared.catalogue
    inputs = {os.fspath(build): samples.path}
    layout.check_fresh(out, inputs)
    # The verification's search of the input build needs nothing the finder writes: it runs in
    # a forked child from here on, beside the finder's search and the clean copy, or here and
    # now when other threads run.
    again = Beside(
        partial(input_pass, samples, cat, settings.match, settings.min_matches, settings.workers)
    )
    try:
        return _run(out, prepared, inputs, again)
    finally:
        again.cancel()


def _run(
    out: str | os.PathLike[str], prepared: Prepared, inputs: dict[str, Path], again: Beside
) -> DecontaminationResult:
    """Find, write, prove (``again``: the verification's search of the input build)."""
    settings, samples, cat = prepared.settings, prepared.samples, prepared.catalogue
    texts: dict[int, str] = {}
    table = Table(cat.runs, Hasher.of(FINDER_BASE))
    if settings.match == "tokens":
        hits = scan(table, token_blocks(samples), settings.workers)
    else:
        blocks = word_blocks(samples, cat.vocabulary)
        hits = scan(table, blocks, settings.workers, texts=texts)
    found = pairs(hits, cat, settings.min_matches)
    shares = coverage(hits, cat)
    removed = found.samples()
    path = layout.fresh_directory(out, inputs)
    with layout.running(path, "mintdim decontaminate"):
        _write_contamination(path, samples, cat, found)
        contaminated = _write_items(path, cat, found, shares, settings.item_coverage)
        clean = None
        # The input's shards as the copy reads and checks them: the verification compares the
        # clean records with these bytes instead of reading and hashing them a third time.
        shards: dict[str, bytes] = {}
        if not settings.report_only:
            keep = np.zeros(samples.count, dtype=np.int64)
            keep[removed] = -1
            provenance = {
                "build_manifest_sha256": samples.manifest_sha256,
                "decontamination": settings.record(),
            }
            clean = write_builds(
                samples, keep, path, {CLEAN: provenance}, token_sha256=False, kept=shards
            )
        checked = verify(
            path,
            samples,
            cat,
            settings.match,
            settings.min_matches,
            settings.workers,
            again.result(),
            shards,
        )
        shards.clear()
        durable.write_json_atomic(path / FILENAME, checked)
        if not checked["ok"]:
            raise DecontaminationVerificationError(
                directory=os.fspath(out),
                failed_en=failed_lines(checked, "en"),
                failed_vi=failed_lines(checked, "vi"),
            )
        examples = report.examples(prepared, found, texts)
        content = report.content(prepared, found, shares, contaminated, removed, examples)
        content["verification_ok"] = checked["ok"]
        durable.write_json_atomic(path / report.REPORT_JSON, content)
        (path / report.REPORT_MD).write_text(report.markdown(content), encoding="utf-8")
        layout.write_manifest(path, _manifest(path, prepared, clean))
    return DecontaminationResult(
        path=os.fspath(out),
        samples_removed=tuple(removed.tolist()),
        contaminated_items={
            b.against.name: tuple(np.asarray(b.lines)[contaminated[k]].tolist())
            for k, b in enumerate(cat.benchmarks)
        },
        report=content,
    )


def _write_contamination(path: Path, samples: BuildSamples, cat: Catalogue, found: Pairs) -> None:
    """contamination.jsonl, keys in the documented order, by sample then item."""
    bench_of = np.searchsorted(cat.item_start, found.item, side="right") - 1
    with open(path / CONTAMINATION, "xb") as handle:
        for sample, item, b, shared, longest in zip(
            found.sample.tolist(),
            found.item.tolist(),
            bench_of.tolist(),
            found.ngrams_shared.tolist(),
            found.longest.tolist(),
            strict=True,
        ):
            benchmark = cat.benchmarks[b]
            row = {
                **samples.where(sample),
                "benchmark": benchmark.against.name,
                "item": benchmark.lines[item - int(cat.item_start[b])],
                "ngrams_shared": shared,
                "longest_shared_run": longest,
            }
            handle.write(orjson.dumps(row) + b"\n")


def _write_items(
    path: Path, cat: Catalogue, found: Pairs, shares: np.ndarray, threshold: float
) -> list[np.ndarray]:
    """items/NAME.jsonl per benchmark; each benchmark's contaminated items (positions)."""
    (path / ITEMS).mkdir()
    order = np.argsort(found.item, kind="stable")  # samples stay ascending within an item
    by_item = np.split(
        found.sample[order],
        np.searchsorted(found.item[order], np.arange(1, int(cat.item_start[-1]))),
    )
    value_start = np.searchsorted(cat.value_item, np.arange(int(cat.item_start[-1]) + 1))
    lengths = np.diff(cat.value_start)
    checked = np.bincount(
        np.repeat(np.arange(lengths.size), lengths), weights=cat.checked, minlength=lengths.size
    ).astype(np.int64)
    contaminated = []
    for k, benchmark in enumerate(cat.benchmarks):
        flags = []
        with open(path / ITEMS / f"{benchmark.against.name}.jsonl", "xb") as handle:
            for position, line in enumerate(benchmark.lines):
                item = int(cat.item_start[k]) + position
                values = range(int(value_start[item]), int(value_start[item + 1]))
                listed = []
                for v, label in zip(values, benchmark.labels[position], strict=True):
                    share = shares[v]
                    listed.append(
                        {
                            "field": label,
                            "length": int(lengths[v]),
                            "checked": int(checked[v]),
                            "coverage": None if np.isnan(share) else round(float(share), 6),
                            "too_short": bool(cat.too_short[v]),
                        }
                    )
                hit = any(e["coverage"] is not None and e["coverage"] >= threshold for e in listed)
                flags.append(hit)
                row = {
                    "item": line,
                    "contaminated": hit,
                    "values": listed,
                    "samples": by_item[item].tolist(),
                }
                handle.write(orjson.dumps(row) + b"\n")
        contaminated.append(np.flatnonzero(flags))
    return contaminated


def _manifest(path: Path, prepared: Prepared, clean: Written | None) -> dict[str, object]:
    settings, samples = prepared.settings, prepared.samples
    top = [
        CONTAMINATION,
        *(f"{ITEMS}/{b.against.name}.jsonl" for b in prepared.catalogue.benchmarks),
        FILENAME,
        report.REPORT_JSON,
        report.REPORT_MD,
    ]
    content: dict[str, object] = {
        **layout.header(layout.DECONTAMINATION_KIND),
        "build": samples.record(),
        "tokenizer_sha256": prepared.tokenizer_sha256,
        "benchmarks": [
            {
                "name": b.against.name,
                "path": b.against.path,
                "fields": list(b.against.fields),
                "bytes": b.bytes,
                "sha256": b.sha256,
                "items": len(b.lines),
            }
            for b in prepared.catalogue.benchmarks
        ],
        "options": settings.record(),
        "files": {name: layout.file_record(path / name) for name in top},
        "clean": None,
    }
    if clean is not None:
        final = clean.manifests[CLEAN]
        digest = clean.manifest_sha256[CLEAN]
        content["clean"] = {
            "path": CLEAN,
            "manifest_sha256": digest,
            "files": build_files(CLEAN, final, digest),
        }
    return content
