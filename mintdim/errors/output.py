"""Errors of the output stage: output options, directories, writes, staging and resume."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    MintDimError,
    _choice,
    _Noun,
    _received,
    _say,
    _show,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "BuildWriteError",
    "FragmentDamagedError",
    "OutputConflictError",
    "OutputValidationError",
    "ResumeMismatchError",
    "SamplesPerShardError",
]


class OutputValidationError(MintDimError, OSError):
    """Raised when the output directory cannot be used: not empty, a file, or not creatable.

    ``problem`` is "not_empty", "not_a_directory", "cannot_create", "nested" (one output
    directory of the build lies inside another) or "not_a_path" (``output.dir`` declared something
    other than path strings; ``directory`` is then the declared value's repr). Under Reason:
    ``cause``, what MintDim found (a code of ``_CAUSES`` with ``other``, the path or key it
    names, and ``kind``), or ``detail``, the operating system's own words when it refused.
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

    _CAUSES: ClassVar[dict[str, Bilingual]] = {
        "inside": Bilingual("{directory} is inside {other}", "{directory} nằm bên trong {other}"),
        "not_a_path": Bilingual(
            "{other} is {kind}, not a path string",
            "{other} là {kind}, không phải đường dẫn dạng string",
        ),
        "parent_is_file": Bilingual(
            "{other} is a file, not a directory", "{other} là file, không phải thư mục"
        ),
        "no_permission": Bilingual(
            "no permission to create directories in {other}",
            "không có quyền tạo thư mục trong {other}",
        ),
    }

    directory: str
    problem: str = _choice(_PROBLEMS, default="not_empty")
    cause: str = _choice(("", *_CAUSES), default="")
    other: str = ""
    kind: str = ""
    detail: str = ""

    examples = (
        {"directory": "./artifacts/token_shards"},
        {
            "directory": "/data/out",
            "problem": "cannot_create",
            "detail": "[Errno 30] Read-only file system: '/data/out'",
        },
        {
            "directory": "/data/out",
            "problem": "cannot_create",
            "cause": "no_permission",
            "other": "/data",
        },
        {"directory": "./out/inner", "problem": "nested", "cause": "inside", "other": "./out"},
        {
            "directory": "5",
            "problem": "not_a_path",
            "cause": "not_a_path",
            "other": "output.dir",
            "kind": "int",
        },
    )

    @property
    def summary(self) -> Bilingual:
        return self._PROBLEMS[self.problem][0]

    def _sections(self) -> Iterator[Any]:
        yield _H.DIRECTORY, self.directory
        if self.cause:
            yield _H.REASON, self._CAUSES[self.cause]
        elif self.detail:
            yield _H.REASON, self.detail
        yield self._PROBLEMS[self.problem][1]


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


class BuildWriteError(MintDimError, OSError):
    """Raised when the build cannot write a file: a full disk, the file-size limit, a directory
    deleted under it, or a full TMPDIR under the workers' spool files; also when ``mintdim
    group``, ``split`` or ``decontaminate`` meets a full disk or the file-size limit in its
    output directory (place ``derived``)."""

    _PLACES: ClassVar[dict[str, Bilingual]] = {
        "output": Bilingual("the output directory", "thư mục output"),
        "spool": Bilingual(
            "the workers' spool directory (in TMPDIR)",
            "thư mục spool của các worker (trong TMPDIR)",
        ),
        "derived": Bilingual(
            "the output directory of mintdim group, split or decontaminate (--out)",
            "thư mục kết quả của lệnh mintdim group, split hoặc decontaminate (--out)",
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
        "derived": Bilingual(
            "free space there (or raise the limit), or choose another --out; then run the "
            "command again into a new, empty directory (the input build is untouched)",
            "hãy giải phóng dung lượng ở đó (hoặc nâng giới hạn), hoặc chọn --out khác; rồi chạy "
            "lại lệnh vào một thư mục mới, rỗng (build đầu vào vẫn nguyên vẹn)",
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
        {
            "place": "derived",
            "directory": "./artifacts/decontaminated",
            "reason": "disk_full",
            "path": "./artifacts/decontaminated/clean/unit_256/shard_000003.bin",
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
