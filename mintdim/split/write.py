"""Builds made of some of a finished build's records, copied byte for byte: the three builds of
a split, and the clean build of a decontamination (``mintdim/decontaminate``).

Every file is written by the build's own format module (shards, unit indexes, sample index,
UNK, overflow and duplicate indexes, stats, histogram, manifest), so a split's build is exactly
what ``verify_build``, ``open_build`` and the loader know. Sample ids are renumbered inside
each split in input order; each ``sample_index.jsonl`` line keeps its ``source_file`` and
``source_line`` and adds ``source_sample_id``. Blank input lines are no sample of any split:
each split's ``stats.json`` counts 0 of them (the input build's counts them).

One pass reads each input shard once, whole, checks its SHA-256 against the input manifest,
and hands each record to its split's writer; the token SHA-256 of each sample (its tokens as
stored, little-endian, without PAD) is taken on the way. Within a unit the records keep their
input order, which is the order of the new ids, so each split's records sit exactly where the
build writer would have put them. The sample indexes are written on a thread meanwhile: each
line's middle (``"hash"`` to ``empty_fields``) copied byte for byte from the input line
(``sample_index.MiddleReader``). Each build's manifest is written last (``manifest.derived``).
A sample that goes to no output (``-1``: a contaminated sample) is in none of them.

``shard_records`` is the same checked read, shard by shard, for whoever scans a build's tokens.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import (
    histogram,
    manifest,
    overflow_index,
    sample_index,
    spans,
    stats,
    unit_index,
    unk_index,
)
from mintdim.build.formats.duplicate_index import DuplicateTracker
from mintdim.build.formats.layout import AUDIT_FILES, EMPTY_UNIT, empty_unit_text
from mintdim.build.formats.overflow_index import OverflowIndexWriter
from mintdim.build.formats.sample_index import SampleIndexWriter
from mintdim.build.formats.shards import ShardRecord, UnitShardWriter, unit_dir_name
from mintdim.build.formats.unit_index import UnitIndexWriter
from mintdim.build.formats.unk_index import UnkIndexWriter, unk_parts
from mintdim.errors import ChangedSinceBuildError
from mintdim.shared import durable
from mintdim.split.samples import BuildSamples

__all__ = [
    "BuildFiles",
    "ShardRecords",
    "Written",
    "read_listed",
    "shard_records",
    "write_builds",
]


@dataclass(frozen=True, slots=True)
class Written:
    """What the split wrote: each build's manifest, and per input sample its new id and the
    SHA-256 of its tokens."""

    manifests: dict[str, dict]
    manifest_sha256: dict[str, str]
    """SHA-256 of each build's manifest.json bytes."""
    new_ids: np.ndarray
    """Each input sample's id in its build; -1 for a sample of no build."""
    token_sha256: list[bytes]


@dataclass(frozen=True, slots=True)
class BuildFiles:
    """What reading a build's shards needs, for a build whose sample index is not wanted
    (``BuildSamples`` has these too)."""

    path: Path
    shown: str
    """The build directory as the caller gave it (for messages)."""
    manifest: dict


@dataclass(frozen=True, slots=True)
class ShardRecords:
    """One shard of the input build, checked against its manifest: its records, in row order."""

    unit_size: int
    sample_ids: np.ndarray
    token_counts: np.ndarray
    records: np.ndarray
    """``(rows, unit_size)``, the stored dtype, PAD included."""
    spans: np.ndarray | None
    """Each row's segment spans, when the build stores them."""


@dataclass(slots=True)
class _Output:
    """The writers of one split's build but its sample index's (``_write_sample_index``)."""

    path: Path
    units: dict[int, UnitShardWriter]
    indexes: dict[int, UnitIndexWriter]
    unks: UnkIndexWriter
    overflows: OverflowIndexWriter
    duplicates: DuplicateTracker = field(default_factory=DuplicateTracker)
    unk_tokens: int = 0


