"""``mintdim verify --deep``: every record derived again from the inputs and compared.

After the plain checks hold, the deep check reads each input file again (its size and SHA-256
must equal the manifest's fingerprint, taken while the build read it), renders every sample
with the manifest's template, encodes it one text at a time with the tokenizer's plain
``encode`` (the reference path, not the build's batch call), and demands that its
sample_index line (hash, token_count, unit_size, source) and its whole record (tokens, then
PAD) are exactly what that gives. The tokenizer file must match its recorded SHA-256 first.

The SFT settings the manifest records are applied the same way, one sample at a time:
``encode: "segments"`` encodes each template segment alone, ``append_eos`` appends the EOS id,
and ``on_overflow`` skips, truncates or extends (``_Reference``).

Paths in the manifest are as the user declared them: relative ones resolve from the current
directory, so run the deep check from where the build ran.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.contracts import FilePlan, TokenizerSpec
from mintdim.build.formats import manifest, stats
from mintdim.build.source import open_source
from mintdim.build.source.template import parse_template
from mintdim.build.tokenizer import Encoder, load_encoder
from mintdim.check.report import VerifyReport
from mintdim.errors import MintDimError
from mintdim.paths import resolve
from mintdim.read.reader import UnitBuild, open_build
from mintdim.shared import durable

__all__ = ["deep_check"]

_BATCH_LINES = 1024
"""Lines per read batch; changes nothing but memory."""


def deep_check(root: Path, content: dict, report: VerifyReport) -> None:
    """Add a failure to ``report`` for every record that is not its input's reference encoding."""
    encoder = _encoder(content, report)
    if encoder is None:
        return
    reference = _Reference(content, encoder)
    build = open_build(root)
    rows = build.samples()
    source = content["source"]
    blank_lines = 0
    for index, path in enumerate(source["files"]):
        plan = FilePlan(
            index=index,
            path=path,
            abs_path=str(resolve(path, f"manifest source.files[{index}]")),
            fields=tuple(source["fields"][index]),
            template=parse_template(source["templates"][index], index),
            tokenizer=encoder.spec,
            sizes=tuple(int(size) for size in content["units"]["planned_sizes"]),
            build_batch=_BATCH_LINES,
            max_line_bytes=int(source["max_line_bytes"]),  # the limit the build read with
            output_index=0,
            format=source["inputs"][index].get("format", "jsonl"),  # absent: plain JSONL
        )
        blank_lines += _check_file(plan, source["inputs"][index], reference, build, rows, report)
    if next(rows, None) is not None:
        report.add("deep", "sample_index.jsonl", "deep_extra")
    expected_blank = _stats_blank_lines(root)
    if expected_blank != blank_lines:
        report.add(
            "deep",
            "stats.json",
            "total",
            key="blank_lines",
            actual=expected_blank,
            expected=blank_lines,
        )


def _encoder(content: dict, report: VerifyReport) -> Encoder | None:
    tokenizer = content["tokenizer"]
    spec = TokenizerSpec(
        kind=tokenizer["type"],
        path=tokenizer["path"],
        abs_path=str(resolve(tokenizer["path"], "manifest tokenizer.path")),
        encode=manifest.recorded_encode(content),
        append_eos=tokenizer["append_eos"],
        pad_fallback=tokenizer["pad_fallback"],
        unk_fallback=tokenizer["unk_fallback"],
    )
    if not Path(spec.abs_path).is_file():
        report.add("deep", spec.path, "deep_input_missing")
        return None
    digest = durable.file_sha256(Path(spec.abs_path))
    if digest != tokenizer["sha256"]:
        report.add("deep", spec.path, "sha256", actual=digest, listed=tokenizer["sha256"])
        return None
    try:
        return load_encoder(spec)
    except MintDimError as err:
        report.add("deep", spec.path, "deep_error", error=str(err))
        return None


