"""One output directory: its layout, the writers inside it, and how it ends (complete or failed).

Layout::

    <dir>/manifest.json  histogram.json  stats.json
          sample_index.jsonl  duplicate_index.jsonl  unk_index.jsonl  overflow_index.jsonl
          unit_<size>/shard_000000.bin ... index.npy  (or EMPTY_UNIT.md when the unit got nothing)
          unit_<size>/shard_000000.spans.bin ...      (segment spans, when the tokenizer sets encode)
          staging/  (while the build runs: the pieces' fragments, build/write/staging.py)

Under ``on_overflow="extend"`` a sample longer than every unit goes to the smallest unit
already extended that holds it, else to a new unit of its exact size (rounded up to the plan's
alignment). This happens here, in input order, so the units never depend on batching.

A build that fails after it began writing leaves ``UNIT_BUILD_FAILED.md`` (the error in English
and Vietnamese) in every unit directory and no manifest, so nothing half-written looks complete;
its staging area stays, for ``resume=True``.
A build that succeeds writes everything to disk (fsync) before the manifest, the commit point,
and its staging area is removed only after that (``runtime``): a crash in between leaves a
complete build beside its fragments, never neither. ``resume=True`` then finds the build
complete (``create``), reads its stats back and removes the fragments.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.batch import EXTEND, EncodedBatch
from mintdim.build.contracts import FilePlan, OutputPlan
from mintdim.build.formats import (
    histogram,
    manifest,
    sample_index,
    stats,
    unit_index,
)
from mintdim.build.formats.duplicate_index import DuplicateTracker
from mintdim.build.formats.layout import (
    AUDIT_FILES,
    EMPTY_UNIT,
    STAGING,
    UNIT_BUILD_FAILED,
    empty_unit_text,
)
from mintdim.build.formats.overflow_index import OverflowIndexWriter
from mintdim.build.formats.sample_index import SampleIndexWriter
from mintdim.build.formats.shards import ShardRecord, UnitShardWriter, unit_dir_name
from mintdim.build.formats.unit_index import UnitIndexWriter
from mintdim.build.formats.unk_index import UnkIndexWriter
from mintdim.build.source import InputFingerprint
from mintdim.build.units.packing import ALGORITHM, VERSION
from mintdim.build.units.planner import padded_rows
from mintdim.build.write.packed import PackedUnitWriter
from mintdim.build.write.staging import Staging
from mintdim.errors import BuildWriteError, MintDimError, OutputValidationError
from mintdim.shared import durable
from mintdim.shared.beside import Beside
from mintdim.shared.lang import Bilingual

__all__ = ["OutputDirectory"]

_MARKER_ROOM = f".{UNIT_BUILD_FAILED}.room"
_MARKER_BYTES = 16 << 10
"""Space held for a failure marker while a build runs (its text is a few KiB)."""


class OutputDirectory:
    """Receives encoded batches in input order and turns them into one finished directory."""

    def __init__(self, plan: OutputPlan, files: Sequence[FilePlan], policy: str = "abort") -> None:
        self.plan = plan
        self.files = tuple(files)
        self.files_by_index = {f.index: f for f in self.files}
        self.path = Path(plan.abs_path)
        self._next_id = 0
        self._units: list[UnitShardWriter | PackedUnitWriter] = []
        self._indexes: list[UnitIndexWriter] = []
        self._samples: SampleIndexWriter | None = None
        self._unks: UnkIndexWriter | None = None
        self._overflows: OverflowIndexWriter | None = None
        self._duplicates = DuplicateTracker()
        self._stats = stats.StatsCounter(plan.sizes, policy)
        self._sizes = np.zeros(0, dtype=np.int64)
        """Each writer's unit size: the planned ones, then those ``extend`` adds."""
        self._parity_rows = 0
        self._unit_of: list[np.ndarray] = []
        """A packed build's unit of every sample, batch by batch: their places come at the end."""
        self.complete = False
        """True once the manifest is written: a finished build that nothing may mark failed."""
        self._begun = False
        """True once ``create`` began writing: before that, a failure has nothing here to mark."""
        self.staging = Staging(self.path)

    def create(self, job: dict[str, object] | None, resume: bool = False) -> None:
        """Create the directory (validated absent or empty), its staging area for ``job``
        (``Staging.begin``; None: a build that stages nothing), its unit folders and index files.

        ``resume``: when the directory holds an unfinished build of the same job, keep its
        staging area and start everything else afresh (its other files came from the interrupted
        assembly, which runs again from the fragments). When it holds a finished build of the
        same job whose fragments were not removed yet, the build is ``complete``: nothing more.
        """
        try:
            if resume and self.staging.staged_job() is not None:
                # Set first: a finished build refused for another job must stay unmarked.
                self.complete = (self.path / manifest.FILENAME).is_file()
                self.staging.begin(job, resume=True)
                if self.complete:
                    return
                self._begun = True
                self._clear_all_but_staging()
            else:
                self._begun = True
                self._claim()
                if job is not None:
                    self.staging.begin(job, resume=False)
            for size in self.plan.sizes:
                self._add_unit(size)
            self._samples = SampleIndexWriter(self.path, packed=self.plan.pack)
            self._unks = UnkIndexWriter(self.path)
            self._overflows = OverflowIndexWriter(self.path)
        except OSError as err:
            raise OutputValidationError(
                directory=self.plan.path, problem="cannot_create", detail=str(err)
            ) from err

    def _clear_all_but_staging(self) -> None:
        # Validation found this directory holding our staging area and no manifest: everything
        # else in it was written by the interrupted build.
        for entry in self.path.iterdir():
            if entry.name == STAGING:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()

    def _add_unit(self, size: int) -> None:
        unit_path = self.path / unit_dir_name(size)
        unit_path.mkdir()
        # Room for the failure marker, taken now: on a disk that fills up later the marker is
        # written into blocks the build already holds.
        (unit_path / _MARKER_ROOM).write_bytes(bytes(_MARKER_BYTES))
        plan = self.plan
        self._units.append(
            PackedUnitWriter(
                unit_path,
                size,
                plan.samples_per_shard,
                plan.info.dtype,
                plan.info.pad_id,
                plan.span_width,
            )
            if plan.pack
            else UnitShardWriter(
                unit_path, size, plan.samples_per_shard, spans_stored=plan.span_width > 0
            )
        )
        self._indexes.append(UnitIndexWriter(self.path, size))
        self._sizes = np.append(self._sizes, size)

    def _claim(self) -> None:
        # Validation found the directory absent or empty; mkdir without exist_ok makes the claim
        # atomic when it was absent, and a second look catches a writer that got in between.
        try:
            self.path.mkdir(parents=True)
        except FileExistsError:
            if any(self.path.iterdir()):
                raise OutputValidationError(directory=self.plan.path, problem="not_empty") from None

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """An ``OSError`` while writing here becomes ``BuildWriteError`` naming the directory."""
        try:
            yield
        except OSError as err:
            if isinstance(err, MintDimError):
                raise
            raise BuildWriteError.from_os_error("output", self.plan.path, err) from err

    def write(self, batch: EncodedBatch) -> None:
        """Append one batch: shard records, index entries and lines, digests and counts."""
        with self._writing():
            self._write(batch)

    def _write(self, batch: EncodedBatch) -> None:
        first_id = self._next_id
        units = self._place_extended(batch) if batch.extend_tokens else batch.unit_indexes
        # Each sample's place among its unit's records, from the unit's count before this batch.
        sequence = np.empty(batch.sample_count, dtype=np.int64)
        spans = batch.span_rows
        for unit, (writer, index) in enumerate(zip(self._units, self._indexes, strict=True)):
            members = np.flatnonzero(units == unit)
            if members.size:
                sequence[members] = writer.samples + np.arange(members.size)
                if unit < len(batch.rows):  # a planned unit: the worker made its records
                    unit_spans = None if spans is None else spans[unit]
                    if self.plan.pack:
                        writer.write(batch.rows[unit], batch.token_counts[members], unit_spans)
                    else:
                        writer.write(batch.rows[unit], unit_spans)
                index.write(first_id + members, batch.token_counts[members])
        self._write_extended(batch, units)
        if self.plan.pack:  # the rows, and so every place, come once all samples are known
            self._samples.write_pending(first_id, batch.index_parts)
            self._unit_of.append(units.astype(np.int32))
        else:
            shard_numbers, shard_rows = np.divmod(sequence, self.plan.samples_per_shard)
            unit_sizes = self._sizes[units]
            self._samples.write(first_id, batch.index_parts, unit_sizes, shard_numbers, shard_rows)
        self._unks.write(first_id, batch.unk_parts)
        for event in batch.overflows:
            position = event.position
            self._overflows.write(
                sample_id=None if position is None else first_id + position,
                source_file=self.files_by_index[batch.file_index].path,
                source_line=event.line,
                token_count=event.token_count,
                max_unit_size=self.plan.sizes[-1],
                action=event.action,
                new_unit_size=(
                    self._units[units[position]].unit_size if event.action == "extend" else None
                ),
            )
        self._duplicates.add(
            batch.digests, self.files_by_index[batch.file_index].path, batch.line_numbers
        )
        self._stats.add(batch.token_counts, units, batch.blank_lines, batch.unk_tokens)
        self._stats.overflow(len(batch.overflows))
        self._parity_rows += batch.parity_rows
        self._next_id += batch.sample_count

    def _place_extended(self, batch: EncodedBatch) -> np.ndarray:
        """Every sample's unit, each ``EXTEND`` sample now in a (perhaps new) extended unit."""
        units = batch.unit_indexes.copy()
        for k, position in enumerate(np.flatnonzero(units == EXTEND).tolist()):
            count = int(batch.extend_tokens[k].size)
            fitting = [u for u, w in enumerate(self._units) if w.unit_size >= count]
            if fitting:
                unit = min(fitting, key=lambda u: self._units[u].unit_size)
            else:
                align = self.plan.align
                self._add_unit(-(-count // align) * align)
                self._stats.add_unit(self._units[-1].unit_size)
                unit = len(self._units) - 1
            units[position] = unit
            digest, source, line, empty = batch.extend_facts[k]
            (batch.index_parts[position],) = sample_index.sample_parts(
                [digest], [count], [self._units[unit].unit_size], source, [line], [empty]
            )
        return units

    def _write_extended(self, batch: EncodedBatch, units: np.ndarray) -> None:
        info = self.plan.info
        one = np.ones(1, dtype=bool)
        for k, position in enumerate(np.flatnonzero(batch.unit_indexes == EXTEND).tolist()):
            writer = self._units[units[position]]
            tokens = batch.extend_tokens[k]
            span = batch.extend_spans[k][None, :] if batch.extend_spans else None
            if self.plan.pack:
                writer.write(tokens, np.array([tokens.size]), span)
                continue
            rows = padded_rows(
                tokens, np.array([tokens.size]), one, writer.unit_size, info.pad_id, info.dtype
            )
            writer.write(rows, span)

    def finish(self, fingerprints: Mapping[int, InputFingerprint]) -> dict[str, object]:
        """Close everything, write the audit files and, last, the manifest; return the stats.

        ``fingerprints``: each input file's, by file index, as it was read.
        """
        with self._writing():
            content = self._finish(fingerprints)
        self.complete = True
        return content

    def _finish(self, fingerprints: Mapping[int, InputFingerprint]) -> dict[str, object]:
        indexes = [record for index in self._indexes if (record := index.finish())]
        beside: list[Beside] = []
        try:
            if self.plan.pack:
                # A packed build writes its rows now: the duplicate groups and, once the units
                # are packed, the sample index's places are written beside them, by forked
                # children (shared/beside.py; each is a Python loop, which threads would share).
                beside.append(Beside(partial(self._duplicates.write, self.path)))
                shards, bounds, index = self._finish_packed()
                beside.append(index)
            else:
                shards = [record for writer in self._units for record in writer.finish()]
                bounds = []
            self._unks.close()
            self._overflows.close()
            if self.plan.pack:
                groups, duplicated = beside[0].result()
                self._samples.placed(beside[1].result())
            else:
                groups, duplicated = self._duplicates.write(self.path)
        except BaseException:
            for child in beside:
                child.cancel()
            raise
        self._samples.close()
        for writer in self._units:
            if writer.samples == 0:
                (writer.unit_path / EMPTY_UNIT).write_text(
                    empty_unit_text(writer.unit_size), encoding="utf-8"
                )
        info = self.plan.info
        content = self._stats.as_dict(
            token_dtype=info.token_dtype,
            bytes_per_token=info.dtype.itemsize,
            duplicate_groups=groups,
            duplicate_samples=duplicated,
            samples_with_unk=self._unks.samples,
            shard_count=len(shards),
            shard_bytes=sum(s.bytes for s in shards),
            packing=self._packing(),
        )
        durable.write_json_atomic(self.path / stats.FILENAME, content)
        durable.write_json_atomic(self.path / histogram.FILENAME, content["unit_distribution"])
        for writer in self._units:
            (writer.unit_path / _MARKER_ROOM).unlink()
        # The manifest vouches for every file here: after a crash (power loss, kernel panic) it
        # must never stand over shards or indexes that were still only in the page cache.
        # Every shard (and its spans) was fsynced as it closed.
        synced = [s.path for s in shards] + [s.spans["path"] for s in shards if s.spans]
        durable.sync_tree(self.path, skip=STAGING, synced=[self.path / name for name in synced])
        durable.write_json_atomic(
            self.path / manifest.FILENAME,
            manifest.manifest(
                self.plan,
                [(file, fingerprints[file.index]) for file in self.files],
                shards,
                indexes,
                self._audit_digests(),
                self._extended_sizes(),
                self._stats.policy,
                self._parity_rows,
                bounds,
                content.get("packing"),
            ),
        )
        return content

    def _finish_packed(self) -> tuple[list[ShardRecord], list[ShardRecord], Beside]:
        """Pack every unit; then write sample_index.jsonl with every sample's place beside
        (``shared/beside.py``: a forked child) while the units' rows and boundary indexes are
        written here. The caller takes the index's result (``_placed``)."""
        units = np.concatenate(self._unit_of) if self._unit_of else np.empty(0, np.int32)
        self._unit_of = []
        shard, row, start = (np.empty(units.size, dtype=np.int32) for _ in range(3))
        ids = [self._unit_ids(writer.unit_size) for writer in self._units]
        for writer, unit_ids in zip(self._units, ids, strict=True):
            places = writer.pack()
            shard[unit_ids], row[unit_ids], start[unit_ids] = places.shard, places.row, places.start
        self._samples.close_pending()
        sizes = self._sizes.tolist()
        index = Beside(partial(self._samples.place_pending, sizes, units, shard, row, start))
        del units, shard, row, start  # the child has its copies
        shards: list[ShardRecord] = []
        bounds: list[ShardRecord] = []
        try:
            for writer, unit_ids in zip(self._units, ids, strict=True):
                written, bound = writer.finish(unit_ids)
                shards += written
                bounds += bound
        except BaseException:
            index.cancel()
            raise
        return shards, bounds, index

    def _unit_ids(self, unit_size: int) -> np.ndarray:
        """The ids of a unit's samples in the order it received them, from its finished index
        (int32 while they fit: every unit's are held while the rows are written)."""
        kind = np.int32 if self._next_id < 2**31 else np.int64
        if not any(i.unit_size == unit_size and i.samples for i in self._indexes):
            return np.empty(0, dtype=kind)
        entries = unit_index.load(self.path / unit_index.index_path(unit_size))
        return np.array(entries["sample_id"], dtype=kind)

    def _packing(self) -> dict[str, object] | None:
        """stats.json's ``packing``: per unit, its rows against the fewest any packing needs."""
        if not self.plan.pack:
            return None
        packed = [w for w in self._units if w.samples]
        return {
            "algorithm": ALGORITHM,
            "version": VERSION,
            "rows": {str(w.unit_size): w.rows for w in packed},
            "lower_bound_rows": {str(w.unit_size): w.lower_bound for w in packed},
        }

    def finished_stats(self) -> dict[str, object]:
        """The stats of a build found ``complete`` by ``create``, as its stats.json holds them."""
        return orjson.loads((self.path / stats.FILENAME).read_bytes())

    def _extended_sizes(self) -> list[int]:
        return sorted(w.unit_size for w in self._units[len(self.plan.sizes) :])

    def _audit_digests(self) -> dict[str, dict[str, object]]:
        # The indexes streamed during the build were hashed as written; the small files written
        # at the end are read back once from the page cache.
        written = {
            w.file.name: w.file.record() for w in (self._samples, self._unks, self._overflows)
        }
        return {
            name: written.get(name)
            or {
                "bytes": (self.path / name).stat().st_size,
                "sha256": durable.file_sha256(self.path / name),
            }
            for name in AUDIT_FILES
        }

    def fail(self, error: BaseException) -> None:
        """Mark every unit directory written so far as failed; never writes a manifest.

        A finished directory (``complete``), or one this run had not begun to write, is left
        as it is. Closing a file may fail again
        (its buffer cannot reach a full disk): that data belonged to the failed build anyway,
        and no such failure may keep a unit directory from getting its marker.
        """
        if self.complete or not self._begun:
            return
        for writer in [*self._units, *self._indexes]:
            with suppress(OSError):
                writer.abort()
        for handle in (self._samples, self._unks, self._overflows):
            if handle is not None:
                with suppress(OSError):
                    handle.close()
        text = _failed_text(error).encode("utf-8")
        for size in dict.fromkeys([*self.plan.sizes, *(w.unit_size for w in self._units)]):
            with suppress(OSError):  # the directory itself may be gone
                _write_marker(self.path / unit_dir_name(size), text)


FAILED_TEXT = Bilingual(
    en="# Unit build failed\n\n"
    "This directory is not a finished build: it has no manifest.json and its shards are\n"
    "incomplete. Fix the error below, then run the same build again with resume=True (runner:\n"
    "resume=true) to reuse the pieces already encoded (a build run with resumable=False staged\n"
    "none), or build into a new, empty directory.\n\n"
    "```text\n{message}\n```",
    vi="# Build unit thất bại\n\n"
    "Thư mục này không phải là một lần build hoàn chỉnh: không có manifest.json và các shard\n"
    "chưa đầy đủ. Hãy sửa lỗi dưới đây, rồi chạy lại đúng lần build này với resume=True\n"
    "(runner: resume=true) để dùng lại các piece đã encode (lần build chạy với resumable=False\n"
    "không lưu piece nào), hoặc build vào một thư mục mới, rỗng.\n\n"
    "```text\n{message}\n```",
)


def _write_marker(unit_path: Path, text: bytes) -> None:
    """UNIT_BUILD_FAILED.md, written into the room taken at create when it is there."""
    room = unit_path / _MARKER_ROOM
    if not room.is_file():
        if unit_path.is_dir():
            (unit_path / UNIT_BUILD_FAILED).write_bytes(text)
        return
    with open(room, "r+b") as handle:
        handle.write(text[:_MARKER_BYTES])
        handle.truncate()
    os.replace(room, unit_path / UNIT_BUILD_FAILED)


def _failed_text(error: BaseException) -> str:
    if not isinstance(error, MintDimError):
        return FAILED_TEXT.both(message=f"{type(error).__name__}: {error}") + "\n"
    # Each language filled in with its own message as a plain value: a message may hold braces
    # (a template, a JSON config), which a nested Bilingual would take for fields.
    en, vi = (FAILED_TEXT.render(lang, message=error.message(lang)) for lang in ("en", "vi"))
    return f"{en}\n\n{vi}\n"
