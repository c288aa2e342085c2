"""One output directory: its layout, the writers inside it, and how it ends (complete or failed).

Layout::

    <dir>/manifest.json  histogram.json  stats.json
          sample_index.jsonl  duplicate_index.jsonl  unk_index.jsonl
          unit_<size>/shard_000000.bin ... index.npy  (or EMPTY_UNIT.md when the unit got nothing)
          staging/  (while the build runs: the pieces' fragments, output/staging.py)

A build that fails after it began writing leaves ``UNIT_BUILD_FAILED.md`` (the error in English
and Vietnamese) in every unit directory and no manifest, so nothing half-written looks complete;
its staging area stays, for ``resume=True``.
A build that succeeds writes everything to disk (fsync) before the manifest, the commit point.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from mintdim.pipelines.unit_build.batch import EncodedBatch
from mintdim.pipelines.unit_build.contracts import FilePlan, OutputPlan
from mintdim.pipelines.unit_build.output import (
    duplicate_index,
    durable,
    histogram,
    manifest,
    sample_index,
    staging,
    stats,
    unk_index,
)
from mintdim.pipelines.unit_build.output.duplicate_index import DuplicateTracker
from mintdim.pipelines.unit_build.output.sample_index import SampleIndexWriter
from mintdim.pipelines.unit_build.output.staging import Staging
from mintdim.pipelines.unit_build.output.unit_index import UnitIndexWriter
from mintdim.pipelines.unit_build.output.unk_index import UnkIndexWriter
from mintdim.pipelines.unit_build.source.jsonl import InputFingerprint
from mintdim.pipelines.unit_build.units.shard_writer import UnitShardWriter, unit_dir_name
from mintdim.shared.errors import MintDimError, OutputValidationError
from mintdim.shared.lang import Bilingual

__all__ = ["AUDIT_FILES", "EMPTY_UNIT", "UNIT_BUILD_FAILED", "OutputDirectory", "empty_unit_text"]

EMPTY_UNIT = "EMPTY_UNIT.md"
UNIT_BUILD_FAILED = "UNIT_BUILD_FAILED.md"
AUDIT_FILES = (
    sample_index.FILENAME,
    duplicate_index.FILENAME,
    unk_index.FILENAME,
    stats.FILENAME,
    histogram.FILENAME,
)
"""The index and summary files beside the manifest; it lists each one's size and SHA-256."""