def write_builds(
    samples: BuildSamples,
    split_of: np.ndarray,
    root: Path,
    provenance: Mapping[str, Mapping[str, object]],
    token_sha256: bool = True,
    kept: dict[str, bytes] | None = None,
) -> Written:
    """Write one build per key of ``provenance``, ``root/NAME``, in that order (its value is the
    build's ``derived_from``); ``split_of``: each input sample's build, as a position in that
    order, or -1 for none. ``token_sha256``: take each sample's token SHA-256 (``Written``'s
    list is empty without it: a second per sample for a million samples). ``kept``: where to
    keep the input's shards as read and checked (``shard_records``), for a caller that reads
    them again (a decontamination's verification)."""
    content = samples.manifest
    sizes = [int(size) for size in content["units"]["sizes"]]
    names = list(provenance)
    members = [np.flatnonzero(split_of == k) for k in range(len(names))]  # each in id order
    new_ids = np.full(samples.count, -1, dtype=np.int64)
    for chosen in members:
        new_ids[chosen] = np.arange(chosen.size)
    outputs = [_open(root / name, content, sizes) for name in names]
    # The sample indexes (read, checked, assembled, hashed and written: 300 bytes a sample) are
    # written on a thread while this one copies the records and finishes the rest. Both spend
    # their time hashing, writing files and in numpy, all without the GIL: measured as fast as
    # a forked child (shared/beside.py), and a thread works beside a caller's other threads too.
    with ThreadPoolExecutor(1) as pool:
        paths = [output.path for output in outputs]
        index = pool.submit(_write_sample_index, samples, split_of, members, new_ids, paths)
        digests = _copy_records(samples, split_of, new_ids, outputs, token_sha256, kept)
        _write_unk_and_overflow(samples, split_of, new_ids, outputs)
        finished = [_finish(samples, o, chosen) for o, chosen in zip(outputs, members, strict=True)]
        records = index.result()
    manifests, shas = {}, {}
    for name, output, (shards, indexes), record in zip(
        names, outputs, finished, records, strict=True
    ):
        final = _seal(samples, output, shards, indexes, record, provenance[name])
        manifests[name] = final
        shas[name] = hashlib.sha256(durable.json_bytes(final)).hexdigest()
    return Written(manifests, shas, new_ids, digests)


def _open(path: Path, content: dict, sizes: list[int]) -> _Output:
    path.mkdir()
    per_shard = int(content["output"]["samples_per_shard"])
    stored = bool(content["segment_spans"]["stored"])
    units = {}
    for size in sizes:
        (path / unit_dir_name(size)).mkdir()
        units[size] = UnitShardWriter(path / unit_dir_name(size), size, per_shard, stored)
    return _Output(
        path=path,
        units=units,
        indexes={size: UnitIndexWriter(path, size) for size in sizes},
        unks=UnkIndexWriter(path),
        overflows=OverflowIndexWriter(path),
    )


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


def shard_records(
    samples: BuildSamples | BuildFiles, kept: dict[str, bytes] | None = None
) -> Iterator[ShardRecords]:
    """Every shard of the build, unit by unit, each read whole and checked against the input
    manifest (``ChangedSinceBuildError``), with its rows' sample ids and token counts.
    ``kept``: files read and checked earlier in this process, by path, taken from it instead of
    read again; each file read here is added to it."""
    content = samples.manifest
    dtype = np.dtype(content["token_storage"]["dtype"]).newbyteorder("<")
    layout = content["segment_spans"]
    width = int(layout["record_width"]) if layout["stored"] else 0
    for size in [int(size) for size in content["units"]["sizes"]]:
        listed = [entry for entry in content["shards"] if entry["unit_size"] == size]
        if not listed:
            continue
        entries = _unit_index(samples, size)
        offset = 0
        for entry in listed:
            data = _read_kept(samples, entry, kept)
            records = np.frombuffer(data, dtype=dtype).reshape(-1, size)
            span_rows = None
            if width:
                data = _read_kept(samples, entry["spans"], kept)
                span_rows = spans.read_records(np.frombuffer(data, dtype=spans.DTYPE), width)
            rows = slice(offset, offset + records.shape[0])
            offset += records.shape[0]
            yield ShardRecords(
                unit_size=size,
                sample_ids=entries["sample_id"][rows].astype(np.int64),
                token_counts=entries["token_count"][rows].astype(np.int64),
                records=records,
                spans=span_rows,
            )


