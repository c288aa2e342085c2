"""Errors in the declared job: pipeline names, per-file lists, run options and paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, NamedTuple

from mintdim.errors.base import (
    _H,
    _OPTION_RULES,
    MintDimError,
    _bullets,
    _choice,
    _Noun,
    _quoted,
    _received,
    _Said,
    _say,
    _show,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "FieldMappingError",
    "MappingError",
    "OutputMappingError",
    "PathError",
    "PipelineValidationError",
    "RunOptionError",
    "TemplateMappingError",
    "TokenizerMappingError",
    "UnitMappingError",
    "UnknownPipelineError",
]


class PipelineValidationError(MintDimError, ValueError):
    """Raised by run() when required settings were never declared; lists every one."""

    missing: list[str]

    summary = Bilingual(
        "Pipeline configuration is incomplete.", "Pipeline chưa được cấu hình đầy đủ."
    )
    examples = ({"missing": ["units.build_batch", "output.samples_per_shard"]},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Missing", "Thiếu"), *_bullets(self.missing)


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


class UnitMappingError(MappingError):
    """Raised when units.sizes or units.build_batch has neither 1 nor N entries (a MappingError)."""

    key: str = _choice(("units.sizes", "units.build_batch"))
    examples = ({"file_count": 3, "got": 2, "key": "units.sizes"},)


class OutputMappingError(MappingError):
    """Raised when the number of output directories is neither 1 nor the number of files (a MappingError)."""

    key: str = "output.dir"
    examples = ({"file_count": 3, "got": 2},)


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


class RunOptionError(MintDimError, ValueError):
    """Raised when an option of ``run()`` or ``scan()`` has a bad value, e.g. ``workers=0``."""

    _RULES: ClassVar[dict[str, Bilingual]] = {
        **_OPTION_RULES,
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

    summary = Bilingual(
        "Invalid option of run() or scan().", "Tùy chọn của run() hoặc scan() không hợp lệ."
    )
    examples = (
        {"option": "workers", "value": 0, "rule": "positive_int"},
        {"option": "on_overflow", "value": "wrap", "rule": "overflow_policy"},
        {"option": "resumable", "value": False, "rule": "ray_stages"},
    )

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Option", "Tùy chọn"), self.option
        yield Bilingual("Value", "Giá trị"), _show(self.value)
        yield _H.RULE, _say("{option} {broken}", broken=self._RULES[self.rule])


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
