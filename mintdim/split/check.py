"""``mintdim verify SPLIT``: every build of a split, its own files, and every invariant of its
verification.json checked again.

- the split's manifest is sealed and complete; each file it lists (splits.jsonl, the joins,
  windows, reports, verification.json) has its size and SHA-256, and so has each file of its
  ``training_files``;
- each of ``train``, ``validation`` and ``test`` has the manifest digest the split recorded and
  passes ``verify_build`` (every shard, index and summary against its own manifest);
- the independent pass (split/verification.py) runs again over the files as they are now:
  coverage, copied tokens (against the input build too, when it is still where the split
  found it, with the same manifest), groups, joins and windows;
- verification.json must say what that pass says.

A moved, dropped or duplicated sample, or a changed record, fails at least one of these, even
when every digest of the build that holds it was made to match again.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from mintdim.build.formats import manifest as build_manifest
from mintdim.check.verify import VerifyReport, verify_build
from mintdim.errors import MintDimError, NotABuildError
from mintdim.read.reader import UnitBuild, open_build
from mintdim.shared.lang import Bilingual
from mintdim.split import layout, verification

__all__ = [
    "SplitReport",
    "compare_build_manifest",
    "compare_listed",
    "is_split",
    "verify_split",
]

_TEXT = {
    "missing": Bilingual("missing", "không tồn tại"),
    "size": Bilingual(
        "{actual} bytes, the manifest lists {listed}", "{actual} byte, manifest ghi {listed}"
    ),
    "sha256": Bilingual(
        "SHA-256 {actual}, the manifest lists {listed}", "SHA-256 {actual}, manifest ghi {listed}"
    ),
    "manifest": Bilingual("{detail}", "{detail}"),
    "build_manifest": Bilingual(
        "manifest.json has SHA-256 {actual}, the split recorded {listed}",
        "manifest.json có SHA-256 {actual}, phân chia ghi {listed}",
    ),
    "check": Bilingual(
        "check {check} does not hold: {failures} failures",
        "kiểm tra {check} không đạt: {failures} lỗi",
    ),
    # An example of the pass (split/verification.py), rendered by its ``describe``.
    "example": Bilingual("{check}: {example}", "{check}: {example}"),
    "recorded": Bilingual(
        "verification.json differs from the checks run now",
        "verification.json khác với các kiểm tra chạy bây giờ",
    ),
}
_INPUT = {
    True: Bilingual(
        "copied tokens compared with the input build {path}",
        "token đã chép được so với bản build đầu vào {path}",
    ),
    False: Bilingual(
        "the input build {path} is not there as it was: copied tokens compared with splits.jsonl",
        "bản build đầu vào {path} không còn như cũ: token đã chép được so với splits.jsonl",
    ),
}


@dataclass(frozen=True, slots=True)
class SplitFailure:
    """One thing that does not hold: where (relative to the split) and what."""

    path: str
    code: str
    facts: dict = field(default_factory=dict)

    def message(self, lang: str | None = None) -> str:
        """``path: what is wrong`` in ``lang``."""
        facts = dict(self.facts)
        if self.code == "example":
            facts["example"] = verification.describe(facts["example"], lang)
        return f"{self.path}: {_TEXT[self.code].render(lang, **facts)}"


@dataclass(slots=True)
class SplitReport:
    """The outcome of verifying a split."""

    directory: str
    failures: list[SplitFailure] = field(default_factory=list)
    builds: dict[str, VerifyReport] = field(default_factory=dict)
    """Each build's own verification."""
    missing_builds: dict[str, NotABuildError] = field(default_factory=dict)
    """The builds that are not there (or not complete), with why."""
    samples: dict[str, int] = field(default_factory=dict)
    compared_with_input: bool = False
    input_path: str = ""
    checks: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when everything holds."""
        builds_ok = all(found.ok for found in self.builds.values())
        return not self.failures and not self.missing_builds and builds_ok

    def add(self, path: str, code: str, **facts: object) -> None:
        self.failures.append(SplitFailure(path, code, facts))

    def lines(self, lang: str | None = None) -> list[str]:
        """Every failure as a line: each build's own, then the split's."""
        lines = []
        for name, error in self.missing_builds.items():
            lines.append(f"{name}: " + " ".join(error.message(lang).splitlines()[1:3]))
        for name, found in self.builds.items():
            lines += [f"{name}/{line}" for line in found.lines(lang)]
        return lines + [failure.message(lang) for failure in self.failures]

    def input_line(self, lang: str | None = None) -> str:
        """How the copied tokens were compared."""
        return _INPUT[self.compared_with_input].render(lang, path=self.input_path)

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The ``--json`` report."""
        return {
            "directory": self.directory,
            "kind": "split",
            "ok": self.ok,
            "samples": self.samples,
            "compared_with_input_build": self.compared_with_input,
            "checks": self.checks,
            "builds": {name: found.as_dict(lang) for name, found in self.builds.items()},
            "missing_builds": {name: e.message(lang) for name, e in self.missing_builds.items()},
            "failures": [
                {"path": f.path, "code": f.code, "facts": f.facts, "message": f.message(lang)}
                for f in self.failures
            ],
        }


