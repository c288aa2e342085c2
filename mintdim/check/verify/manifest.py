"""``manifest.json``: sealed, complete, of a known format version, in the exact bytes MintDim
writes; what it says, in the shapes the other checks need (:class:`Build`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import manifest, overflow_index
from mintdim.build.formats.layout import AUDIT_FILES
from mintdim.check.report import VerifyReport
from mintdim.shared import durable

__all__ = ["Build", "Shard", "read_manifest"]


@dataclass(frozen=True, slots=True)
class Shard:
    path: str
    unit: int
    samples: int
    bytes: int
    sha256: str
    spans: Shard | None = None
    """The segment-span file beside the shard (build/formats/spans.py), when spans are stored."""
    rows: int | None = None
    """A packed unit's shard: its rows (``samples`` counts the samples they hold)."""


@dataclass(slots=True)
class Build:
    """What the manifest says, in the shapes the checks need."""

    root: Path
    content: dict
    sizes: list[int]
    samples_per_shard: int
    dtype: np.dtype
    pad_id: int
    unk_id: int | None
    """None when ``unk_fallback="none"`` turned the UNK tier off."""
    eos_is_unk: bool
    """EOS is appended and shares the UNK id: a record's last slot is EOS, not UNK."""
    vocab_size: int
    sources: list[str]
    shards: list[Shard]
    unit_indexes: list[Shard]
    policy: str
    """``run(on_overflow=...)`` of the build."""
    planned_sizes: list[int]
    extended_sizes: list[int]
    span_width: int
    """Values per spans record (build/formats/spans.py); 0 when the build stores no spans."""
    overflows: list[dict]
    """overflow_index.jsonl rows (their file's bytes are checked with the audit files)."""
    truncated: np.ndarray
    """Ids of the samples ``on_overflow="truncate"`` cut."""
    packed: bool = False
    """``units(pack=True)``: records are rows of whole samples (build/formats/boundaries.py)."""
    boundary_indexes: list[Shard] = field(default_factory=list)
    """A packed build's boundary index files, as listed."""


def read_manifest(root: Path, report: VerifyReport) -> Build | None:
    raw = (root / manifest.FILENAME).read_bytes()
    name = manifest.FILENAME
    try:
        content = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        report.add("manifest", name, "manifest_json", detail=str(err))
        return None
    if not isinstance(content, dict):
        report.add("manifest", name, "manifest_key", key="(top level)")
        return None
    if content.get("status") != "complete" or content.get("format_version") != (
        manifest.FORMAT_VERSION
    ):
        report.add(
            "manifest",
            name,
            "manifest_status",
            status=content.get("status"),
            version=content.get("format_version"),
            known=manifest.FORMAT_VERSION,
        )
        return None
    if durable.json_bytes(content) != raw:
        report.add("manifest", name, "json_form")
    if not manifest.seal_holds(content):
        report.add("manifest", name, "manifest_seal")
    try:
        return _build(root, content)
    except (KeyError, TypeError, ValueError) as err:
        report.add("manifest", name, "manifest_key", key=str(err).strip("'\""))
        return None


def _build(root: Path, content: dict) -> Build:
    tokenizer, storage = content["tokenizer"], content["token_storage"]
    sizes = [int(size) for size in content["units"]["sizes"]]
    shards, unit_indexes = _listing(content["shards"]), _listing(content["unit_indexes"])
    for name in AUDIT_FILES:
        facts = content["audit_files"][name]
        int(facts["bytes"]), str(facts["sha256"])
    overflows = _read_jsonl(root / overflow_index.FILENAME)
    units, layout = content["units"], content["segment_spans"]
    int(content["source"]["max_line_bytes"])  # a deep verify reads lines with this limit
    manifest.recorded_encode(content)  # tokenizer.encode agrees with segment_spans.stored
    return Build(
        root=root,
        content=content,
        sizes=sizes,
        samples_per_shard=int(content["output"]["samples_per_shard"]),
        dtype=np.dtype(storage["dtype"]).newbyteorder("<"),
        pad_id=int(tokenizer["pad_id"]),
        unk_id=None if tokenizer["unk_id"] is None else int(tokenizer["unk_id"]),
        eos_is_unk=bool(tokenizer["append_eos"]) and tokenizer["eos_id"] == tokenizer["unk_id"],
        vocab_size=int(tokenizer["vocab_size"]),
        sources=[str(path) for path in content["source"]["files"]],
        shards=shards,
        unit_indexes=unit_indexes,
        policy=str(units["on_overflow"]),
        planned_sizes=[int(size) for size in units["planned_sizes"]],
        extended_sizes=[int(size) for size in units["extended_sizes"]],
        span_width=int(layout["record_width"]) if layout["stored"] else 0,
        overflows=overflows,
        truncated=np.array(
            [r["sample_id"] for r in overflows if r.get("action") == "truncate"], dtype=np.int64
        ),
        packed="pack" in units,
        boundary_indexes=_listing(content["boundary_indexes"]) if "pack" in units else [],
    )


def _listing(entries: list[dict]) -> list[Shard]:
    return [
        Shard(
            path=str(entry["path"]),
            unit=int(entry["unit_size"]),
            samples=int(entry["samples"]),
            bytes=int(entry["bytes"]),
            sha256=str(entry["sha256"]),
            spans=_spans_entry(entry["spans"], entry) if "spans" in entry else None,
            rows=int(entry["rows"]) if "rows" in entry else None,
        )
        for entry in entries
    ]


def _spans_entry(spans_file: dict, shard: dict) -> Shard:
    """A shard's spans file, as a listing entry of the same unit and record count."""
    return Shard(
        path=str(spans_file["path"]),
        unit=int(shard["unit_size"]),
        samples=int(shard["samples"]),
        bytes=int(spans_file["bytes"]),
        sha256=str(spans_file["sha256"]),
    )


def _read_jsonl(path: Path) -> list[dict]:
    """The rows of a small JSONL file; [] when absent or damaged (the digest check says so)."""
    try:
        rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    except (OSError, orjson.JSONDecodeError):
        return []
    return [row for row in rows if isinstance(row, dict)]
