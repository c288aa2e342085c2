"""Errors of the command line runner (python -m mintdim.run); exit codes are the runner's concern."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mintdim.errors.base import (
    _H,
    MintDimError,
    _bullets,
    _say,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "ConfigValueError",
    "DemoFileError",
    "SweepOutputError",
    "UnknownConfigKeyError",
]


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