def is_split(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` is a split: its manifest says so (intact or not), or, without a
    manifest, it holds a split's own files (a split that failed or is still being written)."""
    path = Path(directory)
    try:
        content = orjson.loads((path / layout.MANIFEST).read_bytes())
    except FileNotFoundError:
        return (path / verification.SPLITS).is_file() or (path / "train").is_dir()
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(content, dict) and content.get("kind") == layout.SPLIT_KIND


def verify_split(directory: str | os.PathLike[str]) -> SplitReport:
    """Check a split (``SplitDirectoryError`` when it is incomplete or its manifest damaged)."""
    root, content, _ = layout.read_manifest(directory, layout.SPLIT_KIND)
    report = SplitReport(directory=os.fspath(directory))
    for name, listed in content["files"].items():
        compare_listed(root, name, listed, report)
    for entry in content["training_files"]:
        compare_listed(root, entry["path"], entry, report)
    for name in layout.SPLIT_NAMES:
        _check_build(root, name, content["builds"][name], report)
    source = _input_build(content["build"])
    report.input_path = content["build"]["path"]
    report.compared_with_input = source is not None
    result = verification.verify(root, content["policy"]["window"], source)
    report.checks = result["checks"]
    for check in result["checks"]:
        if not check["ok"]:
            name = check["check"]
            report.add(verification.FILENAME, "check", check=name, failures=check["failures"])
            for example in check["examples"]:  # the facts of the pass, as it states them
                report.add(verification.FILENAME, "example", check=name, example=example)
    try:
        recorded = orjson.loads((root / verification.FILENAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        recorded = None  # its digest failure is reported already
    if recorded is not None and _claims(recorded) != _claims(result):
        report.add(verification.FILENAME, "recorded")
    return report


def _claims(result: dict) -> list[tuple]:
    """What a verification result says, whatever the input build it compared with."""
    return [(check["check"], check["ok"]) for check in result.get("checks", [])]


def compare_listed(root: Path, relative: str, listed: dict, report: Any) -> None:
    """A file of a derived directory (a split, a decontamination) against its listed size and
    SHA-256; ``report.add`` gets ``missing``, ``size`` or ``sha256``."""
    path = root / relative
    if not path.is_file():
        report.add(relative, "missing")
        return
    size = path.stat().st_size
    if size != listed["bytes"]:
        report.add(relative, "size", actual=size, listed=listed["bytes"])
        return
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != listed["sha256"]:
        report.add(relative, "sha256", actual=digest, listed=listed["sha256"])


def compare_build_manifest(root: Path, name: str, sha256: str, report: Any) -> None:
    """A derived build's manifest.json (when there) against the SHA-256 its directory's manifest
    lists; ``report.add`` gets ``build_manifest``."""
    manifest_path = root / name / build_manifest.FILENAME
    if manifest_path.is_file():
        digest = hashlib.sha256(manifest_path.read_bytes()).hexdigest()
        if digest != sha256:
            relative = f"{name}/{build_manifest.FILENAME}"
            report.add(relative, "build_manifest", actual=digest, listed=sha256)


def _check_build(root: Path, name: str, entry: dict, report: SplitReport) -> None:
    compare_build_manifest(root, name, entry["manifest_sha256"], report)
    try:
        found = verify_build(root / name)
    except NotABuildError as err:
        report.missing_builds[name] = err
        return
    report.samples[name] = found.samples
    report.builds[name] = found


def _input_build(entry: dict) -> UnitBuild | None:
    """The input build, when it is still at the recorded path with the recorded manifest."""
    path = Path(entry["path"])
    try:
        digest = hashlib.sha256((path / build_manifest.FILENAME).read_bytes()).hexdigest()
        if digest != entry["manifest_sha256"]:
            return None
        return open_build(path)
    except (OSError, MintDimError):
        return None
