"""Errors of the source stage: input files and their formats, JSONL lines, Parquet rows, fields
and templates."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    MintDimError,
    _bullets,
    _choice,
    _quoted,
    _say,
    current_directory,
    format_location,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "CompressedStreamError",
    "FieldValueTypeError",
    "InputChangedError",
    "LineTooLongError",
    "MintDimFileNotFoundError",
    "ParquetMissingError",
    "ParquetReadError",
    "ParquetSchemaError",
    "SampleSchemaError",
    "SourceFormatError",
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
    """Raised when a declared field's value is not a string: a JSONL value that is not a JSON
    string, or a Parquet value that is null or in a column of another type.

    ``line`` is the 1-based line (JSONL, of the decompressed stream) or row (Parquet).
    """

    _SUMMARIES: ClassVar[dict[str, Bilingual]] = {
        "jsonl": Bilingual(
            "JSONL field value is not a string.", "Giá trị field trong JSONL không phải string."
        ),
        "parquet": Bilingual(
            "Parquet field value is not a string.",
            "Giá trị field trong Parquet không phải string.",
        ),
    }

    file: str
    line: int
    field: str
    found_type: str
    kind: str = _choice(_SUMMARIES, "jsonl")
    """The input's kind: ``jsonl`` or ``parquet`` (a row, a column)."""

    examples = (
        {"file": "./data/alpaca.jsonl", "line": 12, "field": "output", "found_type": "null"},
        {
            "file": "./data/train-00000.parquet",
            "line": 4097,
            "field": "output",
            "found_type": "null",
            "kind": "parquet",
        },
    )

    @property
    def summary(self) -> Bilingual:
        return self._SUMMARIES[self.kind]

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        if self.kind == "jsonl":
            yield _H.LINE, self.line
        else:
            yield _H.ROW, self.line
        yield "Field", self.field
        yield Bilingual("Found type", "Kiểu tìm thấy"), self.found_type
        if self.kind == "jsonl":
            fix = Bilingual(
                "convert the value to a JSON string in the JSONL file, or choose another field",
                "chuyển giá trị thành string JSON trong file JSONL, hoặc chọn field khác",
            )
        else:
            fix = Bilingual(
                "write the column as strings (pyarrow: pc.cast(column, pa.string())) and fill "
                'its nulls (pc.fill_null(column, "")), or choose another field',
                "ghi cột dưới dạng string (pyarrow: pc.cast(column, pa.string())) và điền các "
                'giá trị null (pc.fill_null(column, "")), hoặc chọn field khác',
            )
        yield _H.FIX, fix


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
    """Raised when a JSONL line grows past ``source.max_line_bytes`` before its newline, or a
    Parquet row's declared values hold more bytes than it (``kind``: ``jsonl`` or ``parquet``)."""

    _SUMMARIES: ClassVar[dict[str, Bilingual]] = {
        "jsonl": Bilingual(
            "A JSONL line is longer than the line limit.",
            "Một dòng JSONL dài hơn giới hạn độ dài dòng.",
        ),
        "parquet": Bilingual(
            "A Parquet row is larger than the line limit.",
            "Một hàng Parquet lớn hơn giới hạn độ dài dòng.",
        ),
    }

    file: str
    line: int
    limit: int
    kind: str = _choice(_SUMMARIES, "jsonl")
    size: int = 0
    """Parquet: the bytes the row's declared values hold."""

    examples = (
        {"file": "./data/dump.jsonl", "line": 1, "limit": 67108864},
        {
            "file": "./data/train-00000.parquet",
            "line": 4097,
            "limit": 67108864,
            "kind": "parquet",
            "size": 201326592,
        },
    )

    @property
    def summary(self) -> Bilingual:
        return self._SUMMARIES[self.kind]

    def _sections(self) -> Iterator[Any]:
        if self.kind == "parquet":
            yield "File", self.file
            yield _H.ROW, self.line
            yield (
                _H.REASON,
                Bilingual(
                    "the row's declared fields hold {size:,} bytes, over {limit:,} "
                    "(source.max_line_bytes)",
                    "các field đã khai báo của hàng chứa {size:,} byte, vượt {limit:,} "
                    "(source.max_line_bytes)",
                ),
            )
            yield (
                _H.FIX,
                Bilingual(
                    "if the samples really are this large, raise the limit: "
                    ".source.parquet(..., max_line_bytes=N) or source.max_line_bytes=N; else "
                    "leave the column out of fields",
                    "nếu mẫu thật sự lớn như vậy, hãy nâng giới hạn: "
                    ".source.parquet(..., max_line_bytes=N) hoặc source.max_line_bytes=N; nếu "
                    "không, hãy bỏ cột đó khỏi fields",
                ),
            )
            return
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


