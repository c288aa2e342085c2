"""MintDim's error hierarchy: every error a user can meet, in English and Vietnamese.

Each error keeps the facts of the failure as attributes (``err.file``, ``err.line``,
``err.field`` ...) and renders them through an English and a Vietnamese text that follow
the error catalogue of the spec (section "message errors"): a first line ``ErrorName:``,
one sentence, then blank-line separated ``Header:`` sections. Facts the catalogue does
not show go in extra sections after the catalogue's own ones.

``str(err)`` is the text in the current language: the one given to :func:`set_language`,
else the environment variable ``MINTDIM_LANG`` (read at call time), else English.
``err.message("en")`` and ``err.message("vi")`` give one language explicitly.

Errors are raised in worker processes and re-raised in the parent, so every error
pickles: the base class rebuilds it from its constructor keywords.
"""

from __future__ import annotations

import errno
import json
import os
import signal
from collections.abc import Iterable
from typing import Any, ClassVar

from mintdim.shared.lang import LANGUAGES, get_language, set_language
from mintdim.shared.lang import check_language as _check_language

__all__ = [
    "LANGUAGES",
    "BuildInterruptedError",
    "ConfigValueError",
    "DemoFileError",
    "FieldMappingError",
    "FieldValueTypeError",
    "MintDimError",
    "MintDimFileNotFoundError",
    "OutputConflictError",
    "OutputMappingError",
    "OutputValidationError",
    "PipelineValidationError",
    "RunOptionError",
    "SampleSchemaError",
    "SamplesPerShardError",
    "SourceParseError",
    "SourceValidationError",
    "SweepOutputError",
    "TemplateFieldMismatchError",
    "TemplateMappingError",
    "TemplateSyntaxError",
    "TemplateTokenizerError",
    "TokenDTypeValidationError",
    "TokenizerEncodeError",
    "TokenizerLoadError",
    "TokenizerMappingError",
    "TokenizerSpecialTokenError",
    "TokenizerValidationError",
    "UnitMappingError",
    "UnitOverflowError",
    "UnitValidationError",
    "UnknownConfigKeyError",
    "UnknownPipelineError",
    "WorkerError",
    "error_classes",
    "format_location",
    "get_language",
    "set_language",
]


def format_location(file: str, line: int) -> str:
    """Return ``file:line`` with the path exactly as the user declared it."""
    return f"{file}:{line}"


# ---------------------------------------------------------------------------
# Rendering helpers
# ---------------------------------------------------------------------------


def _section(header: str, *lines: object) -> str:
    """One headed section: ``Header:`` then one line per item."""
    return "\n".join([f"{header}:", *(str(line) for line in lines)])


def _bullets(items: Iterable[object]) -> list[str]:
    return [f"- {item}" for item in items]


def _compose(name: str, sentence: str | None, *blocks: str | None) -> str:
    """``Name:``, the sentence on the next line, then blocks separated by blank lines.

    Without a sentence the first block follows the name line directly, as in the
    catalogue's TemplateFieldMismatchError.
    """
    parts = [block for block in blocks if block]
    first = sentence if sentence is not None else parts.pop(0)
    return "\n\n".join([f"{name}:\n{first}", *parts])


def _quoted(text: str) -> str:
    """A template or literal as a JSON-style quoted string, escapes shown (``"\\n"``)."""
    return json.dumps(text, ensure_ascii=False)


def _show(value: object) -> str:
    """A user value for a message: its repr, plus its type when that is not obvious."""
    text = repr(value)
    if isinstance(value, bool) or not isinstance(value, int | list | tuple | type(None)):
        text += f" ({type(value).__name__})"
    return text


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _received_en(file_count: int, got: int, singular: str, plural: str) -> str:
    files = _plural(file_count, "input file", "input files")
    return f"Received {files} but {_plural(got, singular, plural)}"


def _received_vi(file_count: int, got: int, noun: str) -> str:
    # "chỉ có" means "only has": right when there are too few entries, wrong when too many.
    has = "chỉ có" if got < file_count else "có"
    return f"Nhận {file_count} file đầu vào nhưng {has} {got} {noun}"


def _check_code(kind: str, code: object, valid: Iterable[str]) -> None:
    valid = tuple(valid)
    if code not in valid:
        names = ", ".join(repr(name) for name in valid)
        raise ValueError(f"unknown {kind} {code!r}; valid codes: {names}")


def _rebuild(cls: type[MintDimError], kwargs: dict[str, Any]) -> MintDimError:
    """Unpickle helper: call the constructor again with the stored keywords."""
    return cls(**kwargs)


# ---------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------


