"""MintDim's errors: every error a user can meet, each declared once, in English and Vietnamese.

A message follows the error catalogue of the spec (section "message errors"): a first line
``ErrorName:``, one sentence, then blank-line separated ``Header:`` sections. Facts the catalogue
does not show go in extra sections after the catalogue's own ones. ``str(err)`` is the text in
the current language (:func:`get_language`); ``err.message("en")`` and ``err.message("vi")``
give one language explicitly.

How to add an error
-------------------
Subclass :class:`MintDimError` and the builtin a caller would catch, and declare three things::

    class SourceParseError(MintDimError, ValueError):
        '''Raised when a JSONL line is not valid JSON, not UTF-8, or not a JSON object.'''

        _REASONS = {"invalid_json": Bilingual("invalid JSON syntax", "JSON không hợp lệ"), ...}

        file: str                        # 1. the facts: annotated fields, a default makes
        line: int                        #    one optional, _choice() lists the valid codes
        reason: str = _choice(_REASONS)
        detail: str = ""

        summary = Bilingual("JSONL line could not be parsed.", "Không đọc được dòng JSONL.")

        def _sections(self):             # 2. the text: (header, *lines) blocks, both
            yield "File", self.file      #    languages side by side in each Bilingual
            yield _H.LINE, self.line
            ...

        examples = ({"file": "./data/alpaca.jsonl", "line": 18291, "reason": "invalid_json"},)

1. **Facts.** Annotated fields become the keyword-only constructor, the attributes
   (``err.file``), the repr and the pickled state: errors are raised in worker processes and
   re-raised in the parent. A ``list[...]`` fact is stored as a list of its own. ``_check()``
   may validate or complete facts after they are set.
2. **Text.** ``summary`` is the sentence under ``Name:`` (a property when it depends on the
   facts; ``None`` for none), and ``_sections()`` yields the blocks under it: ``(header,
   *lines)`` tuples, or a bare text for a closing sentence. A header or line is a
   :class:`~mintdim.shared.lang.Bilingual` filled in with the error's facts (``"{line}"``),
   ``_say(text, **more)`` for a text with computed fields, or a plain value shown as it is in
   both languages. Which blocks appear when is decided once, in ``_sections``; no text is
   written twice.
3. **Examples.** ``examples`` holds the facts of one or more representative instances. Defining
   the class registers it: :func:`error_classes` and ``__all__`` list it, and
   ``docs/error-catalogue.md`` renders its examples in both languages. Regenerate that file
   with ``make docs`` (``python -m mintdim.shared.catalogue > docs/error-catalogue.md``); a test
   fails while it differs from what the classes render.
"""

from __future__ import annotations

import errno
import inspect
import json
import os
import signal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from mintdim.shared.lang import LANGUAGES, Bilingual, check_language, get_language, set_language

_REGISTRY: list[type[MintDimError]] = []


def error_classes() -> tuple[type[MintDimError], ...]:
    """Every concrete MintDim error class, in catalogue order (the abstract bases excluded)."""
    return tuple(_REGISTRY)


def current_directory() -> str:
    """The working directory; when it was deleted, its former path and " (deleted)", never a crash."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        try:  # Linux keeps the deleted directory's path, marked " (deleted)"
            return os.readlink("/proc/self/cwd")
        except OSError:
            return f"{os.environ.get('PWD', '?')} (deleted)"


def format_location(file: str, line: int) -> str:
    """Return ``file:line`` with the path exactly as the user declared it."""
    return f"{file}:{line}"


# ---------------------------------------------------------------------------
# The declaration kit: facts, codes and texts
# ---------------------------------------------------------------------------

_REQUIRED: Any = object()
"""Default of a fact the constructor must be given."""


@dataclass(frozen=True)
class _Choice:
    """The default of a fact that is one of a closed set of codes (see :func:`_choice`)."""

    codes: tuple[str, ...]
    default: Any = _REQUIRED


def _choice(codes: Iterable[str], default: Any = _REQUIRED) -> Any:
    """Declare a fact whose value must be one of ``codes`` (e.g. the keys of a text table)."""
    return _Choice(tuple(codes), default)


@dataclass(frozen=True)
class _Fact:
    """What the constructor knows of one fact: its default, its valid codes, whether it is a list."""

    default: Any
    codes: tuple[str, ...] | None
    is_list: bool


@dataclass(frozen=True)
class _Said:
    """A text with fields of its own, e.g. one line per item of a list."""

    text: Bilingual | str
    fields: dict[str, Any] = field(default_factory=dict)


def _say(text: Bilingual | str, **fields: Any) -> _Said:
    """``text`` filled in with ``fields`` on top of the error's facts; a str is both languages."""
    return _Said(text, fields)


class _Noun(NamedTuple):
    """A counted noun: English singular and plural, and the Vietnamese word."""

    one: str
    many: str
    vi: str


_RECEIVED = Bilingual(
    "Received {file_count} {files} but {got} {noun_en}",
    "Nhận {file_count} file đầu vào nhưng {has} {got} {noun_vi}",
)


def _received(file_count: int, got: int, noun: _Noun) -> _Said:
    """The sentence for a per-file list of the wrong length: "Received 3 input files but 2 ..."."""
    return _say(
        _RECEIVED,
        file_count=file_count,
        got=got,
        files="input file" if file_count == 1 else "input files",
        noun_en=noun.one if got == 1 else noun.many,
        # "chỉ có" means "only has": right when there are too few entries, wrong when too many.
        has="chỉ có" if got < file_count else "có",
        noun_vi=noun.vi,
    )


def _bullets(items: Iterable[object]) -> list[str]:
    return [f"- {item}" for item in items]


def _quoted(text: str) -> str:
    """A template or literal as a JSON-style quoted string, escapes shown (``"\\n"``)."""
    return json.dumps(text, ensure_ascii=False)


def _show(value: object) -> str:
    """A user value for a message: its repr, plus its type when that is not obvious."""
    text = repr(value)
    if isinstance(value, bool) or not isinstance(value, int | list | tuple | type(None)):
        text += f" ({type(value).__name__})"
    return text


def _rebuild(cls: type[MintDimError], facts: dict[str, Any]) -> MintDimError:
    """Unpickle helper: call the constructor again with the stored facts."""
    return cls(**facts)


_COMPLETED_HEADER = Bilingual("Completed outputs", "Các output đã hoàn tất")
_COMPLETED_NOTE = Bilingual(
    "these finished before the error: each is a complete build with its manifest, left unmarked",
    "các output này đã xong trước khi lỗi xảy ra: mỗi cái là một bản build hoàn chỉnh có "
    "manifest, được giữ nguyên không đánh dấu",
)


class _H:
    """Headers several errors share."""

    FIX = Bilingual("Fix", "Cách sửa")
    PROBLEM = Bilingual("Problem", "Vấn đề")
    RULES = Bilingual("Rules", "Quy tắc")
    RULE = Bilingual("Rule", "Quy tắc")
    REASON = Bilingual("Reason", "Lý do")
    LINE = Bilingual("Line", "Dòng")
    SAMPLE = Bilingual("Sample", "Mẫu")
    DIRECTORY = Bilingual("Directory", "Thư mục")
    METHOD = Bilingual("Method", "Phương thức")
    FILE_INDEX = Bilingual("File index", "Vị trí file")
    TOKENIZER_INDEX = Bilingual("Tokenizer index", "Vị trí tokenizer")
    LIBRARY_ERROR = Bilingual("Library error", "Lỗi thư viện")


# ---------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------


class MintDimError(Exception):
    """Base of every MintDim error: declared facts rendered in English and Vietnamese."""

    summary: ClassVar[Bilingual | _Said | None] = None
    """The sentence under ``Name:``."""
    examples: ClassVar[tuple[dict[str, Any], ...]]
    """Facts of representative instances, rendered by the error catalogue."""
    _facts: ClassVar[dict[str, _Fact]] = {}

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        facts: dict[str, _Fact] = {}
        for klass in reversed(cls.__mro__):
            for name, annotation in inspect.get_annotations(klass).items():
                if name.startswith("_") or "ClassVar" in str(annotation):
                    continue
                value = klass.__dict__.get(name, _REQUIRED)
                codes = value.codes if isinstance(value, _Choice) else None
                default = value.default if isinstance(value, _Choice) else value
                facts[name] = _Fact(default, codes, str(annotation).startswith("list"))
        cls._facts = facts
        cls.__signature__ = inspect.Signature(
            [
                inspect.Parameter(
                    name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=inspect.Parameter.empty if fact.default is _REQUIRED else fact.default,
                )
                for name, fact in facts.items()
            ]
        )
        if not abstract:
            if not getattr(cls, "examples", ()):
                raise TypeError(f"{cls.__name__} declares no examples")
            _REGISTRY.append(cls)

    def __init__(self, **facts: Any) -> None:
        name = type(self).__name__
        unknown = sorted(facts.keys() - self._facts.keys())
        if unknown:
            raise TypeError(f"{name}() got unexpected keyword arguments: {', '.join(unknown)}")
        missing = [
            key
            for key, fact in self._facts.items()
            if fact.default is _REQUIRED and key not in facts
        ]
        if missing:
            raise TypeError(f"{name}() missing keyword arguments: {', '.join(missing)}")
        for key, fact in self._facts.items():
            value = facts.get(key, fact.default)
            if fact.codes is not None and value not in fact.codes:
                valid = ", ".join(repr(code) for code in fact.codes)
                raise ValueError(f"unknown {name}.{key} {value!r}; valid: {valid}")
            setattr(self, key, list(value) if fact.is_list and value is not None else value)
        self._check()
        super().__init__(*self._exception_args())

    def _check(self) -> None:
        """Validate or complete facts after they are set (the default: nothing to do)."""

    completed_outputs: ClassVar[tuple[str, ...]] = ()
    """Output directories of the same build that had completed before this error: finished,
    verified builds that were kept as they are (set by the build, shown in the message)."""

    def _exception_args(self) -> tuple[object, ...]:
        """``args`` for the builtin base: the English text, so nothing is lost."""
        return (self.message("en"),)

    def _sections(self) -> Iterator[Any]:
        """The blocks under the sentence: ``(header, *lines)`` tuples or bare texts."""
        return iter(())

    def facts(self) -> dict[str, Any]:
        """The facts of this error by name, as given to (or completed by) the constructor."""
        return {key: getattr(self, key) for key in self._facts}

    def message(self, lang: str | None = None) -> str:
        """The full text in ``lang`` ("en" or "vi"); ``None`` means :func:`get_language`."""
        lang = get_language() if lang is None else check_language(lang)
        blocks = [] if self.summary is None else [self._text(self.summary, lang)]
        for block in self._sections():
            if isinstance(block, tuple):
                header, *lines = block
                block = "\n".join(
                    [f"{self._text(header, lang)}:", *(self._text(line, lang) for line in lines)]
                )
            else:
                block = self._text(block, lang)
            blocks.append(block)
        if self.completed_outputs:
            blocks.append(
                "\n".join(
                    [
                        f"{self._text(_COMPLETED_HEADER, lang)}:",
                        *(f"- {path}" for path in self.completed_outputs),
                        self._text(_COMPLETED_NOTE, lang),
                    ]
                )
            )
        return "\n\n".join([f"{type(self).__name__}:\n{blocks[0]}", *blocks[1:]])

    def _text(self, piece: Any, lang: str) -> str:
        """One header, line or sentence in ``lang``."""
        if isinstance(piece, Bilingual):
            piece = _Said(piece)
        if not isinstance(piece, _Said):
            return str(piece)
        # A Bilingual field is filled in by Bilingual.render itself; a _Said one is rendered here.
        own = {
            key: self._text(value, lang) if isinstance(value, _Said) else value
            for key, value in piece.fields.items()
        }
        text = (
            piece.text if isinstance(piece.text, Bilingual) else Bilingual(piece.text, piece.text)
        )
        return text.render(lang, **{**self.facts(), **own})

    def __str__(self) -> str:
        return self.message()

    def __repr__(self) -> str:
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.facts().items())
        return f"{type(self).__name__}({arguments})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild from the facts, then restore anything else set on the instance (notes).
        return (_rebuild, (type(self), self.facts()), dict(self.__dict__))


