"""The report of ``mintdim verify``: each failure (check, file, code, facts) in English and
Vietnamese, collected rather than raised, the first ``SHOWN_PER_CHECK`` of each check listed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mintdim.shared.lang import Bilingual

__all__ = ["SHOWN_PER_CHECK", "Failure", "VerifyReport", "apart"]

SHOWN_PER_CHECK = 20
"""Failures of one check listed one by one; the rest are counted."""

_TEXT: dict[str, Bilingual] = {
    "manifest_json": Bilingual(
        "not valid JSON ({detail})",
        "không phải JSON hợp lệ ({detail})",
    ),
    "manifest_status": Bilingual(
        "status {status!r}, format_version {version!r}: this MintDim verifies complete builds of "
        "format version {known}",
        "status {status!r}, format_version {version!r}: MintDim này kiểm tra các bản build hoàn "
        "chỉnh có format version {known}",
    ),
    "manifest_key": Bilingual(
        "key {key!r} is missing or malformed (a build by an older MintDim, or a damaged file)",
        "khóa {key!r} bị thiếu hoặc sai dạng (bản build của MintDim cũ hơn, hoặc file bị hỏng)",
    ),
    "manifest_seal": Bilingual(
        "manifest_sha256 does not match the manifest's content: the file was changed",
        "manifest_sha256 không khớp với nội dung manifest: file đã bị thay đổi",
    ),
    "json_form": Bilingual(
        "the bytes differ from the exact form MintDim writes, though the content parses",
        "các byte khác với dạng chính xác MintDim ghi, dù nội dung vẫn đọc được",
    ),
    "missing": Bilingual(
        "listed in the manifest but missing",
        "có trong manifest nhưng không tồn tại",
    ),
    "size": Bilingual(
        "{actual} bytes, the manifest lists {listed}",
        "{actual} byte, manifest ghi {listed}",
    ),
    "sha256": Bilingual(
        "SHA-256 {actual}, the manifest lists {listed}",
        "SHA-256 {actual}, manifest ghi {listed}",
    ),
    "shard_entry": Bilingual(
        "manifest entry {position} should be {expected} with {samples} samples "
        "({records_bytes} bytes), as the writer rolls shards",
        "mục {position} của manifest phải là {expected} với {samples} mẫu "
        "({records_bytes} byte), đúng cách trình ghi chia shard",
    ),
    "marker_text": Bilingual(
        "the text differs from the one MintDim writes for an empty unit",
        "nội dung khác với văn bản MintDim ghi cho một unit rỗng",
    ),
    "unlisted": Bilingual(
        "not part of the build: the manifest does not list it",
        "không thuộc bản build: manifest không liệt kê nó",
    ),
    "staging": Bilingual(
        "the build's fragments, left by a run stopped after its manifest was written: the build "
        "is complete; the same run with resume=True (runner: resume=true) removes them, or "
        "delete this directory",
        "các fragment của lần build, còn lại do lần chạy bị dừng sau khi đã ghi manifest: lần "
        "build đã hoàn tất; chạy lại đúng lần đó với resume=True (runner: resume=true) sẽ xóa "
        "chúng, hoặc hãy xóa thư mục này",
    ),
    "padding": Bilingual(
        "record {row} (sample {sample_id}) holds id {value} at slot {slot}, after its "
        "{token_count} tokens, where PAD ({pad_id}) belongs",
        "bản ghi {row} (mẫu {sample_id}) chứa id {value} ở ô {slot}, sau {token_count} token "
        "của nó, nơi phải là PAD ({pad_id})",
    ),
    "vocabulary": Bilingual(
        "record {row} (sample {sample_id}) holds id {value} at slot {slot}, outside the "
        "vocabulary of {vocab}",
        "bản ghi {row} (mẫu {sample_id}) chứa id {value} ở ô {slot}, ngoài bộ từ vựng {vocab}",
    ),
    "index_line": Bilingual(
        "line {line}: {problem}",
        "dòng {line}: {problem}",
    ),
    "index_place": Bilingual(
        "line {line} (sample {sample_id}): {key} is {actual!r}, expected {expected!r}",
        "dòng {line} (mẫu {sample_id}): {key} là {actual!r}, đúng ra là {expected!r}",
    ),
    "index_total": Bilingual(
        "{samples} samples in unit {unit}, but its shards hold {records} records",
        "{samples} mẫu thuộc unit {unit}, nhưng các shard của nó chứa {records} bản ghi",
    ),
    "total": Bilingual(
        "{key} is {actual!r}, the index and shards give {expected!r}",
        "{key} là {actual!r}, theo index và shard phải là {expected!r}",
    ),
    "index_file_line": Bilingual(
        "line {line} is {actual}, expected {expected}",
        "dòng {line} là {actual}, đúng ra là {expected}",
    ),
    "index_file_count": Bilingual(
        "{actual} lines, expected {expected}",
        "{actual} dòng, đúng ra là {expected}",
    ),
    "spans_record": Bilingual(
        "record {row} (sample {sample_id}): segment stops {stops} do not rise from 0 to its "
        "{token_count} tokens",
        "bản ghi {row} (mẫu {sample_id}): các điểm kết thúc segment {stops} không tăng dần từ 0 "
        "đến {token_count} token của nó",
    ),
    "spans_source": Bilingual(
        "record {row} (sample {sample_id}): source file position {source} is not one of this "
        "build's {count} files",
        "bản ghi {row} (mẫu {sample_id}): vị trí file nguồn {source} không thuộc {count} file "
        "của bản build này",
    ),
    "deep_input_missing": Bilingual(
        "not found from the current directory: run --deep where the build ran",
        "không tìm thấy từ thư mục hiện tại: hãy chạy --deep ở nơi đã chạy build",
    ),
    "deep_error": Bilingual(
        "cannot be read as the build read it:\n{error}",
        "không đọc được như lúc build đã đọc:\n{error}",
    ),
    "deep_fingerprint": Bilingual(
        "{bytes} bytes with SHA-256 {sha256} now; the build read {listed_bytes} bytes with "
        "SHA-256 {listed_sha256}",
        "hiện có {bytes} byte với SHA-256 {sha256}; lúc build đã đọc {listed_bytes} byte với "
        "SHA-256 {listed_sha256}",
    ),
    "deep_missing": Bilingual(
        "line {line} is a sample, but sample_index.jsonl has no more lines",
        "dòng {line} là một mẫu, nhưng sample_index.jsonl không còn dòng nào",
    ),
    "deep_extra": Bilingual(
        "lists more samples than the inputs hold",
        "liệt kê nhiều mẫu hơn số mẫu trong các file đầu vào",
    ),
    "deep_record": Bilingual(
        "sample {sample_id} ({file}:{line}) is not the reference encoding of its line "
        "(differs in: {keys})",
        "mẫu {sample_id} ({file}:{line}) không phải mã hóa tham chiếu của dòng của nó "
        "(khác ở: {keys})",
    ),
    "more": Bilingual(
        "... and {count} more failures of this check",
        "... và thêm {count} lỗi của bước kiểm tra này",
    ),
}


@dataclass(frozen=True, slots=True)
class Failure:
    """One check that does not hold: which check, which file (relative to the build), the facts."""

    check: str
    path: str
    code: str
    facts: dict = field(default_factory=dict)

    def message(self, lang: str | None = None) -> str:
        """``path: what is wrong`` in ``lang`` (default: the current language)."""
        return f"{self.path}: {_TEXT[self.code].render(lang, **self.facts)}"

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The JSON report's form of this failure."""
        return {
            "check": self.check,
            "path": self.path,
            "code": self.code,
            "facts": self.facts,
            "message": self.message(lang),
        }