class MintDimError(Exception):
    """Base of every MintDim error: structured facts rendered in English and Vietnamese.

    Subclasses pass their constructor keywords to ``MintDimError.__init__``; each keyword
    becomes an attribute and is kept for pickling. A subclass renders its text in
    ``_render(lang)``.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._init_kwargs = dict(kwargs)
        for name, value in kwargs.items():
            setattr(self, name, value)
        super().__init__(*self._exception_args())

    def _exception_args(self) -> tuple[object, ...]:
        """``args`` for the builtin base: the English text, so nothing is lost."""
        return (self.message("en"),)

    def _render(self, lang: str) -> str:
        raise NotImplementedError(f"{type(self).__name__} does not define _render")

    def message(self, lang: str | None = None) -> str:
        """The full text in ``lang`` ("en" or "vi"); ``None`` means :func:`get_language`."""
        return self._render(get_language() if lang is None else _check_language(lang))

    def __str__(self) -> str:
        return self.message()

    def __repr__(self) -> str:
        arguments = ", ".join(f"{key}={value!r}" for key, value in self._init_kwargs.items())
        return f"{type(self).__name__}({arguments})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild from the constructor keywords, then restore attributes computed at
        # construction (such as ``cwd``) so the parent sees what the worker saw.
        return (_rebuild, (type(self), self._init_kwargs), dict(self.__dict__))


# ---------------------------------------------------------------------------
# Catalogue errors (spec, "message errors")
# ---------------------------------------------------------------------------


class PipelineValidationError(MintDimError, ValueError):
    """Raised by run() when required settings were never declared; lists every one."""

    missing: list[str]

    def __init__(self, *, missing: list[str]) -> None:
        super().__init__(missing=list(missing))

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "PipelineValidationError",
                "Pipeline configuration is incomplete.",
                _section("Missing", *_bullets(self.missing)),
            )
        return _compose(
            "PipelineValidationError",
            "Pipeline chưa được cấu hình đầy đủ.",
            _section("Thiếu", *_bullets(self.missing)),
        )


class MintDimFileNotFoundError(MintDimError, FileNotFoundError):
    """Raised when a declared source or tokenizer file does not exist.

    ``cwd`` is the working directory at construction, from which relative paths resolve.
    ``errno`` is ``ENOENT`` and ``filename`` is the declared path, as for any
    ``FileNotFoundError``.
    """

    context: str
    path: str
    cwd: str

    def __init__(self, *, context: str, path: str) -> None:
        self.cwd = os.getcwd()
        super().__init__(context=context, path=path)

    def _exception_args(self) -> tuple[object, ...]:
        return (errno.ENOENT, os.strerror(errno.ENOENT), self.path)

    def _render(self, lang: str) -> str:
        expanded = os.path.expanduser(self.path)
        relative = not os.path.isabs(expanded)
        resolved = os.path.normpath(os.path.join(self.cwd, expanded))
        if lang == "en":
            if relative:
                fix = _section(
                    "Fix",
                    f"relative paths are resolved from the current working directory: {self.cwd}",
                    f"looked for: {resolved}",
                    "check the path, or run from the directory the path is relative to",
                )
            else:
                fix = _section(
                    "Fix",
                    *([f"looked for: {resolved}"] if expanded != self.path else []),
                    "check that the file exists at this absolute path",
                )
            return _compose(
                "MintDimFileNotFoundError",
                "Required file was not found.",
                _section("Context", self.context),
                _section("Missing file", self.path),
                fix,
            )
        if relative:
            fix = _section(
                "Cách sửa",
                f"đường dẫn tương đối được tính từ thư mục làm việc hiện tại: {self.cwd}",
                f"đã tìm tại: {resolved}",
                "kiểm tra lại đường dẫn, hoặc chạy lệnh từ đúng thư mục mà đường dẫn này dựa vào",
            )
        else:
            fix = _section(
                "Cách sửa",
                *([f"đã tìm tại: {resolved}"] if expanded != self.path else []),
                "kiểm tra file có tồn tại ở đường dẫn tuyệt đối này không",
            )
        return _compose(
            "MintDimFileNotFoundError",
            "Không tìm thấy file cần dùng.",
            _section("Context", self.context),
            _section("File thiếu", self.path),
            fix,
        )


class SourceParseError(MintDimError, ValueError):
    """Raised when a JSONL line is not valid JSON, not UTF-8, or not a JSON object."""

    file: str
    line: int
    reason: str
    detail: str

    _REASONS: ClassVar[dict[str, tuple[str, str]]] = {
        "invalid_json": ("invalid JSON syntax", "JSON không hợp lệ"),
        "invalid_utf8": ("bytes are not valid UTF-8", "byte không phải UTF-8 hợp lệ"),
        "not_object": ("JSON value is not an object", "giá trị JSON không phải object"),
    }

    def __init__(self, *, file: str, line: int, reason: str, detail: str = "") -> None:
        _check_code("reason", reason, self._REASONS)
        super().__init__(file=file, line=line, reason=reason, detail=detail)

    def _reason_lines(self, lang: str) -> list[str]:
        en, vi = self._REASONS[self.reason]
        lines = [en if lang == "en" else vi]
        if self.detail:
            if self.reason == "not_object":
                lines.append(f"{'found' if lang == 'en' else 'tìm thấy'}: {self.detail}")
            else:
                lines.append(self.detail)
        return lines

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "SourceParseError",
                "JSONL line could not be parsed.",
                _section("File", self.file),
                _section("Line", self.line),
                _section("Reason", *self._reason_lines(lang)),
                _section(
                    "Fix",
                    "each line must be one JSON object encoded as UTF-8; "
                    f"fix or remove line {self.line}",
                ),
            )
        return _compose(
            "SourceParseError",
            "Không đọc được dòng JSONL.",
            _section("File", self.file),
            _section("Dòng", self.line),
            _section("Lý do", *self._reason_lines(lang)),
            _section(
                "Cách sửa",
                f"mỗi dòng phải là một JSON object mã hóa UTF-8; hãy sửa hoặc xóa dòng {self.line}",
            ),
        )


class SampleSchemaError(MintDimError, ValueError):
    """Raised when a JSONL sample lacks fields declared in ``fields[i]``."""

    file: str
    line: int
    declared_fields: list[str]
    missing_fields: list[str]
    available_keys: list[str]

    def __init__(
        self,
        *,
        file: str,
        line: int,
        declared_fields: list[str],
        missing_fields: list[str],
        available_keys: list[str],
    ) -> None:
        super().__init__(
            file=file,
            line=line,
            declared_fields=list(declared_fields),
            missing_fields=list(missing_fields),
            available_keys=list(available_keys),
        )

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "SampleSchemaError",
                "JSONL sample is missing declared fields.",
                _section("File", self.file),
                _section("Line", self.line),
                _section("Declared fields", *self.declared_fields),
                _section("Missing fields", *self.missing_fields),
                _section("Available keys", *self.available_keys),
            )
        return _compose(
            "SampleSchemaError",
            "Sample JSONL thiếu fields đã khai báo.",
            _section("File", self.file),
            _section("Dòng", self.line),
            _section("Fields đã khai báo", *self.declared_fields),
            _section("Fields bị thiếu", *self.missing_fields),
            _section("Keys hiện có", *self.available_keys),
        )


class TokenizerValidationError(MintDimError, ValueError):
    """Raised when a tokenizer config is malformed or its file format is unsupported.

    Create it with :meth:`config` (structural config problem) or
    :meth:`unsupported_format` (file extension does not match the method). Attributes:
    ``component`` ("config" or "format"), ``problem``, ``index``, ``path``, ``method``,
    ``got``.
    """

    component: str
    problem: str
    index: int
    path: str | None
    method: str | None
    got: object

    _CONFIG_PROBLEMS = ("not_dict", "missing_path", "path_not_string", "unknown_keys")
    _METHODS: ClassVar[dict[str, str]] = {"sentencepiece": ".model", "hf_json": ".json"}
    _RULES_EN = (
        "config must be a dict with key: path",
        "path must be a string",
        "unk_id and pad_id are loaded from the tokenizer library",
    )
    _RULES_VI = (
        "config phải là dict có key: path",
        "path phải là string",
        "unk_id và pad_id được lấy từ thư viện tokenizer",
    )

    def __init__(
        self,
        *,
        component: str,
        problem: str,
        index: int,
        path: str | None = None,
        method: str | None = None,
        got: object = None,
    ) -> None:
        _check_code("component", component, ("config", "format"))
        if component == "config":
            _check_code("tokenizer config problem", problem, self._CONFIG_PROBLEMS)
        else:
            _check_code("tokenizer format problem", problem, ("unsupported_format",))
            _check_code("tokenizer method", method, self._METHODS)
        super().__init__(
            component=component, problem=problem, index=index, path=path, method=method, got=got
        )

    @classmethod
    def config(cls, *, index: int, problem: str, got: object = None) -> TokenizerValidationError:
        """A structural problem in tokenizer config ``index``.

        ``problem``: "not_dict" (got = type name), "missing_path", "path_not_string"
        (got = type name) or "unknown_keys" (got = sorted list of key names).
        """
        return cls(component="config", problem=problem, index=index, got=got)

    @classmethod
    def unsupported_format(cls, *, index: int, path: str, method: str) -> TokenizerValidationError:
        """Tokenizer ``index`` at ``path`` is not a file ``method`` can load."""
        return cls(
            component="format", problem="unsupported_format", index=index, path=path, method=method
        )

    def _problem_text(self, lang: str) -> str:
        got = self.got
        if self.problem == "not_dict":
            if lang == "en":
                return f"tokenizer config must be a dict, got {got}."
            return f"config tokenizer phải là dict, hiện tại là {got}."
        if self.problem == "missing_path":
            if lang == "en":
                return "tokenizer config is missing the required key: path."
            return "config tokenizer thiếu key bắt buộc: path."
        if self.problem == "path_not_string":
            if lang == "en":
                return f"tokenizer config key path must be a string, got {got}."
            return f"key path trong config tokenizer phải là string, hiện tại là {got}."
        keys = list(got) if isinstance(got, list | tuple) else got
        special = isinstance(keys, list) and bool({"unk_id", "pad_id"} & set(keys))
        if lang == "en":
            tail = (
                "unk_id and pad_id are loaded from the tokenizer library."
                if special
                else "The only allowed key is path."
            )
            return f"tokenizer config has unknown keys: {keys!r}. {tail}"
        tail = (
            "unk_id và pad_id được lấy từ thư viện tokenizer."
            if special
            else "Key duy nhất được phép là path."
        )
        return f"config tokenizer có key không hợp lệ: {keys!r}. {tail}"

    def _method_lines(self, lang: str) -> list[str]:
        expected = self._METHODS[self.method]
        if lang == "en":
            lines = [f".tokenizer.{self.method} expects a {expected} file"]
        else:
            lines = [f".tokenizer.{self.method} cần file {expected}"]
        path = str(self.path).lower()
        for other, extension in self._METHODS.items():
            if other != self.method and path.endswith(extension):
                if lang == "en":
                    lines.append(f"for a {extension} file use .tokenizer.{other}")
                else:
                    lines.append(f"với file {extension} hãy dùng .tokenizer.{other}")
        return lines

    def _render(self, lang: str) -> str:
        name = "TokenizerValidationError"
        formats = _bullets(["sentencepiece (.model)", "huggingface tokenizer (.json)"])
        if self.component == "config":
            if lang == "en":
                return _compose(
                    name,
                    "Invalid tokenizer config.",
                    _section("Component", "config"),
                    _section("Problem", self._problem_text(lang)),
                    _section("Rules", *_bullets(self._RULES_EN)),
                    _section("Tokenizer index", self.index),
                )
            return _compose(
                name,
                "Cấu hình tokenizer không hợp lệ.",
                _section("Thành phần", "config"),
                _section("Vấn đề", self._problem_text(lang)),
                _section("Quy tắc", *_bullets(self._RULES_VI)),
                _section("Vị trí tokenizer", self.index),
            )
        if lang == "en":
            return _compose(
                name,
                "Unsupported tokenizer format.",
                _section("Supported formats", *formats),
                _section("File", self.path),
                _section("Method", *self._method_lines(lang)),
                _section("Tokenizer index", self.index),
            )
        return _compose(
            name,
            "Định dạng tokenizer chưa được hỗ trợ.",
            _section("Các định dạng hiện hỗ trợ", *formats),
            _section("File", self.path),
            _section("Phương thức", *self._method_lines(lang)),
            _section("Vị trí tokenizer", self.index),
        )


class TokenizerSpecialTokenError(MintDimError, ValueError):
    """Raised when the tokenizer library exposes no valid UNK or PAD id."""

    token: str
    path: str
    looked_for: str

    _WHY_EN: ClassVar[dict[str, str]] = {
        "unk_id": "UNK is used to count unknown tokens",
        "pad_id": "PAD fills every sample up to its unit size",
    }
    _WHY_VI: ClassVar[dict[str, str]] = {
        "unk_id": "UNK dùng để thống kê token không xác định",
        "pad_id": "PAD dùng để đệm mỗi mẫu cho đủ kích thước unit",
    }

    def __init__(self, *, token: str, path: str, looked_for: str) -> None:
        _check_code("special token", token, ("unk_id", "pad_id"))
        super().__init__(token=token, path=path, looked_for=looked_for)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "TokenizerSpecialTokenError",
                "Tokenizer library did not expose a required special token.",
                _section("Special token", self.token),
                _section("Tokenizer", self.path),
                _section("Looked for", self.looked_for),
                _section(
                    "Fix",
                    f"use a tokenizer that defines {self.token} ({self._WHY_EN[self.token]})",
                    "MintDim never modifies the tokenizer and does not accept a declared "
                    f"{self.token}",
                ),
            )
        return _compose(
            "TokenizerSpecialTokenError",
            "Thư viện tokenizer không cung cấp special token bắt buộc.",
            _section("Special token", self.token),
            _section("Tokenizer", self.path),
            _section("Đã tìm", self.looked_for),
            _section(
                "Cách sửa",
                f"dùng tokenizer có định nghĩa {self.token} ({self._WHY_VI[self.token]})",
                f"MintDim không bao giờ sửa tokenizer và không nhận {self.token} do người dùng "
                "khai báo",
            ),
        )


class _MappingError(MintDimError, ValueError):
    """A per-file list with neither 1 nor N entries; subclasses only name the list (catalogue 7-9, 12, 13)."""

    file_count: int
    got: int

    _NOUN_EN: ClassVar[tuple[str, str]]
    """Singular and plural noun of the English "Received ..." sentence."""
    _NOUN_VI: ClassVar[str]
    _SUPPORTS_EN: ClassVar[tuple[str, str]]
    _SUPPORTS_VI: ClassVar[tuple[str, str]]

    def __init__(self, *, file_count: int, got: int, **extra: object) -> None:
        super().__init__(file_count=file_count, got=got, **extra)

    def _extra_sections(self) -> tuple[str, ...]:
        return ()

    def _render(self, lang: str) -> str:
        name = type(self).__name__
        if lang == "en":
            return _compose(
                name,
                _received_en(self.file_count, self.got, *self._NOUN_EN) + ".",
                _section("MintDim supports", *(f"- {line}" for line in self._SUPPORTS_EN)),
                *self._extra_sections(),
            )
        return _compose(
            name,
            _received_vi(self.file_count, self.got, self._NOUN_VI) + ".",
            _section("MintDim hỗ trợ", *(f"- {line}" for line in self._SUPPORTS_VI)),
            *self._extra_sections(),
        )


class TokenizerMappingError(_MappingError):
    """Raised when the number of tokenizers is neither 1 nor the number of files."""

    _NOUN_EN = ("tokenizer", "tokenizers")
    _NOUN_VI = "tokenizer"
    _SUPPORTS_EN = ("1 tokenizer shared across all files", "N tokenizers for N files")
    _SUPPORTS_VI = ("1 tokenizer dùng chung cho tất cả file", "N tokenizer cho N file")


class FieldMappingError(_MappingError):
    """Raised when the number of field lists is neither 1 nor the number of files."""

    _NOUN_EN = ("field config", "field configs")
    _NOUN_VI = "cấu hình fields"
    _SUPPORTS_EN = ("1 field config shared across all files", "N field configs for N files")
    _SUPPORTS_VI = ("1 fields dùng chung cho tất cả file", "N fields cho N file")


class TemplateMappingError(_MappingError):
    """Raised when the number of templates is neither 1 nor the number of files."""

    _NOUN_EN = ("template", "templates")
    _NOUN_VI = "template"
    _SUPPORTS_EN = ("1 template shared across all files", "N templates for N files")
    _SUPPORTS_VI = ("1 template dùng chung cho tất cả file", "N template cho N file")


class TemplateFieldMismatchError(MintDimError, ValueError):
    """Raised when a template's placeholders and the declared fields are not the same set.

    ``problem`` is "not_declared" (the template uses ``{field}`` but fields lacks it) or
    "not_used" (fields declares it but the template does not use it).
    """

    file: str
    fields: list[str]
    template: str
    field: str
    problem: str

    def __init__(
        self, *, file: str, fields: list[str], template: str, field: str, problem: str
    ) -> None:
        _check_code("template field problem", problem, ("not_declared", "not_used"))
        super().__init__(
            file=file, fields=list(fields), template=template, field=field, problem=problem
        )

    def _render(self, lang: str) -> str:
        declaration = (f"fields = {self.fields!r}", f"template = {_quoted(self.template)}")
        placeholder = "{" + self.field + "}"
        if lang == "en":
            if self.problem == "not_declared":
                reason = f"template uses {placeholder}, but fields does not declare it"
                fix = f"add {self.field!r} to fields, or remove {placeholder} from the template"
            else:
                reason = f"fields declares it, but the template does not use {placeholder}"
                fix = f"remove {self.field!r} from fields, or use {placeholder} in the template"
            # The catalogue puts "Reason:" right under the field name, without a blank line.
            return _compose(
                "TemplateFieldMismatchError",
                None,
                _section("Source file", self.file),
                _section("API declaration for this file", *declaration),
                _section("Field causing template mismatch", self.field, "Reason:", reason),
                _section("Fix", fix),
            )
        if self.problem == "not_declared":
            reason = f"template dùng {placeholder}, nhưng fields không khai báo field này"
            fix = f"thêm {self.field!r} vào fields, hoặc bỏ {placeholder} khỏi template"
        else:
            reason = f"fields khai báo field này, nhưng template không dùng {placeholder}"
            fix = f"bỏ {self.field!r} khỏi fields, hoặc dùng {placeholder} trong template"
        return _compose(
            "TemplateFieldMismatchError",
            None,
            _section("File nguồn", self.file),
            _section("Khai báo API cho file này", *declaration),
            _section("Field gây lệch template", self.field, "Lý do:", reason),
            _section("Cách sửa", fix),
        )


class TemplateTokenizerError(MintDimError, ValueError):
    """Raised before any data is read when a template's literal text encodes to UNK."""

    file_index: int
    template: str
    segment: str
    unk_count: int

    def __init__(self, *, file_index: int, template: str, segment: str, unk_count: int) -> None:
        super().__init__(
            file_index=file_index, template=template, segment=segment, unk_count=unk_count
        )

    def _segment_lines(self, lang: str) -> list[str]:
        lines = [_quoted(self.segment)]
        escaped = json.dumps(self.segment)
        if escaped != lines[0]:
            # Invisible or look-alike characters are a common cause; show their escapes.
            lines.append(f"{'escaped' if lang == 'en' else 'dạng escape'}: {escaped}")
        lines.append(f"{'UNK tokens' if lang == 'en' else 'Số token UNK'}: {self.unk_count}")
        return lines

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "TemplateTokenizerError",
                "Template static parts produce UNK when encoded by the tokenizer.",
                _section("File index", self.file_index),
                _section("Template", _quoted(self.template)),
                _section(
                    "Problem",
                    "template literal characters are not fully covered by tokenizer vocabulary",
                ),
                _section(
                    "Fix", "adjust template literal characters or use a tokenizer that covers them"
                ),
                _section("Literal segment", *self._segment_lines(lang)),
            )
        return _compose(
            "TemplateTokenizerError",
            "Phần literal của template tạo UNK khi tokenize.",
            _section("Vị trí file", self.file_index),
            _section("Template", _quoted(self.template)),
            _section("Vấn đề", "ký tự literal trong template không được tokenizer bao phủ"),
            _section("Cách sửa", "chỉnh ký tự literal hoặc dùng tokenizer bao phủ được"),
            _section("Đoạn literal", *self._segment_lines(lang)),
        )


