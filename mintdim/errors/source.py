"""Errors of the source stage: input files, JSONL lines, fields and templates."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    MintDimError,
    _choice,
    _quoted,
    _say,
    current_directory,
    format_location,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "FieldValueTypeError",
    "InputChangedError",
    "LineTooLongError",
    "MintDimFileNotFoundError",
    "SampleSchemaError",
    "SourceParseError",
    "SourceValidationError",
    "TemplateFieldMismatchError",
    "TemplateSyntaxError",
]


class MintDimFileNotFoundError(MintDimError, FileNotFoundError):
    """Raised when a declared source or tokenizer file does not exist.

    ``cwd`` is the working directory at construction, from which relative paths resolve.
    ``errno`` is ``ENOENT`` and ``filename`` is the declared path, as for any
    ``FileNotFoundError``.
    """

    context: str
    path: str
    cwd: str | None = None

    summary = Bilingual("Required file was not found.", "Không tìm thấy file cần dùng.")
    examples = (
        {"context": "source", "path": "./data/train.jsonl", "cwd": "/home/user/project"},
        {"context": "tokenizer", "path": "/models/tokenizer.model", "cwd": "/home/user/project"},
    )

    def _check(self) -> None:
        if self.cwd is None:
            self.cwd = current_directory()

    def _exception_args(self) -> tuple[object, ...]:
        return (errno.ENOENT, os.strerror(errno.ENOENT), self.path)

    def _sections(self) -> Iterator[Any]:
        yield "Context", self.context
        yield Bilingual("Missing file", "File thiếu"), self.path
        expanded = os.path.expanduser(self.path)
        looked_for = _say(
            Bilingual("looked for: {resolved}", "đã tìm tại: {resolved}"),
            resolved=os.path.normpath(os.path.join(self.cwd, expanded)),
        )
        if not os.path.isabs(expanded):
            yield (
                _H.FIX,
                Bilingual(
                    "relative paths are resolved from the current working directory: {cwd}",
                    "đường dẫn tương đối được tính từ thư mục làm việc hiện tại: {cwd}",
                ),
                looked_for,
                Bilingual(
                    "check the path, or run from the directory the path is relative to",
                    "kiểm tra lại đường dẫn, hoặc chạy lệnh từ đúng thư mục mà đường dẫn này dựa vào",
                ),
            )
        else:
            yield (
                _H.FIX,
                *([looked_for] if expanded != self.path else []),
                Bilingual(
                    "check that the file exists at this absolute path",
                    "kiểm tra file có tồn tại ở đường dẫn tuyệt đối này không",
                ),
            )


class SourceParseError(MintDimError, ValueError):
    """Raised when a JSONL line is not valid JSON, not valid UTF-8, or not a JSON object.

    ``detail``: the JSON library's message (``invalid_json``) or the JSON type found
    (``not_object``); ``byte`` and ``offset``: the first byte that is not UTF-8 and where it is
    in the line (``invalid_utf8``).
    """

    _REASONS: ClassVar[dict[str, Bilingual]] = {
        "invalid_json": Bilingual("invalid JSON syntax", "JSON không hợp lệ"),
        "invalid_utf8": Bilingual("bytes are not valid UTF-8", "byte không phải UTF-8 hợp lệ"),
        "not_object": Bilingual("JSON value is not an object", "giá trị JSON không phải object"),
    }

    file: str
    line: int
    reason: str = _choice(_REASONS)
    detail: str = ""
    byte: int | None = None
    offset: int | None = None

    summary = Bilingual("JSONL line could not be parsed.", "Không đọc được dòng JSONL.")
    examples = (
        {"file": "./data/alpaca.jsonl", "line": 18291, "reason": "invalid_json"},
        {"file": "./data/alpaca.jsonl", "line": 7, "reason": "not_object", "detail": "array"},
        {
            "file": "./data/alpaca.jsonl",
            "line": 12,
            "reason": "invalid_utf8",
            "byte": 0xFF,
            "offset": 40,
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        yield _H.LINE, self.line
        if self.byte is not None:
            detail = [
                Bilingual(
                    "byte 0x{byte:02x} at byte offset {offset}",
                    "byte 0x{byte:02x} ở vị trí byte {offset}",
                )
            ]
        elif not self.detail:
            detail = []
        elif self.reason == "not_object":
            detail = [Bilingual("found: {detail}", "tìm thấy: {detail}")]
        else:
            detail = [self.detail]
        yield _H.REASON, self._REASONS[self.reason], *detail
        yield (
            _H.FIX,
            Bilingual(
                "each line must be one JSON object encoded as UTF-8; fix or remove line {line}",
                "mỗi dòng phải là một JSON object mã hóa UTF-8; hãy sửa hoặc xóa dòng {line}",
            ),
        )


class SampleSchemaError(MintDimError, ValueError):
    """Raised when a JSONL sample lacks fields declared in ``fields[i]``."""

    file: str
    line: int
    declared_fields: list[str]
    missing_fields: list[str]
    available_keys: list[str]

    summary = Bilingual(
        "JSONL sample is missing declared fields.", "Sample JSONL thiếu fields đã khai báo."
    )
    examples = (
        {
            "file": "./data/alpaca.jsonl",
            "line": 18291,
            "declared_fields": ["instruction", "input", "output"],
            "missing_fields": ["input"],
            "available_keys": ["instruction", "output", "metadata"],
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        yield _H.LINE, self.line
        yield Bilingual("Declared fields", "Fields đã khai báo"), *self.declared_fields
        yield Bilingual("Missing fields", "Fields bị thiếu"), *self.missing_fields
        yield Bilingual("Available keys", "Keys hiện có"), *self.available_keys


class TemplateFieldMismatchError(MintDimError, ValueError):
    """Raised when a template's placeholders and the declared fields are not the same set.

    ``problem`` is "not_declared" (the template uses ``{field}`` but fields lacks it) or
    "not_used" (fields declares it but the template does not use it).
    """

    _PROBLEMS: ClassVar[dict[str, tuple[Bilingual, Bilingual]]] = {
        # Each problem has a reason and a fix.
        "not_declared": (
            Bilingual(
                "template uses {placeholder}, but fields does not declare it",
                "template dùng {placeholder}, nhưng fields không khai báo field này",
            ),
            Bilingual(
                "add {field!r} to fields, or remove {placeholder} from the template",
                "thêm {field!r} vào fields, hoặc bỏ {placeholder} khỏi template",
            ),
        ),
        "not_used": (
            Bilingual(
                "fields declares it, but the template does not use {placeholder}",
                "fields khai báo field này, nhưng template không dùng {placeholder}",
            ),
            Bilingual(
                "remove {field!r} from fields, or use {placeholder} in the template",
                "bỏ {field!r} khỏi fields, hoặc dùng {placeholder} trong template",
            ),
        ),
    }

    file: str
    fields: list[str]
    template: str
    field: str
    problem: str = _choice(_PROBLEMS)

    examples = (
        {
            "file": "./data/train.jsonl",
            "fields": ["instruction", "input", "output"],
            "template": "{instruction}\n\n{prompt}\n\n{output}",
            "field": "prompt",
            "problem": "not_declared",
        },
    )

    def _sections(self) -> Iterator[Any]:
        reason, fix = (
            _say(text, placeholder="{" + self.field + "}") for text in self._PROBLEMS[self.problem]
        )
        yield Bilingual("Source file", "File nguồn"), self.file
        yield (
            Bilingual("API declaration for this file", "Khai báo API cho file này"),
            f"fields = {self.fields!r}",
            f"template = {_quoted(self.template)}",
        )
        # The catalogue puts "Reason:" right under the field name, without a blank line.
        yield (
            Bilingual("Field causing template mismatch", "Field gây lệch template"),
            self.field,
            Bilingual("Reason:", "Lý do:"),
            reason,
        )
        yield _H.FIX, fix


class TemplateSyntaxError(MintDimError, ValueError):
    """Raised when a template has an unbalanced brace or an empty or nested placeholder.

    ``position`` is the 0-based index of the offending character in ``template``.
    """

    _PROBLEMS: ClassVar[dict[str, tuple[Bilingual, Bilingual]]] = {
        # Each problem has a problem text and a fix.; braces are doubled because every text is a format string
        "unmatched_open": (
            Bilingual(
                "'{{' at position {position} has no closing '}}'",
                "'{{' ở vị trí {position} không có '}}' đóng",
            ),
            Bilingual(
                "close the placeholder with '}}', or write '{{{{' for a literal '{{'",
                "đóng placeholder bằng '}}', hoặc viết '{{{{' để có ký tự '{{'",
            ),
        ),
        "unmatched_close": (
            Bilingual(
                "'}}' at position {position} closes no placeholder",
                "'}}' ở vị trí {position} không đóng placeholder nào",
            ),
            Bilingual(
                "remove it, or write '}}}}' for a literal '}}'",
                "xóa ký tự này, hoặc viết '}}}}' để có ký tự '}}'",
            ),
        ),
        "empty_placeholder": (
            Bilingual(
                "'{{}}' at position {position} is a placeholder without a field name",
                "'{{}}' ở vị trí {position} là placeholder không có tên field",
            ),
            Bilingual(
                "write a field name inside the braces, or '{{{{}}}}' for literal braces",
                "viết tên field vào trong cặp ngoặc, hoặc '{{{{}}}}' để có ngoặc nhọn literal",
            ),
        ),
        "nested_brace": (
            Bilingual(
                "'{{' at position {position} is inside another placeholder",
                "'{{' ở vị trí {position} nằm bên trong một placeholder khác",
            ),
            Bilingual(
                "close the previous placeholder first; placeholders cannot be nested",
                "đóng placeholder trước đó; placeholder không được lồng nhau",
            ),
        ),
    }

    file_index: int
    template: str
    position: int
    problem: str = _choice(_PROBLEMS)

    summary = Bilingual(
        "Template has invalid brace syntax.", "Template có dấu ngoặc nhọn sai cú pháp."
    )
    examples = (
        {
            "file_index": 0,
            "template": "{instruction}\n\n{input",
            "position": 15,
            "problem": "unmatched_open",
        },
    )

    def _sections(self) -> Iterator[Any]:
        problem, fix = self._PROBLEMS[self.problem]
        quoted = _quoted(self.template)
        caret = " " * (len(_quoted(self.template[: self.position])) - 1) + "^"
        yield _H.FILE_INDEX, self.file_index
        yield "Template", quoted
        yield Bilingual("Position", "Vị trí ký tự"), self.position, quoted, caret
        yield _H.PROBLEM, problem
        yield (
            _H.RULES,
            Bilingual(
                "- {{name}} is a placeholder for the field name\n- {{{{ and }}}} are literal braces\n"
                "- any other brace is an error",
                "- {{name}} là placeholder cho field name\n- {{{{ và }}}} là ngoặc nhọn literal\n"
                "- mọi dấu ngoặc nhọn khác đều là lỗi",
            ),
        )
        yield _H.FIX, fix


class FieldValueTypeError(MintDimError, ValueError):
    """Raised when a declared field's value in a JSONL line is not a JSON string."""

    file: str
    line: int
    field: str
    found_type: str

    summary = Bilingual(
        "JSONL field value is not a string.", "Giá trị field trong JSONL không phải string."
    )
    examples = (
        {"file": "./data/alpaca.jsonl", "line": 12, "field": "output", "found_type": "null"},
    )

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        yield _H.LINE, self.line
        yield "Field", self.field
        yield Bilingual("Found type", "Kiểu tìm thấy"), self.found_type
        yield (
            _H.FIX,
            Bilingual(
                "convert the value to a JSON string in the JSONL file, or choose another field",
                "chuyển giá trị thành string JSON trong file JSONL, hoặc chọn field khác",
            ),
        )


