"""A finished build as grouping and splitting see it: every sample's index columns, and its
source record read again from the build's inputs.

Nothing here trusts a file blindly. The manifest must be sealed, ``sample_index.jsonl`` must
have the SHA-256 the manifest lists, and each input file must still have the size and SHA-256
the build read (its fingerprint; a copy with another mtime is fine); each sample's line must
still render to the text whose SHA-256 the index holds. Anything else is
``ChangedSinceBuildError``, raised before a caller writes anything.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.contracts import FilePlan, record_kind
from mintdim.build.formats import manifest, sample_index
from mintdim.build.source import open_source
from mintdim.errors import ChangedSinceBuildError, UnknownKeyFieldError
from mintdim.read.reader import open_build
from mintdim.shared import durable

__all__ = ["MISSING", "SOURCE_FILE", "BuildSamples", "RecordBatch", "read_build", "read_records"]

_BLOCK = 8 << 20
MISSING = object()
"""The value of a field a record does not have."""
SOURCE_FILE = "source_file"
"""The pseudo-field naming a sample's input file (``--stratify source_file``)."""


@dataclass(frozen=True, slots=True, eq=False)
class BuildSamples:
    """A finished build's manifest and its sample_index.jsonl columns, one entry per sample."""

    path: Path
    shown: str
    """The build directory as the caller gave it (for messages)."""
    manifest: dict
    manifest_sha256: str
    """SHA-256 of the bytes of its manifest.json: what groups and splits are bound to."""
    sources: tuple[str, ...]
    """The input files as the build declared them (manifest ``source.files``)."""
    hashes: np.ndarray
    """``S64``: each sample's rendered-text SHA-256, lower-case hex."""
    token_counts: np.ndarray
    units: np.ndarray
    """Each sample's unit size."""
    files: np.ndarray
    """Each sample's input file, as a position in :attr:`sources`."""
    lines: np.ndarray

    @property
    def count(self) -> int:
        """Number of samples."""
        return int(self.token_counts.size)

    def record(self) -> dict[str, object]:
        """The build as the groups' and splits' manifests and reports name it."""
        return {"path": self.shown, "manifest_sha256": self.manifest_sha256, "samples": self.count}

    def row_files(self) -> frozenset[str]:
        """The inputs whose records are rows (Parquet), not lines, as the build declared them."""
        inputs = self.manifest["source"]["inputs"]
        return frozenset(
            file
            for file, entry in zip(self.sources, inputs, strict=True)
            if entry.get("format") == "parquet"
        )

    def where(self, sample_id: int) -> dict[str, object]:
        """A sample's source file and line, as the indexes name them."""
        return {
            "sample_id": sample_id,
            "source_file": self.sources[int(self.files[sample_id])],
            "source_line": int(self.lines[sample_id]),
        }


def read_build(directory: str | os.PathLike[str]) -> BuildSamples:
    """Open a finished build (``NotABuildError``/``BuildReadError`` as ``open_build`` raises
    them) and read its sample index, checking it against the manifest."""
    shown = os.fspath(directory)
    build = open_build(directory)
    raw = (build.path / manifest.FILENAME).read_bytes()
    content = build.manifest
    if not manifest.seal_holds(content):
        raise ChangedSinceBuildError(build=shown, file=manifest.FILENAME, change="seal")
    sources = tuple(content["source"]["files"])
    shards = [entry["path"] for entry in content["shards"]]
    columns = _read_index(build.path, shown, content, sources, shards)
    # The digest held, so these are the build's own lines: only a manifest edited to match
    # another index (and sealed again) can get here with lines it does not account for.
    bad = ~columns.sample_id_ok | (columns.sample_id != np.arange(columns.sample_id.size))
    bad |= (columns.source_file < 0) | ~columns.source_line_ok | ~columns.hash_ok
    if bad.any():
        raise ChangedSinceBuildError(
            build=shown,
            file=sample_index.FILENAME,
            change="index_line",
            line=int(np.flatnonzero(bad)[0]) + 1,
        )
    return BuildSamples(
        path=build.path,
        shown=shown,
        manifest=content,
        manifest_sha256=hashlib.sha256(raw).hexdigest(),
        sources=sources,
        hashes=columns.hash,
        token_counts=columns.token_count,
        units=columns.unit_size,
        files=columns.source_file,
        lines=columns.source_line,
    )


