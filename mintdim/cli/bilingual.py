"""click in the language in use: every line the ``mintdim`` command shows, its help included.

Two kinds of text reach a person through click:

- MintDim's own (what each command and option does): :class:`Command`, :class:`Group` and
  :class:`Option` take it as a :class:`Bilingual` and render it whenever help is shown;
- click's own ("Usage:", "Missing argument", "No such option", "Show this message and exit.",
  ...): click passes each through ``gettext``, so :data:`CLICK_VI` gives every message click
  has in Vietnamese, and ``locale/vi/LC_MESSAGES/mintdim-click.mo``, built from it by
  :func:`write_catalogue` (``make docs``), is the catalogue gettext reads while a
  command runs. Tests keep the file equal to the table, and the table covering every message
  of the installed click. :class:`PathType` translates the one word click fixes when a command
  is defined (the kind of path an error names).

The language is ``--lang`` wherever it stands (before or after the subcommand), else
``MINTDIM_LANG``, else English: it is read from the arguments before click parses them, so even
click's own errors about those arguments come in it.
"""

from __future__ import annotations

import gettext
import os
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from mintdim.shared.lang import LANGUAGES, Bilingual, get_language, set_language

__all__ = [
    "CATALOGUE",
    "CLICK_VI",
    "DOMAIN",
    "LOCALE_DIR",
    "Command",
    "Group",
    "Option",
    "PathType",
    "catalogue_bytes",
    "click_text",
    "language_option",
    "option",
    "write_catalogue",
]

DOMAIN = "mintdim-click"
LOCALE_DIR = Path(__file__).with_name("locale")
CATALOGUE = LOCALE_DIR / "vi" / "LC_MESSAGES" / f"{DOMAIN}.mo"

_HELP = {
    "lang": Bilingual(
        "Language of every message: en or vi (default: $MINTDIM_LANG, else en).",
        "Ngôn ngữ của mọi thông báo: en hoặc vi (mặc định: $MINTDIM_LANG, nếu không thì en).",
    ),
}