class OutputDirectory:
    """Receives encoded batches in input order and turns them into one finished directory."""

    def __init__(self, plan: OutputPlan, files: Sequence[FilePlan]) -> None:
        self.plan = plan
        self.files = tuple(files)
        self.path = Path(plan.abs_path)
        self._next_id = 0
        self._units: list[UnitShardWriter] = []
        self._indexes: list[UnitIndexWriter] = []
        self._samples: SampleIndexWriter | None = None
        self._unks: UnkIndexWriter | None = None
        self._duplicates = DuplicateTracker()
        self._stats = stats.StatsCounter(plan.sizes)
        self._sizes = np.asarray(plan.sizes, dtype=np.int64)
        self.staging = Staging(self.path)

    def create(self, job: dict[str, object], resume: bool = False) -> None:
        """Create the directory (validated absent or empty), its staging area for ``job``
        (``Staging.job``), its unit folders and index files.

        ``resume``: when the directory holds an unfinished build of the same job, keep its
        staging area and start everything else afresh (its other files came from the interrupted
        assembly, which runs again from the fragments).
        """
        try:
            if resume and self.staging.staged_job() is not None:
                self.staging.begin(job, resume=True)
                self._clear_all_but_staging()
            else:
                self._claim()
                self.staging.begin(job, resume=False)
            for size in self.plan.sizes:
                unit_path = self.path / unit_dir_name(size)
                unit_path.mkdir()
                self._units.append(UnitShardWriter(unit_path, size, self.plan.samples_per_shard))
                self._indexes.append(UnitIndexWriter(self.path, size))
            self._samples = SampleIndexWriter(self.path)
            self._unks = UnkIndexWriter(self.path)
        except OSError as err:
            raise OutputValidationError(
                directory=self.plan.path, problem="cannot_create", detail=str(err)
            ) from err

    def _clear_all_but_staging(self) -> None:
        # Validation found this directory holding our staging area and no manifest: everything
        # else in it was written by the interrupted build.
        for entry in self.path.iterdir():
            if entry.name == staging.DIRNAME:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()

    def _claim(self) -> None:
        # Validation found the directory absent or empty; mkdir without exist_ok makes the claim
        # atomic when it was absent, and a second look catches a writer that got in between.
        try:
            self.path.mkdir(parents=True)
        except FileExistsError:
            if any(self.path.iterdir()):
                raise OutputValidationError(directory=self.plan.path, problem="not_empty") from None

    def write(self, batch: EncodedBatch) -> None:
        """Append one batch: shard records, index entries and lines, digests and counts."""
        first_id = self._next_id
        # Each sample's place among its unit's records, from the unit's count before this batch.
        sequence = np.empty(batch.sample_count, dtype=np.int64)
        for unit, (writer, index) in enumerate(zip(self._units, self._indexes, strict=True)):
            members = np.flatnonzero(batch.unit_indexes == unit)
            if members.size:
                sequence[members] = writer.samples + np.arange(members.size)
                writer.write(batch.rows[unit])
                index.write(first_id + members, batch.token_counts[members])
        shard_numbers, shard_rows = np.divmod(sequence, self.plan.samples_per_shard)
        unit_sizes = self._sizes[batch.unit_indexes]
        self._samples.write(first_id, batch.index_parts, unit_sizes, shard_numbers, shard_rows)
        self._unks.write(first_id, batch.unk_parts)
        self._duplicates.add(batch.digests)
        self._stats.add(batch.token_counts, batch.unit_indexes, batch.blank_lines, batch.unk_tokens)
        self._next_id += batch.sample_count

    def finish(self, fingerprints: Mapping[int, InputFingerprint]) -> dict[str, object]:
        """Close everything, write the audit files and, last, the manifest; return the stats.

        ``fingerprints``: each input file's, by file index, as it was read.
        """
        shards = [record for writer in self._units for record in writer.finish()]
        indexes = [record for index in self._indexes if (record := index.finish())]
        self._samples.close()
        self._unks.close()
        groups, duplicated = self._duplicates.write(self.path)
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
        )
        durable.write_json_atomic(self.path / stats.FILENAME, content)
        durable.write_json_atomic(self.path / histogram.FILENAME, content["unit_distribution"])
        # The fragments are copied into the files above; none stays in a finished build.
        self.staging.remove()
        # The manifest vouches for every file here: after a crash (power loss, kernel panic) it
        # must never stand over shards or indexes that were still only in the page cache.
        durable.sync_tree(self.path)
        durable.write_json_atomic(
            self.path / manifest.FILENAME,
            manifest.manifest(
                self.plan,
                [(file, fingerprints[file.index]) for file in self.files],
                shards,
                indexes,
                self._audit_digests(),
            ),
        )
        return content

    def _audit_digests(self) -> dict[str, dict[str, object]]:
        # Read back once from the page cache: the index files are small beside the shards.
        return {
            name: {
                "bytes": (self.path / name).stat().st_size,
                "sha256": durable.file_sha256(self.path / name),
            }
            for name in AUDIT_FILES
        }

    def fail(self, error: BaseException) -> None:
        """Mark every unit directory as failed; never writes a manifest."""
        for writer in [*self._units, *self._indexes]:
            writer.abort()
        for handle in (self._samples, self._unks):
            if handle is not None:
                handle.close()
        text = _failed_text(error)
        for size in self.plan.sizes:
            unit_path = self.path / unit_dir_name(size)
            if unit_path.is_dir():
                (unit_path / UNIT_BUILD_FAILED).write_text(text, encoding="utf-8")


EMPTY_UNIT_TEXT = Bilingual(
    en="# unit_{size} is empty\n\n"
    "No sample of this build has a token count that needs unit size {size}: every sample\n"
    "fitted a smaller declared unit or needed a larger one. The build is complete.",
    vi="# unit_{size} trống\n\n"
    "Không có mẫu nào của lần build này có số token cần đúng unit size {size}: mỗi mẫu\n"
    "vừa một unit khai báo nhỏ hơn hoặc cần một unit lớn hơn. Lần build đã hoàn tất.",
)

FAILED_TEXT = Bilingual(
    en="# Unit build failed\n\n"
    "This directory is not a finished build: it has no manifest.json and its shards are\n"
    "incomplete. Fix the error below and build again into a new, empty directory.\n\n"
    "```text\n{message}\n```",
    vi="# Build unit thất bại\n\n"
    "Thư mục này không phải là một lần build hoàn chỉnh: không có manifest.json và các shard\n"
    "chưa đầy đủ. Hãy sửa lỗi dưới đây rồi build lại vào một thư mục mới, rỗng.\n\n"
    "```text\n{message}\n```",
)


def empty_unit_text(size: int) -> str:
    """The text of EMPTY_UNIT.md in a unit no sample needed."""
    return EMPTY_UNIT_TEXT.both(size=size) + "\n"


def _failed_text(error: BaseException) -> str:
    if isinstance(error, MintDimError):
        message = Bilingual(en=error.message("en"), vi=error.message("vi"))
    else:
        message = f"{type(error).__name__}: {error}"
    return FAILED_TEXT.both(message=message) + "\n"