class SourceValidationError(MintDimError, ValueError):
    """Raised when source.files, source.fields or source.templates is malformed.

    ``key`` is the full key (``source.fields[1]``); ``problem`` is "not_list" (got = type
    name), "empty", "not_string" (got = type name) or "duplicate_field" (got = the field).
    A key outside ``source`` (e.g. ``output.dir``) is rendered without the source rules.
    """

    _PROBLEMS: ClassVar[dict[str, tuple[Bilingual, Bilingual]]] = {
        # Each problem has a problem text and a fix.
        "not_list": (
            Bilingual("{key} must be a list, got {got}", "{key} phải là list, hiện tại là {got}"),
            Bilingual("pass {key} as a list", "truyền {key} dưới dạng list"),
        ),
        "empty": (
            Bilingual("{key} must not be empty", "{key} không được rỗng"),
            Bilingual(
                "declare at least one entry in {key}", "khai báo ít nhất một phần tử trong {key}"
            ),
        ),
        "not_string": (
            Bilingual(
                "{key} must be a string, got {got}", "{key} phải là string, hiện tại là {got}"
            ),
            Bilingual("write {key} as a string", "viết {key} dưới dạng string"),
        ),
        "not_positive": (
            Bilingual(
                "{key} must be a positive integer, got {got!r}",
                "{key} phải là số nguyên dương, hiện tại là {got!r}",
            ),
            Bilingual("give {key} as a number of bytes", "hãy đưa {key} là một số byte"),
        ),
        "duplicate_field": (
            Bilingual(
                "{key} declares field {got!r} more than once",
                "{key} khai báo field {got!r} nhiều lần",
            ),
            Bilingual(
                "declare each field once in {key}", "mỗi field chỉ khai báo một lần trong {key}"
            ),
        ),
    }

    key: str
    problem: str = _choice(_PROBLEMS)
    got: object = None

    examples = ({"key": "source.fields[1]", "problem": "duplicate_field", "got": "input"},)

    @property
    def summary(self) -> Bilingual:
        if self._is_source:
            return Bilingual("Invalid source declaration.", "Khai báo source không hợp lệ.")
        return Bilingual("Invalid declaration.", "Khai báo không hợp lệ.")

    @property
    def _is_source(self) -> bool:
        # The rules describe source.*; other keys (such as output.dir) get no Rules section
        # rather than rules that do not apply to them.
        return self.key.startswith("source")

    def _sections(self) -> Iterator[Any]:
        problem, fix = self._PROBLEMS[self.problem]
        yield "Key", self.key
        yield _H.PROBLEM, problem
        if self._is_source:
            yield (
                _H.RULES,
                Bilingual(
                    "- files: list of path strings\n- fields: list of lists of field-name strings\n"
                    "- templates: list of strings",
                    "- files: list các đường dẫn dạng string\n- fields: list các list tên field dạng string\n"
                    "- templates: list các string",
                ),
            )
        yield _H.FIX, fix