def _copy_records(
    samples: BuildSamples,
    split_of: np.ndarray,
    new_ids: np.ndarray,
    outputs: list[_Output],
    token_sha256: bool,
    kept: dict[str, bytes] | None,
) -> list[bytes]:
    """Copy every record to its build's unit, shard by shard; the token SHA-256 of each sample
    (with ``token_sha256``)."""
    digests = [b""] * samples.count if token_sha256 else []
    for shard in shard_records(samples, kept):
        ids, counts, records = shard.sample_ids, shard.token_counts, shard.records
        pairs = zip(ids.tolist(), counts.tolist(), strict=True) if token_sha256 else ()
        for row, (sample_id, count) in enumerate(pairs):
            digests[sample_id] = hashlib.sha256(records[row, :count].tobytes()).digest()
        chosen = split_of[ids]
        for k, output in enumerate(outputs):
            rows = np.flatnonzero(chosen == k)
            if rows.size:
                _write_rows(output.units[shard.unit_size], shard, rows)
                output.indexes[shard.unit_size].write(new_ids[ids[rows]], counts[rows])
    return digests


_FEW_RUNS = 64
"""Rows a run must hold on average to be written as slices of the shard rather than copied out
together (a decontamination keeps runs of ~1,000 rows; a split's 80/10/10 runs of one or two)."""


def _write_rows(writer: UnitShardWriter, shard: ShardRecords, rows: np.ndarray) -> None:
    """The shard's ``rows`` (ascending) appended to ``writer``: each run of consecutive rows as
    a slice of the shard when the runs are long (no copy of hundreds of MB), else gathered."""
    cuts = np.flatnonzero(np.diff(rows) != 1) + 1
    if cuts.size + 1 > rows.size // _FEW_RUNS:
        writer.write(shard.records[rows], None if shard.spans is None else shard.spans[rows])
        return
    for first, last in zip(
        rows[np.r_[0, cuts]].tolist(), (rows[np.r_[cuts - 1, -1]] + 1).tolist(), strict=True
    ):
        span_rows = None if shard.spans is None else shard.spans[first:last]
        writer.write(shard.records[first:last], span_rows)


def _read_kept(
    samples: BuildSamples | BuildFiles, entry: dict, kept: dict[str, bytes] | None
) -> bytes:
    if kept is None:
        return read_listed(samples, entry)
    if entry["path"] not in kept:
        kept[entry["path"]] = read_listed(samples, entry)
    return kept[entry["path"]]


def read_listed(samples: BuildSamples | BuildFiles, entry: dict) -> bytes:
    """A file the input manifest lists, whole; ``ChangedSinceBuildError`` unless it has the
    listed size and SHA-256."""
    data = _read_whole(samples, entry)
    _compare(samples, entry, data, hashlib.sha256(data).hexdigest())
    return data


def _read_whole(samples: BuildSamples | BuildFiles, entry: dict) -> bytes:
    try:
        return (samples.path / entry["path"]).read_bytes()
    except FileNotFoundError:
        raise ChangedSinceBuildError(
            build=samples.shown, file=entry["path"], change="missing"
        ) from None


def _compare(samples: BuildSamples | BuildFiles, entry: dict, data: bytes, digest: str) -> None:
    if digest != entry["sha256"] or len(data) != entry["bytes"]:
        raise ChangedSinceBuildError(
            build=samples.shown,
            file=entry["path"],
            change="sha256",
            was=str(entry["sha256"]),
            now=digest,
        )


def _unit_index(samples: BuildSamples | BuildFiles, size: int) -> np.ndarray:
    """A unit's index entries, from the bytes checked against the input manifest."""
    listed = next(e for e in samples.manifest["unit_indexes"] if e["unit_size"] == size)
    entries = np.load(io.BytesIO(read_listed(samples, listed)), allow_pickle=False)
    if entries.dtype != unit_index.DTYPE:
        raise ChangedSinceBuildError(
            build=samples.shown, file=listed["path"], change="not_index", now=str(entries.dtype)
        )
    return entries


