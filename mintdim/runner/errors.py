"""Errors of the Hydra runner itself, in English and Vietnamese, on MintDim's error base.

They follow the layout of the core catalogue (``Name:``, one sentence, headed sections) and
derive from :class:`mintdim.MintDimError`, so ``lang=vi`` / ``MINTDIM_LANG=vi`` applies to them
too. ``exit_code`` is what the command line exits with: 2 for a configuration mistake found
before any work, 1 for a failure of the build itself.
"""

from __future__ import annotations

from typing import ClassVar

from mintdim import MintDimError

__all__ = [
    "ConfigValueError",
    "DemoFileError",
    "RunnerError",
    "SweepOutputError",
    "UnknownConfigKeyError",
]


def _text(name: str, sentence: str, *sections: tuple[str, list[str]]) -> str:
    blocks = [f"{name}:\n{sentence}"]
    blocks += ["\n".join([f"{header}:", *lines]) for header, lines in sections if lines]
    return "\n\n".join(blocks)


class RunnerError(MintDimError):
    """Base of the runner's own errors."""

    exit_code: ClassVar[int] = 2


class UnknownConfigKeyError(RunnerError, ValueError):
    """A config key the schema does not know, added with ``+key=value`` or in a YAML file.

    Hydra rejects ``key=value`` for an unknown key by itself; ``+key=value`` force-adds it, so
    the runner checks the composed config against the schema before any work.
    ``unknown`` maps each unknown dotted key to the valid keys of its parent node.
    """

    def __init__(self, *, unknown: dict[str, list[str]]) -> None:
        super().__init__(unknown={key: list(valid) for key, valid in unknown.items()})

    def _render(self, lang: str) -> str:
        keys = [f"- {key}" for key in self.unknown]
        valid = []
        for key, names in self.unknown.items():
            parent = key.rpartition(".")[0] or (
                "(top level)" if lang == "en" else "(cấp ngoài cùng)"
            )
            valid.append(f"- {parent}: {', '.join(names)}")
        if lang == "en":
            return _text(
                "UnknownConfigKeyError",
                "The config has keys MintDim does not know.",
                ("Unknown keys", keys),
                ("Valid keys", valid),
                (
                    "Fix",
                    ["remove the key or correct its spelling (see: python -m mintdim.run --help)"],
                ),
            )
        return _text(
            "UnknownConfigKeyError",
            "Config có key mà MintDim không biết.",
            ("Key không hợp lệ", keys),
            ("Key hợp lệ", valid),
            ("Cách sửa", ["xóa key hoặc sửa lại chính tả (xem: python -m mintdim.run --help)"]),
        )


class ConfigValueError(RunnerError, ValueError):
    """A config value that cannot be read at all (an interpolation that fails, a missing value).

    ``key`` is the dotted key, ``detail`` OmegaConf's own explanation.
    """

    def __init__(self, *, key: str, detail: str, expected: str = "") -> None:
        super().__init__(key=key, detail=detail, expected=expected)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _text(
                "ConfigValueError",
                "A config value could not be read.",
                ("Key", [self.key]),
                ("Reason", [self.detail]),
                ("Expected", [self.expected] if self.expected else []),
            )
        return _text(
            "ConfigValueError",
            "Không đọc được một giá trị trong config.",
            ("Key", [self.key]),
            ("Lý do", [self.detail]),
            ("Giá trị đúng", [self.expected] if self.expected else []),
        )


class DemoFileError(RunnerError, FileNotFoundError):
    """``${mintdim_demo:<name>}`` names a file that is not bundled."""

    def __init__(self, *, name: str, available: list[str]) -> None:
        super().__init__(name=name, available=list(available))

    def _render(self, lang: str) -> str:
        files = [f"- {name}" for name in self.available]
        if lang == "en":
            return _text(
                "DemoFileError",
                "${mintdim_demo:...} names a file that is not bundled with MintDim.",
                ("Name", [self.name]),
                ("Bundled files", files),
            )
        return _text(
            "DemoFileError",
            "${mintdim_demo:...} trỏ tới file không có sẵn trong MintDim.",
            ("Tên", [self.name]),
            ("Các file có sẵn", files),
        )


class SweepOutputError(RunnerError, FileExistsError):
    """In a sweep (``-m``), a job's output directory already exists.

    Every job of a sweep must write into a directory that it creates itself: an existing one
    was left by an earlier launch (a reused ``hydra.sweep.dir``) or is shared with another job
    (an ``output.dir`` that is the same for every job).
    """

    exit_code: ClassVar[int] = 1

    def __init__(self, *, directory: str) -> None:
        super().__init__(directory=directory)

    def _render(self, lang: str) -> str:
        if lang == "en":
            return _text(
                "SweepOutputError",
                "A sweep job's output directory already exists.",
                ("Directory", [self.directory]),
                (
                    "Rule",
                    [
                        "in a sweep (-m) every job writes into a new directory of its own",
                        "keep the default output (a directory inside each job's directory), "
                        "or give each job its own output.dir",
                    ],
                ),
            )
        return _text(
            "SweepOutputError",
            "Thư mục output của một job trong sweep đã tồn tại.",
            ("Thư mục", [self.directory]),
            (
                "Quy tắc",
                [
                    "trong sweep (-m) mỗi job ghi vào một thư mục mới của riêng nó",
                    "hãy giữ output mặc định (một thư mục nằm trong thư mục của từng job), "
                    "hoặc cho mỗi job một output.dir riêng",
                ],
            ),
        )
