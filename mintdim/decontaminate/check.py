"""``mintdim verify DIR`` on a decontamination directory: its files, its clean build, and the
independent pass run again.

- the manifest is sealed and complete (a broken seal is a failure, exit 1); each file it lists
  (contamination.jsonl, items/, reports, verification.json) has its size and SHA-256, and so has
  each file of the clean build;
- the clean build has the manifest digest recorded and passes ``verify_build``;
- when the input build (same manifest), the benchmark files (same SHA-256) and the tokenizer
  are still where they were, the pass of decontaminate/verification.py runs again over the
  directory as it is now, and verification.json must say what it says. When they are not, that
  is said, and only the digests and the clean build are checked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from mintdim.check.verify import VerifyReport, verify_build
from mintdim.decontaminate.prepare import prepare
from mintdim.decontaminate.settings import decontaminate_settings
from mintdim.decontaminate.verification import CLEAN, CONTAMINATION, FILENAME, describe, verify
from mintdim.errors import MintDimError, NotABuildError, SplitDirectoryError
from mintdim.shared.lang import Bilingual
from mintdim.split import layout
from mintdim.split.check import compare_build_manifest, compare_listed

__all__ = ["DecontaminationReport", "is_decontamination", "verify_decontamination"]

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
        "manifest.json has SHA-256 {actual}, the decontamination recorded {listed}",
        "manifest.json có SHA-256 {actual}, kết quả khử nhiễm ghi {listed}",
    ),
    "not_a_build": Bilingual("no finished build here", "không có bản build hoàn chỉnh ở đây"),
    "check": Bilingual(
        "check {check} does not hold ({what}): {failures} failures, samples {examples}",
        "kiểm tra {check} không đạt ({what}): {failures} lỗi, mẫu {examples}",
    ),
    "stopped": Bilingual(
        "the independent pass stopped: {detail}", "bước kiểm tra độc lập đã dừng: {detail}"
    ),
    "recorded": Bilingual(
        "verification.json differs from the checks run now",
        "verification.json khác với các kiểm tra chạy bây giờ",
    ),
}
_RERUN = {
    True: Bilingual(
        "the independent pass ran again against the input build {path} and the benchmark files",
        "bước kiểm tra độc lập đã chạy lại với bản build đầu vào {path} và các file benchmark",
    ),
    False: Bilingual(
        "the input build {path} or a benchmark file is not there as it was ({reason}): only the "
        "digests and the clean build were checked",
        "bản build đầu vào {path} hoặc một file benchmark không còn như cũ ({reason}): chỉ kiểm "
        "tra các mã băm và bản build sạch",
    ),
}


@dataclass(frozen=True, slots=True)
class _Failure:
    path: str
    code: str
    facts: dict = field(default_factory=dict)

    def message(self, lang: str | None = None) -> str:
        facts = dict(self.facts)
        if self.code == "check":
            facts["what"] = describe(facts["check"], lang)
        return f"{self.path}: {_TEXT[self.code].render(lang, **facts)}"


@dataclass(slots=True)
class DecontaminationReport:
    """The outcome of verifying a decontamination directory."""

    directory: str
    failures: list[_Failure] = field(default_factory=list)
    clean: VerifyReport | None = None
    removed: int = 0
    retained: int | None = None
    rerun: bool = False
    input_path: str = ""
    reason: str = ""
    """Why the pass did not run again (the error's summary line)."""

    @property
    def ok(self) -> bool:
        """True when everything holds."""
        return not self.failures and (self.clean is None or self.clean.ok)

    def add(self, path: str, code: str, **facts: object) -> None:
        self.failures.append(_Failure(path, code, facts))

    def lines(self, lang: str | None = None) -> list[str]:
        """Every failure as a line: the clean build's own, then the directory's."""
        lines = [f"{CLEAN}/{line}" for line in self.clean.lines(lang)] if self.clean else []
        return lines + [failure.message(lang) for failure in self.failures]

    def rerun_line(self, lang: str | None = None) -> str:
        """Whether the independent pass ran again ("" when the manifest did not say where its
        inputs are)."""
        if not self.input_path:
            return ""
        return _RERUN[self.rerun].render(lang, path=self.input_path, reason=self.reason)

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The ``--json`` report."""
        return {
            "directory": self.directory,
            "kind": "decontamination",
            "ok": self.ok,
            "removed": self.removed,
            "retained": self.retained,
            "rerun": self.rerun,
            "clean": None if self.clean is None else self.clean.as_dict(lang),
            "failures": [
                {"path": f.path, "code": f.code, "facts": f.facts, "message": f.message(lang)}
                for f in self.failures
            ],
        }


def is_decontamination(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` is a decontamination: its manifest says so (intact or not), or,
    without a manifest, it holds contamination.jsonl (a run that failed or is being written)."""
    path = Path(directory)
    try:
        content = orjson.loads((path / layout.MANIFEST).read_bytes())
    except FileNotFoundError:
        return (path / CONTAMINATION).is_file()
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(content, dict) and content.get("kind") == layout.DECONTAMINATION_KIND


def verify_decontamination(directory: str | os.PathLike[str]) -> DecontaminationReport:
    """Check a decontamination directory (``SplitDirectoryError`` when it holds none: no
    manifest, a failed run)."""
    report = DecontaminationReport(directory=os.fspath(directory))
    try:
        root, content, _ = layout.read_manifest(directory, layout.DECONTAMINATION_KIND)
    except SplitDirectoryError as err:
        if err.reason not in ("manifest_seal", "manifest_status", "manifest_json"):
            raise
        report.add(layout.MANIFEST, "manifest", detail=" ".join(err.message().splitlines()[1:]))
        return report
    for name, listed in content["files"].items():
        compare_listed(root, name, listed, report)
    clean = content["clean"]
    if clean is not None:
        for entry in clean["files"]:
            compare_listed(root, entry["path"], entry, report)
        _check_clean(root, clean, report)
    report.input_path = content["build"]["path"]
    _rerun(root, content, report)
    return report


def _check_clean(root: Path, clean: dict, report: DecontaminationReport) -> None:
    compare_build_manifest(root, CLEAN, clean["manifest_sha256"], report)
    try:
        report.clean = verify_build(root / CLEAN)
    except NotABuildError:
        report.add(CLEAN, "not_a_build")
        return
    report.retained = report.clean.samples


def _rerun(root: Path, content: dict, report: DecontaminationReport) -> None:
    """The independent pass again, when its inputs are there as they were."""
    options = dict(content["options"])
    try:
        settings = decontaminate_settings(options.pop("against"), **options)
        prepared = prepare(content["build"]["path"], settings)
    except (MintDimError, OSError) as err:
        report.reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        return
    digests = [b.sha256 for b in prepared.catalogue.benchmarks]
    if prepared.samples.manifest_sha256 != content["build"]["manifest_sha256"] or digests != [
        b["sha256"] for b in content["benchmarks"]
    ]:
        report.reason = "SHA-256"
        return
    report.rerun = True
    try:
        result = verify(
            root, prepared.samples, prepared.catalogue, settings.match, settings.min_matches, 1
        )
    except MintDimError as err:  # a clean build file that changed: the pass cannot read it
        report.add(FILENAME, "stopped", detail=" ".join(err.message().splitlines()[1:]))
        return
    report.removed = next(
        c["samples"] for c in result["checks"] if c["check"] == "removed_contaminated"
    )
    for check in result["checks"]:
        if not check["ok"]:
            report.add(
                FILENAME,
                "check",
                check=check["check"],
                failures=check["failures"],
                examples=check["examples"],
            )
    try:
        recorded = orjson.loads((root / FILENAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        recorded = None  # its digest failure is reported already
    if recorded is not None and recorded != result:
        report.add(FILENAME, "recorded")