def _read_index(
    root: Path, shown: str, content: dict, sources: Sequence[str], shards: Sequence[str]
) -> sample_index.Columns:
    """The index's columns, read in blocks of whole lines (straight from their bytes when they
    have the writer's exact form), hashed as read and compared with the manifest's digest."""
    path = root / sample_index.FILENAME
    reader = sample_index.ExactReader(sources, shards, packed="pack" in content["units"])
    source_of = {name: i for i, name in enumerate(sources)}
    shard_of = {name: i for i, name in enumerate(shards)}
    digest, size, parts, rest = hashlib.sha256(), 0, [], b""
    with durable.open_sequential(path) as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
            size += len(block)
            data = rest + block
            cut = data.rfind(b"\n") + 1
            if cut:
                parts.append(_columns(reader, data[:cut], source_of, shard_of))
            rest = data[cut:]
    if rest:
        parts.append(_columns(reader, rest + b"\n", source_of, shard_of))
    listed = content["audit_files"][sample_index.FILENAME]
    if digest.hexdigest() != listed["sha256"] or size != listed["bytes"]:
        raise ChangedSinceBuildError(
            build=shown,
            file=sample_index.FILENAME,
            change="sha256",
            was=str(listed["sha256"]),
            now=digest.hexdigest(),
        )
    return _join(parts)


def _columns(
    reader: sample_index.ExactReader,
    block: bytes,
    source_of: dict[str, int],
    shard_of: dict[str, int],
) -> sample_index.Columns:
    columns = reader.read(block)
    if columns is None:  # another form (a split's build adds source_sample_id): parse as JSON
        rows = orjson.loads(b"[" + block[:-1].replace(b"\n", b",") + b"]")
        columns = sample_index.parse_rows(rows, source_of, shard_of)
    return columns


def _join(parts: list[sample_index.Columns]) -> sample_index.Columns:
    names = sample_index.Columns.__slots__
    if not parts:
        empty = {name: np.zeros(0, dtype="S64" if name == "hash" else np.int64) for name in names}
        return sample_index.Columns(**empty)
    return sample_index.Columns(
        **{name: np.concatenate([getattr(part, name) for part in parts]) for name in names}
    )


# ---------------------------------------------------------------------------
# Source records
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """Consecutive samples of one input file: their ids, rendered texts and field values."""

    ids: np.ndarray
    texts: list[str]
    values: dict[str, list[object]]
    """Per field asked for: each sample's value, :data:`MISSING` when its record has none
    (``source_file``: the file as the build declared it)."""
    keys: list[str]
    """The fields the records may hold: the file's columns (Parquet), else the first record's
    keys (what an unknown field's error lists)."""


def read_records(
    build: BuildSamples, fields: Sequence[tuple[str, str]], batch: int = 4096
) -> Iterator[RecordBatch]:
    """Every sample's source record, in sample id order, in batches of about ``batch``.

    ``fields``: (field name, option) pairs, option being ``key`` or ``stratify`` (for the
    error naming a field no record has). Each input file is read once, whole: its size and
    SHA-256 must be the ones the build recorded, which is checked when the file ends.
    """
    seen = dict.fromkeys((name for name, _ in fields), False)
    available: dict[str, None] = {}
    for index in range(len(build.sources)):
        ids = np.flatnonzero(build.files == index)
        for found in _file_records(build, index, ids, [name for name, _ in fields], batch):
            for name, values in found.values.items():
                if not seen[name] and any(v is not MISSING for v in values):
                    seen[name] = True
            available.update(dict.fromkeys(found.keys))
            yield found
    for name, option in fields:
        if not seen[name] and name != SOURCE_FILE and build.count:
            raise UnknownKeyFieldError(
                field=name, option=option, files=list(build.sources), available=list(available)
            )


