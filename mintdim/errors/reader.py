"""Errors of reading a finished build: opening it, its records and the training loader."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    _OPTION_RULES,
    MintDimError,
    _choice,
    _say,
    _show,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "BuildReadError",
    "LoaderOptionError",
    "LoaderStateError",
    "NoSegmentSpansError",
    "NotABuildError",
]


class NotABuildError(MintDimError, FileNotFoundError):
    """Raised by ``open_build`` (and ``mintdim verify`` / ``inspect``) for a directory that holds
    no finished build, or for a value that is no path at all."""

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
        "not_a_path": Bilingual(
            "this is a {kind}, not a path: a build is opened from its directory, given as a str "
            "or an os.PathLike",
            "đây là một {kind}, không phải đường dẫn: bản build được mở từ thư mục của nó, cho "
            "dưới dạng str hoặc os.PathLike",
        ),
    }

    directory: str
    reason: str = _choice(_REASONS)
    kind: str = ""
    """The type of what was given instead of a path (reason ``not_a_path``)."""

    summary = Bilingual(
        "The directory holds no finished MintDim build.",
        "Thư mục không chứa bản build MintDim hoàn chỉnh nào.",
    )
    examples = (
        {"directory": "./artifacts/instruction_units", "reason": "failed"},
        {"directory": "./artifacts/notes", "reason": "no_manifest"},
        {"directory": "None", "reason": "not_a_path", "kind": "NoneType"},
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
        **{
            code: Bilingual(f"{{option}} {rule.en}", f"{{option}} {rule.vi}")
            for code, rule in _OPTION_RULES.items()
        },
        "builds": Bilingual(
            "builds must be a list of builds, each an opened build or its directory "
            "(a str or os.PathLike)",
            "builds phải là một list các build, mỗi build là một build đã mở hoặc thư mục của nó "
            "(một str hoặc os.PathLike)",
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
        {"option": "drop_last", "value": "no", "problem": "bool"},
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
        "shard_size": Bilingual(
            "{size} bytes, where the manifest lists {listed} bytes",
            "{size} byte, trong khi manifest ghi {listed} byte",
        ),
        "unit_index": Bilingual(
            "the unit index is not a readable index of this format: {detail}",
            "unit index không phải index đọc được của định dạng này: {detail}",
        ),
        "boundaries": Bilingual(
            "the packed unit's boundary index (row_offsets.npy, row_samples.npy) is not "
            "readable: {detail}",
            "boundary index của unit packed (row_offsets.npy, row_samples.npy) không đọc "
            "được: {detail}",
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
    listed: int = 0

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