class LineTooLongError(MintDimError, ValueError):
    """Raised when a JSONL line grows past ``source.max_line_bytes`` before its newline."""

    file: str
    line: int
    limit: int

    summary = Bilingual(
        "A JSONL line is longer than the line limit.",
        "Một dòng JSONL dài hơn giới hạn độ dài dòng.",
    )
    examples = ({"file": "./data/dump.jsonl", "line": 1, "limit": 67108864},)

    def _sections(self) -> Iterator[Any]:
        yield _H.SAMPLE, format_location(self.file, self.line)
        yield (
            _H.REASON,
            Bilingual(
                "no newline within {limit:,} bytes (source.max_line_bytes): MintDim holds a "
                "line in memory until its newline, so it stops here instead of running out",
                "không có ký tự xuống dòng trong {limit:,} byte (source.max_line_bytes): MintDim "
                "giữ một dòng trong bộ nhớ cho tới ký tự xuống dòng, nên dừng ở đây thay vì "
                "cạn bộ nhớ",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "a line this long is usually not JSONL (one JSON array, a whole document, a "
                "binary file): write one JSON object per line; if the samples really are this "
                "long, raise the limit: .source.jsonl(..., max_line_bytes=N) or "
                "source.max_line_bytes=N",
                "một dòng dài như vậy thường không phải JSONL (một mảng JSON, cả một tài liệu, "
                "một file nhị phân): hãy ghi mỗi dòng một JSON object; nếu mẫu thật sự dài như "
                "vậy, hãy nâng giới hạn: .source.jsonl(..., max_line_bytes=N) hoặc "
                "source.max_line_bytes=N",
            ),
        )