CLICK_VI: dict[str | tuple[str, str], str | tuple[str, str]] = {
    # Help pages.
    "Usage:": "Cách dùng:",
    "Options": "Tùy chọn",
    "Commands": "Lệnh",
    "Positional arguments": "Đối số vị trí",
    "Show this message and exit.": "Hiện trợ giúp này rồi thoát.",
    "Show the version and exit.": "Hiện phiên bản rồi thoát.",
    "%(prog)s, version %(version)s": "%(prog)s, phiên bản %(version)s",
    "default: {default}": "mặc định: {default}",
    "env var: {var}": "biến môi trường: {var}",
    "required": "bắt buộc",
    "(dynamic)": "(động)",
    "deprecated": "đã lỗi thời",
    "Choice({choices})": "Lựa chọn({choices})",
    "Choose from:\n\t{choices}": "Chọn một trong:\n\t{choices}",
    # Errors about the command line.
    "Error: {message}": "Lỗi: {message}",
    "Try '{command} {option}' for help.": "Xem trợ giúp: '{command} {option}'.",
    "Missing argument": "Thiếu đối số",
    "Missing option": "Thiếu tùy chọn",
    "Missing parameter": "Thiếu tham số",
    "Missing {param_type}": "Thiếu {param_type}",
    "Missing parameter: {param_name}": "Thiếu tham số: {param_name}",
    "Missing command.": "Thiếu lệnh.",
    "No such option {name!r}.": "Không có tùy chọn {name!r}.",
    "No such command {name!r}.": "Không có lệnh {name!r}.",
    ("Did you mean {possibility}?", "(Did you mean one of: {possibilities}?)"): (
        "Có phải ý bạn là {possibility}?",
        "(Có phải ý bạn là một trong: {possibilities}?)",
    ),
    "Invalid value for {param_hint}: {message}": "Giá trị không hợp lệ cho {param_hint}: {message}",
    "Invalid value: {message}": "Giá trị không hợp lệ: {message}",
    "Option {name!r} does not take a value.": "Tùy chọn {name!r} không nhận giá trị.",
    ("Option {name!r} requires an argument.", "Option {name!r} requires {nargs} arguments."): (
        "Tùy chọn {name!r} cần một giá trị.",
        "Tùy chọn {name!r} cần {nargs} giá trị.",
    ),
    ("Got unexpected extra argument ({args})", "Got unexpected extra arguments ({args})"): (
        "Có đối số thừa không mong đợi ({args})",
        "Có các đối số thừa không mong đợi ({args})",
    ),
    "Argument {name!r} takes {nargs} values.": "Đối số {name!r} nhận {nargs} giá trị.",
    ("Takes {nargs} values but 1 was given.", "Takes {nargs} values but {len} were given."): (
        "Cần {nargs} giá trị nhưng chỉ nhận được 1.",
        "Cần {nargs} giá trị nhưng nhận được {len}.",
    ),
    (
        "{len_type} values are required, but {len_value} was given.",
        "{len_type} values are required, but {len_value} were given.",
    ): (
        "Cần {len_type} giá trị, nhưng nhận được {len_value}.",
        "Cần {len_type} giá trị, nhưng nhận được {len_value}.",
    ),
    "Invalid start character for option ({option})": (
        "Ký tự mở đầu không hợp lệ cho tùy chọn ({option})"
    ),
    "Value must be an iterable.": "Giá trị phải là một dãy (iterable).",
    # Values of the parameter types.
    ("{value!r} is not {choice}.", "{value!r} is not one of {choices}."): (
        "{value!r} không phải {choice}.",
        "{value!r} không phải một trong {choices}.",
    ),
    "{value!r} is not a valid {number_type}.": "{value!r} không phải {number_type} hợp lệ.",
    "{value} is not in the range {range}.": "{value} không nằm trong khoảng {range}.",
    "{value!r} is not a valid boolean. Recognized values: {states}": (
        "{value!r} không phải giá trị boolean hợp lệ. Các giá trị được nhận: {states}"
    ),
    "{value!r} is not a valid UUID.": "{value!r} không phải UUID hợp lệ.",
    (
        "{value!r} does not match the format {format}.",
        "{value!r} does not match the formats {formats}.",
    ): (
        "{value!r} không khớp định dạng {format}.",
        "{value!r} không khớp các định dạng {formats}.",
    ),
    "file": "file",
    "directory": "thư mục",
    "path": "đường dẫn",
    "{name} {filename!r} does not exist.": "{name} {filename!r} không tồn tại.",
    "{name} {filename!r} is a file.": "{name} {filename!r} là một file.",
    "{name} {filename!r} is a directory.": "{name} {filename!r} là một thư mục.",
    "{name} {filename!r} is not readable.": "{name} {filename!r} không đọc được.",
    "{name} {filename!r} is not writable.": "{name} {filename!r} không ghi được.",
    "{name} {filename!r} is not executable.": "{name} {filename!r} không thực thi được.",
    "Could not open file {filename!r}: {message}": "Không mở được file {filename!r}: {message}",
    # Prompts, the terminal and the shell.
    "Aborted!": "Đã hủy!",
    "Do you want to continue?": "Bạn có muốn tiếp tục không?",
    "Confirm the action without prompting.": "Xác nhận hành động mà không hỏi lại.",
    "Repeat for confirmation": "Nhập lại để xác nhận",
    "Error: The two entered values do not match.": "Lỗi: hai giá trị đã nhập không khớp nhau.",
    "Error: invalid input": "Lỗi: dữ liệu nhập không hợp lệ",
    "Press any key to continue...": "Nhấn phím bất kỳ để tiếp tục...",
    "d": " ngày",
    "{editor}: Editing failed": "{editor}: chỉnh sửa thất bại",
    "{editor}: Editing failed: {e}": "{editor}: chỉnh sửa thất bại: {e}",
    "Unknown color {colour!r}": "Màu không xác định {colour!r}",
    "Unknown standard stream '{name}'": "Luồng chuẩn không xác định '{name}'",
    "Windows error: {error}": "Lỗi Windows: {error}",
    "unknown error": "lỗi không xác định",
    "Couldn't detect Bash version, shell completion is not supported.": (
        "Không xác định được phiên bản Bash: không hỗ trợ tự hoàn thành lệnh."
    ),
    "Shell completion is not supported for Bash versions older than 4.4.": (
        "Không hỗ trợ tự hoàn thành lệnh cho Bash cũ hơn 4.4."
    ),
    # Deprecations and mistakes in a command's own definition (for its developer).
    "DeprecationWarning: The command {name!r} is deprecated.{extra_message}": (
        "DeprecationWarning: lệnh {name!r} đã lỗi thời.{extra_message}"
    ),
    "DeprecationWarning: The {param_type} {name!r} is deprecated.{extra_message}": (
        "DeprecationWarning: {param_type} {name!r} đã lỗi thời.{extra_message}"
    ),
    "Could not determine name for option with declarations {decls!r}": (
        "Không xác định được tên cho tùy chọn khai báo {decls!r}"
    ),
    "No options defined but a name was passed ({name}). Did you mean to declare an argument "
    "instead? Did you mean to pass '--{name}'?": (
        "Không khai báo tùy chọn nào nhưng lại truyền một tên ({name}). Có phải bạn muốn khai "
        "báo một đối số? Hay muốn truyền '--{name}'?"
    ),
    "Arguments take exactly one parameter declaration, got {length}: {decls}.": (
        "Đối số nhận đúng một khai báo tham số, nhận được {length}: {decls}."
    ),
    "Name '{name}' defined twice": "Tên '{name}' được khai báo hai lần",
    "Boolean option {decl!r} cannot use the same flag for true/false.": (
        "Tùy chọn boolean {decl!r} không thể dùng cùng một cờ cho true/false."
    ),
}
"""Each message click passes through gettext (a plural one as its two forms) in Vietnamese."""

