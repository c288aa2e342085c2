"""``manifest.json``: what was built, from what, with which tokenizer, and every shard's checksum.

Written last, atomically and durably (shared/durable.py): a directory without it is not a
finished build. It holds no wall-clock time and no machine-specific value, so two builds of the
same input files and configuration are byte-identical whatever ``build_batch`` or worker count.
Each input's fingerprint (size, mtime, SHA-256 as read) belongs to the file itself, as stored
(a compressed file's compressed bytes): a copy of an input has another mtime, so its build
differs in that field (and the seal over it) alone. An input that is not plain JSONL also names
its ``format`` (``source.FORMATS``), which ``verify --deep`` reads it with.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from mintdim._version import __version__
from mintdim.build.contracts import FilePlan, OutputPlan, TokenizerSpec
from mintdim.build.formats.shards import ShardRecord
from mintdim.build.segments import sequence_template
from mintdim.build.source import InputFingerprint
from mintdim.build.source.template import parse_template
from mintdim.paths import resolve
from mintdim.shared.durable import json_bytes
from mintdim.shared.types import ENCODE_MODES, EncodeMode

__all__ = [
    "FILENAME",
    "FORMAT_VERSION",
    "PACKED_LAYOUT",
    "SEAL",
    "derived",
    "manifest",
    "recorded_encode",
    "recorded_input",
    "recorded_tokenizer",
    "seal_holds",
    "sealed",
]

FILENAME = "manifest.json"
FORMAT_VERSION = 2
"""Bumped whenever a file's layout changes, so readers can refuse what they do not know."""


PACKED_LAYOUT = (
    "unit_size slots per row: whole samples back to back, then pad_id "
    "(which samples: boundary_indexes, build/formats/boundaries.py)"
)
"""``token_storage.record_layout`` of a packed build."""

SEAL = "manifest_sha256"
"""The manifest's last key: SHA-256 of the manifest's own bytes without it, so a changed byte
anywhere in the manifest is found as surely as one in a shard."""


def manifest(
    output: OutputPlan,
    files: Sequence[tuple[FilePlan, InputFingerprint]],
    shards: Sequence[ShardRecord],
    unit_indexes: Sequence[ShardRecord],
    audit_files: Mapping[str, Mapping[str, object]],
    extended_sizes: Sequence[int] = (),
    on_overflow: str = "abort",
    parity_rows: int = 0,
    boundary_indexes: Sequence[ShardRecord] = (),
    packing: Mapping[str, object] | None = None,
) -> dict:
    """The sealed manifest of one finished output directory.

    ``files``: each input with its fingerprint as read. ``unit_indexes``: see
    build/formats/unit_index.py. ``audit_files`` maps each index and summary file name to its ``bytes``
    and ``sha256``. ``extended_sizes``: the units ``on_overflow="extend"`` added.
    ``parity_rows``: rows the fast engine's parity guard re-encoded during the build.
    ``boundary_indexes`` and ``packing`` (stats.json's): a packed build's, listed under
    ``boundary_indexes`` and ``units.pack``.
    """
    content = _content(output, files, shards, unit_indexes, extended_sizes, on_overflow)
    if packing is not None:
        content["units"]["pack"] = dict(packing)
        content["token_storage"]["record_layout"] = PACKED_LAYOUT
        content["boundary_indexes"] = _listing(boundary_indexes)
    if output.tokenizer.engine == "fast" or output.info.engine_fallback is not None:
        # Only a build that declared engine="fast" says so: a default build's manifest is
        # unchanged by the engine option.
        content["tokenizer"]["engine"] = _engine(output, parity_rows)
    content["audit_files"] = {name: dict(facts) for name, facts in audit_files.items()}
    content[SEAL] = _digest(content)
    return content