class UnitMappingError(_MappingError):
    """Raised when units.sizes or units.build_batch has neither 1 nor N entries."""

    key: str

    _NOUN_EN = ("unit config", "unit configs")
    _NOUN_VI = "unit config"
    _SUPPORTS_EN = ("1 unit config shared across all files", "N unit configs for N input files")
    _SUPPORTS_VI = ("1 unit config dùng chung cho tất cả file", "N unit config cho N file")

    def __init__(self, *, file_count: int, got: int, key: str) -> None:
        _check_code("units key", key, ("sizes", "build_batch"))
        super().__init__(file_count=file_count, got=got, key=key)

    def _extra_sections(self) -> tuple[str, ...]:
        return (_section("Key", f"units.{self.key}"),)


class OutputMappingError(_MappingError):
    """Raised when the number of output directories is neither 1 nor the number of files."""

    _NOUN_EN = ("output directory", "output directories")
    _NOUN_VI = "thư mục output"
    _SUPPORTS_EN = ("1 shared output directory", "N output directories for N input files")
    _SUPPORTS_VI = ("1 output dùng chung", "N output cho N file")


class UnitValidationError(MintDimError, ValueError):
    """Raised when a units value breaks a rule; ``key`` is the full key, e.g. units.sizes[0][2].

    ``rule`` is "positive_int", "ascending", "non_empty", "list_of_lists" (sizes) or
    "list_of_ints" (build_batch).
    """

    key: str
    value: object
    rule: str

    _PROBLEMS: ClassVar[dict[str, tuple[str, str]]] = {
        "positive_int": ("must be a positive integer", "phải là số nguyên dương"),
        "ascending": ("must be sorted ascending", "phải tăng dần"),
        "non_empty": ("must not be empty", "không được rỗng"),
        "list_of_lists": (
            "must be a list of lists of integers",
            "phải là list các list số nguyên",
        ),
        "list_of_ints": (
            "must be a list of positive integers (one shared, or one per file)",
            "phải là list các số nguyên dương (một giá trị dùng chung, hoặc mỗi file một giá trị)",
        ),
    }

    def __init__(self, *, key: str, value: object, rule: str) -> None:
        _check_code("unit rule", rule, self._PROBLEMS)
        super().__init__(key=key, value=value, rule=rule)

    def _render(self, lang: str) -> str:
        en, vi = self._PROBLEMS[self.rule]
        if lang == "en":
            return _compose(
                "UnitValidationError",
                "Invalid unit config.",
                _section(
                    "Rules",
                    "- sizes must be positive integers",
                    "- sizes must be sorted ascending",
                    "- build_batch must be a positive integer",
                ),
                _section("Problem", f"{self.key} {en}, got {_show(self.value)}"),
            )
        return _compose(
            "UnitValidationError",
            "Unit config không hợp lệ.",
            _section(
                "Quy tắc",
                "- sizes phải là các số nguyên dương",
                "- sizes phải tăng dần",
                "- build_batch phải là số nguyên dương",
            ),
            _section("Vấn đề", f"{self.key} {vi}, hiện tại là {_show(self.value)}"),
        )


