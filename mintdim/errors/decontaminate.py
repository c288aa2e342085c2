"""Errors of benchmark decontamination: ``mintdim decontaminate``, ``mintdim.decontaminate`` and
``mintdim verify`` on a decontamination directory.

A build that is not finished is ``NotABuildError`` (errors/reader.py), an output directory that
is not fresh ``OutputNotFreshError`` and a build file that changed ``ChangedSinceBuildError``
(errors/split.py): decontamination reads a build the way grouping and splitting do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import _H, KINDS, MintDimError, _choice, _say, _show, format_location
from mintdim.shared.lang import Bilingual

__all__ = [
    "BenchmarkFieldError",
    "BenchmarkFileError",
    "DecontaminateOptionError",
    "DecontaminationVerificationError",
    "PackedDecontaminateError",
    "TokenizerChangedError",
]

_H_BENCHMARK = Bilingual("Benchmark file", "File benchmark")
_H_BUILD = Bilingual("Build", "Bản build")


class BenchmarkFileError(MintDimError, FileNotFoundError):
    """Raised when a benchmark file given with ``--against`` is missing, unreadable or empty (a
    record that does not parse is the source's own error: ``SourceParseError``...)."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "missing": Bilingual("the file does not exist", "file không tồn tại"),
        "unreadable": Bilingual("the file cannot be read", "không đọc được file"),
        "empty": Bilingual("the file holds no record", "file không chứa bản ghi nào"),
    }

    path: str
    problem: str = _choice(_PROBLEMS)
    detail: str = ""
    """The operating system's words."""

    summary = Bilingual("A benchmark file cannot be read.", "Không đọc được một file benchmark.")
    examples = (
        {"path": "./eval/gsm8k_test.jsonl", "problem": "missing"},
        {"path": "./eval/humaneval.jsonl", "problem": "empty"},
    )

    def _sections(self) -> Iterator[Any]:
        yield _H_BENCHMARK, self.path
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        if self.detail:
            yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "give --against PATH:FIELD,FIELD with PATH a JSONL file (plain, .gz, .zst, .xz, "
                ".bz2) or a Parquet file, one benchmark item per line or row",
                "hãy dùng --against PATH:FIELD,FIELD với PATH là file JSONL (thường, .gz, .zst, "
                ".xz, .bz2) hoặc file Parquet, mỗi dòng hay hàng một mục benchmark",
            ),
        )