def derived(
    source: Mapping[str, object],
    shards: Sequence[ShardRecord],
    unit_indexes: Sequence[ShardRecord],
    audit_files: Mapping[str, Mapping[str, object]],
    provenance: Mapping[str, object],
) -> dict:
    """The sealed manifest of a build made from another one's records (``mintdim split``):
    everything the ``source`` manifest says of its inputs, tokenizer, storage and units, with
    this build's own files, and ``provenance`` (where its records came from) under
    ``derived_from``."""
    content = {key: value for key, value in source.items() if key != SEAL}
    content["shards"] = _listing(shards)
    content["unit_indexes"] = _listing(unit_indexes)
    content["audit_files"] = {name: dict(facts) for name, facts in audit_files.items()}
    content["derived_from"] = dict(provenance)
    return sealed(content)


def sealed(content: Mapping[str, object]) -> dict:
    """``content`` with :data:`SEAL` added as its last key (any manifest-like JSON object)."""
    rest = {key: value for key, value in content.items() if key != SEAL}
    return {**rest, SEAL: _digest(rest)}


def seal_holds(content: dict) -> bool:
    """Whether a manifest's seal matches the rest of it."""
    rest = {key: value for key, value in content.items() if key != SEAL}
    return content.get(SEAL) == _digest(rest)


def recorded_encode(content: dict) -> EncodeMode | None:
    """The tokenizer key ``encode`` a build was made with: None when it was not given (the build
    stores no segment spans), else ``"whole"`` or ``"segments"`` (spans stored).

    Builds by MintDim 0.1.0 before the key recorded the declaration wrote ``"whole"`` for a build
    without it; their ``segment_spans.stored`` false says so, and they read as None. An ``encode``
    that contradicts ``segment_spans.stored`` raises ``ValueError("tokenizer.encode")``.
    """
    encode, stored = content["tokenizer"]["encode"], content["segment_spans"]["stored"]
    if encode == "whole" and stored is False:
        return None
    if encode not in (None, *ENCODE_MODES) or (encode is not None) is not stored:
        raise ValueError("tokenizer.encode")
    return encode


def recorded_tokenizer(content: dict) -> TokenizerSpec:
    """The tokenizer a build was made with, as its manifest records it, its path resolved from
    the current directory (not loaded, not checked against its SHA-256: the caller does)."""
    tokenizer = content["tokenizer"]
    return TokenizerSpec(
        kind=tokenizer["type"],
        path=tokenizer["path"],
        abs_path=str(resolve(tokenizer["path"], "manifest tokenizer.path")),
        encode=recorded_encode(content),
        append_eos=tokenizer["append_eos"],
        pad_fallback=tokenizer["pad_fallback"],
        unk_fallback=tokenizer["unk_fallback"],
    )


def recorded_input(
    content: dict, index: int, tokenizer: TokenizerSpec, build_batch: int
) -> FilePlan:
    """Input ``index`` as the manifest declares it, to be read again as the build read it (its
    format, fields, template and line limit; its path resolved from the current directory), in
    batches of ``build_batch`` lines."""
    source = content["source"]
    path = source["files"][index]
    return FilePlan(
        index=index,
        path=path,
        abs_path=str(resolve(path, f"manifest source.files[{index}]")),
        fields=tuple(source["fields"][index]),
        template=parse_template(source["templates"][index], index),
        tokenizer=tokenizer,
        sizes=tuple(int(size) for size in content["units"]["planned_sizes"]),
        build_batch=build_batch,
        max_line_bytes=int(source["max_line_bytes"]),  # the limit the build read with
        output_index=0,
        format=source["inputs"][index].get("format", "jsonl"),  # absent: plain JSONL
    )


def _digest(content: dict) -> str:
    return hashlib.sha256(json_bytes(content)).hexdigest()