@dataclass(slots=True)
class VerifyReport:
    """The outcome of verifying one build directory."""

    directory: str
    deep: bool
    failures: list[Failure] = field(default_factory=list)
    hidden: dict[str, int] = field(default_factory=dict)
    """Failures per check beyond the first ``SHOWN_PER_CHECK``, counted but not listed."""
    samples: int = 0
    shards: int = 0
    shard_bytes: int = 0
    skipped: str = ""
    """Why part of the checks could not run (a manifest too damaged to guide them)."""

    @property
    def ok(self) -> bool:
        """True when every check held."""
        return not self.failures

    def add(self, check: str, path: str, code: str, **facts: object) -> None:
        """Record a failure; beyond ``SHOWN_PER_CHECK`` of one check only count it."""
        self._add(Failure(check, path, code, facts))

    def absorb(self, other: VerifyReport) -> None:
        """Add the failures another report found (part of the checks, done on another thread)
        as if they had been added here in the first place."""
        for failure in other.failures:
            self._add(failure)
        for check, count in other.hidden.items():
            self.hidden[check] = self.hidden.get(check, 0) + count

    def _add(self, failure: Failure) -> None:
        if sum(f.check == failure.check for f in self.failures) >= SHOWN_PER_CHECK:
            self.hidden[failure.check] = self.hidden.get(failure.check, 0) + 1
            return
        self.failures.append(failure)

    def lines(self, lang: str | None = None) -> list[str]:
        """Every failure as a line, with the counts of those not listed."""
        lines = [failure.message(lang) for failure in self.failures]
        lines += [
            _TEXT["more"].render(lang, count=count) + f" ({check})"
            for check, count in self.hidden.items()
        ]
        return lines

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The ``--json`` report."""
        return {
            "directory": self.directory,
            "ok": self.ok,
            "deep": self.deep,
            "samples": self.samples,
            "shards": self.shards,
            "shard_bytes": self.shard_bytes,
            "failures": [failure.as_dict(lang) for failure in self.failures],
            "unlisted_failures": self.hidden,
            "skipped": self.skipped,
        }


def apart(check: Callable, *args: object) -> VerifyReport:
    """``check(*args, report)`` into a report of its own (any thread), for the caller to take
    in order."""
    part = VerifyReport(directory="", deep=False)
    check(*args, part)
    return part