class _Reference:
    """One sample's expected ids and unit, by the manifest's settings, in input order."""

    def __init__(self, content: dict, encoder: Encoder) -> None:
        units = content["units"]
        self.encoder = encoder
        self.segments = encoder.spec.encode == "segments"
        self.eos = encoder.eos_id
        self.policy = units["on_overflow"]
        self.planned = np.asarray(units["planned_sizes"], dtype=np.int64)
        self.align = int((units.get("planned") or {}).get("align", 1))
        self.extended: list[int] = []

    def ids(self, plan: FilePlan, text: str, values: tuple[str, ...]) -> list[int]:
        """The sample's ids before any overflow policy."""
        if self.segments:
            pieces = [
                value if kind == "literal" else values[plan.fields.index(value)]
                for kind, value in plan.template.segments()
            ]
            ids = [i for piece in pieces for i in self.encoder.encode(piece)]
        else:
            ids = self.encoder.encode(text)
        return ids if self.eos is None else [*ids, self.eos]

    def place(self, ids: list[int]) -> tuple[list[int], int] | None:
        """The stored ids and unit of a sample, or None when ``skip`` left it out."""
        index = int(np.searchsorted(self.planned, len(ids)))
        if index < self.planned.size:
            return ids, int(self.planned[index])
        if self.policy == "skip":
            return None
        if self.policy == "truncate":
            return ids[: int(self.planned[-1])], int(self.planned[-1])
        if self.policy == "extend":
            fitting = [size for size in self.extended if size >= len(ids)]
            if not fitting:
                fitting = [-(-len(ids) // self.align) * self.align]
                self.extended.append(fitting[0])
            return ids, min(fitting)
        return ids, int(self.planned[-1])  # abort: a complete build holds no such sample


def _check_file(
    plan: FilePlan,
    listed: dict,
    reference: _Reference,
    build: UnitBuild,
    rows: Iterator[dict],
    report: VerifyReport,
) -> int:
    """Compare one input's samples with their rows and records; return its blank lines."""
    if not Path(plan.abs_path).is_file():
        report.add("deep", plan.path, "deep_input_missing")
        return 0
    blank_lines = 0
    source = open_source(plan)
    batches = source.batches()
    while True:
        try:
            batch = next(batches)
        except StopIteration as done:
            fingerprint = done.value
            break
        except MintDimError as err:  # a line past the build's max_line_bytes, an unreadable file
            report.add("deep", plan.path, "deep_error", error=str(err))
            return blank_lines
        parsed = source.parse(batch)
        blank_lines += parsed.blank_lines
        if parsed.error is not None:
            report.add("deep", plan.path, "deep_error", error=str(parsed.error))
            return blank_lines
        for text, values, line in zip(
            parsed.texts, parsed.values, parsed.line_numbers, strict=True
        ):
            placed = reference.place(reference.ids(plan, text, values))
            if placed is None:
                continue
            row = next(rows, None)
            if row is None:
                report.add("deep", plan.path, "deep_missing", line=line)
                return blank_lines
            _check_sample(plan, text, line, row, placed, build, report)
    if (fingerprint.bytes, fingerprint.sha256) != (listed["bytes"], listed["sha256"]):
        report.add(
            "deep",
            plan.path,
            "deep_fingerprint",
            bytes=fingerprint.bytes,
            sha256=fingerprint.sha256,
            listed_bytes=listed["bytes"],
            listed_sha256=listed["sha256"],
        )
    return blank_lines


def _check_sample(
    plan: FilePlan,
    text: str,
    line: int,
    row: dict,
    placed: tuple[list[int], int],
    build: UnitBuild,
    report: VerifyReport,
) -> None:
    ids, unit = placed
    expected = {
        "hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "token_count": len(ids),
        "unit_size": unit,
        "source_file": plan.path,
        "source_line": line,
    }
    wrong = [key for key, value in expected.items() if row.get(key) != value]
    record = build.record(row).tolist() if not wrong else []
    if wrong or record != [*ids, *[build.pad_id] * (unit - len(ids))]:
        report.add(
            "deep",
            row.get("shard_path", plan.path),
            "deep_record",
            sample_id=row.get("sample_id"),
            file=plan.path,
            line=line,
            keys=", ".join(wrong) or "tokens",
        )


def _stats_blank_lines(root: Path) -> object:
    return orjson.loads((root / stats.FILENAME).read_bytes()).get("blank_lines")