# ---------------------------------------------------------------------------
# Catalogue errors (spec, "message errors"), in catalogue order
# ---------------------------------------------------------------------------


class PipelineValidationError(MintDimError, ValueError):
    """Raised by run() when required settings were never declared; lists every one."""

    missing: list[str]

    summary = Bilingual(
        "Pipeline configuration is incomplete.", "Pipeline chưa được cấu hình đầy đủ."
    )
    examples = ({"missing": ["units.build_batch", "output.samples_per_shard"]},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Missing", "Thiếu"), *_bullets(self.missing)


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
    """Raised when a JSONL line is not valid JSON, not valid UTF-8, or not a JSON object."""

    _REASONS: ClassVar[dict[str, Bilingual]] = {
        "invalid_json": Bilingual("invalid JSON syntax", "JSON không hợp lệ"),
        "invalid_utf8": Bilingual("bytes are not valid UTF-8", "byte không phải UTF-8 hợp lệ"),
        "not_object": Bilingual("JSON value is not an object", "giá trị JSON không phải object"),
    }

    file: str
    line: int
    reason: str = _choice(_REASONS)
    detail: str = ""

    summary = Bilingual("JSONL line could not be parsed.", "Không đọc được dòng JSONL.")
    examples = (
        {"file": "./data/alpaca.jsonl", "line": 18291, "reason": "invalid_json"},
        {"file": "./data/alpaca.jsonl", "line": 7, "reason": "not_object", "detail": "array"},
    )

    def _sections(self) -> Iterator[Any]:
        yield "File", self.file
        yield _H.LINE, self.line
        if not self.detail:
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


class TokenizerValidationError(MintDimError, ValueError):
    """Raised when a tokenizer config is malformed or its file format is unsupported.

    Create it with :meth:`config` (structural config problem) or :meth:`unsupported_format`
    (file extension does not match the method).
    """

    _SPECIAL = Bilingual(
        "unk_id and pad_id are loaded from the tokenizer library.",
        "unk_id và pad_id được lấy từ thư viện tokenizer.",
    )
    _OPTIONS = Bilingual(
        "The allowed keys are path, engine, encode, append_eos, pad_fallback and unk_fallback.",
        "Các key được phép: path, engine, encode, append_eos, pad_fallback và unk_fallback.",
    )
    _CONFIG_PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "not_dict": Bilingual(
            "tokenizer config must be a dict, got {got}.",
            "config tokenizer phải là dict, hiện tại là {got}.",
        ),
        "missing_path": Bilingual(
            "tokenizer config is missing the required key: path.",
            "config tokenizer thiếu key bắt buộc: path.",
        ),
        "path_not_string": Bilingual(
            "tokenizer config key path must be a string, got {got}.",
            "key path trong config tokenizer phải là string, hiện tại là {got}.",
        ),
        "unknown_keys": Bilingual(
            "tokenizer config has unknown keys: {got!r}. {tail}",
            "config tokenizer có key không hợp lệ: {got!r}. {tail}",
        ),
        "bad_option": Bilingual(
            "tokenizer config key {option} has an invalid value: {got!r}.",
            "key {option} trong config tokenizer có giá trị không hợp lệ: {got!r}.",
        ),
    }
    _METHODS: ClassVar[dict[str, str]] = {"sentencepiece": ".model", "hf_json": ".json"}

    component: str = _choice(("config", "format"))
    problem: str = _choice((*_CONFIG_PROBLEMS, "unsupported_format"))
    index: int
    path: str | None = None
    method: str | None = None
    got: object = None
    option: str | None = None

    examples = (
        {"component": "config", "problem": "unknown_keys", "index": 0, "got": ["pad_id"]},
        {
            "component": "config",
            "problem": "bad_option",
            "index": 0,
            "got": "turbo",
            "option": "engine",
        },
        {
            "component": "config",
            "problem": "bad_option",
            "index": 0,
            "got": "tokens",
            "option": "encode",
        },
        {
            "component": "format",
            "problem": "unsupported_format",
            "index": 0,
            "path": "./tokenizer/tokenizer.json",
            "method": "sentencepiece",
        },
    )

    def _check(self) -> None:
        is_config = self.problem in self._CONFIG_PROBLEMS
        if is_config != (self.component == "config"):
            raise ValueError(
                f"problem {self.problem!r} does not belong to component {self.component!r}"
            )
        if not is_config and self.method not in self._METHODS:
            raise ValueError(
                f"unknown tokenizer method {self.method!r}; valid: {', '.join(self._METHODS)}"
            )

    @classmethod
    def config(cls, *, index: int, problem: str, got: object = None) -> TokenizerValidationError:
        """A structural problem in tokenizer config ``index``.

        ``problem``: "not_dict" (got = type name), "missing_path", "path_not_string"
        (got = type name) or "unknown_keys" (got = sorted list of key names).
        """
        return cls(component="config", problem=problem, index=index, got=got)

    @classmethod
    def bad_option(cls, *, index: int, key: str, got: object) -> TokenizerValidationError:
        """Tokenizer config ``index`` gives option ``key`` a value it cannot take."""
        return cls(component="config", problem="bad_option", index=index, got=got, option=key)

    @classmethod
    def unsupported_format(cls, *, index: int, path: str, method: str) -> TokenizerValidationError:
        """Tokenizer ``index`` at ``path`` is not a file ``method`` can load."""
        return cls(
            component="format", problem="unsupported_format", index=index, path=path, method=method
        )

    @property
    def summary(self) -> Bilingual:
        if self.component == "config":
            return Bilingual("Invalid tokenizer config.", "Cấu hình tokenizer không hợp lệ.")
        return Bilingual("Unsupported tokenizer format.", "Định dạng tokenizer chưa được hỗ trợ.")

    def _sections(self) -> Iterator[Any]:
        if self.component == "config":
            yield Bilingual("Component", "Thành phần"), "config"
            special = isinstance(self.got, list) and bool({"unk_id", "pad_id"} & set(self.got))
            tail = self._SPECIAL if special else self._OPTIONS
            yield _H.PROBLEM, _say(self._CONFIG_PROBLEMS[self.problem], tail=tail)
            yield (
                _H.RULES,
                Bilingual(
                    "- config must be a dict with key: path\n- path must be a string\n"
                    "- unk_id and pad_id are loaded from the tokenizer library",
                    "- config phải là dict có key: path\n- path phải là string\n"
                    "- unk_id và pad_id được lấy từ thư viện tokenizer",
                ),
            )
        else:
            yield (
                Bilingual("Supported formats", "Các định dạng hiện hỗ trợ"),
                "- sentencepiece (.model)",
                "- huggingface tokenizer (.json)",
            )
            yield "File", self.path
            expects = _say(
                Bilingual(
                    ".tokenizer.{method} expects a {extension} file",
                    ".tokenizer.{method} cần file {extension}",
                ),
                extension=self._METHODS[self.method],
            )
            use_other = [
                _say(
                    Bilingual(
                        "for a {extension} file use .tokenizer.{other}",
                        "với file {extension} hãy dùng .tokenizer.{other}",
                    ),
                    extension=extension,
                    other=other,
                )
                for other, extension in self._METHODS.items()
                if other != self.method and str(self.path).lower().endswith(extension)
            ]
            yield _H.METHOD, expects, *use_other
        yield _H.TOKENIZER_INDEX, self.index
        if self.component == "config":
            yield (
                Bilingual("Options", "Tùy chọn"),
                Bilingual(
                    '- engine: "reference" (the default: the tokenizer\'s own library) or "fast" '
                    "(gigatoken, parity-checked against the reference while it runs)\n"
                    '- encode: "whole" or "segments" (stores segment spans)\n'
                    "- append_eos: true or false\n"
                    '- pad_fallback: "eos", "unk" or a token of the tokenizer, used only when '
                    "the library has no PAD\n"
                    '- unk_fallback: "eos", a token of the tokenizer, or "none", used only when '
                    "the library has no UNK",
                    '- engine: "reference" (mặc định: thư viện của chính tokenizer) hoặc "fast" '
                    "(gigatoken, được đối chiếu với engine tham chiếu trong lúc chạy)\n"
                    '- encode: "whole" hoặc "segments" (lưu span của segment)\n'
                    "- append_eos: true hoặc false\n"
                    '- pad_fallback: "eos", "unk" hoặc một token của tokenizer, chỉ dùng khi '
                    "thư viện không có PAD\n"
                    '- unk_fallback: "eos", một token của tokenizer, hoặc "none", chỉ dùng khi '
                    "thư viện không có UNK",
                ),
            )