_HEADER = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"
"""Two plural forms, as English has: each of click's forms keeps its own fields."""


def click_text(message: str) -> Bilingual:
    """One of click's own messages as a :class:`Bilingual`, its Vietnamese from :data:`CLICK_VI`
    (for the places where MintDim shows click's words itself)."""
    vietnamese = CLICK_VI[message]
    assert isinstance(vietnamese, str)  # noqa: S101 - a plural message has two forms
    return Bilingual(message, vietnamese)


def catalogue_bytes() -> bytes:
    """:data:`CLICK_VI` as a GNU gettext catalogue (``.mo``, little-endian, no hash table)."""

    def joined(value: str | tuple[str, str]) -> str:  # a plural message's forms, NUL between
        return "\0".join(value) if isinstance(value, tuple) else value

    entries = {"": _HEADER} | {joined(key): joined(text) for key, text in CLICK_VI.items()}
    keys = sorted(entry.encode() for entry in entries)
    texts = [entries[key.decode()].encode() for key in keys]
    count = len(keys)
    table_start = 7 * 4
    data_start = table_start + 2 * count * 8
    pieces, tables, offset = [], [], data_start
    for strings in (keys, texts):
        table = []
        for text in strings:
            table.append(struct.pack("<II", len(text), offset))
            pieces.append(text + b"\0")
            offset += len(text) + 1
        tables.append(b"".join(table))
    header = struct.pack(
        "<7I", 0x950412DE, 0, count, table_start, table_start + count * 8, 0, data_start
    )
    return header + b"".join(tables) + b"".join(pieces)


class _Text:
    """Help given as a :class:`Bilingual` (``text=``), rendered in the language in use whenever
    click reads ``help``."""

    def __init__(self, *args: Any, text: Bilingual, **kwargs: Any) -> None:
        self.text = text
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str:
        return self.text.render()

    @help.setter
    def help(self, _value: object) -> None:
        """click sets its ``help`` argument here; the text stays the one given."""