class UnitOverflowError(MintDimError, ValueError):
    """Raised when a sample has more tokens than the largest configured unit size."""

    file: str
    line: int
    token_count: int
    max_unit_size: int

    def __init__(self, *, file: str, line: int, token_count: int, max_unit_size: int) -> None:
        super().__init__(file=file, line=line, token_count=token_count, max_unit_size=max_unit_size)

    def _render(self, lang: str) -> str:
        numbers = (
            _section("token_count", self.token_count),
            _section("max_unit_size", self.max_unit_size),
        )
        location = format_location(self.file, self.line)
        if lang == "en":
            return _compose(
                "UnitOverflowError",
                "Sample token length exceeds max unit size.",
                _section("Sample", location),
                *numbers,
                "Increase unit sizes and run again.",
            )
        return _compose(
            "UnitOverflowError",
            "Độ dài token của mẫu vượt quá unit lớn nhất.",
            _section("Mẫu", location),
            *numbers,
            "Hãy tăng unit sizes rồi chạy lại.",
        )


class OutputValidationError(MintDimError, OSError):
    """Raised when the output directory cannot be used: not empty, a file, or not creatable.

    ``problem`` is "not_empty", "not_a_directory", "cannot_create" or "nested" (one output
    directory of the build lies inside another); ``detail`` (such as the OS error text) is shown
    under Reason when given.
    """

    directory: str
    problem: str
    detail: str

    _TEXTS: ClassVar[dict[str, tuple[str, str, str, str]]] = {
        # problem: (English sentence, English closing, Vietnamese sentence, Vietnamese closing)
        "not_empty": (
            "Output directory already exists and is not empty.",
            "Use a new output directory.",
            "Thư mục output đã tồn tại và không rỗng.",
            "Hãy dùng thư mục output mới.",
        ),
        "not_a_directory": (
            "Output path already exists and is not a directory.",
            "Use a new output directory.",
            "Đường dẫn output đã tồn tại và không phải thư mục.",
            "Hãy dùng thư mục output mới.",
        ),
        "cannot_create": (
            "Output directory could not be created.",
            "Check the path and its permissions, or use another output directory.",
            "Không tạo được thư mục output.",
            "Hãy kiểm tra đường dẫn và quyền ghi, hoặc dùng thư mục output khác.",
        ),
        "nested": (
            "Output directory lies inside another output directory of this build.",
            "Use output directories that do not contain one another.",
            "Thư mục output nằm bên trong một thư mục output khác của lần build này.",
            "Hãy dùng các thư mục output không chứa nhau.",
        ),
    }

    def __init__(self, *, directory: str, problem: str = "not_empty", detail: str = "") -> None:
        _check_code("output problem", problem, self._TEXTS)
        super().__init__(directory=directory, problem=problem, detail=detail)

    def _render(self, lang: str) -> str:
        sentence_en, closing_en, sentence_vi, closing_vi = self._TEXTS[self.problem]
        if lang == "en":
            return _compose(
                "OutputValidationError",
                sentence_en,
                _section("Directory", self.directory),
                _section("Reason", self.detail) if self.detail else None,
                closing_en,
            )
        return _compose(
            "OutputValidationError",
            sentence_vi,
            _section("Thư mục", self.directory),
            _section("Lý do", self.detail) if self.detail else None,
            closing_vi,
        )


