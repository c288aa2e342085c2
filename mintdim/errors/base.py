"""The machinery of MintDim's errors: the base class, facts, texts, examples and the registry.

Every error a user can meet is declared once, in English and Vietnamese, in the module of the
stage that raises it (``config``, ``source``, ``tokenizer``, ``units``, ``output``, ``execution``,
``reader``, ``split``, ``cli``); ``mintdim.errors`` re-exports them all.

A message follows the error catalogue of the spec (section "message errors"): a first line
``ErrorName:``, one sentence, then blank-line separated ``Header:`` sections. Facts the catalogue
does not show go in extra sections after the catalogue's own ones. ``str(err)`` is the text in
the current language (:func:`get_language`); ``err.message("en")`` and ``err.message("vi")``
give one language explicitly.

How to add an error
-------------------
In the module of the stage that raises it, subclass :class:`MintDimError` and the builtin a
caller would catch, and declare three things::

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
   with ``make docs`` (``python -m mintdim.errors.catalogue > docs/error-catalogue.md``); a test
   fails while it differs from what the classes render.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from mintdim.shared.lang import Bilingual, check_language, get_language

_REGISTRY: list[type[MintDimError]] = []

STAGES = (
    "config",
    "source",
    "tokenizer",
    "units",
    "output",
    "execution",
    "reader",
    "split",
    "decontaminate",
    "cli",
)
"""The modules of ``mintdim.errors`` in catalogue order: the flow of a build, then what reads it,
what groups and splits it, then the command line."""


def _stage_rank(cls: type[MintDimError]) -> int:
    package, _, module = cls.__module__.rpartition(".")
    # A class declared outside the stage modules (a plug-in's, a test's) comes last.
    return STAGES.index(module) if package == __package__ and module in STAGES else len(STAGES)


def error_classes() -> tuple[type[MintDimError], ...]:
    """Every concrete MintDim error class, in catalogue order (the abstract bases excluded):
    by stage, then in order of definition within a stage."""
    return tuple(sorted(_REGISTRY, key=_stage_rank))


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
    """Return ``file:line`` with the path exactly as the user declared it (for Parquet, whose
    records are rows, ``file:row``: the heading says which, ``sample_heading``)."""
    return f"{file}:{line}"


KINDS = ("jsonl", "parquet")
"""What an input's records are numbered by: JSONL lines, or Parquet rows."""


def sample_heading(kind: str) -> Bilingual:
    """The heading over a ``file:N`` location: a line of JSONL, a row of Parquet."""
    return _H.SAMPLE_ROW if kind == "parquet" else _H.SAMPLE


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


_OPTION_RULES: dict[str, Bilingual] = {
    "bool": Bilingual("must be True or False", "phải là True hoặc False"),
    "int64": Bilingual(
        "must be an integer from -2**63 to 2**63 - 1 (an int64)",
        "phải là số nguyên từ -2**63 đến 2**63 - 1 (một int64)",
    ),
    "positive_int": Bilingual("must be a positive integer", "phải là số nguyên dương"),
    "non_negative_int": Bilingual("must be an integer >= 0", "phải là số nguyên >= 0"),
}
"""The rules every public function checks its options by (``mintdim/options.py``), one text
each, after the option's name; every option error's table holds them."""


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
    ROW = Bilingual("Row", "Hàng")
    SAMPLE = Bilingual("Sample", "Mẫu")
    SAMPLE_ROW = Bilingual("Sample (file:row)", "Mẫu (file:hàng)")
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