class Option(_Text, click.Option):
    """An option whose help is a :class:`Bilingual`."""


class _Bilingual(_Text):
    """What :class:`Command` and :class:`Group` share: help from a :class:`Bilingual`, the
    language read from the arguments first, and click's help option in that language."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _use(_language_in(args))
        return super().parse_args(ctx, args)  # type: ignore[misc]

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        # click makes this option once and keeps it: its help is set again each time.
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.help = click_text("Show this message and exit.").render()
        return option


class Command(_Bilingual, click.Command):
    """A subcommand of ``mintdim`` whose own help is ``text``."""


class Group(_Bilingual, click.Group):
    """The ``mintdim`` command: while it runs, click's own messages come from the catalogue."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with _click_speaks():
            return super().main(*args, **kwargs)


class _Noun(str):
    """A word click capitalises with ``str.title``, which would capitalise every word of
    "thư mục"; Vietnamese capitalises only the first."""

    def title(self) -> str:
        return self[:1].upper() + self[1:]


class PathType(click.Path):
    """``click.Path`` whose kind ("file", "directory", "path") is translated where an error
    names it: click fixes it once, when the command is defined, before any language is chosen.
    Metavars keep the English word, a placeholder like the option names."""

    @property
    def name(self) -> str:
        return _Noun(gettext.gettext(self._kind))

    @name.setter
    def name(self, kind: str) -> None:
        self._kind = kind

    def get_metavar(self, param: click.Parameter, *args: Any, **kwargs: Any) -> str | None:
        # An argument is shown by its own name (DIRECTORY), as click does for a plain Path.
        return None if isinstance(param, click.Argument) else self._kind.upper()


def option(*declarations: str, text: Bilingual, **attributes: Any) -> Any:
    """``click.option`` whose help is ``text`` (an :class:`Option`)."""
    return click.option(*declarations, cls=Option, text=text, **attributes)


def language_option(command: click.Command) -> click.Command:
    """``--lang en|vi`` on a command. The value is applied before parsing (:class:`Command`),
    so the option only names and checks it."""
    return option(
        "--lang", type=click.Choice(LANGUAGES), default=None, expose_value=False, text=_HELP["lang"]
    )(command)


def _language_in(args: Sequence[str]) -> str | None:
    """The last valid ``--lang X`` or ``--lang=X`` among ``args`` before ``--``, if any (an
    invalid one is click's to report)."""
    found = None
    for position, arg in enumerate(args):
        if arg == "--":
            break
        value = arg.partition("=")[2] if arg.startswith("--lang=") else None
        if arg == "--lang" and position + 1 < len(args):
            value = args[position + 1]
        if value in LANGUAGES:
            found = value
    return found


def _use(language: str | None) -> None:
    """Speak ``language`` (None: keep the one in use), click's messages included."""
    if language is not None:
        set_language(language)
    os.environ["LANGUAGE"] = get_language()


@contextmanager
def _click_speaks() -> Iterator[None]:
    """One run of the command, in its own language: ``--lang``, else ``MINTDIM_LANG``, else
    English, whatever an earlier run in this process chose. click's gettext calls go to
    MintDim's catalogue, in that language (gettext reads ``LANGUAGE`` at every call); the
    domain and ``LANGUAGE`` that were there before come back afterwards."""
    before_domain, before_language = gettext.textdomain(), os.environ.get("LANGUAGE")
    gettext.bindtextdomain(DOMAIN, str(LOCALE_DIR))
    gettext.textdomain(DOMAIN)
    set_language(None)
    _use(None)
    try:
        yield
    finally:
        set_language(None)
        gettext.textdomain(before_domain)
        if before_language is None:
            os.environ.pop("LANGUAGE", None)
        else:
            os.environ["LANGUAGE"] = before_language


def write_catalogue() -> None:
    """Write the catalogue file from :data:`CLICK_VI` (``make docs``)."""
    CATALOGUE.parent.mkdir(parents=True, exist_ok=True)
    CATALOGUE.write_bytes(catalogue_bytes())