class TokenDTypeValidationError(MintDimError, ValueError):
    """Raised when the tokenizer's vocabulary does not fit uint32 token storage."""

    vocab_size: int
    path: str

    def __init__(self, *, vocab_size: int, path: str) -> None:
        super().__init__(vocab_size=vocab_size, path=path)

    def _render(self, lang: str) -> str:
        dtypes = ("- uint16", "- uint32")
        if lang == "en":
            return _compose(
                "TokenDTypeValidationError",
                "Tokenizer vocabulary is too large for supported token dtypes.",
                _section("Supported dtypes", *dtypes),
                _section("Vocabulary size", self.vocab_size),
                _section("Tokenizer", self.path),
                _section(
                    "Fix",
                    "uint32 stores vocabularies of up to 4294967295 tokens; "
                    "use a tokenizer with a smaller vocabulary",
                ),
            )
        return _compose(
            "TokenDTypeValidationError",
            "Vocab của tokenizer quá lớn so với dtype token được hỗ trợ.",
            _section("Các dtype hiện hỗ trợ", *dtypes),
            _section("Kích thước vocab", self.vocab_size),
            _section("Tokenizer", self.path),
            _section(
                "Cách sửa",
                "uint32 chứa được vocab tối đa 4294967295 token; "
                "hãy dùng tokenizer có vocab nhỏ hơn",
            ),
        )


class SamplesPerShardError(MintDimError, ValueError):
    """Raised when output.samples_per_shard has a bad value or a bad number of entries.

    Create it with :meth:`not_positive` or :meth:`arity`. Attributes: ``problem``
    ("not_positive" or "arity"), ``index``, ``value``, ``file_count``, ``got``.
    """

    problem: str
    index: int | None
    value: object
    file_count: int | None
    got: int | None

    _RULES_EN = (
        "- each samples_per_shard[i] is a positive int",
        "- len(samples_per_shard) == 1 or len(samples_per_shard) == file_count",
    )
    _RULES_VI = (
        "- mỗi samples_per_shard[i] phải là số nguyên dương",
        "- len(samples_per_shard) == 1 hoặc len(samples_per_shard) == số file",
    )

    def __init__(
        self,
        *,
        problem: str,
        index: int | None = None,
        value: object = None,
        file_count: int | None = None,
        got: int | None = None,
    ) -> None:
        _check_code("samples_per_shard problem", problem, ("not_positive", "arity"))
        super().__init__(problem=problem, index=index, value=value, file_count=file_count, got=got)

    @classmethod
    def not_positive(cls, *, index: int, value: object) -> SamplesPerShardError:
        """``samples_per_shard[index]`` is not a positive int."""
        return cls(problem="not_positive", index=index, value=value)

    @classmethod
    def arity(cls, *, file_count: int, got: int) -> SamplesPerShardError:
        """``samples_per_shard`` has ``got`` entries for ``file_count`` files."""
        return cls(problem="arity", file_count=file_count, got=got)

    def _render(self, lang: str) -> str:
        if lang == "en":
            if self.problem == "not_positive":
                problem = (
                    f"samples_per_shard[{self.index}] must be a positive int, "
                    f"got {_show(self.value)}"
                )
            else:
                problem = _received_en(
                    self.file_count,
                    self.got,
                    "samples_per_shard entry",
                    "samples_per_shard entries",
                )
            return _compose(
                "SamplesPerShardError",
                "Invalid samples_per_shard.",
                _section("Problem", problem),
                _section("Rules", *self._RULES_EN),
            )
        if self.problem == "not_positive":
            problem = (
                f"samples_per_shard[{self.index}] phải là số nguyên dương, "
                f"hiện tại là {_show(self.value)}"
            )
        else:
            problem = _received_vi(self.file_count, self.got, "samples_per_shard")
        return _compose(
            "SamplesPerShardError",
            "samples_per_shard không hợp lệ.",
            _section("Vấn đề", problem),
            _section("Quy tắc", *self._RULES_VI),
        )


# ---------------------------------------------------------------------------
# Errors beyond the catalogue (same layout: Name:, sentence, headed sections)
# ---------------------------------------------------------------------------