def _content(
    output: OutputPlan,
    inputs: Sequence[tuple[FilePlan, InputFingerprint]],
    shards: Sequence[ShardRecord],
    unit_indexes: Sequence[ShardRecord],
    extended_sizes: Sequence[int],
    on_overflow: str,
) -> dict:
    info = output.info
    files = [file for file, _ in inputs]
    spec = output.tokenizer
    return {
        "pipeline": "unit-build",
        "mintdim_version": __version__,
        "format_version": FORMAT_VERSION,
        "status": "complete",
        "tokenizer": {
            "type": output.tokenizer.kind,
            "path": output.tokenizer.path,
            "vocab_size": info.vocab_size,
            "unk_id": info.unk_id,
            "pad_id": info.pad_id,
            "eos_id": info.eos_id,
            "unk_id_source": info.unk_source,
            "pad_id_source": info.pad_source,
            "sha256": info.file_sha256,
            "eos_id_source": info.eos_source,
            "pad_fallback": spec.pad_fallback,
            "unk_fallback": spec.unk_fallback,
            "unk_tier": "off" if info.unk_id is None else "on",
            "encode": spec.encode,
            "append_eos": spec.append_eos,
            "add_special_tokens": False,
            "padding_and_truncation": "disabled on the loaded tokenizer; every encoding is exact",
        },
        "token_storage": {
            "dtype": info.token_dtype,
            "bytes_per_token": info.dtype.itemsize,
            "byte_order": "little",
            "record_layout": "unit_size slots per record: tokens, then pad_id",
        },
        "units": {
            "sizes": sorted([*output.sizes, *extended_sizes]),
            "planned_sizes": list(output.sizes),
            "extended_sizes": list(extended_sizes),
            "on_overflow": on_overflow,
            # How sizes="auto" chose them, and the padding it predicted (which stats.json meets).
            **({"planned": output.planned} if output.planned is not None else {}),
        },
        "source": {
            "files": [f.path for f in files],
            "fields": [list(f.fields) for f in files],
            "templates": [f.template.source for f in files],
            "sequence_templates": [sequence_template(f, spec.append_eos) for f in files],
            "inputs": [_input(f, p) for f, p in inputs],
            # The line limit the build read with (one for all files): a deep verify reads again
            # with it, so a line the build refused is refused again, not read past.
            "max_line_bytes": max((f.max_line_bytes for f in files), default=0),
        },
        "segment_spans": (
            {
                "stored": True,
                "dtype": "int32",
                "byte_order": "little",
                "record_width": 1 + output.span_width,
                "record_layout": "per shard record: source file position, then the stop of "
                "each segment (segment k = tokens [stop k-1, stop k), stop -1 = 0)",
            }
            if output.span_width
            else {"stored": False}
        ),
        "output": {"samples_per_shard": output.samples_per_shard},
        "hash": {"algorithm": "sha256", "of": "UTF-8 bytes of the rendered text"},
        "shards": _listing(shards),
        "unit_indexes": _listing(unit_indexes),
    }


def _input(file: FilePlan, fingerprint: InputFingerprint) -> dict:
    """An input as stored (its fingerprint) and, unless it is plain JSONL, its format: the
    manifest of a plain JSONL build is the one it always was."""
    entry = {
        "path": file.path,
        "bytes": fingerprint.bytes,
        "mtime_ns": fingerprint.mtime_ns,
        "sha256": fingerprint.sha256,
    }
    return entry if file.format == "jsonl" else {**entry, "format": file.format}


def _engine(output: OutputPlan, parity_rows: int) -> dict:
    info = output.info
    if info.engine_fallback is not None:
        return {
            "declared": "fast",
            "ran": "reference",
            "library": info.engine_version,
            "fallback_reason": info.engine_fallback,
        }
    return {
        "declared": "fast",
        "ran": "fast",
        "library": info.engine_version,
        "parity": {
            "reference_library": info.reference_version,
            "texts_checked_at_validation": info.parity_texts,
            "first_rows": output.tokenizer.parity.first_rows,
            "every": output.tokenizer.parity.every,
            "rows_checked_during_build": parity_rows,
            "rows_sampled": "every row on the first file's first first_rows lines, then the "
            "rows on lines 1, 1 + every, 1 + 2 * every, ... of every file",
        },
    }


def _listing(records: Sequence[ShardRecord]) -> list[dict]:
    return [
        {
            "path": r.path,
            "unit_size": r.unit_size,
            "samples": r.samples,
            "bytes": r.bytes,
            "sha256": r.sha256,
            **({"rows": r.rows} if r.rows is not None else {}),
            **({"spans": r.spans} if r.spans is not None else {}),
        }
        for r in records
    ]