_FORMAT_NAMES: dict[str, Bilingual] = {
    "plain": Bilingual("uncompressed text", "văn bản không nén"),
    "gzip": Bilingual("gzip", "gzip"),
    "zstd": Bilingual("zstandard", "zstandard"),
    "xz": Bilingual("xz", "xz"),
    "bz2": Bilingual("bzip2", "bzip2"),
    "parquet": Bilingual("Parquet", "Parquet"),
}
"""How a file is stored, by the code MintDim gives it (``source.formats``)."""


class SourceFormatError(MintDimError, ValueError):
    """Raised at validation when an input's bytes are not in the format it claims.

    ``claimed``: the format its name's extension (``by="extension"``) or the source step
    (``by="step"``: ``.source.parquet``, or ``.source.jsonl`` given a Parquet file) claims;
    ``found``: the format its first bytes (magic bytes) show. Codes: ``plain`` (no compression
    recognised), ``gzip``, ``zstd``, ``xz``, ``bz2``, ``parquet``.
    """

    file: str
    claimed: str = _choice(_FORMAT_NAMES)
    found: str = _choice(_FORMAT_NAMES)
    by: str = _choice(("extension", "step"))

    summary = Bilingual(
        "An input file is not in the format it claims.",
        "Một file đầu vào không ở định dạng mà nó tự nhận.",
    )
    examples = (
        {"file": "./data/train.jsonl.gz", "claimed": "gzip", "found": "plain", "by": "extension"},
        {"file": "./data/train.parquet", "claimed": "plain", "found": "parquet", "by": "step"},
    )

    def _sections(self) -> Iterator[Any]:
        claimed, found = _FORMAT_NAMES[self.claimed], _FORMAT_NAMES[self.found]
        yield "File", self.file
        if self.by == "extension":
            claim = (
                Bilingual("its name says {claimed}", "tên file cho biết đây là {claimed}"),
                Bilingual(
                    "rename the file after what it holds (MintDim reads it by its bytes: a name "
                    "without a compression extension is read as whatever its bytes are), or "
                    "replace it with a real {claimed} file",
                    "đổi tên file theo nội dung thật của nó (MintDim đọc theo các byte: tên không "
                    "có đuôi nén sẽ được đọc theo đúng nội dung), hoặc thay bằng một file "
                    "{claimed} thật",
                ),
            )
        elif self.found == "parquet":
            claim = (
                Bilingual(
                    "it was declared with .source.jsonl", "file được khai báo bằng .source.jsonl"
                ),
                Bilingual(
                    "declare Parquet files with .source.parquet(files=..., fields=..., templates=...) "
                    "(runner: source.kind=parquet)",
                    "khai báo file Parquet bằng .source.parquet(files=..., fields=..., templates=...) "
                    "(runner: source.kind=parquet)",
                ),
            )
        else:
            claim = (
                Bilingual(
                    "it was declared with .source.parquet",
                    "file được khai báo bằng .source.parquet",
                ),
                Bilingual(
                    "declare JSONL files (compressed or not) with .source.jsonl (runner: "
                    "source.kind=jsonl), or give the Parquet file itself",
                    "khai báo file JSONL (nén hoặc không) bằng .source.jsonl (runner: "
                    "source.kind=jsonl), hoặc đưa đúng file Parquet",
                ),
            )
        text, fix = claim
        yield (
            _H.REASON,
            _say(text, claimed=claimed),
            _say(
                Bilingual("its first bytes are {found}", "các byte đầu của file là {found}"),
                found=found,
            ),
        )
        yield _H.FIX, _say(fix, claimed=claimed)