class TemplateSyntaxError(MintDimError, ValueError):
    """Raised when a template has an unbalanced brace or an empty or nested placeholder.

    ``position`` is the 0-based index of the offending character in ``template``.
    ``problem`` is "unmatched_open", "unmatched_close", "empty_placeholder" or
    "nested_brace".
    """

    file_index: int
    template: str
    position: int
    problem: str

    _PROBLEMS: ClassVar[dict[str, tuple[str, str, str, str]]] = {
        # problem: (English problem, English fix, Vietnamese problem, Vietnamese fix)
        "unmatched_open": (
            "'{{' at position {p} has no closing '}}'",
            "close the placeholder with '}}', or write '{{{{' for a literal '{{'",
            "'{{' ở vị trí {p} không có '}}' đóng",
            "đóng placeholder bằng '}}', hoặc viết '{{{{' để có ký tự '{{'",
        ),
        "unmatched_close": (
            "'}}' at position {p} closes no placeholder",
            "remove it, or write '}}}}' for a literal '}}'",
            "'}}' ở vị trí {p} không đóng placeholder nào",
            "xóa ký tự này, hoặc viết '}}}}' để có ký tự '}}'",
        ),
        "empty_placeholder": (
            "'{{}}' at position {p} is a placeholder without a field name",
            "write a field name inside the braces, or '{{{{}}}}' for literal braces",
            "'{{}}' ở vị trí {p} là placeholder không có tên field",
            "viết tên field vào trong cặp ngoặc, hoặc '{{{{}}}}' để có ngoặc nhọn literal",
        ),
        "nested_brace": (
            "'{{' at position {p} is inside another placeholder",
            "close the previous placeholder first; placeholders cannot be nested",
            "'{{' ở vị trí {p} nằm bên trong một placeholder khác",
            "đóng placeholder trước đó; placeholder không được lồng nhau",
        ),
    }

    def __init__(self, *, file_index: int, template: str, position: int, problem: str) -> None:
        _check_code("template syntax problem", problem, self._PROBLEMS)
        super().__init__(
            file_index=file_index, template=template, position=position, problem=problem
        )

    def _pointer(self) -> tuple[str, str]:
        """The quoted template and a caret line under the offending character."""
        quoted = _quoted(self.template)
        column = len(_quoted(self.template[: self.position])) - 1
        return quoted, " " * column + "^"

    def _render(self, lang: str) -> str:
        problem_en, fix_en, problem_vi, fix_vi = (
            text.format(p=self.position) for text in self._PROBLEMS[self.problem]
        )
        if lang == "en":
            return _compose(
                "TemplateSyntaxError",
                "Template has invalid brace syntax.",
                _section("File index", self.file_index),
                _section("Template", _quoted(self.template)),
                _section("Position", self.position, *self._pointer()),
                _section("Problem", problem_en),
                _section(
                    "Rules",
                    "- {name} is a placeholder for the field name",
                    "- {{ and }} are literal braces",
                    "- any other brace is an error",
                ),
                _section("Fix", fix_en),
            )
        return _compose(
            "TemplateSyntaxError",
            "Template có dấu ngoặc nhọn sai cú pháp.",
            _section("Vị trí file", self.file_index),
            _section("Template", _quoted(self.template)),
            _section("Vị trí ký tự", self.position, *self._pointer()),
            _section("Vấn đề", problem_vi),
            _section(
                "Quy tắc",
                "- {name} là placeholder cho field name",
                "- {{ và }} là ngoặc nhọn literal",
                "- mọi dấu ngoặc nhọn khác đều là lỗi",
            ),
            _section("Cách sửa", fix_vi),
        )


class FieldValueTypeError(MintDimError, ValueError):
    """Raised when a declared field's value in a JSONL line is not a JSON string."""

    file: str
    line: int
    field: str
    found_type: str

    def __init__(self, *, file: str, line: int, field: str, found_type: str) -> None:
        super().__init__(file=file, line=line, field=field, found_type=found_type)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "FieldValueTypeError",
                "JSONL field value is not a string.",
                _section("File", self.file),
                _section("Line", self.line),
                _section("Field", self.field),
                _section("Found type", self.found_type),
                _section(
                    "Fix",
                    "convert the value to a JSON string in the JSONL file, or choose another field",
                ),
            )
        return _compose(
            "FieldValueTypeError",
            "Giá trị field trong JSONL không phải string.",
            _section("File", self.file),
            _section("Dòng", self.line),
            _section("Field", self.field),
            _section("Kiểu tìm thấy", self.found_type),
            _section(
                "Cách sửa",
                "chuyển giá trị thành string JSON trong file JSONL, hoặc chọn field khác",
            ),
        )


class TokenizerLoadError(MintDimError, ValueError):
    """Raised when the tokenizer library cannot load the file (corrupt or not a tokenizer)."""

    path: str
    method: str
    detail: str

    _FIX: ClassVar[dict[str, tuple[str, str]]] = {
        "sentencepiece": (
            "check that the file is a complete SentencePiece model (.model) "
            "that sentencepiece can load",
            "kiểm tra file là model SentencePiece (.model) đầy đủ mà sentencepiece đọc được",
        ),
        "hf_json": (
            "check that the file is a complete Hugging Face tokenizer.json "
            "that tokenizers.Tokenizer.from_file can load",
            "kiểm tra file là tokenizer.json Hugging Face đầy đủ mà "
            "tokenizers.Tokenizer.from_file đọc được",
        ),
    }

    def __init__(self, *, path: str, method: str, detail: str) -> None:
        _check_code("tokenizer method", method, self._FIX)
        super().__init__(path=path, method=method, detail=detail)

    def _render(self, lang: str) -> str:
        fix_en, fix_vi = self._FIX[self.method]
        if lang == "en":
            return _compose(
                "TokenizerLoadError",
                "Tokenizer library could not load the tokenizer file.",
                _section("Tokenizer", self.path),
                _section("Method", f".tokenizer.{self.method}"),
                _section("Library error", self.detail),
                _section("Fix", fix_en),
            )
        return _compose(
            "TokenizerLoadError",
            "Thư viện tokenizer không đọc được file tokenizer.",
            _section("Tokenizer", self.path),
            _section("Phương thức", f".tokenizer.{self.method}"),
            _section("Lỗi thư viện", self.detail),
            _section("Cách sửa", fix_vi),
        )


class TokenizerEncodeError(MintDimError, RuntimeError):
    """Raised when the tokenizer library fails while encoding one sample's rendered text."""

    file: str
    line: int
    path: str
    detail: str

    def __init__(self, *, file: str, line: int, path: str, detail: str) -> None:
        super().__init__(file=file, line=line, path=path, detail=detail)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "TokenizerEncodeError",
                "Tokenizer library failed to encode a sample.",
                _section("Sample", format_location(self.file, self.line)),
                _section("Tokenizer", self.path),
                _section("Library error", self.detail),
                _section(
                    "Fix",
                    "check this sample's text, or use a tokenizer that can encode it; "
                    "MintDim never skips or truncates a sample",
                ),
            )
        return _compose(
            "TokenizerEncodeError",
            "Thư viện tokenizer không tokenize được một mẫu.",
            _section("Mẫu", format_location(self.file, self.line)),
            _section("Tokenizer", self.path),
            _section("Lỗi thư viện", self.detail),
            _section(
                "Cách sửa",
                "kiểm tra nội dung mẫu này, hoặc dùng tokenizer tokenize được nó; "
                "MintDim không bao giờ bỏ qua hay cắt bớt mẫu",
            ),
        )


class UnknownPipelineError(MintDimError, ValueError):
    """Raised by ``pipeline(name)`` when no pipeline is registered under ``name``."""

    name: object
    registered: list[str]

    def __init__(self, *, name: object, registered: list[str]) -> None:
        super().__init__(name=name, registered=list(registered))

    def _render(self, lang: str) -> str:
        registered = _bullets(self.registered) if self.registered else ["- (none)"]
        example = (
            f"pipeline({_quoted(self.registered[0])})" if self.registered else "pipeline(name)"
        )
        if lang == "en":
            return _compose(
                "UnknownPipelineError",
                "No pipeline is registered under this name.",
                _section("Pipeline", repr(self.name)),
                _section("Registered pipelines", *registered),
                _section("Fix", f"call pipeline() with a registered name, e.g. {example}"),
            )
        registered = _bullets(self.registered) if self.registered else ["- (không có)"]
        return _compose(
            "UnknownPipelineError",
            "Không có pipeline nào được đăng ký với tên này.",
            _section("Pipeline", repr(self.name)),
            _section("Các pipeline đã đăng ký", *registered),
            _section("Cách sửa", f"gọi pipeline() với một tên đã đăng ký, ví dụ {example}"),
        )


