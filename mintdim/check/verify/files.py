"""The files of the build directory: nothing lies there that the manifest does not account for,
and every audit file is there."""

from __future__ import annotations

from mintdim.build.formats import manifest
from mintdim.build.formats.layout import AUDIT_FILES, EMPTY_UNIT, STAGING, empty_unit_text
from mintdim.build.formats.shards import unit_dir_name
from mintdim.check.report import VerifyReport
from mintdim.check.verify.manifest import Build

__all__ = ["check_audit_files", "check_unlisted"]


def check_unlisted(build: Build, report: VerifyReport) -> None:
    """Nothing may lie in the build that the manifest does not account for."""
    expected = {manifest.FILENAME, *AUDIT_FILES}
    listed = {entry.path for entry in [*build.shards, *build.unit_indexes]}
    listed |= {entry.path for entry in build.boundary_indexes}
    listed |= {shard.spans.path for shard in build.shards if shard.spans is not None}
    filled = {shard.unit for shard in build.shards}
    units = {unit_dir_name(size): size for size in build.sizes}
    for entry in sorted(build.root.iterdir()):
        name = entry.name
        if name in expected and entry.is_file():
            continue
        if name in units and entry.is_dir():
            for inner in sorted(entry.iterdir()):
                relative = f"{name}/{inner.name}"
                empty_marker = inner.name == EMPTY_UNIT and units[name] not in filled
                if relative not in listed and not empty_marker:
                    report.add("files", relative, "unlisted")
                elif empty_marker and inner.read_text("utf-8", "replace") != empty_unit_text(
                    units[name]
                ):
                    report.add("files", relative, "marker_text")
            continue
        leftover = name == STAGING and entry.is_dir()
        report.add("files", name, "staging" if leftover else "unlisted")


def check_audit_files(build: Build, report: VerifyReport) -> None:
    for name in AUDIT_FILES:
        if not (build.root / name).is_file():
            report.add("files", name, "missing")