class BenchmarkFieldError(MintDimError, KeyError):
    """Raised when a benchmark item lacks a declared field, or holds in it something other than
    a string or a list of strings."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "missing": Bilingual("the item has no field {field!r}", "mục này không có field {field!r}"),
        "type": Bilingual(
            "the field {field!r} holds {found}, neither a string nor a list of strings",
            "field {field!r} chứa {found}, không phải chuỗi hay danh sách chuỗi",
        ),
    }

    path: str
    line: int
    field: str
    available: list[str]
    problem: str = _choice(_PROBLEMS, "missing")
    found: str = ""
    """The JSON type found (``type``)."""
    kind: str = _choice(KINDS, "jsonl")

    summary = Bilingual(
        "A benchmark item lacks a declared field.",
        "Một mục benchmark thiếu field đã khai báo.",
    )
    examples = (
        {
            "path": "./eval/gsm8k_test.jsonl",
            "line": 1,
            "field": "query",
            "available": ["question", "answer"],
        },
        {
            "path": "./eval/mt_bench.jsonl",
            "line": 4,
            "field": "turns",
            "available": ["question_id", "category", "turns"],
            "problem": "type",
            "found": "int",
        },
    )

    def _sections(self) -> Iterator[Any]:
        heading = _H.SAMPLE_ROW if self.kind == "parquet" else _H_BENCHMARK
        yield heading, format_location(self.path, self.line)
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        yield Bilingual("Fields found", "Các field tìm thấy"), ", ".join(self.available) or "-"
        yield (
            _H.FIX,
            Bilingual(
                "name in --against PATH:FIELD,FIELD fields every item has, each a string or a "
                "list of strings (spelled as in the file)",
                "hãy ghi trong --against PATH:FIELD,FIELD những field mà mọi mục đều có, mỗi "
                "field là chuỗi hoặc danh sách chuỗi (viết đúng như trong file)",
            ),
        )


class DecontaminateOptionError(MintDimError, ValueError):
    """Raised for a decontamination setting outside its range (n-gram size, thresholds, the
    match mode, an ``--against`` that is not ``PATH:FIELD,...``, two benchmarks of one name)."""

    _RULES: ClassVar[dict[str, Bilingual]] = {
        "positive": Bilingual("an integer >= 1", "một số nguyên >= 1"),
        "fraction": Bilingual("a number in (0, 1]", "một số trong (0, 1]"),
        "match": Bilingual("tokens or words", "tokens hoặc words"),
        "against": Bilingual(
            "PATH:FIELD[,FIELD...], e.g. gsm8k_test.jsonl:question,answer (a mapping: path, "
            "fields, name)",
            "PATH:FIELD[,FIELD...], ví dụ gsm8k_test.jsonl:question,answer (một mapping: path, "
            "fields, name)",
        ),
        "no_against": Bilingual("at least one benchmark file", "ít nhất một file benchmark"),
        "name": Bilingual(
            "a name used by one benchmark only, made of letters, digits, '-', '_' and '.'",
            "một tên chỉ một benchmark dùng, gồm chữ, số, '-', '_' và '.'",
        ),
        "flag": Bilingual("true or false", "true hoặc false"),
    }

    option: str
    value: object
    rule: str = _choice(_RULES)

    summary = Bilingual("Invalid decontamination setting.", "Thiết lập khử nhiễm không hợp lệ.")
    examples = (
        {"option": "ngram", "value": 0, "rule": "positive"},
        {"option": "against", "value": "gsm8k_test.jsonl", "rule": "against"},
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Option", "Tùy chọn"), self.option
        yield Bilingual("Value", "Giá trị"), _show(self.value)
        yield _H.RULE, self._RULES[self.rule]


class TokenizerChangedError(MintDimError, ValueError):
    """Raised when the tokenizer file a build's manifest names is gone or has another SHA-256:
    benchmark values must be encoded with the very tokenizer that made the build."""

    build: str
    path: str
    expected: str
    found: str
    """The file's SHA-256 now, or "" when it is gone."""

    summary = Bilingual(
        "The build's tokenizer changed since the build.",
        "Tokenizer của bản build đã thay đổi kể từ khi build.",
    )
    examples = (
        {
            "build": "./artifacts/units",
            "path": "./tokenizers/demo_unigram.model",
            "expected": "9f2c…01",
            "found": "77ab…e4",
        },
        {
            "build": "./artifacts/units",
            "path": "./tokenizers/demo_unigram.model",
            "expected": "9f2c…01",
            "found": "",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H_BUILD, self.build
        yield Bilingual("Tokenizer", "Tokenizer"), self.path
        if self.found:
            yield (
                _H.PROBLEM,
                _say(
                    Bilingual(
                        "its SHA-256 is {found}, the manifest recorded {expected}",
                        "SHA-256 của nó là {found}, manifest ghi {expected}",
                    )
                ),
            )
        else:
            yield _H.PROBLEM, Bilingual("the file is gone", "file không còn nữa")
        yield (
            _H.FIX,
            Bilingual(
                "token n-grams are only comparable under the tokenizer that made the build: "
                "restore that file at the recorded path (run from the build's directory), or use "
                "--match words",
                "n-gram token chỉ so được khi dùng đúng tokenizer đã tạo bản build: hãy khôi "
                "phục file đó tại đường dẫn đã ghi (chạy từ thư mục của bản build), hoặc dùng "
                "--match words",
            ),
        )


class PackedDecontaminateError(MintDimError, ValueError):
    """Raised when a packed build is given: a packed row holds several samples, and removing
    one would leave a row the build writer never wrote."""

    build: str

    summary = Bilingual(
        "A packed build cannot be decontaminated.", "Không thể khử nhiễm một bản build packed."
    )
    examples = ({"build": "./artifacts/units-packed"},)

    def _sections(self) -> Iterator[Any]:
        yield _H_BUILD, self.build
        yield (
            _H.PROBLEM,
            Bilingual(
                "its rows hold several samples each (units.pack); decontamination reads and "
                "copies whole records, one sample each",
                "mỗi hàng của nó chứa nhiều mẫu (units.pack); việc khử nhiễm đọc và sao chép "
                "nguyên bản ghi, mỗi bản ghi một mẫu",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "decontaminate an unpacked build of the same inputs (units.pack=false), then "
                "pack the clean samples' input files in a build of their own",
                "hãy khử nhiễm một bản build không packed của cùng input (units.pack=false), "
                "rồi pack input của các mẫu sạch trong một bản build riêng",
            ),
        )


class DecontaminationVerificationError(MintDimError, RuntimeError):
    """Raised when the independent pass over a decontamination just written finds a check that
    does not hold; the directory gets no manifest, so it never looks complete."""

    directory: str
    failed_en: list[str]
    """Each failed check and its failures, in English ..."""
    failed_vi: list[str]
    """... and in Vietnamese."""

    summary = Bilingual(
        "The decontamination did not pass its own verification.",
        "Kết quả khử nhiễm không vượt qua bước kiểm tra của chính nó.",
    )
    examples = (
        {
            "directory": "./decontaminated",
            "failed_en": ["retained_clean: 1 failures"],
            "failed_vi": ["retained_clean: 1 lỗi"],
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        lines = [
            _say(Bilingual("- {en}", "- {vi}"), en=en, vi=vi)
            for en, vi in zip(self.failed_en, self.failed_vi, strict=True)
        ]
        yield Bilingual("Failed checks", "Các kiểm tra không đạt"), *lines
        yield (
            _H.FIX,
            Bilingual(
                "verification.json lists every check; the build may have changed while the run "
                "went on: verify it (mintdim verify) and run again into a new directory",
                "verification.json liệt kê mọi kiểm tra; bản build có thể đã thay đổi trong lúc "
                "chạy: hãy kiểm tra nó (mintdim verify) rồi chạy lại vào một thư mục mới",
            ),
        )
