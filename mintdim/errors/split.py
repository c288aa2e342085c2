"""Errors of grouping and splitting a finished build: ``mintdim group``, ``mintdim split``,
``open_split`` and ``mintdim verify SPLIT``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    KINDS,
    MintDimError,
    _bullets,
    _choice,
    _say,
    _show,
    format_location,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "AliasRuleError",
    "SplitVerificationError",
    "ChangedSinceBuildError",
    "GroupsMismatchError",
    "JoinsLineError",
    "OutputNotFreshError",
    "PackedSplitError",
    "SplitDamagedError",
    "SplitDirectoryError",
    "SplitOptionError",
    "SplitRatioError",
    "TestSetLockedError",
    "UnknownKeyFieldError",
]

_H_BUILD = Bilingual("Build", "Bản build")
_H_FILE = Bilingual("File", "File")
_H_FILE_ROW = Bilingual("File (file:row)", "File (file:hàng)")
_H_VALUE = Bilingual("Value", "Giá trị")


class ChangedSinceBuildError(MintDimError, ValueError):
    """Raised when an input file of the build, or a file of the build itself, is no longer what
    the build's manifest recorded: grouping and splitting read them again and refuse to link or
    copy what changed."""

    _CHANGES: ClassVar[dict[str, Bilingual]] = {
        "missing": Bilingual("the file is gone", "file không còn nữa"),
        "size": Bilingual(
            "its size is {now} bytes, the manifest recorded {was}",
            "kích thước của nó là {now} byte, manifest ghi {was}",
        ),
        "sha256": Bilingual(
            "its SHA-256 is {now}, the manifest recorded {was}",
            "SHA-256 của nó là {now}, manifest ghi {was}",
        ),
        "rendered": Bilingual(
            "the sample rendered from this record has SHA-256 {now}; the build's "
            "sample_index.jsonl recorded {was}",
            "mẫu dựng từ bản ghi này có SHA-256 {now}; sample_index.jsonl của bản build ghi {was}",
        ),
        "line_missing": Bilingual(
            "the build has a sample at this record, but the file ends before it",
            "bản build có một mẫu ở bản ghi này, nhưng file kết thúc trước bản ghi đó",
        ),
        "line_not_sample": Bilingual(
            "the build has a sample at this record, but the record no longer renders to one",
            "bản build có một mẫu ở bản ghi này, nhưng bản ghi này không còn dựng ra mẫu đó",
        ),
        "index_line": Bilingual(
            "this line is not a line of the build its manifest describes (its sample id, source "
            "file, line or hash)",
            "dòng này không phải một dòng của bản build mà manifest mô tả (sample id, file "
            "nguồn, dòng hoặc hash của nó)",
        ),
        "seal": Bilingual(
            "manifest_sha256 does not match the manifest's content: the manifest was edited",
            "manifest_sha256 không khớp với nội dung manifest: manifest đã bị sửa",
        ),
        "not_index": Bilingual(
            "the file is not a unit index (its dtype is {now})",
            "file không phải một unit index (dtype của nó là {now})",
        ),
    }

    build: str
    file: str
    change: str = _choice(_CHANGES)
    line: int | None = None
    """The record's line (JSONL) or row (Parquet, ``kind``)."""
    was: str = ""
    now: str = ""
    kind: str = _choice(KINDS, "jsonl")

    summary = Bilingual(
        "A file changed since the build was made.",
        "Một file đã thay đổi kể từ khi bản build được tạo.",
    )
    examples = (
        {
            "build": "./artifacts/units",
            "file": "./data/alpaca.jsonl",
            "change": "sha256",
            "was": "9f2c…01",
            "now": "77ab…e4",
        },
        {
            "build": "./artifacts/units",
            "file": "./data/alpaca.jsonl",
            "change": "rendered",
            "line": 18,
            "was": "b357…d2",
            "now": "0c1f…9a",
        },
        {
            "build": "./artifacts/units",
            "file": "./data/alpaca.jsonl",
            "change": "line_missing",
            "line": 5001,
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H_BUILD, self.build
        if self.line is None:
            yield _H_FILE, self.file
        else:
            heading = _H_FILE_ROW if self.kind == "parquet" else _H_FILE
            yield heading, format_location(self.file, self.line)
        yield _H.PROBLEM, self._CHANGES[self.change]
        yield (
            _H.FIX,
            Bilingual(
                "groups and splits are made from the exact data a build saw: restore the file "
                "as it was, or build again from the files as they are now",
                "nhóm và phân chia được tạo từ đúng dữ liệu bản build đã đọc: hãy khôi phục file "
                "như cũ, hoặc build lại từ các file hiện tại",
            ),
        )


class UnknownKeyFieldError(MintDimError, KeyError):
    """Raised when a ``--key`` or ``--stratify`` field occurs in no source record of the build."""

    field: str
    option: str = _choice(("key", "stratify"))
    files: list[str]
    available: list[str]

    summary = Bilingual(
        "No source record of the build has the field {field!r}.",
        "Không bản ghi nguồn nào của bản build có field {field!r}.",
    )
    examples = (
        {
            "field": "work_id",
            "option": "key",
            "files": ["./data/alpaca.jsonl"],
            "available": ["id", "instruction", "input", "output"],
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Option", "Tùy chọn"), f"--{self.option} {self.field}"
        yield Bilingual("Files read", "Các file đã đọc"), *_bullets(self.files)
        yield (
            Bilingual("Fields found", "Các field tìm thấy"),
            ", ".join(self.available) or "-",
        )
        yield (
            _H.FIX,
            Bilingual(
                "name a field of the source records (spelled as in the JSON), or source_file "
                "for --stratify",
                "hãy dùng tên một field của bản ghi nguồn (viết đúng như trong JSON), hoặc "
                "source_file cho --stratify",
            ),
        )


class AliasRuleError(MintDimError, ValueError):
    """Raised for an ``--alias-rule`` that is not ``REGEX=>REPLACEMENT`` with a valid regular
    expression and replacement."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "form": Bilingual(
            "a rule is REGEX=>REPLACEMENT: the text has no '=>'",
            "một quy tắc có dạng REGEX=>REPLACEMENT: văn bản không có '=>'",
        ),
        "empty": Bilingual("the regular expression is empty", "biểu thức chính quy rỗng"),
        "regex": Bilingual(
            "the regular expression does not compile", "biểu thức chính quy không biên dịch được"
        ),
        "replacement": Bilingual(
            "the replacement refers to a group the expression does not have",
            "phần thay thế tham chiếu tới một nhóm mà biểu thức không có",
        ),
    }

    rule: str
    position: int
    problem: str = _choice(_PROBLEMS)
    detail: str = ""

    summary = Bilingual("Invalid alias rule.", "Quy tắc alias không hợp lệ.")
    examples = (
        {"rule": "卷(\\d+)", "position": 0, "problem": "form"},
        {
            "rule": "(卷[0-9+=>",
            "position": 1,
            "problem": "regex",
            "detail": "missing ), unterminated subpattern",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Rule", "Quy tắc"), _say("#{n}: {rule}", n=self.position + 1)
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        if self.detail:
            yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "write each rule as a Python regular expression, '=>', then its replacement "
                "(\\1 for a group), e.g. '\\s*卷\\s*(\\d+)$=>'",
                "hãy viết mỗi quy tắc là một biểu thức chính quy Python, '=>', rồi phần thay thế "
                "(\\1 cho một nhóm), ví dụ '\\s*卷\\s*(\\d+)$=>'",
            ),
        )


class JoinsLineError(MintDimError, ValueError):
    """Raised for a line of a ``--joins`` file that is not ``{"a": id, "b": id, "reason": ...}``
    naming two samples of the build; nothing is written."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "json": Bilingual("the line is not valid JSON", "dòng không phải JSON hợp lệ"),
        "not_object": Bilingual("the line is not a JSON object", "dòng không phải object JSON"),
        "missing": Bilingual("the key {key!r} is missing", "thiếu khóa {key!r}"),
        "not_an_id": Bilingual(
            "{key!r} must be a sample id (an integer), got {value}",
            "{key!r} phải là một sample id (số nguyên), nhận được {value}",
        ),
        "unknown_sample": Bilingual(
            "{key!r} names sample {value}, but the build has samples 0 to {last}",
            "{key!r} chỉ tới mẫu {value}, nhưng bản build có các mẫu từ 0 đến {last}",
        ),
        "reason": Bilingual(
            "'reason' must be a string, got {value}", "'reason' phải là chuỗi, nhận được {value}"
        ),
    }

    file: str
    line: int
    problem: str = _choice(_PROBLEMS)
    key: str = ""
    value: str = ""
    last: int = -1
    detail: str = ""

    summary = Bilingual(
        "A line of the joins file is not a join of two samples.",
        "Một dòng của file joins không phải là liên kết giữa hai mẫu.",
    )
    examples = (
        {"file": "./review/joins.jsonl", "line": 3, "problem": "missing", "key": "b"},
        {
            "file": "./review/joins.jsonl",
            "line": 7,
            "problem": "unknown_sample",
            "key": "a",
            "value": "5120",
            "last": 4999,
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H_FILE, format_location(self.file, self.line)
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        if self.detail:
            yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                'write one object per line: {{"a": 12, "b": 40, "reason": "same work"}}, with '
                "sample ids of the build (its sample_index.jsonl); nothing was written",
                'hãy viết mỗi dòng một object: {{"a": 12, "b": 40, "reason": "cùng tác phẩm"}}, '
                "với sample id của bản build (trong sample_index.jsonl); chưa có gì được ghi",
            ),
        )


class SplitRatioError(MintDimError, ValueError):
    """Raised for split ratios that are not train/validation/test proportions: a negative
    share, an unknown split name, a malformed text, or shares that do not sum to 1."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "negative": Bilingual("every share must be a number >= 0", "mỗi tỉ lệ phải là một số >= 0"),
        "sum": Bilingual(
            "the shares sum to {total}, not 1", "tổng các tỉ lệ là {total}, không phải 1"
        ),
        "unknown_split": Bilingual(
            "the splits are train, validation and test", "các phần là train, validation và test"
        ),
        "form": Bilingual(
            "write them as train=0.98,validation=0.01,test=0.01",
            "hãy viết dạng train=0.98,validation=0.01,test=0.01",
        ),
        "unknown_stratum": Bilingual(
            "no sample is in the stratum {stratum!r}; the strata are: {known}",
            "không mẫu nào thuộc tầng {stratum!r}; các tầng là: {known}",
        ),
    }

    option: str
    value: object
    problem: str = _choice(_PROBLEMS)
    total: float = 0.0
    stratum: str = ""
    known: list[str] | None = None

    summary = Bilingual("Invalid split ratios.", "Tỉ lệ phân chia không hợp lệ.")
    examples = (
        {
            "option": "ratios",
            "value": {"train": 0.9, "validation": 0.1, "test": 0.1},
            "problem": "sum",
            "total": 1.1,
        },
        {"option": "ratios_for['NDL']", "value": {"train": -0.1}, "problem": "negative"},
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Option", "Tùy chọn"), self.option
        yield _H_VALUE, _show(self.value)
        yield _H.RULE, _say(self._PROBLEMS[self.problem], known=", ".join(self.known or []))
        yield (
            _H.FIX,
            Bilingual(
                "give the three shares of train, validation and test, each >= 0, summing to 1, "
                "for a stratum that exists",
                "hãy cho ba tỉ lệ của train, validation và test, mỗi tỉ lệ >= 0, tổng bằng 1, "
                "cho một tầng có thật",
            ),
        )


class SplitOptionError(MintDimError, ValueError):
    """Raised for a grouping or split setting outside its range (a cap, a threshold, the seed,
    the window, a split name)."""

    _RULES: ClassVar[dict[str, Bilingual]] = {
        "fraction": Bilingual("a number in (0, 1]", "một số trong (0, 1]"),
        "positive": Bilingual("an integer >= 1", "một số nguyên >= 1"),
        "non_negative": Bilingual("an integer >= 0", "một số nguyên >= 0"),
        "split_name": Bilingual(
            "one of train, validation, test", "một trong train, validation, test"
        ),
        "no_windows": Bilingual(
            "a split made with a window (mintdim split --window W)",
            "một phân chia được tạo với window (mintdim split --window W)",
        ),
        "field_name": Bilingual("a non-empty field name", "một tên field không rỗng"),
        "sketch": Bilingual("an integer from 1 to 256", "một số nguyên từ 1 đến 256"),
        "band_rows": Bilingual(
            "a divisor of sketch_size (bands hold band_rows values each)",
            "một ước của sketch_size (mỗi band gồm band_rows giá trị)",
        ),
    }

    option: str
    value: object
    rule: str = _choice(_RULES)

    summary = Bilingual("Invalid setting.", "Thiết lập không hợp lệ.")
    examples = (
        {"option": "coverage", "value": 1.5, "rule": "fraction"},
        {"option": "window", "value": 0, "rule": "positive"},
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Option", "Tùy chọn"), self.option
        yield _H_VALUE, _show(self.value)
        yield _H.RULE, self._RULES[self.rule]


class OutputNotFreshError(MintDimError, FileExistsError):
    """Raised when the output directory of ``group`` or ``split`` is not fresh: it exists and
    is not empty, is a file, lies inside the input, or cannot be created."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "not_empty": Bilingual(
            "the directory exists and is not empty", "thư mục đã tồn tại và không rỗng"
        ),
        "not_a_directory": Bilingual(
            "the path exists and is not a directory", "đường dẫn đã tồn tại và không phải thư mục"
        ),
        "inside_input": Bilingual(
            "the directory lies inside an input ({detail})",
            "thư mục nằm bên trong một đầu vào ({detail})",
        ),
        "cannot_create": Bilingual("the directory cannot be created", "không tạo được thư mục"),
    }

    directory: str
    problem: str = _choice(_PROBLEMS)
    detail: str = ""

    summary = Bilingual(
        "The output directory is not fresh.", "Thư mục output không phải thư mục mới."
    )
    # inside_input: ``detail`` is the input's path; cannot_create: the OS's words.
    examples = (
        {"directory": "./splits/v1", "problem": "not_empty"},
        {
            "directory": "./artifacts/units/groups",
            "problem": "inside_input",
            "detail": "./artifacts/units",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        if self.detail and self.problem == "cannot_create":
            yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "give a new directory: groups and splits are frozen records, never overwritten "
                "(a revision goes to a fresh path, e.g. build-002)",
                "hãy dùng một thư mục mới: nhóm và phân chia là bản ghi cố định, không bao giờ "
                "bị ghi đè (bản sửa đổi đi vào đường dẫn mới, ví dụ build-002)",
            ),
        )


class GroupsMismatchError(MintDimError, ValueError):
    """Raised when ``split`` is given groups made from another build (or groups that do not
    cover the build's samples)."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "other_build": Bilingual(
            "the groups were made from a build whose manifest.json has SHA-256 {expected}; "
            "this build's has {found}",
            "các nhóm được tạo từ một bản build có manifest.json với SHA-256 {expected}; "
            "manifest.json của bản build này có {found}",
        ),
        "malformed": Bilingual(
            "groups.json is not the file mintdim group writes",
            "groups.json không phải file mà mintdim group ghi",
        ),
        "outside": Bilingual(
            "groups.json does not hold every sample of the build exactly once: a group is empty "
            "or names a sample outside 0 to {last}",
            "groups.json không chứa mọi mẫu của bản build đúng một lần: có nhóm rỗng hoặc chỉ "
            "tới mẫu nằm ngoài 0 đến {last}",
        ),
        "count": Bilingual(
            "groups.json does not hold every sample of the build exactly once: sample {sample} "
            "is in {found} groups",
            "groups.json không chứa mọi mẫu của bản build đúng một lần: mẫu {sample} nằm trong "
            "{found} nhóm",
        ),
        "not_smallest": Bilingual(
            "a group of groups.json is not listed under its smallest member",
            "một nhóm của groups.json không được ghi dưới thành viên nhỏ nhất của nó",
        ),
    }

    groups: str
    build: str
    problem: str = _choice(_PROBLEMS)
    expected: str = ""
    found: str = ""
    sample: int = -1
    last: int = -1
    detail: str = ""
    """malformed: the parser's words."""

    summary = Bilingual(
        "The groups do not belong to this build.", "Các nhóm không thuộc về bản build này."
    )
    examples = (
        {
            "groups": "./splits/groups-v1",
            "build": "./artifacts/units-v2",
            "problem": "other_build",
            "expected": "5d1e…a0",
            "found": "c3b9…17",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Groups", "Nhóm"), self.groups
        yield _H_BUILD, self.build
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        if self.detail:
            yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "split with the groups made from this build (mintdim group BUILD --out GROUPS)",
                "hãy phân chia với các nhóm được tạo từ chính bản build này "
                "(mintdim group BUILD --out GROUPS)",
            ),
        )


class PackedSplitError(MintDimError, ValueError):
    """Raised when ``split`` is given a packed build: its copies are written record by record,
    and a packed row holds several samples that the split may send to different builds."""

    build: str

    summary = Bilingual(
        "A packed build cannot be split.", "Không thể phân chia một bản build packed."
    )
    examples = ({"build": "./artifacts/units-packed"},)

    def _sections(self) -> Iterator[Any]:
        yield _H_BUILD, self.build
        yield (
            _H.PROBLEM,
            Bilingual(
                "its rows hold several samples each (units.pack), and a split copies whole "
                "records: a row's samples may belong to different splits",
                "mỗi hàng của nó chứa nhiều mẫu (units.pack), còn phân chia sao chép nguyên "
                "bản ghi: các mẫu của một hàng có thể thuộc các phần khác nhau",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "group and split an unpacked build of the same inputs (units.pack=false); "
                "decide the split there, then pack each split's input files in builds of "
                "their own",
                "hãy nhóm và phân chia một bản build không packed của cùng input "
                "(units.pack=false); quyết định phân chia ở đó, rồi pack input của từng phần "
                "trong bản build riêng",
            ),
        )


class SplitDirectoryError(MintDimError, FileNotFoundError):
    """Raised when a directory given as groups or as a split holds no complete one of them."""

    _REASONS: ClassVar[dict[str, Bilingual]] = {
        "missing": Bilingual("the directory does not exist", "thư mục không tồn tại"),
        "not_directory": Bilingual(
            "the path is a file, not a directory", "đường dẫn là file, không phải thư mục"
        ),
        "failed": Bilingual(
            "a run failed here: {marker} says why, and there is no manifest.json",
            "một lần chạy đã thất bại ở đây: {marker} nói lý do, và không có manifest.json",
        ),
        "no_manifest": Bilingual(
            "there is no manifest.json (it is written last, when the run completes)",
            "không có manifest.json (file này được ghi sau cùng, khi lần chạy hoàn tất)",
        ),
        "other_kind": Bilingual(
            "manifest.json describes {found}, not {kind}",
            "manifest.json mô tả {found}, không phải {kind}",
        ),
        "manifest_json": Bilingual(
            "manifest.json is not a JSON object", "manifest.json không phải một object JSON"
        ),
        "manifest_status": Bilingual(
            "manifest.json has status {status!r} and format_version {version!r}; this MintDim "
            "reads complete ones of format version 1",
            "manifest.json có status {status!r} và format_version {version!r}; MintDim này "
            "đọc các manifest hoàn chỉnh có format version 1",
        ),
        "manifest_seal": Bilingual(
            "manifest_sha256 does not match the manifest's content: the manifest was edited",
            "manifest_sha256 không khớp với nội dung manifest: manifest đã bị sửa",
        ),
        "file_changed": Bilingual(
            "{detail} differs from what manifest.json lists (size or SHA-256)",
            "{detail} khác với những gì manifest.json ghi (kích thước hoặc SHA-256)",
        ),
    }
    _KINDS: ClassVar[dict[str, Bilingual]] = {
        "groups": Bilingual("groups (mintdim group)", "nhóm (mintdim group)"),
        "split": Bilingual("split (mintdim split)", "phân chia (mintdim split)"),
        "decontamination": Bilingual(
            "decontamination (mintdim decontaminate)", "kết quả khử nhiễm (mintdim decontaminate)"
        ),
    }
    _FOUND: ClassVar[dict[str, Bilingual]] = {
        "groups": Bilingual("groups", "các nhóm"),
        "split": Bilingual("a split", "một phân chia"),
        "decontamination": Bilingual("a decontamination", "một kết quả khử nhiễm"),
        "build": Bilingual("a build", "một bản build"),
        "unknown": Bilingual("something else", "một thứ khác"),
    }

    directory: str
    kind: str = _choice(_KINDS)
    reason: str = _choice(_REASONS)
    found: str = _choice(_FOUND, "unknown")
    marker: str = ""
    detail: str = ""
    """file_changed: the file's name; manifest_json: the parser's words."""
    status: object = None
    version: object = None

    @property
    def summary(self) -> Any:
        return _say(
            Bilingual(
                "The directory holds no complete {what}.", "Thư mục không chứa {what} hoàn chỉnh."
            ),
            what=self._KINDS[self.kind],
        )

    examples = (
        {"directory": "./splits/v1", "kind": "split", "reason": "no_manifest"},
        {
            "directory": "./artifacts/units",
            "kind": "groups",
            "reason": "other_kind",
            "found": "build",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield (
            _H.REASON,
            _say(
                self._REASONS[self.reason],
                kind=self._KINDS[self.kind],
                found=self._FOUND[self.found],
            ),
        )
        if self.detail and self.reason == "manifest_json":
            yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "give the output directory of a run that completed",
                "hãy đưa thư mục output của một lần chạy đã hoàn tất",
            ),
        )


class SplitDamagedError(MintDimError, ValueError):
    """Raised by ``open_split`` when a file it needs differs from what the split's manifest
    records (only the training files and the split's own files are looked at; the test set only
    under ``final_evaluation=True``)."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "missing": Bilingual("the file is missing", "file bị thiếu"),
        "size": Bilingual(
            "{actual} bytes, the manifest lists {expected}",
            "{actual} byte, manifest ghi {expected}",
        ),
        "sha256": Bilingual(
            "SHA-256 {actual}, the manifest lists {expected}",
            "SHA-256 {actual}, manifest ghi {expected}",
        ),
        "unreadable": Bilingual(
            "the file cannot be read ({actual})", "không đọc được file ({actual})"
        ),
    }

    directory: str
    path: str
    problem: str = _choice(_PROBLEMS)
    expected: str = ""
    actual: str = ""

    summary = Bilingual(
        "A file of the split differs from its manifest.",
        "Một file của phân chia khác với manifest của nó.",
    )
    examples = (
        {
            "directory": "./splits/v1",
            "path": "train/unit_256/shard_000003.bin",
            "problem": "size",
            "expected": "10485760",
            "actual": "10485248",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield _H_FILE, self.path
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        if self.problem == "unreadable" and self.actual:
            yield _H.LIBRARY_ERROR, self.actual
        yield (
            _H.FIX,
            Bilingual(
                "run mintdim verify on the split to see every difference, then restore the "
                "split from a good copy or make it again",
                "hãy chạy mintdim verify trên phân chia để thấy mọi khác biệt, rồi khôi phục "
                "phân chia từ một bản tốt hoặc tạo lại nó",
            ),
        )


class SplitVerificationError(MintDimError, RuntimeError):
    """Raised when the independent pass over a split just written finds a check that does not
    hold; the split gets no manifest, so it never looks complete."""

    directory: str
    failed_en: list[str]
    """Each failed check, its failures and examples, in English ..."""
    failed_vi: list[str]
    """... and in Vietnamese."""

    summary = Bilingual(
        "The split did not pass its own verification.",
        "Phân chia không vượt qua bước kiểm tra của chính nó.",
    )
    examples = (
        {
            "directory": "./splits/v1",
            "failed_en": [
                "copied_tokens: 1 (train sample 7 (input 12): tokens differ from the input build's)"
            ],
            "failed_vi": [
                "copied_tokens: 1 (mẫu 7 của train (đầu vào 12): token khác với token "
                "của bản build đầu vào)"
            ],
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
                "verification.json lists every check; the input build or the groups may have "
                "changed while the split ran: verify them (mintdim verify) and split again into "
                "a new directory",
                "verification.json liệt kê mọi kiểm tra; bản build đầu vào hoặc các nhóm có thể "
                "đã thay đổi khi phân chia đang chạy: hãy kiểm tra chúng (mintdim verify) rồi "
                "phân chia lại vào một thư mục mới",
            ),
        )


class TestSetLockedError(MintDimError, PermissionError):
    """Raised by ``split.test`` when the split was not opened with ``final_evaluation=True``."""

    directory: str

    summary = Bilingual(
        "The test set is reserved for the final evaluation.",
        "Tập test được dành riêng cho lần đánh giá cuối cùng.",
    )
    examples = ({"directory": "./splits/v1"},)

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield (
            _H.FIX,
            Bilingual(
                "train and tune on .train and .validation; for the final evaluation only, open "
                "the split with open_split(path, final_evaluation=True)",
                "hãy huấn luyện và tinh chỉnh trên .train và .validation; chỉ cho lần đánh giá "
                "cuối cùng, mở phân chia bằng open_split(path, final_evaluation=True)",
            ),
        )