class OutputConflictError(MintDimError, ValueError):
    """Raised when files sharing one output directory declare different settings.

    ``setting`` is "tokenizer", "units.sizes" or "output.samples_per_shard";
    ``values[i]`` (already formatted) is what ``files[i]`` declared.
    """

    directory: str
    setting: str
    values: list[str]
    files: list[str]

    def __init__(
        self, *, directory: str, setting: str, values: list[str], files: list[str]
    ) -> None:
        if len(values) != len(files):
            raise ValueError(
                f"values and files must have the same length, got {len(values)} and {len(files)}"
            )
        super().__init__(
            directory=directory, setting=setting, values=list(values), files=list(files)
        )

    def _render(self, lang: str) -> str:
        declarations = [
            f"{file} -> {value}" for file, value in zip(self.files, self.values, strict=True)
        ]
        if lang == "en":
            return _compose(
                "OutputConflictError",
                "Files that write to one output directory declare different settings.",
                _section("Directory", self.directory),
                _section("Setting", self.setting),
                _section("Declarations", *declarations),
                _section(
                    "Rules",
                    "- files sharing one output directory must use the same tokenizer file, "
                    "the same units.sizes and the same output.samples_per_shard",
                    "- build_batch, fields and templates may differ",
                ),
                _section(
                    "Fix",
                    f"declare one {self.setting} for these files, "
                    "or give each file its own output directory",
                ),
            )
        return _compose(
            "OutputConflictError",
            "Các file ghi vào cùng một thư mục output nhưng khai báo cấu hình khác nhau.",
            _section("Thư mục", self.directory),
            _section("Cấu hình", self.setting),
            _section("Khai báo", *declarations),
            _section(
                "Quy tắc",
                "- các file dùng chung một thư mục output phải dùng cùng file tokenizer, "
                "cùng units.sizes và cùng output.samples_per_shard",
                "- build_batch, fields và templates có thể khác nhau",
            ),
            _section(
                "Cách sửa",
                f"khai báo cùng một {self.setting} cho các file này, "
                "hoặc cho mỗi file một thư mục output riêng",
            ),
        )


class SourceValidationError(MintDimError, ValueError):
    """Raised when source.files, source.fields or source.templates is malformed.

    ``key`` is the full key (``source.fields[1]``); ``problem`` is "not_list" (got = type
    name), "empty", "not_string" (got = type name) or "duplicate_field" (got = the field).
    A key outside ``source`` (e.g. ``output.dir``) is rendered without the source rules.
    """

    key: str
    problem: str
    got: object

    _PROBLEMS: ClassVar[dict[str, tuple[str, str, str, str]]] = {
        # problem: (English problem, English fix, Vietnamese problem, Vietnamese fix)
        "not_list": (
            "{key} must be a list, got {got}",
            "pass {key} as a list",
            "{key} phải là list, hiện tại là {got}",
            "truyền {key} dưới dạng list",
        ),
        "empty": (
            "{key} must not be empty",
            "declare at least one entry in {key}",
            "{key} không được rỗng",
            "khai báo ít nhất một phần tử trong {key}",
        ),
        "not_string": (
            "{key} must be a string, got {got}",
            "write {key} as a string",
            "{key} phải là string, hiện tại là {got}",
            "viết {key} dưới dạng string",
        ),
        "duplicate_field": (
            "{key} declares field {got!r} more than once",
            "declare each field once in {key}",
            "{key} khai báo field {got!r} nhiều lần",
            "mỗi field chỉ khai báo một lần trong {key}",
        ),
    }

    def __init__(self, *, key: str, problem: str, got: object = None) -> None:
        _check_code("source problem", problem, self._PROBLEMS)
        super().__init__(key=key, problem=problem, got=got)

    def _render(self, lang: str) -> str:
        problem_en, fix_en, problem_vi, fix_vi = (
            text.format(key=self.key, got=self.got) for text in self._PROBLEMS[self.problem]
        )
        # The rules describe source.*; other keys (such as output.dir) get no Rules section
        # rather than rules that do not apply to them.
        is_source = self.key.startswith("source")
        if lang == "en":
            rules = _section(
                "Rules",
                "- files: list of path strings",
                "- fields: list of lists of field-name strings",
                "- templates: list of strings",
            )
            return _compose(
                "SourceValidationError",
                "Invalid source declaration." if is_source else "Invalid declaration.",
                _section("Key", self.key),
                _section("Problem", problem_en),
                rules if is_source else None,
                _section("Fix", fix_en),
            )
        rules = _section(
            "Quy tắc",
            "- files: list các đường dẫn dạng string",
            "- fields: list các list tên field dạng string",
            "- templates: list các string",
        )
        return _compose(
            "SourceValidationError",
            "Khai báo source không hợp lệ." if is_source else "Khai báo không hợp lệ.",
            _section("Key", self.key),
            _section("Vấn đề", problem_vi),
            rules if is_source else None,
            _section("Cách sửa", fix_vi),
        )


class RunOptionError(MintDimError, ValueError):
    """Raised when an option of ``run()`` has a bad value, e.g. ``workers=0``.

    ``rule`` is "positive_int" or "bool".
    """

    option: str
    value: object
    rule: str

    _RULES: ClassVar[dict[str, tuple[str, str]]] = {
        "positive_int": ("must be a positive integer", "phải là số nguyên dương"),
        "bool": ("must be True or False", "phải là True hoặc False"),
    }

    def __init__(self, *, option: str, value: object, rule: str) -> None:
        _check_code("run option rule", rule, self._RULES)
        super().__init__(option=option, value=value, rule=rule)

    def _render(self, lang: str) -> str:
        rule_en, rule_vi = self._RULES[self.rule]
        if lang == "en":
            return _compose(
                "RunOptionError",
                "Invalid run() option.",
                _section("Option", self.option),
                _section("Value", _show(self.value)),
                _section("Rule", f"{self.option} {rule_en}"),
            )
        return _compose(
            "RunOptionError",
            "Tùy chọn của run() không hợp lệ.",
            _section("Tùy chọn", self.option),
            _section("Giá trị", _show(self.value)),
            _section("Quy tắc", f"{self.option} {rule_vi}"),
        )


class WorkerError(MintDimError, RuntimeError):
    """Raised in the parent when a worker process died without a MintDim error.

    ``exitcode`` follows multiprocessing: negative means killed by that signal.
    """

    detail: str
    exitcode: int | None

    def __init__(self, *, detail: str, exitcode: int | None = None) -> None:
        super().__init__(detail=detail, exitcode=exitcode)

    def _exit_lines(self, lang: str) -> list[str]:
        if self.exitcode is None:
            return []
        text = str(self.exitcode)
        if self.exitcode < 0:
            try:
                name = signal.Signals(-self.exitcode).name
            except ValueError:
                name = f"signal {-self.exitcode}"
            text += f" ({'killed by' if lang == 'en' else 'bị dừng bởi'} {name})"
        return [text]

    def _render(self, lang: str) -> str:
        exit_lines = self._exit_lines(lang)
        if lang == "en":
            return _compose(
                "WorkerError",
                "A worker process stopped without reporting a MintDim error.",
                _section("Problem", self.detail),
                _section("Exit code", *exit_lines) if exit_lines else None,
                _section(
                    "Fix",
                    "check free memory: the operating system may have killed the worker",
                    "run again with workers=1 to see the error in this process",
                ),
            )
        return _compose(
            "WorkerError",
            "Một tiến trình worker đã dừng mà không báo lỗi MintDim.",
            _section("Vấn đề", self.detail),
            _section("Mã thoát", *exit_lines) if exit_lines else None,
            _section(
                "Cách sửa",
                "kiểm tra bộ nhớ còn trống: hệ điều hành có thể đã dừng worker",
                "chạy lại với workers=1 để thấy lỗi ngay trong tiến trình này",
            ),
        )