class CompressedStreamError(MintDimError, ValueError):
    """Raised while reading a compressed JSONL file whose stream is damaged.

    ``problem``: ``truncated`` (the stream ends inside a gzip member, a zstandard frame, an xz
    or bzip2 stream), ``corrupt`` (bytes that do not decompress) or ``trailing`` (bytes after
    the last member that are neither a member nor the zero padding the codec allows).
    ``last_line``: the last whole line read from the decompressed stream (0: none); every
    line up to it was read, the partial line after it never is.
    """

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "truncated": Bilingual(
            "the compressed stream ends before its end marker: the file is cut short",
            "luồng nén kết thúc trước dấu kết thúc của nó: file bị cắt cụt",
        ),
        "corrupt": Bilingual(
            "the compressed stream holds bytes that do not decompress",
            "luồng nén chứa các byte không giải nén được",
        ),
        "trailing": Bilingual(
            "bytes follow the last complete stream that are neither another stream nor zero "
            "padding (zeros are padding after gzip and bzip2, in multiples of four after xz)",
            "sau luồng nén hoàn chỉnh cuối cùng còn các byte không phải một luồng khác cũng "
            "không phải phần đệm số 0 (số 0 là phần đệm sau gzip và bzip2, theo bội số của bốn "
            "sau xz)",
        ),
    }
    _TESTS: ClassVar[dict[str, str]] = {
        "gzip": "gzip -t",
        "zstd": "zstd -t",
        "xz": "xz -t",
        "bz2": "bzip2 -t",
    }

    file: str
    compression: str = _choice(_TESTS)
    problem: str = _choice(_PROBLEMS)
    last_line: int = 0
    detail: str = ""

    summary = Bilingual("A compressed input file is damaged.", "Một file đầu vào dạng nén bị hỏng.")
    examples = (
        {
            "file": "./data/c4-train.00000-of-01024.jsonl.gz",
            "compression": "gzip",
            "problem": "truncated",
            "last_line": 35102,
        },
        {
            "file": "./data/dolma-v1_7-0000.jsonl.zst",
            "compression": "zstd",
            "problem": "corrupt",
            "last_line": 0,
            "detail": "zstd decompress error: Unknown frame descriptor",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        yield Bilingual("Compression", "Kiểu nén"), _FORMAT_NAMES[self.compression]
        if self.last_line:
            read = Bilingual(
                "last whole line read: {last_line} (the lines up to it were read)",
                "dòng nguyên vẹn cuối cùng đã đọc: {last_line} (các dòng tới đó đã được đọc)",
            )
        else:
            read = Bilingual("no whole line could be read", "không đọc được dòng nguyên vẹn nào")
        yield _H.REASON, self._PROBLEMS[self.problem], *([self.detail] if self.detail else []), read
        yield (
            _H.FIX,
            _say(
                Bilingual(
                    "download or compress the file again; `{test} FILE` checks it without MintDim",
                    "tải hoặc nén lại file; `{test} FILE` kiểm tra file mà không cần MintDim",
                ),
                test=self._TESTS[self.compression],
            ),
        )


class ParquetMissingError(MintDimError, ImportError):
    """Raised when a Parquet input is declared and the ``pyarrow`` package cannot be imported."""

    detail: str

    summary = Bilingual(
        "Parquet inputs need the pyarrow package, which is not installed in this Python.",
        "Đầu vào Parquet cần package pyarrow, nhưng Python này chưa cài.",
    )
    examples = ({"detail": "No module named 'pyarrow'"},)

    def _sections(self) -> Iterator[Any]:
        yield _H.REASON, self.detail
        yield (
            _H.FIX,
            Bilingual(
                'install MintDim with its Parquet extra, from the MintDim checkout: pip install ".[parquet]"\n'
                'or install pyarrow alone: pip install "pyarrow>=14"',
                'cài MintDim cùng phần mở rộng Parquet, từ thư mục mã nguồn MintDim: pip install ".[parquet]"\n'
                'hoặc chỉ cài pyarrow: pip install "pyarrow>=14"',
            ),
        )


class ParquetReadError(MintDimError, ValueError):
    """Raised when pyarrow cannot read a Parquet input: its footer (the schema and the row
    groups' places, at the end of the file), or one row group's data.

    ``row``: the 1-based first row of the row group that failed (``part="row_group"``).
    """

    _PARTS: ClassVar[dict[str, Bilingual]] = {
        "footer": Bilingual(
            "its footer (the schema and where each row group lies, at the end of the file) "
            "cannot be read: the file is cut short, damaged, or not Parquet",
            "không đọc được footer của file (schema và vị trí từng row group, ở cuối file): "
            "file bị cắt cụt, bị hỏng, hoặc không phải Parquet",
        ),
        "row_group": Bilingual(
            "the row group starting at row {row} cannot be read",
            "không đọc được row group bắt đầu ở hàng {row}",
        ),
    }

    file: str
    part: str = _choice(_PARTS)
    detail: str = ""
    row: int = 0

    summary = Bilingual("A Parquet input could not be read.", "Không đọc được một file Parquet.")
    examples = (
        {
            "file": "./data/train-00000-of-00004.parquet",
            "part": "footer",
            "detail": "Parquet magic bytes not found in footer. Either the file is corrupted "
            "or this is not a parquet file.",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        yield _H.REASON, self._PARTS[self.part], *([self.detail] if self.detail else [])
        yield (
            _H.FIX,
            Bilingual(
                "download or write the file again; pyarrow.parquet.read_metadata(FILE) checks "
                "the footer without MintDim",
                "tải hoặc ghi lại file; pyarrow.parquet.read_metadata(FILE) kiểm tra footer mà "
                "không cần MintDim",
            ),
        )


class ParquetSchemaError(MintDimError, ValueError):
    """Raised at validation when a Parquet input's schema cannot give a declared field: no
    column has its name (``missing``), or its column is nested (``nested``: a list, struct,
    map or union), whose values are no string.
    """

    _PROBLEMS: ClassVar[dict[str, tuple[Bilingual, Bilingual]]] = {
        "missing": (
            Bilingual(
                "no column of the file is named {field!r}, so no row has that field",
                "không cột nào của file tên là {field!r}, nên không hàng nào có field này",
            ),
            Bilingual(
                "declare the name of one of the columns below, or write the column into the file",
                "khai báo tên của một trong các cột dưới đây, hoặc ghi cột đó vào file",
            ),
        ),
        "nested": (
            Bilingual(
                "column {field!r} is nested ({found_type}): its values are no string",
                "cột {field!r} là kiểu lồng nhau ({found_type}): giá trị của nó không phải string",
            ),
            Bilingual(
                "flatten the column into string columns when writing the file (for example "
                "pyarrow.compute.struct_field, or one JSON string per row), then declare those",
                "làm phẳng cột thành các cột string khi ghi file (ví dụ "
                "pyarrow.compute.struct_field, hoặc mỗi hàng một string JSON), rồi khai báo chúng",
            ),
        ),
    }

    file: str
    field: str
    problem: str = _choice(_PROBLEMS)
    found_type: str = ""
    columns: list[str] = ()

    summary = Bilingual(
        "A Parquet input cannot give a declared field.",
        "Một file Parquet không cung cấp được field đã khai báo.",
    )
    examples = (
        {
            "file": "./data/train-00000-of-00004.parquet",
            "field": "response",
            "problem": "missing",
            "columns": ["prompt", "chosen", "rejected"],
        },
        {
            "file": "./data/train-00000-of-00004.parquet",
            "field": "messages",
            "problem": "nested",
            "found_type": "list<element: struct<content: string, role: string>>",
            "columns": ["messages", "source"],
        },
    )

    def _sections(self) -> Iterator[Any]:
        problem, fix = self._PROBLEMS[self.problem]
        yield "File", self.file
        yield (
            "Field",
            self.field,
            Bilingual(
                "every row: a Parquet file's columns are fixed by its schema",
                "mọi hàng: các cột của file Parquet do schema của nó quy định",
            ),
        )
        yield _H.PROBLEM, problem
        yield Bilingual("Columns of the file", "Các cột của file"), *_bullets(self.columns)
        yield _H.FIX, fix
