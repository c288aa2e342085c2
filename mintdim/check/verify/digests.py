"""The size and SHA-256 of every file the manifest lists, hashed beside the other checks."""

from __future__ import annotations

from concurrent.futures import Executor
from pathlib import Path

from mintdim.build.formats import boundaries, sample_index, spans, unit_index
from mintdim.build.formats.layout import AUDIT_FILES
from mintdim.check.report import VerifyReport
from mintdim.check.verify.manifest import Build, Shard
from mintdim.shared import durable

__all__ = ["Digests"]


class Digests:
    """The size and SHA-256 of every file the manifest lists, hashed on ``pool`` (verify's
    hashing thread: check/verify/order.py).

    Hashing every byte is the bound verify is measured against (benchmarks/verify.py). File reads
    and hashlib release the GIL, so from the start of verify a second core hashes while the main
    thread checks the content, reading the same files (from the page cache) for its own purpose;
    the digests are compared at the end, in manifest order. A missing file is reported by the
    check that owns it.
    """

    def __init__(self, build: Build, pool: Executor) -> None:
        self._files = [
            (check, relative, listed, pool.submit(durable.file_sha256, build.root / relative))
            for check, relative, listed in _listed_files(build)
            if (build.root / relative).is_file()
        ]

    def compare(self, root: Path, report: VerifyReport) -> None:
        """Report each file whose size or digest is not the listed one (waits for the hashes)."""
        for check, relative, listed, digest in self._files:
            _compare_digest(root / relative, relative, listed, digest.result(), report, check)


def _listed_files(build: Build) -> list[tuple[str, str, dict]]:
    """(check, path, {"bytes", "sha256"}) of every file whose digest the manifest lists; a unit
    index or spans file listed under another name than the writer's is reported missing instead."""

    def facts(entry: Shard) -> dict:
        return {"bytes": entry.bytes, "sha256": entry.sha256}

    files = [("shards", shard.path, facts(shard)) for shard in build.shards]
    for shard in build.shards if build.span_width else []:
        relative = shard.path.removesuffix(".bin") + spans.SUFFIX
        if shard.spans is not None and shard.spans.path == relative:
            files.append(("spans", relative, facts(shard.spans)))
    listed = {entry.unit: entry for entry in build.unit_indexes}
    filled = {shard.unit for shard in build.shards}
    for size in build.sizes:
        entry = listed.get(size)
        if size in filled and entry is not None and entry.path == unit_index.index_path(size):
            files.append(("unit_index", entry.path, facts(entry)))
    written = {boundaries.offsets_path(size) for size in filled}
    written |= {boundaries.samples_path(size) for size in filled}
    for entry in build.boundary_indexes:
        if entry.path in written:  # any other is reported by the rows' check or as unlisted
            files.append(("boundaries", entry.path, facts(entry)))
    audit = build.content["audit_files"]
    return [("files", sample_index.FILENAME, audit[sample_index.FILENAME]), *files] + [
        ("files", name, audit[name]) for name in AUDIT_FILES if name != sample_index.FILENAME
    ]


def _compare_digest(
    path: Path, relative: str, listed: dict, digest: str, report: VerifyReport, check: str
) -> None:
    """A file's size and ``digest`` (taken by the caller) against its listed ones."""
    actual = path.stat().st_size
    if actual != listed["bytes"]:
        report.add(check, relative, "size", actual=actual, listed=listed["bytes"])
    if digest != listed["sha256"]:
        report.add(check, relative, "sha256", actual=digest, listed=listed["sha256"])