# ---------------------------------------------------------------------------
# Index files
# ---------------------------------------------------------------------------


def _places(
    samples: BuildSamples, split_of: np.ndarray, per_shard: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's shard number and row in its split's build: records of a unit in id order."""
    sequence = np.zeros(samples.count, dtype=np.int64)
    for k in range(int(split_of.max(initial=-1)) + 1):
        members = np.flatnonzero(split_of == k)
        units = samples.units[members]
        for size in np.unique(units).tolist():
            chosen = members[units == size]
            sequence[chosen] = np.arange(chosen.size)
    return np.divmod(sequence, per_shard)


def _audit(samples: BuildSamples, name: str) -> dict:
    return samples.manifest["audit_files"][name]


def _input_rows(samples: BuildSamples, name: str) -> Iterator[dict]:
    """The rows of one of the input build's JSONL indexes, its digest checked first."""
    data = read_listed(samples, {"path": name, **_audit(samples, name)})
    for line in data.splitlines():
        yield orjson.loads(line)


def _write_sample_index(
    samples: BuildSamples,
    split_of: np.ndarray,
    members: list[np.ndarray],
    new_ids: np.ndarray,
    paths: list[Path],
) -> list[dict[str, object]]:
    """Each build's sample_index.jsonl (build ``k``'s ``members`` in ``paths[k]``): each
    sample's input line, its middle kept byte for byte (``sample_index.MiddleReader``), with its
    new id and place and its input id. Each file's size and SHA-256, as the manifest lists them."""
    per_shard = int(samples.manifest["output"]["samples_per_shard"])
    numbers, rows = _places(samples, split_of, per_shard)
    entry = {"path": sample_index.FILENAME, **_audit(samples, sample_index.FILENAME)}
    data = _read_whole(samples, entry)
    # The input index is hashed on a thread while its lines are copied, and compared with its
    # manifest before any output index is closed (0.25 s of 300 MB off this thread's path).
    with ThreadPoolExecutor(1) as hashing:
        digest = hashing.submit(lambda: hashlib.sha256(data).hexdigest())
        writers = _copy_index(samples, data, members, new_ids, paths, numbers, rows)
        _compare(samples, entry, data, digest.result())
    for writer in writers:
        writer.close()
    return [writer.file.record() for writer in writers]


def _copy_index(
    samples: BuildSamples,
    data: bytes,
    members: list[np.ndarray],
    new_ids: np.ndarray,
    paths: list[Path],
    numbers: np.ndarray,
    rows: np.ndarray,
) -> list[SampleIndexWriter]:
    """Each build's index lines written (``_write_sample_index``), its writer still open."""
    reader = sample_index.MiddleReader([entry["path"] for entry in samples.manifest["shards"]])
    writers = [SampleIndexWriter(path) for path in paths]
    for middles in reader.blocks(data):
        for writer, chosen in zip(writers, members, strict=True):
            cut = np.searchsorted(chosen, [middles.first, middles.first + middles.count])
            ids = chosen[cut[0] : cut[1]]
            if ids.size:
                writer.copy(
                    middles,
                    ids - middles.first,
                    int(new_ids[ids[0]]),
                    samples.units[ids],
                    numbers[ids],
                    rows[ids],
                    source_ids=ids,
                )
    return writers


def _write_unk_and_overflow(
    samples: BuildSamples, split_of: np.ndarray, new_ids: np.ndarray, outputs: list[_Output]
) -> None:
    for row in _input_rows(samples, unk_index.FILENAME):
        sample_id = row["sample_id"]
        if split_of[sample_id] < 0:  # a sample of no build
            continue
        output = outputs[int(split_of[sample_id])]
        (part,) = unk_parts(
            [row["hash"]],
            orjson.dumps(row["source_file"]).decode(),
            [row["source_line"]],
            [row["unk_positions"]],
        )
        output.unks.write(int(new_ids[sample_id]), [(0, part)])
        output.unk_tokens += len(row["unk_positions"])
    for row in _input_rows(samples, overflow_index.FILENAME):
        sample_id = row["sample_id"]
        if sample_id is None or split_of[sample_id] < 0:  # skipped by the build, or left out
            continue
        outputs[int(split_of[sample_id])].overflows.write(
            sample_id=int(new_ids[sample_id]),
            source_file=row["source_file"],
            source_line=row["source_line"],
            token_count=row["token_count"],
            max_unit_size=row["max_unit_size"],
            action=row["action"],
            new_unit_size=row.get("new_unit_size"),
        )


# ---------------------------------------------------------------------------
# Finishing one build
# ---------------------------------------------------------------------------


def _finish(
    samples: BuildSamples, output: _Output, members: np.ndarray
) -> tuple[list[ShardRecord], list[ShardRecord]]:
    """Every file of a build but its sample index and manifest, closed: its shards' and unit
    indexes' records."""
    content = samples.manifest
    sizes = [int(size) for size in content["units"]["sizes"]]
    shards = [record for size in sizes for record in output.units[size].finish()]
    indexes = [record for size in sizes if (record := output.indexes[size].finish())]
    output.unks.close()
    output.overflows.close()
    _track_duplicates(samples, output.duplicates, members)
    groups, duplicated = output.duplicates.write(output.path)
    for size, writer in output.units.items():
        if writer.samples == 0:
            (writer.unit_path / EMPTY_UNIT).write_text(empty_unit_text(size), encoding="utf-8")
    units = content["units"]
    counter = stats.StatsCounter(
        tuple(sizes), policy=units["on_overflow"], extended=list(units["extended_sizes"])
    )
    counter.overflow(output.overflows.count)
    unit_positions = np.searchsorted(np.asarray(sizes), samples.units[members])
    counter.add(samples.token_counts[members], unit_positions, 0, output.unk_tokens)
    storage = content["token_storage"]
    totals = counter.as_dict(
        token_dtype=storage["dtype"],
        bytes_per_token=int(storage["bytes_per_token"]),
        duplicate_groups=groups,
        duplicate_samples=duplicated,
        samples_with_unk=output.unks.samples,
        shard_count=len(shards),
        shard_bytes=sum(shard.bytes for shard in shards),
    )
    durable.write_json_atomic(output.path / stats.FILENAME, totals)
    durable.write_json_atomic(output.path / histogram.FILENAME, totals["unit_distribution"])
    return shards, indexes


def _seal(
    samples: BuildSamples,
    output: _Output,
    shards: list[ShardRecord],
    indexes: list[ShardRecord],
    index_record: dict[str, object],
    provenance: dict[str, object],
) -> dict:
    """The build's manifest, written last once every file is on disk: its content."""
    streamed = {
        sample_index.FILENAME: index_record,
        **{w.file.name: w.file.record() for w in (output.unks, output.overflows)},
    }
    audit = {
        name: streamed.get(name)
        or {
            "bytes": (output.path / name).stat().st_size,
            "sha256": durable.file_sha256(output.path / name),
        }
        for name in AUDIT_FILES
    }
    final = manifest.derived(samples.manifest, shards, indexes, audit, provenance)
    durable.sync_tree(output.path, skip="")
    durable.write_json_atomic(output.path / manifest.FILENAME, final)
    return final


def _track_duplicates(
    samples: BuildSamples, tracker: DuplicateTracker, members: np.ndarray
) -> None:
    """Feed the split's samples to the duplicate tracker, one run of one input file at a time."""
    if not members.size:
        return
    files = samples.files[members]
    cuts = np.flatnonzero(np.r_[True, files[1:] != files[:-1]]).tolist() + [members.size]
    for start, stop in zip(cuts[:-1], cuts[1:], strict=True):
        run = members[start:stop]
        digests = bytes.fromhex(samples.hashes[run].tobytes().decode())
        tracker.add(digests, samples.sources[int(files[start])], samples.lines[run])
