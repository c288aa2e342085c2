"""Benchmark files read through the build's ``Source`` interface (JSONL plain or compressed,
Parquet), each item's declared fields turned into values: a string is one value, a list of
strings (MT-Bench's ``turns``) one value per string."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mintdim.build.contracts import FilePlan, TokenizerSpec, record_kind
from mintdim.build.source import open_source
from mintdim.build.source.parquet import EXTENSIONS as PARQUET_EXTENSIONS
from mintdim.build.source.template import parse_template
from mintdim.build.source.validate import file_formats
from mintdim.decontaminate.settings import Against
from mintdim.errors import BenchmarkFieldError, BenchmarkFileError

__all__ = ["Benchmark", "read_benchmark"]

_BATCH = 4096
_MAX_LINE_BYTES = 1 << 30
"""A benchmark line may be long (a whole program): only memory bounds it."""


@dataclass(frozen=True, slots=True)
class Benchmark:
    """One benchmark file's items, in its order."""

    against: Against
    sha256: str
    bytes: int
    kind: str
    """``jsonl`` (lines) or ``parquet`` (rows): what ``lines`` count."""
    lines: list[int]
    """Each item's 1-based line (row)."""
    values: list[list[str]]
    """Each item's values, field by field (a list field's strings in order)."""
    labels: list[list[str]]
    """Each value's field, ``turns[2]`` for the second string of a list (1-based)."""


def read_benchmark(against: Against, tokenizer: TokenizerSpec) -> Benchmark:
    """Read one benchmark file whole (``BenchmarkFileError``, ``BenchmarkFieldError``, or the
    source's own error naming the line that does not parse)."""
    path = Path(against.path)
    if not path.is_file():
        raise BenchmarkFileError(path=against.path, problem="missing")
    kind = "parquet" if path.suffix.lower() in PARQUET_EXTENSIONS else None
    try:
        (found_format,) = file_formats(kind, [against.path], [str(path.resolve())])
    except OSError as err:
        raise BenchmarkFileError(path=against.path, problem="unreadable", detail=str(err)) from err
    plan = FilePlan(
        index=0,
        path=against.path,
        abs_path=str(path.resolve()),
        fields=(),
        template=parse_template("", 0),
        tokenizer=tokenizer,
        sizes=(),
        build_batch=_BATCH,
        max_line_bytes=_MAX_LINE_BYTES,
        output_index=None,
        format=found_format,
    )
    lines: list[int] = []
    values: list[list[str]] = []
    labels: list[list[str]] = []
    records = open_source(plan).records(list(against.fields))
    try:
        while True:
            try:
                batch = next(records)
            except StopIteration as done:
                fingerprint = done.value
                break
            for line, record in zip(batch.line_numbers, batch.records, strict=True):
                texts, names = _values(against, plan, line, record, batch.fields)
                lines.append(line)
                values.append(texts)
                labels.append(names)
            if batch.error is not None:
                raise batch.error
    except OSError as err:
        raise BenchmarkFileError(path=against.path, problem="unreadable", detail=str(err)) from err
    if not lines:
        raise BenchmarkFileError(path=against.path, problem="empty")
    return Benchmark(
        against=against,
        sha256=fingerprint.sha256,
        bytes=fingerprint.bytes,
        kind=record_kind(plan),
        lines=lines,
        values=values,
        labels=labels,
    )


def _values(
    against: Against, plan: FilePlan, line: int, record: dict, columns: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    texts, names = [], []
    for name in against.fields:
        value = record.get(name)
        if name not in record or value is None:
            available = list(columns) if columns else list(record)
            raise BenchmarkFieldError(
                path=against.path,
                line=line,
                field=name,
                available=available,
                kind=record_kind(plan),
            )
        if isinstance(value, str):
            texts.append(value)
            names.append(name)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            texts += value
            names += [f"{name}[{k}]" for k in range(1, len(value) + 1)]
        else:
            raise BenchmarkFieldError(
                path=against.path,
                line=line,
                field=name,
                available=list(columns) if columns else list(record),
                problem="type",
                found=type(value).__name__,
                kind=record_kind(plan),
            )
    return texts, names