class TokenizerSpecialTokenError(MintDimError, ValueError):
    """Raised when the tokenizer library exposes no valid UNK, PAD or (for ``append_eos``) EOS
    id, and no declared fallback provides one."""

    _WHY: ClassVar[dict[str, Bilingual]] = {
        "unk_id": Bilingual(
            "UNK is used to count unknown tokens", "UNK dùng để thống kê token không xác định"
        ),
        "pad_id": Bilingual(
            "PAD fills every sample up to its unit size",
            "PAD dùng để đệm mỗi mẫu cho đủ kích thước unit",
        ),
        "eos_id": Bilingual(
            "append_eos ends every sample with it", "append_eos thêm nó vào cuối mỗi mẫu"
        ),
    }
    _WAY_OUT: ClassVar[dict[str, Bilingual]] = {
        "unk_id": Bilingual(
            'or set unk_fallback: "eos", a token of this tokenizer, or "none" (a tokenizer that '
            "cannot produce UNK: the UNK tier is turned off)",
            'hoặc đặt unk_fallback: "eos", một token của tokenizer này, hoặc "none" (tokenizer '
            "không thể sinh UNK: tắt tầng UNK)",
        ),
        "pad_id": Bilingual(
            'or set pad_fallback: "eos", "unk" or a token of this tokenizer (used only because '
            "the library has no PAD)",
            'hoặc đặt pad_fallback: "eos", "unk" hoặc một token của tokenizer này (chỉ dùng vì '
            "thư viện không có PAD)",
        ),
        "eos_id": Bilingual(
            "or remove append_eos from the tokenizer config",
            "hoặc bỏ append_eos khỏi config tokenizer",
        ),
    }

    token: str = _choice(_WHY)
    path: str
    looked_for: str
    option: str | None = None
    """The option that needed the id or was to provide it (append_eos, pad_fallback ...)."""
    fallback: str | None = None
    """The declared fallback value that did not resolve, if any."""

    summary = Bilingual(
        "Tokenizer library did not expose a required special token.",
        "Thư viện tokenizer không cung cấp special token bắt buộc.",
    )
    examples = (
        {
            "token": "pad_id",
            "path": "./tokenizer/tokenizer.model",
            "looked_for": "sp.pad_id() returned -1",
        },
        {
            "token": "pad_id",
            "path": "./tokenizer/tokenizer.json",
            "looked_for": "padding.pad_id, then tokens [PAD] and <pad>",
            "option": "pad_fallback",
            "fallback": "<|pad|>",
        },
        {
            "token": "eos_id",
            "path": "./tokenizer/spiece.model",
            "looked_for": "sp.eos_id() returned -1",
            "option": "append_eos",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "Special token", self.token
        yield "Tokenizer", self.path
        yield Bilingual("Looked for", "Đã tìm"), self.looked_for
        if self.fallback is not None:
            yield (
                Bilingual("Fallback", "Fallback"),
                _say(
                    Bilingual(
                        "{option} {fallback!r} names nothing this tokenizer has",
                        "{option} {fallback!r} không trỏ tới thứ gì tokenizer này có",
                    )
                ),
            )
        yield (
            _H.FIX,
            _say(
                Bilingual(
                    "use a tokenizer that defines {token} ({why})",
                    "dùng tokenizer có định nghĩa {token} ({why})",
                ),
                why=self._WHY[self.token],
            ),
            self._WAY_OUT[self.token],
            Bilingual(
                "MintDim never modifies the tokenizer and does not accept a raw {token}",
                "MintDim không bao giờ sửa tokenizer và không nhận {token} dạng số do người dùng "
                "khai báo",
            ),
        )


class _PerFileList(NamedTuple):
    """How the catalogue names a per-file list and words its one-or-N rule."""

    noun: _Noun
    supports: Bilingual


_UNIT_CONFIGS = _PerFileList(
    _Noun("unit config", "unit configs", "unit config"),
    Bilingual(
        "- 1 unit config shared across all files\n- N unit configs for N input files",
        "- 1 unit config dùng chung cho tất cả file\n- N unit config cho N file",
    ),
)


class MappingError(MintDimError, ValueError, abstract=True):
    """A per-file list has neither 1 entry (shared) nor one entry per input file.

    ``key`` names the list ("source.fields", "units.sizes", ...). Constructing ``MappingError``
    gives the catalogue's class for that key (``FieldMappingError`` ...), so the message header
    and ``except FieldMappingError`` both keep working.
    """

    _LISTS: ClassVar[dict[str, _PerFileList]] = {
        "tokenizer": _PerFileList(
            _Noun("tokenizer", "tokenizers", "tokenizer"),
            Bilingual(
                "- 1 tokenizer shared across all files\n- N tokenizers for N files",
                "- 1 tokenizer dùng chung cho tất cả file\n- N tokenizer cho N file",
            ),
        ),
        "source.fields": _PerFileList(
            _Noun("field config", "field configs", "cấu hình fields"),
            Bilingual(
                "- 1 field config shared across all files\n- N field configs for N files",
                "- 1 fields dùng chung cho tất cả file\n- N fields cho N file",
            ),
        ),
        "source.templates": _PerFileList(
            _Noun("template", "templates", "template"),
            Bilingual(
                "- 1 template shared across all files\n- N templates for N files",
                "- 1 template dùng chung cho tất cả file\n- N template cho N file",
            ),
        ),
        "units.sizes": _UNIT_CONFIGS,
        "units.build_batch": _UNIT_CONFIGS,
        "output.dir": _PerFileList(
            _Noun("output directory", "output directories", "thư mục output"),
            Bilingual(
                "- 1 shared output directory\n- N output directories for N input files",
                "- 1 output dùng chung\n- N output cho N file",
            ),
        ),
    }
    _CLASS_FOR_KEY: ClassVar[dict[str, type[MappingError]]] = {}

    key: str = _choice(_LISTS)
    file_count: int
    got: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fact = cls._facts["key"]
        for key in fact.codes or (fact.default,):
            MappingError._CLASS_FOR_KEY[key] = cls

    def __new__(cls, **facts: Any) -> MappingError:
        if cls is MappingError:
            cls = MappingError._CLASS_FOR_KEY.get(facts.get("key"), cls)
        return super().__new__(cls)

    def _check(self) -> None:
        if self._CLASS_FOR_KEY.get(self.key) is not type(self):
            raise ValueError(f"{type(self).__name__} is not the error for key {self.key!r}")

    @property
    def summary(self) -> _Said:
        return _say(
            "{received}.", received=_received(self.file_count, self.got, self._LISTS[self.key].noun)
        )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("MintDim supports", "MintDim hỗ trợ"), self._LISTS[self.key].supports
        yield "Key", self.key


class TokenizerMappingError(MappingError):
    """Raised when the number of tokenizers is neither 1 nor the number of files (a MappingError)."""

    key: str = "tokenizer"
    examples = ({"file_count": 3, "got": 2},)


class FieldMappingError(MappingError):
    """Raised when the number of field lists is neither 1 nor the number of files (a MappingError)."""

    key: str = "source.fields"
    examples = ({"file_count": 3, "got": 2},)


class TemplateMappingError(MappingError):
    """Raised when the number of templates is neither 1 nor the number of files (a MappingError)."""

    key: str = "source.templates"
    examples = ({"file_count": 3, "got": 2},)


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


class TemplateTokenizerError(MintDimError, ValueError):
    """Raised before any data is read when a template's literal text encodes to UNK."""

    file_index: int
    template: str
    segment: str
    unk_count: int

    summary = Bilingual(
        "Template static parts produce UNK when encoded by the tokenizer.",
        "Phần literal của template tạo UNK khi tokenize.",
    )
    examples = ({"file_index": 0, "template": "{a}\n\n{b}", "segment": "\n\n", "unk_count": 2},)

    def _sections(self) -> Iterator[Any]:
        yield _H.FILE_INDEX, self.file_index
        yield "Template", _quoted(self.template)
        yield (
            _H.PROBLEM,
            Bilingual(
                "template literal characters are not fully covered by tokenizer vocabulary",
                "ký tự literal trong template không được tokenizer bao phủ",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "adjust template literal characters or use a tokenizer that covers them",
                "chỉnh ký tự literal hoặc dùng tokenizer bao phủ được",
            ),
        )
        quoted, escaped = _quoted(self.segment), json.dumps(self.segment)
        # Invisible or look-alike characters are a common cause; show their escapes.
        escapes = (
            []
            if escaped == quoted
            else [_say(Bilingual("escaped: {escaped}", "dạng escape: {escaped}"), escaped=escaped)]
        )
        yield (
            Bilingual("Literal segment", "Đoạn literal"),
            quoted,
            *escapes,
            Bilingual("UNK tokens: {unk_count}", "Số token UNK: {unk_count}"),
        )


class UnitMappingError(MappingError):
    """Raised when units.sizes or units.build_batch has neither 1 nor N entries (a MappingError)."""

    key: str = _choice(("units.sizes", "units.build_batch"))
    examples = ({"file_count": 3, "got": 2, "key": "units.sizes"},)


class OutputMappingError(MappingError):
    """Raised when the number of output directories is neither 1 nor the number of files (a MappingError)."""

    key: str = "output.dir"
    examples = ({"file_count": 3, "got": 2},)


class UnitValidationError(MintDimError, ValueError):
    """Raised when a units value breaks a rule; ``key`` is the full key, e.g. units.sizes[0][2]."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "positive_int": Bilingual("must be a positive integer", "phải là số nguyên dương"),
        "ascending": Bilingual("must be sorted ascending", "phải tăng dần"),
        "non_empty": Bilingual("must not be empty", "không được rỗng"),
        "list_of_lists": Bilingual(
            "must be a list of lists of integers", "phải là list các list số nguyên"
        ),
        "list_of_ints": Bilingual(
            "must be a list of positive integers (one shared, or one per file)",
            "phải là list các số nguyên dương (một giá trị dùng chung, hoặc mỗi file một giá trị)",
        ),
        "too_large": Bilingual(
            "must be at most 16,777,216 (2**24): every sample of a unit is stored as unit_size "
            "slots, so one record of a larger unit would take more than 64 MiB, far beyond any "
            "model's context",
            "phải nhỏ hơn hoặc bằng 16,777,216 (2**24): mỗi mẫu của một unit được lưu thành "
            "unit_size ô, nên một bản ghi của unit lớn hơn sẽ chiếm hơn 64 MiB, vượt xa ngữ cảnh "
            "của mọi mô hình",
        ),
    }

    key: str
    value: object
    rule: str = _choice(_PROBLEMS)

    summary = Bilingual("Invalid unit config.", "Unit config không hợp lệ.")
    examples = (
        {"key": "units.sizes[0][1]", "value": 128, "rule": "ascending"},
        {"key": "units.sizes[0][3]", "value": 2**40, "rule": "too_large"},
    )

    _RULES = Bilingual(
        "- sizes must be positive integers\n- sizes must be sorted ascending\n"
        "- build_batch must be a positive integer",
        "- sizes phải là các số nguyên dương\n- sizes phải tăng dần\n"
        "- build_batch phải là số nguyên dương",
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.RULES, self._RULES
        yield (
            _H.PROBLEM,
            _say(
                Bilingual("{key} {broken}, got {shown}", "{key} {broken}, hiện tại là {shown}"),
                broken=self._PROBLEMS[self.rule],
                shown=_show(self.value),
            ),
        )


class UnitPlanError(UnitValidationError):
    """Raised when an option of the unit planner (``units(sizes="auto", ...)`` or
    ``plan_units``) breaks a rule; ``key`` names it, e.g. ``units.align``."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "positive_int": Bilingual("must be a positive integer", "phải là số nguyên dương"),
        "count_or_cost": Bilingual(
            "needs exactly one of count and unit_cost (unit_cost only with count=None)",
            "cần đúng một trong count và unit_cost (unit_cost chỉ khi count=None)",
        ),
        "non_negative": Bilingual("must be a finite number >= 0", "phải là số hữu hạn >= 0"),
        "below_align": Bilingual(
            "must be at least align (the smallest allowed size)",
            "phải ít nhất bằng align (size nhỏ nhất được phép)",
        ),
        "cost": Bilingual('must be "tokens" or "attention"', 'phải là "tokens" hoặc "attention"'),
        "auto_only": Bilingual(
            'applies only with sizes="auto" (units=auto in the runner)',
            'chỉ dùng được với sizes="auto" (units=auto trong runner)',
        ),
        "counts": Bilingual(
            "must be a 1-D array of integer token counts >= 0",
            "phải là mảng 1 chiều các số token nguyên >= 0",
        ),
        "nothing_to_plan": Bilingual(
            "has no sample to plan from: the input holds no sample",
            "không có mẫu nào để lập phương án: dữ liệu đầu vào không có mẫu",
        ),
    }

    rule: str = _choice(_PROBLEMS)

    summary = Bilingual("Invalid unit planning option.", "Tùy chọn lập unit không hợp lệ.")
    examples = ({"key": "units.align", "value": 0, "rule": "positive_int"},)

    _RULES = Bilingual(
        "- count (at most this many sizes) and align are positive integers\n"
        "- max_size, when given, is an integer >= align\n"
        '- cost is "tokens" or "attention"\n'
        "- unit_cost >= 0 replaces count (count=None): the planner picks how many\n"
        '- these options apply only with sizes="auto"',
        "- count (nhiều nhất bấy nhiêu size) và align là số nguyên dương\n"
        "- max_size, nếu có, là số nguyên >= align\n"
        '- cost là "tokens" hoặc "attention"\n'
        "- unit_cost >= 0 thay cho count (count=None): bộ lập tự chọn số unit\n"
        '- các tùy chọn này chỉ dùng với sizes="auto"',
    )


class UnitOverflowError(MintDimError, ValueError):
    """Raised when samples have more tokens than the largest configured unit size.

    A build reports every such sample at once: ``file``/``line``/``token_count`` are the first
    (the spec's sections), ``count`` how many there are, ``largest_at``/``largest_count`` the
    longest, ``first_at``/``first_counts`` the first few (``file:line`` and token count).
    ``stopped_at`` (``file:line``) is set when counting had to stop early at a line with another
    error.
    """

    file: str
    line: int
    token_count: int
    max_unit_size: int
    count: int = 1
    largest_at: str = ""
    largest_count: int = 0
    first_at: list[str] = ()
    first_counts: list[int] = ()
    stopped_at: str = ""

    _SAMPLE = Bilingual("{at} ({tokens:,} tokens)", "{at} ({tokens:,} token)")

    examples = (
        {
            "file": "./data/alpaca.jsonl",
            "line": 18291,
            "token_count": 417,
            "max_unit_size": 320,
            "largest_at": "./data/alpaca.jsonl:18291",
            "largest_count": 417,
            "first_at": ["./data/alpaca.jsonl:18291"],
            "first_counts": [417],
        },
        {
            "file": "./data/xquad_vi.jsonl",
            "line": 392,
            "token_count": 1063,
            "max_unit_size": 1024,
            "count": 37,
            "largest_at": "./data/xquad_vi.jsonl:401",
            "largest_count": 2373,
            "first_at": [
                "./data/xquad_vi.jsonl:392",
                "./data/xquad_vi.jsonl:401",
                "./data/xquad_vi.jsonl:517",
            ],
            "first_counts": [1063, 2373, 1190],
        },
    )

    summary = Bilingual(
        "Sample token length exceeds max unit size.",
        "Độ dài token của mẫu vượt quá unit lớn nhất.",
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.SAMPLE, format_location(self.file, self.line)
        yield "token_count", self.token_count
        yield "max_unit_size", self.max_unit_size
        if self.count > 1:
            yield (
                Bilingual("Overflowing samples", "Số mẫu bị tràn"),
                Bilingual(
                    "{count:,} (every sample longer than {max_unit_size} tokens)",
                    "{count:,} (mọi mẫu dài hơn {max_unit_size} token)",
                ),
            )
            yield (
                Bilingual("Largest", "Mẫu dài nhất"),
                _say(self._SAMPLE, at=self.largest_at, tokens=self.largest_count),
            )
            yield (
                Bilingual("First overflowing samples", "Các mẫu tràn đầu tiên"),
                *(
                    _say("- {line}", line=_say(self._SAMPLE, at=at, tokens=tokens))
                    for at, tokens in zip(self.first_at, self.first_counts, strict=True)
                ),
            )
        if self.stopped_at:
            yield (
                Bilingual("Counted up to", "Đã đếm đến"),
                _say(
                    Bilingual(
                        "{stopped_at}: that line has another error, so later samples were not "
                        "counted",
                        "{stopped_at}: dòng đó có lỗi khác, nên các mẫu sau chưa được đếm",
                    )
                ),
            )
        yield Bilingual("Increase unit sizes and run again.", "Hãy tăng unit sizes rồi chạy lại.")
        if self.count > 1:
            yield Bilingual(
                "To see sizes that hold every sample: mintdim plan, or build with units=auto.",
                "Để xem các size chứa được mọi mẫu: mintdim plan, hoặc build với units=auto.",
            )


class OutputValidationError(MintDimError, OSError):
    """Raised when the output directory cannot be used: not empty, a file, or not creatable.

    ``problem`` is "not_empty", "not_a_directory", "cannot_create", "nested" (one output
    directory of the build lies inside another) or "not_a_path" (``output.dir`` declared something
    other than path strings; ``directory`` is then the declared value's repr); ``detail`` (such as
    the OS error text) is shown under Reason when given.
    """

    _PROBLEMS: ClassVar[dict[str, tuple[Bilingual, Bilingual]]] = {
        # Each problem has a sentence and a closing line.
        "not_empty": (
            Bilingual(
                "Output directory already exists and is not empty.",
                "Thư mục output đã tồn tại và không rỗng.",
            ),
            Bilingual("Use a new output directory.", "Hãy dùng thư mục output mới."),
        ),
        "not_a_directory": (
            Bilingual(
                "Output path already exists and is not a directory.",
                "Đường dẫn output đã tồn tại và không phải thư mục.",
            ),
            Bilingual("Use a new output directory.", "Hãy dùng thư mục output mới."),
        ),
        "cannot_create": (
            Bilingual("Output directory could not be created.", "Không tạo được thư mục output."),
            Bilingual(
                "Check the path and its permissions, or use another output directory.",
                "Hãy kiểm tra đường dẫn và quyền ghi, hoặc dùng thư mục output khác.",
            ),
        ),
        "nested": (
            Bilingual(
                "Output directory lies inside another output directory of this build.",
                "Thư mục output nằm bên trong một thư mục output khác của lần build này.",
            ),
            Bilingual(
                "Use output directories that do not contain one another.",
                "Hãy dùng các thư mục output không chứa nhau.",
            ),
        ),
        "finished": (
            Bilingual(
                "Output directory already holds a finished build (it has manifest.json).",
                "Thư mục output đã chứa một lần build hoàn chỉnh (có manifest.json).",
            ),
            Bilingual(
                "Nothing to resume: use a new output directory to build again.",
                "Không có gì để tiếp tục: hãy dùng thư mục output mới để build lại.",
            ),
        ),
        "not_resumable": (
            Bilingual(
                "Output directory is not empty and holds no unfinished MintDim build to resume.",
                "Thư mục output không rỗng và không chứa lần build MintDim dở dang nào để tiếp tục.",
            ),
            Bilingual(
                "Use a new output directory; resume=True continues only a build that left "
                "staging/job.json and no manifest.json.",
                "Hãy dùng thư mục output mới; resume=True chỉ tiếp tục một lần build đã để lại "
                "staging/job.json và chưa có manifest.json.",
            ),
        ),
        "not_a_path": (
            Bilingual(
                "Output directory must be a path string.",
                "Thư mục output phải là đường dẫn dạng string.",
            ),
            Bilingual(
                "Pass output.dir one path shared by every file, or a list of one path per file.",
                "Hãy truyền cho output.dir một đường dẫn dùng chung, hoặc một list mỗi file một "
                "đường dẫn.",
            ),
        ),
    }

    directory: str
    problem: str = _choice(_PROBLEMS, default="not_empty")
    detail: str = ""

    examples = (
        {"directory": "./artifacts/token_shards"},
        {
            "directory": "/data/out",
            "problem": "cannot_create",
            "detail": "[Errno 30] Read-only file system: '/data/out'",
        },
        {
            "directory": "5",
            "problem": "not_a_path",
            "detail": "output.dir is int, not a path string",
        },
    )

    @property
    def summary(self) -> Bilingual:
        return self._PROBLEMS[self.problem][0]

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        if self.detail:
            yield _H.REASON, self.detail
        yield self._PROBLEMS[self.problem][1]


class TokenDTypeValidationError(MintDimError, ValueError):
    """Raised when the tokenizer's vocabulary does not fit uint32 token storage."""

    vocab_size: int
    path: str

    summary = Bilingual(
        "Tokenizer vocabulary is too large for supported token dtypes.",
        "Vocab của tokenizer quá lớn so với dtype token được hỗ trợ.",
    )
    examples = ({"vocab_size": 2**32 + 1, "path": "./tokenizer/tokenizer.json"},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Supported dtypes", "Các dtype hiện hỗ trợ"), "- uint16", "- uint32"
        yield Bilingual("Vocabulary size", "Kích thước vocab"), self.vocab_size
        yield "Tokenizer", self.path
        yield (
            _H.FIX,
            Bilingual(
                "uint32 stores vocabularies of up to 4294967295 tokens; use a tokenizer with a smaller vocabulary",
                "uint32 chứa được vocab tối đa 4294967295 token; hãy dùng tokenizer có vocab nhỏ hơn",
            ),
        )


class SamplesPerShardError(MintDimError, ValueError):
    """Raised when output.samples_per_shard has a bad value or a bad number of entries.

    Create it with :meth:`not_positive`, :meth:`not_list` or :meth:`arity`.
    """

    problem: str = _choice(("not_positive", "not_list", "arity"))
    index: int | None = None
    value: object = None
    file_count: int | None = None
    got: int | None = None

    summary = Bilingual("Invalid samples_per_shard.", "samples_per_shard không hợp lệ.")
    examples = (
        {"problem": "not_positive", "index": 0, "value": 0},
        {"problem": "not_list", "value": 10000},
        {"problem": "arity", "file_count": 3, "got": 2},
    )

    @classmethod
    def not_positive(cls, *, index: int, value: object) -> SamplesPerShardError:
        """``samples_per_shard[index]`` is not a positive int."""
        return cls(problem="not_positive", index=index, value=value)

    @classmethod
    def not_list(cls, *, value: object) -> SamplesPerShardError:
        """``samples_per_shard`` is not a list (a bare int is refused like a bare build_batch)."""
        return cls(problem="not_list", value=value)

    @classmethod
    def arity(cls, *, file_count: int, got: int) -> SamplesPerShardError:
        """``samples_per_shard`` has ``got`` entries for ``file_count`` files."""
        return cls(problem="arity", file_count=file_count, got=got)

    def _sections(self) -> Iterator[Any]:
        if self.problem == "not_positive":
            problem = _say(
                Bilingual(
                    "samples_per_shard[{index}] must be a positive int, got {shown}",
                    "samples_per_shard[{index}] phải là số nguyên dương, hiện tại là {shown}",
                ),
                shown=_show(self.value),
            )
        elif self.problem == "not_list":
            problem = _say(
                Bilingual(
                    "samples_per_shard must be a list of positive ints (one shared, or one per "
                    "file), got {shown}",
                    "samples_per_shard phải là list các số nguyên dương (một giá trị dùng chung, "
                    "hoặc mỗi file một giá trị), hiện tại là {shown}",
                ),
                shown=_show(self.value),
            )
        else:
            entries = _Noun(
                "samples_per_shard entry", "samples_per_shard entries", "samples_per_shard"
            )
            problem = _received(self.file_count, self.got, entries)
        yield _H.PROBLEM, problem
        yield (
            _H.RULES,
            Bilingual(
                "- each samples_per_shard[i] is a positive int\n"
                "- len(samples_per_shard) == 1 or len(samples_per_shard) == file_count",
                "- mỗi samples_per_shard[i] phải là số nguyên dương\n"
                "- len(samples_per_shard) == 1 hoặc len(samples_per_shard) == số file",
            ),
        )


# ---------------------------------------------------------------------------
# Errors beyond the catalogue (same layout: Name:, sentence, headed sections)
# ---------------------------------------------------------------------------


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


class TokenizerLoadError(MintDimError, ValueError):
    """Raised when the tokenizer library cannot load the file (corrupt or not a tokenizer)."""

    _FIXES: ClassVar[dict[str, Bilingual]] = {
        "sentencepiece": Bilingual(
            "check that the file is a complete SentencePiece model (.model) that sentencepiece can load",
            "kiểm tra file là model SentencePiece (.model) đầy đủ mà sentencepiece đọc được",
        ),
        "hf_json": Bilingual(
            "check that the file is a complete Hugging Face tokenizer.json that tokenizers.Tokenizer.from_file can load",
            "kiểm tra file là tokenizer.json Hugging Face đầy đủ mà tokenizers.Tokenizer.from_file đọc được",
        ),
    }

    path: str
    method: str = _choice(_FIXES)
    detail: str

    summary = Bilingual(
        "Tokenizer library could not load the tokenizer file.",
        "Thư viện tokenizer không đọc được file tokenizer.",
    )
    examples = (
        {
            "path": "./tokenizer/tokenizer.model",
            "method": "sentencepiece",
            "detail": "Internal: could not parse ModelProto from ./tokenizer/tokenizer.model",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "Tokenizer", self.path
        yield _H.METHOD, f".tokenizer.{self.method}"
        yield _H.LIBRARY_ERROR, self.detail
        yield _H.FIX, self._FIXES[self.method]


class TokenizerEncodeError(MintDimError, RuntimeError):
    """Raised when the tokenizer library fails while encoding one sample's rendered text."""

    file: str
    line: int
    path: str
    detail: str

    summary = Bilingual(
        "Tokenizer library failed to encode a sample.",
        "Thư viện tokenizer không tokenize được một mẫu.",
    )
    examples = (
        {
            "file": "./data/alpaca.jsonl",
            "line": 18291,
            "path": "./tokenizer/tokenizer.json",
            "detail": "Exception: encoding failed",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.SAMPLE, format_location(self.file, self.line)
        yield "Tokenizer", self.path
        yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "check this sample's text, or use a tokenizer that can encode it; "
                "MintDim never skips or truncates a sample",
                "kiểm tra nội dung mẫu này, hoặc dùng tokenizer tokenize được nó; "
                "MintDim không bao giờ bỏ qua hay cắt bớt mẫu",
            ),
        )


class TokenizerParityError(MintDimError, RuntimeError):
    """Raised when the fast engine's ids for a text differ from the reference library's.

    The parity guard compares them at validation (the bundled parity corpus and the first batch
    of the data) and during the build (a deterministic sample of rows); the build stops at the
    first difference and writes no manifest.
    """

    _FOUND: ClassVar[dict[str, Bilingual]] = {
        "parity_corpus": Bilingual(
            "at validation, in MintDim's bundled parity corpus",
            "khi kiểm tra cấu hình, trong bộ văn bản đối chiếu đi kèm MintDim",
        ),
        "first_batch": Bilingual(
            "at validation, in the first batch of your data",
            "khi kiểm tra cấu hình, trong batch đầu tiên của dữ liệu của bạn",
        ),
        "build": Bilingual(
            "during the build, in a row re-encoded by the reference library",
            "trong lúc build, ở một dòng được thư viện tham chiếu tokenize lại",
        ),
    }

    stage: str = _choice(_FOUND)
    file: str
    line: int
    path: str
    engine_version: str
    position: int
    """Index of the first token that differs (or where one sequence ends)."""
    window_start: int
    """Index of the first token shown in ``reference`` and ``fast``."""
    reference: list[int]
    fast: list[int]

    summary = Bilingual(
        "The fast engine's token ids differ from the reference library's.",
        "Token id của engine nhanh khác với thư viện tham chiếu.",
    )
    examples = (
        {
            "stage": "build",
            "file": "./data/alpaca.jsonl",
            "line": 18291,
            "path": "./tokenizer/tokenizer.json",
            "engine_version": "gigatoken 0.10.0",
            "position": 7,
            "window_start": 0,
            "reference": [1212, 318, 257, 1332, 13, 198, 198, 21017, 220, 50256],
            "fast": [1212, 318, 257, 1332, 13, 198, 198, 50256, 220, 50256],
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.SAMPLE, format_location(self.file, self.line)
        yield "Tokenizer", self.path
        yield Bilingual("Found", "Phát hiện"), self._FOUND[self.stage]
        yield (
            Bilingual("First difference", "Khác biệt đầu tiên"),
            Bilingual("token {position}", "token thứ {position}"),
        )
        shown = Bilingual("from token {window_start}: {ids}", "từ token thứ {window_start}: {ids}")
        yield (
            Bilingual("Reference library", "Thư viện tham chiếu"),
            _say(shown, ids=self.reference),
        )
        yield (
            Bilingual("Fast engine ({engine_version})", "Engine nhanh ({engine_version})"),
            _say(shown, ids=self.fast),
        )
        yield (
            _H.FIX,
            Bilingual(
                '- switch to the reference engine: {{"path": ..., "engine": "reference"}} in '
                "Python, tokenizer.engine=reference with the runner (or leave engine out: "
                "reference is the default)\n"
                "- nothing was finished: no manifest.json was written\n"
                "- please report this sample with the tokenizer file and the engine version",
                '- chuyển sang engine tham chiếu: {{"path": ..., "engine": "reference"}} trong '
                "Python, tokenizer.engine=reference với runner (hoặc bỏ key engine: mặc định là "
                "reference)\n"
                "- chưa có gì hoàn tất: manifest.json không được ghi\n"
                "- hãy báo lại mẫu này kèm file tokenizer và phiên bản engine",
            ),
        )


class UnknownPipelineError(MintDimError, ValueError):
    """Raised by ``pipeline(name)`` when no pipeline is registered under ``name``."""

    name: object
    registered: list[str]

    summary = Bilingual(
        "No pipeline is registered under this name.",
        "Không có pipeline nào được đăng ký với tên này.",
    )
    examples = ({"name": "unit_build", "registered": ["unit-build"]},)

    def _sections(self) -> Iterator[Any]:
        yield "Pipeline", repr(self.name)
        registered = _bullets(self.registered) or [Bilingual("- (none)", "- (không có)")]
        yield Bilingual("Registered pipelines", "Các pipeline đã đăng ký"), *registered
        call = f"pipeline({_quoted(self.registered[0])})" if self.registered else "pipeline(name)"
        yield (
            _H.FIX,
            _say(
                Bilingual(
                    "call pipeline() with a registered name, e.g. {call}",
                    "gọi pipeline() với một tên đã đăng ký, ví dụ {call}",
                ),
                call=call,
            ),
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

    summary = Bilingual(
        "Files that write to one output directory declare different settings.",
        "Các file ghi vào cùng một thư mục output nhưng khai báo cấu hình khác nhau.",
    )
    examples = (
        {
            "directory": "./out",
            "setting": "units.sizes",
            "values": ["[128, 256]", "[64, 128]"],
            "files": ["./data/a.jsonl", "./data/b.jsonl"],
        },
    )

    def _check(self) -> None:
        if len(self.values) != len(self.files):
            raise ValueError(
                f"values and files must have the same length, got {len(self.values)} and {len(self.files)}"
            )

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield Bilingual("Setting", "Cấu hình"), self.setting
        yield (
            Bilingual("Declarations", "Khai báo"),
            *(f"{file} -> {value}" for file, value in zip(self.files, self.values, strict=True)),
        )
        yield (
            _H.RULES,
            Bilingual(
                "- files sharing one output directory must use the same tokenizer file, "
                "the same units.sizes and the same output.samples_per_shard\n"
                "- build_batch, fields and templates may differ",
                "- các file dùng chung một thư mục output phải dùng cùng file tokenizer, "
                "cùng units.sizes và cùng output.samples_per_shard\n"
                "- build_batch, fields và templates có thể khác nhau",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "declare one {setting} for these files, or give each file its own output directory",
                "khai báo cùng một {setting} cho các file này, hoặc cho mỗi file một thư mục output riêng",
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


class RunOptionError(MintDimError, ValueError):
    """Raised when an option of ``run()`` has a bad value, e.g. ``workers=0``."""

    _RULES: ClassVar[dict[str, Bilingual]] = {
        "positive_int": Bilingual("must be a positive integer", "phải là số nguyên dương"),
        "bool": Bilingual("must be True or False", "phải là True hoặc False"),
        "executor": Bilingual('must be "local" or "ray"', 'phải là "local" hoặc "ray"'),
        "address": Bilingual(
            'must be None, "auto" or a Ray address string such as "ray://head:10001"',
            'phải là None, "auto" hoặc một địa chỉ Ray dạng string như "ray://head:10001"',
        ),
        "ray_only": Bilingual(
            'is used only with executor="ray"', 'chỉ dùng được với executor="ray"'
        ),
        "overflow_policy": Bilingual(
            "must be one of 'abort', 'skip', 'truncate', 'extend'",
            "phải là một trong 'abort', 'skip', 'truncate', 'extend'",
        ),
        "ray_stages": Bilingual(
            'must be True with executor="ray": Ray actors hand their work to the driver through '
            "the output's staging area",
            'phải là True khi dùng executor="ray": các actor Ray chuyển kết quả cho driver qua '
            "vùng staging của output",
        ),
        "resume_stages": Bilingual(
            "must be True with resume=True: a resumed build continues from the staging area "
            "the interrupted one left",
            "phải là True khi dùng resume=True: lần build tiếp tục dựa trên vùng staging mà lần "
            "build bị gián đoạn để lại",
        ),
    }

    option: str
    value: object
    rule: str = _choice(_RULES)

    summary = Bilingual("Invalid run() option.", "Tùy chọn của run() không hợp lệ.")
    examples = (
        {"option": "workers", "value": 0, "rule": "positive_int"},
        {"option": "on_overflow", "value": "wrap", "rule": "overflow_policy"},
        {"option": "resumable", "value": False, "rule": "ray_stages"},
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Option", "Tùy chọn"), self.option
        yield Bilingual("Value", "Giá trị"), _show(self.value)
        yield _H.RULE, _say("{option} {broken}", broken=self._RULES[self.rule])


class WorkerError(MintDimError, RuntimeError):
    """Raised in the parent when a worker process died without a MintDim error.

    ``exitcode`` follows multiprocessing: negative means killed by that signal.
    """

    detail: str
    exitcode: int | None = None

    summary = Bilingual(
        "A worker process stopped without reporting a MintDim error.",
        "Một tiến trình worker đã dừng mà không báo lỗi MintDim.",
    )
    examples = ({"detail": "worker 1 exited unexpectedly", "exitcode": -9},)

    def _sections(self) -> Iterator[Any]:
        yield _H.PROBLEM, self.detail
        if self.exitcode is not None and self.exitcode < 0:
            try:
                name = signal.Signals(-self.exitcode).name
            except ValueError:
                name = f"signal {-self.exitcode}"
            killed = Bilingual(
                "{exitcode} (killed by {signal})", "{exitcode} (bị dừng bởi {signal})"
            )
            yield Bilingual("Exit code", "Mã thoát"), _say(killed, signal=name)
        elif self.exitcode is not None:
            yield Bilingual("Exit code", "Mã thoát"), self.exitcode
        yield (
            _H.FIX,
            Bilingual(
                "check free memory: the operating system may have killed the worker\n"
                "run again with workers=1 to see the error in this process",
                "kiểm tra bộ nhớ còn trống: hệ điều hành có thể đã dừng worker\n"
                "chạy lại với workers=1 để thấy lỗi ngay trong tiến trình này",
            ),
        )


class BuildInterruptedError(MintDimError, KeyboardInterrupt):
    """Raised when a build is stopped by Ctrl-C (SIGINT) or SIGTERM; nothing written is finished.

    It is a ``KeyboardInterrupt`` too, so ``except KeyboardInterrupt`` keeps catching a stop.
    """

    signal_name: str = "SIGINT"

    summary = Bilingual(
        "The build was stopped before it finished.", "Build đã bị dừng trước khi hoàn tất."
    )
    examples = ({"signal_name": "SIGTERM"},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Signal", "Tín hiệu"), self.signal_name
        yield (
            Bilingual("Result", "Kết quả"),
            Bilingual(
                "the build did not finish; nothing written is a finished build",
                "build chưa hoàn tất; các file đã ghi không phải là một build hoàn chỉnh",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "run the build again into a new or empty output directory",
                "chạy lại build vào một thư mục output mới hoặc rỗng",
            ),
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

    summary = Bilingual(
        "The config has keys MintDim does not know.", "Config có key mà MintDim không biết."
    )
    examples = ({"unknown": {"units.batch": ["sizes", "build_batch"]}},)

    def _check(self) -> None:
        self.unknown = {key: list(valid) for key, valid in self.unknown.items()}

    def _sections(self) -> Iterator[Any]:
        if self.unknown:
            yield Bilingual("Unknown keys", "Key không hợp lệ"), *_bullets(self.unknown)
            top = Bilingual("(top level)", "(cấp ngoài cùng)")
            yield (
                Bilingual("Valid keys", "Key hợp lệ"),
                *(
                    _say(
                        "- {parent}: {names}",
                        parent=key.rpartition(".")[0] or top,
                        names=", ".join(names),
                    )
                    for key, names in self.unknown.items()
                ),
            )
        yield (
            _H.FIX,
            Bilingual(
                "remove the key or correct its spelling (see: python -m mintdim.run --help)",
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
    expected: str = ""

    summary = Bilingual(
        "A config value could not be read.", "Không đọc được một giá trị trong config."
    )
    examples = (
        {
            "key": "output.dir",
            "detail": "Missing mandatory value: output.dir",
            "expected": "output.dir=./artifacts/token_shards",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "Key", self.key
        yield _H.REASON, self.detail
        if self.expected:
            yield Bilingual("Expected", "Giá trị đúng"), self.expected


class DemoFileError(MintDimError, FileNotFoundError):
    """Raised when ``${mintdim_demo:<name>}`` names a file that is not bundled with MintDim."""

    name: str
    available: list[str]

    summary = Bilingual(
        "${{mintdim_demo:...}} names a file that is not bundled with MintDim.",
        "${{mintdim_demo:...}} trỏ tới file không có sẵn trong MintDim.",
    )
    examples = ({"name": "alpaca.json", "available": ["alpaca.jsonl", "tokenizer.model"]},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Name", "Tên"), self.name
        if self.available:
            yield Bilingual("Bundled files", "Các file có sẵn"), *_bullets(self.available)


class SweepOutputError(MintDimError, FileExistsError):
    """Raised in a sweep (``-m``) when a job's output directory already exists.

    Every job of a sweep must write into a directory that it creates itself: an existing one
    was left by an earlier launch (a reused ``hydra.sweep.dir``) or is shared with another job
    (an ``output.dir`` that is the same for every job).
    """

    directory: str

    summary = Bilingual(
        "A sweep job's output directory already exists.",
        "Thư mục output của một job trong sweep đã tồn tại.",
    )
    examples = ({"directory": "multirun/2026-01-01/12-00-00/0/build"},)

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield (
            _H.RULE,
            Bilingual(
                "in a sweep (-m) every job writes into a new directory of its own\n"
                "keep the default output (a directory inside each job's directory), "
                "or give each job its own output.dir",
                "trong sweep (-m) mỗi job ghi vào một thư mục mới của riêng nó\n"
                "hãy giữ output mặc định (một thư mục nằm trong thư mục của từng job), "
                "hoặc cho mỗi job một output.dir riêng",
            ),
        )


class PathError(MintDimError, ValueError):
    """Raised when a declared path cannot name a file on this system at all."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "nul": Bilingual(
            "it contains a NUL character (\\x00), which no file name can hold",
            "nó chứa ký tự NUL (\\x00), không tên file nào chứa được",
        ),
        "unencodable": Bilingual(
            "it holds a character the file system encoding cannot store (a lone surrogate such "
            "as \\ud800): {detail}",
            "nó chứa ký tự mà bảng mã của hệ thống file không lưu được (một surrogate đơn lẻ "
            "như \\ud800): {detail}",
        ),
        "component_too_long": Bilingual(
            "the name {detail!r} is longer than 255 bytes, the limit of one file or directory name",
            "tên {detail!r} dài hơn 255 byte, giới hạn của một tên file hoặc thư mục",
        ),
        "too_long": Bilingual(
            "the whole path is {detail} bytes, at or above the system limit of 4096",
            "cả đường dẫn dài {detail} byte, bằng hoặc vượt giới hạn 4096 của hệ thống",
        ),
        "cwd_gone": Bilingual(
            "it is relative, and the current directory no longer exists: {detail}",
            "đây là đường dẫn tương đối, và thư mục hiện tại không còn tồn tại: {detail}",
        ),
    }

    key: str
    path: str
    problem: str = _choice(_PROBLEMS)
    detail: str = ""

    summary = Bilingual(
        "A declared path cannot name a file.", "Một đường dẫn đã khai báo không thể là tên file."
    )
    examples = (
        {"key": "output.dir[0]", "path": "./out\x00", "problem": "nul"},
        {
            "key": "source.files[0]",
            "path": "data.jsonl",
            "problem": "cwd_gone",
            "detail": "/tmp/job (deleted)",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Key", "Khóa"), self.key
        yield Bilingual("Path", "Đường dẫn"), ascii(self.path)
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        yield (
            _H.FIX,
            Bilingual(
                "give a path of printable characters, each name at most 255 bytes; run from an "
                "existing directory or give an absolute path",
                "hãy đưa đường dẫn gồm các ký tự in được, mỗi tên tối đa 255 byte; chạy từ một "
                "thư mục đang tồn tại hoặc dùng đường dẫn tuyệt đối",
            ),
        )


class BuildWriteError(MintDimError, OSError):
    """Raised when the build cannot write a file: a full disk, the file-size limit, a directory
    deleted under it, or a full TMPDIR under the workers' spool files."""

    _PLACES: ClassVar[dict[str, Bilingual]] = {
        "output": Bilingual("the output directory", "thư mục output"),
        "spool": Bilingual(
            "the workers' spool directory (in TMPDIR)",
            "thư mục spool của các worker (trong TMPDIR)",
        ),
    }
    _REASONS: ClassVar[dict[str, Bilingual]] = {
        "disk_full": Bilingual(
            "the file system holding it is full (or over its quota)",
            "hệ thống file chứa nó đã đầy (hoặc vượt hạn mức)",
        ),
        "file_too_large": Bilingual(
            "a file reached the file-size limit of this process (ulimit -f)",
            "một file đã chạm giới hạn kích thước file của tiến trình này (ulimit -f)",
        ),
        "gone": Bilingual(
            "the directory was deleted while the build wrote into it",
            "thư mục đã bị xóa trong khi build đang ghi vào đó",
        ),
        "other": Bilingual("the operating system refused the write", "hệ điều hành từ chối ghi"),
    }
    _FIXES: ClassVar[dict[str, Bilingual]] = {
        "output": Bilingual(
            "free space there (or raise the limit), or choose another output.dir; then build "
            "again into a new, empty directory",
            "hãy giải phóng dung lượng ở đó (hoặc nâng giới hạn), hoặc chọn output.dir khác; rồi "
            "build lại vào một thư mục mới, rỗng",
        ),
        "spool": Bilingual(
            "set TMPDIR to a directory with free space (each worker writes its encoded batches "
            "there until the main process takes them), or build with workers=1",
            "hãy đặt TMPDIR tới một thư mục còn dung lượng (mỗi worker ghi các batch đã mã hóa "
            "vào đó cho tới khi tiến trình chính lấy đi), hoặc build với workers=1",
        ),
    }

    place: str = _choice(_PLACES)
    directory: str
    reason: str = _choice(_REASONS)
    path: str = ""
    detail: str = ""

    summary = Bilingual("A build file could not be written.", "Không ghi được một file của build.")
    examples = (
        {
            "place": "output",
            "directory": "./artifacts/instruction_units",
            "reason": "disk_full",
            "path": "./artifacts/instruction_units/unit_256/shard_000003.bin",
            "detail": "[Errno 28] No space left on device",
        },
        {
            "place": "spool",
            "directory": "/tmp/mintdim-batches-x1y2",
            "reason": "disk_full",
            "detail": "[Errno 28] No space left on device",
        },
    )

    @classmethod
    def from_os_error(cls, place: str, directory: str, err: OSError) -> BuildWriteError:
        """The named error for an ``OSError`` met while writing into ``directory``."""
        reasons = {
            errno.ENOSPC: "disk_full",
            errno.EDQUOT: "disk_full",
            errno.EFBIG: "file_too_large",
            errno.ENOENT: "gone",
        }
        path = err.filename if isinstance(err.filename, str) else ""
        return cls(
            place=place,
            directory=directory,
            reason=reasons.get(err.errno, "other"),
            path=path,
            detail=f"[Errno {err.errno}] {err.strerror}",
        )

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory, _say(self._PLACES[self.place])
        if self.path:
            yield "File", self.path
        yield _H.REASON, self._REASONS[self.reason], self.detail
        yield _H.FIX, self._FIXES[self.place]


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


class ResumeMismatchError(MintDimError, ValueError):
    """Raised when ``resume=True`` finds fragments staged by a different job in the directory."""

    directory: str
    setting: str

    summary = Bilingual(
        "The unfinished build in this directory was started with other settings; its staged "
        "fragments cannot be reused.",
        "Lần build dở dang trong thư mục này được bắt đầu với thiết lập khác; không thể dùng lại "
        "các fragment đã lưu của nó.",
    )
    examples = ({"directory": "./artifacts/token_shards", "setting": "files[0].template.source"},)

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield Bilingual("First difference", "Khác biệt đầu tiên"), self.setting
        yield (
            _H.FIX,
            Bilingual(
                "resume with exactly the settings, inputs and MintDim version of the interrupted "
                "build, or build into a new, empty directory",
                "hãy tiếp tục với đúng thiết lập, đầu vào và phiên bản MintDim của lần build bị "
                "dừng, hoặc build vào một thư mục mới, rỗng",
            ),
        )


class FragmentDamagedError(MintDimError, RuntimeError):
    """Raised when a piece's fragment in the staging area no longer reads whole while the build
    assembles it: it changed after a worker wrote it."""

    _REASONS: ClassVar[dict[str, Bilingual]] = {
        "marker": Bilingual(
            "its closing marker is missing, cut short or does not match its length",
            "marker ở cuối của nó bị thiếu, bị cắt ngắn hoặc không khớp với độ dài của nó",
        ),
        "batches": Bilingual(
            "its batches no longer read back as they were written",
            "các batch của nó không còn đọc lại được như khi được ghi",
        ),
    }

    fragment: str
    file: str
    byte_range: str
    reason: str = _choice(_REASONS)
    detail: str = ""

    summary = Bilingual(
        "A piece's fragment in the staging area changed after it was written; no manifest was "
        "written.",
        "Một fragment của một piece trong vùng staging đã thay đổi sau khi được ghi; không có "
        "manifest nào được ghi.",
    )
    examples = (
        {
            "fragment": "./artifacts/token_shards/staging/000000-000012.fragment",
            "file": "./data/alpaca.jsonl",
            "byte_range": "12582912-13631488",
            "reason": "marker",
        },
        {
            "fragment": "./artifacts/token_shards/staging/000000-000012.fragment",
            "file": "./data/alpaca.jsonl",
            "byte_range": "12582912-13631488",
            "reason": "batches",
            "detail": "pickle data was truncated",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Fragment", "Fragment"), self.fragment
        yield (
            Bilingual("Piece", "Piece"),
            Bilingual("bytes {byte_range} of {file}", "các byte {byte_range} của {file}"),
        )
        yield _H.REASON, self._REASONS[self.reason]
        if self.detail:
            yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "keep other processes out of the staging directory while a build runs and check "
                "the disk, then run the same build again with resume=True: the damaged piece is "
                "encoded again, intact ones are reused",
                "hãy giữ các tiến trình khác tránh xa thư mục staging khi build đang chạy và kiểm "
                "tra ổ đĩa, rồi chạy lại đúng build đó với resume=True: piece bị hỏng được encode "
                "lại, các piece còn nguyên được dùng lại",
            ),
        )


class RayMissingError(MintDimError, ImportError):
    """Raised when ``executor="ray"`` is asked for and the ``ray`` package cannot be imported."""

    detail: str

    summary = Bilingual(
        'executor="ray" needs the Ray package, which is not installed in this Python.',
        'executor="ray" cần package Ray, nhưng Python này chưa cài.',
    )
    examples = ({"detail": "No module named 'ray'"},)

    def _sections(self) -> Iterator[Any]:
        yield _H.REASON, self.detail
        yield (
            _H.FIX,
            Bilingual(
                'install MintDim with its Ray extra, from the MintDim checkout: pip install ".[ray]"\n'
                'or install Ray alone: pip install "ray>=2.9"\n'
                '(on every machine of the cluster), or run without executor="ray"',
                'cài MintDim cùng phần mở rộng Ray, từ thư mục mã nguồn MintDim: pip install ".[ray]"\n'
                'hoặc chỉ cài Ray: pip install "ray>=2.9"\n'
                '(trên mọi máy của cluster), hoặc chạy không có executor="ray"',
            ),
        )


class RayConnectionError(MintDimError, ConnectionError):
    """Raised when ``executor="ray"`` cannot join the Ray cluster at ``ray_address``."""

    address: str
    detail: str

    summary = Bilingual(
        'executor="ray" could not join the Ray cluster.',
        'executor="ray" không kết nối được vào cluster Ray.',
    )
    examples = (
        {
            "address": "10.0.0.1:6379",
            "detail": "ConnectionError: Failed to connect to Ray cluster at 10.0.0.1:6379",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Address", "Địa chỉ"), self.address
        yield _H.REASON, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "check that the cluster runs there: ray status --address {address}\n"
                "join at the address ray start --head printed (its Local node IP and --port), "
                'or ray_address="auto" on the head\n'
                "a cluster with token authentication (recent Ray releases): set "
                "RAY_AUTH_MODE=token here, with the head's token in ~/.ray/auth_token or "
                "RAY_AUTH_TOKEN (docs/cluster.md)",
                "kiểm tra cluster đang chạy ở đó: ray status --address {address}\n"
                "kết nối tới địa chỉ mà ray start --head đã in ra (Local node IP và --port), "
                'hoặc ray_address="auto" trên máy head\n'
                "cluster có xác thực bằng token (các bản Ray gần đây): đặt "
                "RAY_AUTH_MODE=token ở máy này, với token của head trong ~/.ray/auth_token hoặc "
                "RAY_AUTH_TOKEN (docs/cluster.md)",
            ),
        )


class NotABuildError(MintDimError, FileNotFoundError):
    """Raised by ``mintdim verify`` / ``inspect`` for a directory that holds no finished build."""

    _REASONS: ClassVar[dict[str, Bilingual]] = {
        "missing": Bilingual("the directory does not exist", "thư mục không tồn tại"),
        "not_directory": Bilingual(
            "the path is a file, not a directory", "đường dẫn là file, không phải thư mục"
        ),
        "failed": Bilingual(
            "a build failed here: UNIT_BUILD_FAILED.md says why, and there is no manifest.json",
            "một lần build đã thất bại ở đây: UNIT_BUILD_FAILED.md nói lý do, và không có "
            "manifest.json",
        ),
        "no_manifest": Bilingual(
            "there is no manifest.json (a build writes it last, when it completes)",
            "không có manifest.json (một lần build ghi nó sau cùng, khi hoàn tất)",
        ),
    }

    directory: str
    reason: str = _choice(_REASONS)

    summary = Bilingual(
        "The directory holds no finished MintDim build.",
        "Thư mục không chứa bản build MintDim hoàn chỉnh nào.",
    )
    examples = (
        {"directory": "./artifacts/instruction_units", "reason": "failed"},
        {"directory": "./artifacts/notes", "reason": "no_manifest"},
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield _H.REASON, self._REASONS[self.reason]
        yield (
            _H.FIX,
            Bilingual(
                "give the output directory of a build that completed",
                "hãy đưa thư mục output của một lần build đã hoàn tất",
            ),
        )


class LoaderOptionError(MintDimError, ValueError):
    """Raised by ``build.loader(...)`` / ``mintdim.loader(...)`` for an option it cannot use."""

    _RULES: ClassVar[dict[str, Bilingual]] = {
        "one_of": Bilingual(
            "give exactly one of batch_size (records per batch) and tokens_per_batch (a unit of "
            "size U gets max(1, tokens_per_batch // U) records per batch)",
            "hãy cho đúng một trong hai: batch_size (số bản ghi mỗi batch) hoặc tokens_per_batch "
            "(unit kích thước U nhận max(1, tokens_per_batch // U) bản ghi mỗi batch)",
        ),
        "positive": Bilingual(
            "{option} must be a positive integer", "{option} phải là số nguyên dương"
        ),
        "non_negative": Bilingual(
            "{option} must be an integer >= 0", "{option} phải là số nguyên >= 0"
        ),
        "rank": Bilingual(
            "rank must be an integer with 0 <= rank < world_size ({limit})",
            "rank phải là số nguyên với 0 <= rank < world_size ({limit})",
        ),
        "count": Bilingual(
            "weights needs one number per build: {limit} builds were given",
            "weights cần đúng một số cho mỗi build: đã cho {limit} build",
        ),
        "weights": Bilingual(
            "every weight must be a finite number > 0", "mỗi weight phải là số hữu hạn > 0"
        ),
        "targets": Bilingual(
            'targets must be a non-empty list of segment names, e.g. ["output"]',
            'targets phải là danh sách tên segment không rỗng, ví dụ ["output"]',
        ),
        "no_spans": Bilingual(
            "the build {build} stores no segment spans, so labels cannot be limited to segments\n"
            'build it again with the tokenizer key encode: "whole" (or "segments"), '
            "or leave targets out to train on every token",
            "build {build} không lưu span của segment, nên không thể giới hạn labels theo segment\n"
            'hãy build lại với khóa tokenizer encode: "whole" (hoặc "segments"), '
            "hoặc bỏ targets để học trên mọi token",
        ),
        "unknown_segment": Bilingual(
            "the build {build} has no segment of that name; its segments are: {known}",
            "build {build} không có segment tên đó; các segment của nó: {known}",
        ),
        "empty": Bilingual("give at least one build", "hãy cho ít nhất một build"),
    }

    option: str
    value: object
    problem: str = _choice(_RULES)
    limit: object = None
    build: str = ""
    known: list[str] | None = None

    summary = Bilingual("Invalid loader option.", "Tùy chọn của loader không hợp lệ.")
    examples = (
        {"option": "batch_size / tokens_per_batch", "value": [None, None], "problem": "one_of"},
        {"option": "rank", "value": 2, "problem": "rank", "limit": 2},
        {
            "option": "targets",
            "value": ["output"],
            "problem": "no_spans",
            "build": "./artifacts/instruction_units",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Option", "Tùy chọn"), self.option
        yield Bilingual("Value", "Giá trị"), _show(self.value)
        yield _H.RULE, _say(self._RULES[self.problem], known=", ".join(self.known or []))


class LoaderStateError(MintDimError, ValueError):
    """Raised when ``loader(..., state=...)`` gets a state saved by a different loader.

    A state resumes only the order it was saved from: the same builds (their unit indexes) and the
    same seed, rank, world_size, batch sizing, drop_last, accum_steps and weights.
    """

    key: str
    saved: object
    current: object

    summary = Bilingual(
        "The saved loader state does not belong to this loader.",
        "Trạng thái loader đã lưu không thuộc về loader này.",
    )
    examples = ({"key": "world_size", "saved": 8, "current": 4},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Key", "Khóa"), self.key
        yield Bilingual("Saved", "Đã lưu"), _show(self.saved)
        yield Bilingual("This loader", "Loader này"), _show(self.current)
        yield (
            _H.FIX,
            Bilingual(
                "resume with the builds and options of the run that saved the state "
                "(seed, rank, world_size, batch_size or tokens_per_batch, drop_last, accum_steps, "
                "weights), or start without state",
                "hãy tiếp tục với đúng các build và tùy chọn của lần chạy đã lưu trạng thái "
                "(seed, rank, world_size, batch_size hoặc tokens_per_batch, drop_last, "
                "accum_steps, weights), hoặc bắt đầu lại không có state",
            ),
        )


class BuildReadError(MintDimError, ValueError):
    """Raised by ``open_build`` when a file of a finished build is damaged or of another version."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "manifest_json": Bilingual(
            "manifest.json is not a JSON object: {detail}",
            "manifest.json không phải JSON object: {detail}",
        ),
        "manifest_field": Bilingual(
            "manifest.json lacks a field this reader needs: {detail}",
            "manifest.json thiếu field mà bộ đọc cần: {detail}",
        ),
        "status": Bilingual(
            'the manifest\'s status is {detail}, not "complete"',
            'status của manifest là {detail}, không phải "complete"',
        ),
        "version": Bilingual(
            "format_version {detail}; this MintDim reads format_version {known}",
            "format_version {detail}; bản MintDim này đọc format_version {known}",
        ),
        "missing_file": Bilingual(
            "a file the manifest lists is missing", "một file mà manifest liệt kê bị thiếu"
        ),
        "short_shard": Bilingual(
            "{size} bytes is not a whole number of {record_bytes}-byte records",
            "{size} byte không phải một số nguyên record {record_bytes} byte",
        ),
        "unit_index": Bilingual(
            "the unit index is not a readable index of this format: {detail}",
            "unit index không phải index đọc được của định dạng này: {detail}",
        ),
    }
    _FIXES: ClassVar[dict[str, Bilingual]] = {
        "version": Bilingual(
            "read it with the MintDim version that wrote it (manifest.json names it), "
            "or build it again with this one",
            "hãy đọc bằng phiên bản MintDim đã ghi nó (manifest.json ghi tên phiên bản), "
            "hoặc build lại bằng phiên bản này",
        ),
    }
    _DAMAGED_FIX = Bilingual(
        "the build is damaged: run `mintdim verify {directory}` to list every problem, then "
        "build it again (or restore the directory from a good copy)",
        "bản build bị hỏng: chạy `mintdim verify {directory}` để liệt kê mọi vấn đề, rồi build "
        "lại (hoặc khôi phục thư mục từ một bản sao tốt)",
    )

    directory: str
    path: str
    problem: str = _choice(_PROBLEMS)
    detail: str = ""
    known: int = 0
    size: int = 0
    record_bytes: int = 0

    summary = Bilingual(
        "A file of the build cannot be read.", "Không đọc được một file của bản build."
    )
    examples = (
        {
            "directory": "./artifacts/instruction_units",
            "path": "./artifacts/instruction_units/manifest.json",
            "problem": "manifest_json",
            "detail": "unexpected end of data: line 1 column 4093 (char 4092)",
        },
        {
            "directory": "./artifacts/instruction_units",
            "path": "./artifacts/instruction_units/unit_256/shard_000003.bin",
            "problem": "short_shard",
            "size": 1000000,
            "record_bytes": 512,
        },
        {
            "directory": "./artifacts/instruction_units",
            "path": "./artifacts/instruction_units/manifest.json",
            "problem": "version",
            "detail": "7",
            "known": 2,
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("File", "File"), self.path
        yield _H.PROBLEM, self._PROBLEMS[self.problem]
        yield _H.FIX, self._FIXES.get(self.problem, self._DAMAGED_FIX)


class NoSegmentSpansError(MintDimError, ValueError):
    """Raised by ``open_build(dir).segments(i)`` when the build stores no segment spans."""

    directory: str

    summary = Bilingual(
        "This build stores no segment spans.", "Bản build này không lưu span của các segment."
    )
    examples = ({"directory": "./artifacts/instruction_units"},)

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        yield (
            _H.FIX,
            Bilingual(
                'build it again with the tokenizer key encode: "whole" (the exact whole-text '
                'tokens) or encode: "segments"; spans are stored only when encode is set',
                'hãy build lại với key tokenizer encode: "whole" (token chính xác của cả văn '
                'bản) hoặc encode: "segments"; span chỉ được lưu khi đặt encode',
            ),
        )


__all__ = [
    "LANGUAGES",
    "MappingError",
    "MintDimError",
    "current_directory",
    "error_classes",
    "format_location",
    "get_language",
    "set_language",
    *(cls.__name__ for cls in _REGISTRY),
]
