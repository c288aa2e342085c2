"""What "intact" means for a finished build, checked from its own files: ``mintdim verify DIR``.

The checks read the build through the names, formats and digests its writers use:

- ``manifest.json`` is sealed (its own SHA-256), complete, of a known format version, in the
  exact bytes MintDim writes;
- every listed shard exists with the listed size and SHA-256, is a whole number of records,
  is named and filled as the writer rolls shards, and nothing unlisted lies beside them;
- every record's slots after its ``token_count`` hold PAD, and no token id is outside the
  vocabulary;
- ``sample_index.jsonl`` has contiguous ids, and each sample's unit, shard and row are where
  the writer puts the next sample of its unit;
- ``stats.json`` and ``histogram.json`` equal the totals of the index, ``duplicate_index.jsonl``
  the groups of equal hashes in it, ``unk_index.jsonl`` the UNK ids found in the shards;
- every index and summary file has the size and SHA-256 the manifest lists, so one changed
  byte anywhere is found.

Every failure is collected (not only the first), each with the file it concerns, in English and
Vietnamese. Hashing every byte is the bound (benchmarks/verify.py measures the whole check
against a bare SHA-256 of the same bytes), so from the start one thread hashes every listed file,
another checks the shards' records, and the index's lines are read straight from their bytes
(sample_index.ExactReader) beside the checks of the main thread, which takes every finding in
order. ``deep`` re-derives every record from the inputs (check/deep_verify.py).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mintdim.check.deep_verify import deep_check
from mintdim.check.report import Failure, VerifyReport, apart
from mintdim.check.verify.audit_indexes import (
    check_duplicates,
    check_overflow_index,
    check_unk_index,
)
from mintdim.check.verify.digests import Digests
from mintdim.check.verify.files import check_audit_files, check_unlisted
from mintdim.check.verify.index_scan import check_sample_index
from mintdim.check.verify.manifest import read_manifest
from mintdim.check.verify.shards import check_shards, early_shard_checks
from mintdim.check.verify.spans import check_spans
from mintdim.check.verify.stats import check_stats
from mintdim.check.verify.unit_indexes import check_unit_indexes
from mintdim.read.reader import require_build

__all__ = ["Failure", "VerifyReport", "require_build", "verify_build"]


def verify_build(directory: str | Path, *, deep: bool = False) -> VerifyReport:
    """Check a finished build; raises ``NotABuildError`` when ``directory`` holds none."""
    root = require_build(directory)
    report = VerifyReport(directory=str(directory), deep=deep)
    build = read_manifest(root, report)
    if build is None:
        report.skipped = "manifest"
        return report
    # From the start one thread hashes every file and another checks the shards' records with
    # the token counts and sample ids of the unit indexes (kept where they equal the ones of
    # sample_index.jsonl), while a third parses the index's lines: hashlib and numpy release the
    # GIL. This thread takes their findings in order: the report reads as if one thread had
    # done everything.
    with (
        Digests(build) as digests,
        ThreadPoolExecutor(max_workers=1) as shards,
        ThreadPoolExecutor(max_workers=1) as lines,
    ):
        early = early_shard_checks(build, shards)
        index = check_sample_index(build, report, lines)
        duplicates = shards.submit(check_duplicates, build, index)  # beside the UNK check
        found_unks = check_shards(build, index, report, early)
        unks = lines.submit(apart, check_unk_index, build, index, found_unks)
        check_unit_indexes(build, index, report)
        check_spans(build, index, report)
        check_overflow_index(build, index, report)
        check_unlisted(build, report)
        check_audit_files(build, report)
        groups, duplicates_part = duplicates.result()
        check_stats(build, index, found_unks, groups, report)
        report.absorb(duplicates_part)
        report.absorb(unks.result())
        digests.compare(build.root, report)
    if deep:
        if report.ok:
            deep_check(build.root, build.content, report)
        else:
            report.skipped = "deep"
    return report