def _file_records(
    build: BuildSamples, index: int, ids: np.ndarray, names: list[str], batch: int
) -> Iterator[RecordBatch]:
    """The records of input ``index`` that are samples ``ids``, read whole through the input's
    ``Source`` (any format the build reads), in batches of about ``batch``."""
    declared = build.sources[index]
    content = build.manifest
    fingerprint = content["source"]["inputs"][index]
    plan = manifest.recorded_input(content, index, manifest.recorded_tokenizer(content), batch)
    render = _renderer(plan)
    wanted = build.lines[ids]
    taken = 0
    pending: list[tuple[int, dict]] = []

    def change(kind: str, **facts: object) -> ChangedSinceBuildError:
        return ChangedSinceBuildError(
            build=build.shown, file=declared, change=kind, kind=record_kind(plan), **facts
        )

    if not Path(plan.abs_path).is_file():
        raise change("missing")
    # Only the fields grouping and splitting look at (Parquet reads no other column).
    records = open_source(plan).records([name for name in names if name != SOURCE_FILE])
    while True:
        try:
            found = next(records)
        except StopIteration as done:
            read = done.value
            break
        lines = np.asarray(found.line_numbers, dtype=np.int64)
        stop = int(np.searchsorted(wanted, lines[-1], side="right")) if lines.size else taken
        expected = wanted[taken:stop]
        # Lines that held samples hold records still (a record on another line is no sample:
        # on_overflow "skip" left it out).
        held = np.isin(lines, expected)
        pending += [
            (line, found.records[i])
            for i, line in zip(np.flatnonzero(held).tolist(), lines[held].tolist(), strict=True)
        ]
        taken = stop
        gone = np.setdiff1d(expected, lines[held])
        if gone.size or found.error is not None:
            if pending:  # a changed line names itself before the file's digest does
                yield _batch(build, ids, pending, render, names, change, found.fields)
            line = int(gone[0]) if gone.size else getattr(found.error, "line", None)
            raise change("line_not_sample", line=line)
        if len(pending) >= batch:
            yield _batch(build, ids, pending, render, names, change, found.fields)
            pending = []
    if pending:
        yield _batch(build, ids, pending, render, names, change, found.fields)
    if taken != wanted.size:
        raise change("line_missing", line=int(wanted[taken]))
    if read.bytes != fingerprint["bytes"]:
        raise change("size", was=str(fingerprint["bytes"]), now=str(read.bytes))
    if read.sha256 != fingerprint["sha256"]:
        raise change("sha256", was=str(fingerprint["sha256"]), now=read.sha256)


def _renderer(plan: FilePlan) -> Callable[[dict], str]:
    get, join = plan.template.value_functions(plan.fields)
    return lambda record: join(get(record))


def _batch(
    build: BuildSamples,
    ids: np.ndarray,
    pending: list[tuple[int, dict]],
    render: Callable[[dict], str],
    names: list[str],
    change: Callable[..., ChangedSinceBuildError],
    fields: tuple[str, ...],
) -> RecordBatch:
    lines = np.array([line for line, _ in pending], dtype=np.int64)
    chosen = ids[np.searchsorted(build.lines[ids], lines)]
    texts: list[str] = []
    records: list[dict] = []
    for sample_id, (line, record) in zip(chosen.tolist(), pending, strict=True):
        try:
            text = render(record)
        except (KeyError, TypeError):
            raise change("line_not_sample", line=line) from None
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest.encode() != build.hashes[sample_id]:
            was = build.hashes[sample_id].decode()
            raise change("rendered", line=line, was=was, now=digest)
        texts.append(text)
        records.append(record)
    values: dict[str, list[object]] = {}
    for name in names:
        if name == SOURCE_FILE:
            values[name] = [build.sources[int(build.files[i])] for i in chosen.tolist()]
        else:
            values[name] = [record.get(name, MISSING) for record in records]
    keys = list(fields) if fields else list(records[0])
    return RecordBatch(ids=chosen, texts=texts, values=values, keys=keys)