class InputChangedError(MintDimError, RuntimeError):
    """Raised at the end of a build when an input file changed, or went, while it was read."""

    _CHANGES: ClassVar[dict[str, Bilingual]] = {
        "size": Bilingual("its size changed", "kích thước của nó đã thay đổi"),
        "mtime": Bilingual(
            "it was modified (its mtime changed)", "nó đã bị sửa (mtime đã thay đổi)"
        ),
        "gone": Bilingual("it can no longer be found", "không còn tìm thấy nó"),
        "content": Bilingual(
            "a worker read other bytes than the build planned (another version of the file on "
            "that machine, or the file was rewritten)",
            "một worker đã đọc các byte khác với kế hoạch của build (một phiên bản khác của file "
            "trên máy đó, hoặc file đã bị ghi lại)",
        ),
    }

    # What was seen when the file was read, and now: per change, in the unit its text names
    # (bytes; mtime_ns; SHA-256 of the piece ``byte_range``; the OS's answer for "gone").
    _SEEN: ClassVar[dict[str, Bilingual]] = {
        "size": Bilingual(
            "size when read: {was} bytes; now: {now} bytes",
            "kích thước khi đọc: {was} byte; bây giờ: {now} byte",
        ),
        "mtime": Bilingual(
            "mtime_ns when read: {was}; now: {now}", "mtime_ns khi đọc: {was}; bây giờ: {now}"
        ),
        "gone": Bilingual(
            "size when read: {was} bytes; now: {now}",
            "kích thước khi đọc: {was} byte; bây giờ: {now}",
        ),
        "content": Bilingual(
            "SHA-256 of bytes {byte_range} when the build cut them: {was}; when encoded: {now}",
            "SHA-256 của các byte {byte_range} khi build cắt chúng: {was}; khi encode: {now}",
        ),
    }

    file: str
    change: str = _choice(_CHANGES)
    was: str = ""
    now: str = ""
    byte_range: str = ""

    summary = Bilingual(
        "An input file changed while the build read it; no manifest was written.",
        "Một file đầu vào đã thay đổi trong khi build đang đọc nó; không có manifest nào được ghi.",
    )
    examples = (
        {
            "file": "./data/alpaca.jsonl",
            "change": "mtime",
            "was": "1764500000000000000",
            "now": "1764500012000000000",
        },
        {"file": "./data/alpaca.jsonl", "change": "size", "was": "165432101", "now": "165432222"},
    )

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        seen = [self._SEEN[self.change]] if self.was or self.now else []
        yield _H.REASON, self._CHANGES[self.change], *seen
        yield (
            _H.FIX,
            Bilingual(
                "the samples written may mix old and new text: keep the inputs unchanged while "
                "a build runs (build from a copy or a snapshot), then build again into a new, "
                "empty directory",
                "các mẫu đã ghi có thể trộn văn bản cũ và mới: hãy giữ nguyên các file đầu vào "
                "khi build đang chạy (build từ một bản sao hoặc snapshot), rồi build lại vào một "
                "thư mục mới, rỗng",
            ),
        )