class BuildInterruptedError(MintDimError):
    """Raised when a build is stopped by Ctrl-C (SIGINT) or SIGTERM; nothing written is finished."""

    signal_name: str

    def __init__(self, *, signal_name: str = "SIGINT") -> None:
        super().__init__(signal_name=signal_name)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "BuildInterruptedError",
                "The build was stopped before it finished.",
                _section("Signal", self.signal_name),
                _section("Result", "the build did not finish; nothing written is a finished build"),
                _section("Fix", "run the build again into a new or empty output directory"),
            )
        return _compose(
            "BuildInterruptedError",
            "Build đã bị dừng trước khi hoàn tất.",
            _section("Tín hiệu", self.signal_name),
            _section(
                "Kết quả",
                "build chưa hoàn tất; các file đã ghi không phải là một build hoàn chỉnh",
            ),
            _section("Cách sửa", "chạy lại build vào một thư mục output mới hoặc rỗng"),
        )


# ---------------------------------------------------------------------------
# Command-line errors (python -m mintdim.run); exit codes are the runner's concern
# ---------------------------------------------------------------------------


class UnknownConfigKeyError(MintDimError, ValueError):
    """Raised by the command line when the config has a key the schema does not know.

    Hydra rejects ``key=value`` for an unknown key by itself; ``+key=value`` (or a key in the
    user's own YAML) gets past it, so the runner checks the composed config before any work.
    ``unknown`` maps each unknown dotted key to the valid keys of its parent node.
    """

    unknown: dict[str, list[str]]

    def __init__(self, *, unknown: dict[str, list[str]]) -> None:
        super().__init__(unknown={key: list(valid) for key, valid in unknown.items()})

    def _valid_lines(self, lang: str) -> list[str]:
        top = "(top level)" if lang == "en" else "(cấp ngoài cùng)"
        return [
            f"- {key.rpartition('.')[0] or top}: {', '.join(names)}"
            for key, names in self.unknown.items()
        ]

    def _render(self, lang: str) -> str:
        keys, valid = _bullets(self.unknown), self._valid_lines(lang)
        if lang == "en":
            return _compose(
                "UnknownConfigKeyError",
                "The config has keys MintDim does not know.",
                _section("Unknown keys", *keys) if keys else None,
                _section("Valid keys", *valid) if valid else None,
                _section(
                    "Fix",
                    "remove the key or correct its spelling (see: python -m mintdim.run --help)",
                ),
            )
        return _compose(
            "UnknownConfigKeyError",
            "Config có key mà MintDim không biết.",
            _section("Key không hợp lệ", *keys) if keys else None,
            _section("Key hợp lệ", *valid) if valid else None,
            _section(
                "Cách sửa",
                "xóa key hoặc sửa lại chính tả (xem: python -m mintdim.run --help)",
            ),
        )


class ConfigValueError(MintDimError, ValueError):
    """Raised by the command line when a config value cannot be read at all.

    For example an interpolation that fails or a value that is missing. ``key`` is the dotted
    key, ``detail`` OmegaConf's own explanation, ``expected`` an example of a valid value
    (empty when there is none).
    """

    key: str
    detail: str
    expected: str

    def __init__(self, *, key: str, detail: str, expected: str = "") -> None:
        super().__init__(key=key, detail=detail, expected=expected)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "ConfigValueError",
                "A config value could not be read.",
                _section("Key", self.key),
                _section("Reason", self.detail),
                _section("Expected", self.expected) if self.expected else None,
            )
        return _compose(
            "ConfigValueError",
            "Không đọc được một giá trị trong config.",
            _section("Key", self.key),
            _section("Lý do", self.detail),
            _section("Giá trị đúng", self.expected) if self.expected else None,
        )


class DemoFileError(MintDimError, FileNotFoundError):
    """Raised when ``${mintdim_demo:<name>}`` names a file that is not bundled with MintDim."""

    name: str
    available: list[str]

    def __init__(self, *, name: str, available: list[str]) -> None:
        super().__init__(name=name, available=list(available))

    def _render(self, lang: str) -> str:
        files = _bullets(self.available)
        if lang == "en":
            return _compose(
                "DemoFileError",
                "${mintdim_demo:...} names a file that is not bundled with MintDim.",
                _section("Name", self.name),
                _section("Bundled files", *files) if files else None,
            )
        return _compose(
            "DemoFileError",
            "${mintdim_demo:...} trỏ tới file không có sẵn trong MintDim.",
            _section("Tên", self.name),
            _section("Các file có sẵn", *files) if files else None,
        )


class SweepOutputError(MintDimError, FileExistsError):
    """Raised in a sweep (``-m``) when a job's output directory already exists.

    Every job of a sweep must write into a directory that it creates itself: an existing one
    was left by an earlier launch (a reused ``hydra.sweep.dir``) or is shared with another job
    (an ``output.dir`` that is the same for every job).
    """

    directory: str

    def __init__(self, *, directory: str) -> None:
        super().__init__(directory=directory)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _compose(
                "SweepOutputError",
                "A sweep job's output directory already exists.",
                _section("Directory", self.directory),
                _section(
                    "Rule",
                    "in a sweep (-m) every job writes into a new directory of its own",
                    "keep the default output (a directory inside each job's directory), "
                    "or give each job its own output.dir",
                ),
            )
        return _compose(
            "SweepOutputError",
            "Thư mục output của một job trong sweep đã tồn tại.",
            _section("Thư mục", self.directory),
            _section(
                "Quy tắc",
                "trong sweep (-m) mỗi job ghi vào một thư mục mới của riêng nó",
                "hãy giữ output mặc định (một thư mục nằm trong thư mục của từng job), "
                "hoặc cho mỗi job một output.dir riêng",
            ),
        )


_ERROR_CLASSES: tuple[type[MintDimError], ...] = (
    PipelineValidationError,
    MintDimFileNotFoundError,
    SourceParseError,
    SampleSchemaError,
    TokenizerValidationError,
    TokenizerSpecialTokenError,
    TokenizerMappingError,
    FieldMappingError,
    TemplateMappingError,
    TemplateFieldMismatchError,
    TemplateTokenizerError,
    UnitMappingError,
    OutputMappingError,
    UnitValidationError,
    UnitOverflowError,
    OutputValidationError,
    TokenDTypeValidationError,
    SamplesPerShardError,
    TemplateSyntaxError,
    FieldValueTypeError,
    TokenizerLoadError,
    TokenizerEncodeError,
    UnknownPipelineError,
    OutputConflictError,
    SourceValidationError,
    RunOptionError,
    WorkerError,
    BuildInterruptedError,
    UnknownConfigKeyError,
    ConfigValueError,
    DemoFileError,
    SweepOutputError,
)


def error_classes() -> tuple[type[MintDimError], ...]:
    """Every concrete MintDim error class, in catalogue order (the base class excluded)."""
    return _ERROR_CLASSES
