"""The ``mintdim`` command speaks the chosen language on every line: its own help and click's own
messages (usage, errors, help option) alike, with ``--lang`` before or after the subcommand or
``MINTDIM_LANG``; the gettext catalogue behind click's messages is the table, read back by
Python's own gettext, and covers every message of the installed click."""

from __future__ import annotations

import ast
import gettext
import importlib.metadata
import os
import re
import string
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mintdim.cli import bilingual, main

# Lines of click's that must never reach a Vietnamese reader.
CLICK_ENGLISH = ("Usage:", "Options:", "Commands:", "Error:", "Missing", "Try '", "Show this")


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env=env, prog_name="mintdim")
    return result.exit_code, result.output


def _click_messages() -> set[str | tuple[str, str]]:
    """Every literal message the installed click passes to gettext, read from its source."""
    found: set[str | tuple[str, str]] = set()
    for path in Path(click.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if node.func.id == "_" and texts:
                found.add(texts[0])
            elif node.func.id == "ngettext":
                found.add((texts[0], texts[1]))
    return found


def _fields(text: str) -> set[str]:
    """The str.format fields and %-style keys a message is filled with."""
    names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    return names | set(re.findall(r"%\((\w+)\)s", text))


def test_the_committed_catalogue_is_built_from_the_table() -> None:
    assert bilingual.CATALOGUE.read_bytes() == bilingual.catalogue_bytes(), "run `make docs`"


def test_pythons_gettext_reads_every_translation_back() -> None:
    with bilingual.CATALOGUE.open("rb") as handle:
        catalogue = gettext.GNUTranslations(handle)
    for message, text in bilingual.CLICK_VI.items():
        if isinstance(message, tuple):
            assert catalogue.ngettext(*message, 1) == text[0]
            assert catalogue.ngettext(*message, 3) == text[1]
        else:
            assert catalogue.gettext(message) == text


def test_every_message_of_the_installed_click_is_translated_with_its_own_fields() -> None:
    # Every message the installed click has (the table may hold more, of other click releases):
    # a click that gains one fails here until it is translated. "required" reaches gettext
    # through a variable: click 8.5 marks required options with it.
    missing = _click_messages() - set(bilingual.CLICK_VI)
    assert not missing, f"translate in mintdim/cli/bilingual.py, then `make docs`: {missing}"
    assert "required" in bilingual.CLICK_VI
    for message, text in bilingual.CLICK_VI.items():
        pairs = zip(message, text, strict=True) if isinstance(message, tuple) else [(message, text)]
        for english, vietnamese in pairs:
            assert _fields(vietnamese) == _fields(english), english
            assert vietnamese != english or english == "file", english


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--lang", "vi", "verify"], None),
        (["verify", "--lang", "vi"], None),
        (["verify", "--lang=vi"], None),
        (["verify"], {"MINTDIM_LANG": "vi"}),
        (["verify", "--lang", "vi"], {"MINTDIM_LANG": "en"}),
    ],
)
def test_a_usage_error_is_all_vietnamese_wherever_the_language_is_given(args, env) -> None:
    code, output = _run(*args, env=env)
    assert code == 2
    assert "Cách dùng: mintdim verify [OPTIONS] DIRECTORY" in output
    assert "Xem trợ giúp: 'mintdim verify --help'." in output
    assert "Lỗi: Thiếu đối số 'DIRECTORY'." in output
    assert not [line for line in output.splitlines() if line.startswith(CLICK_ENGLISH)], output


def test_the_same_errors_stay_english_by_default() -> None:
    code, output = _run("verify")
    assert code == 2
    assert "Usage: mintdim verify [OPTIONS] DIRECTORY" in output
    assert "Error: Missing argument 'DIRECTORY'." in output
    code, output = _run("plan", "--cost", "free", env={"MINTDIM_LANG": "en"})
    assert (
        "Error: Invalid value for '--cost': 'free' is not one of 'tokens', 'attention'." in output
    )


def test_errors_from_option_values_come_in_vietnamese() -> None:
    code, output = _run("--lang", "vi", "plan", "--cost", "free")
    assert code == 2
    assert (
        "Lỗi: Giá trị không hợp lệ cho '--cost': 'free' không phải một trong 'tokens', "
        "'attention'." in output
    )
    code, output = _run("--lang", "vi", "inspect", "--bogus")
    assert "Lỗi: Không có tùy chọn '--bogus'." in output
    code, output = _run("--lang", "vi", "plan", "-k", "0")
    assert "Lỗi: Giá trị không hợp lệ cho '-k' / '--max-units': 0 không nằm trong khoảng x>=1." in (
        output
    )


def test_a_path_of_the_wrong_kind_is_named_in_the_language(tmp_path) -> None:
    # click fixes "directory"/"file" when the command is defined; bilingual.PathType does not.
    afile = tmp_path / "a.txt"
    afile.write_text("x")
    _, english = _run("plan", "--build", str(afile))
    assert f"Error: Invalid value for '--build': Directory '{afile}' is a file." in english
    _, vietnamese = _run("--lang", "vi", "plan", "--build", str(afile))
    assert f"Lỗi: Giá trị không hợp lệ cho '--build': Thư mục '{afile}' là một file." in vietnamese
    _, vietnamese = _run("plan", "--png", str(tmp_path), "--lang", "vi")
    assert f"Lỗi: Giá trị không hợp lệ cho '--png': File '{tmp_path}' là một thư mục." in vietnamese
    # Metavars stay placeholders in either language, arguments named by themselves.
    for lang in ("en", "vi"):
        assert "--build DIRECTORY" in _run("plan", "--help", "--lang", lang)[1]
        assert "mintdim verify [OPTIONS] DIRECTORY" in _run("verify", "--help", "--lang", lang)[1]


@pytest.mark.parametrize("command", [[], ["verify"], ["inspect"], ["plan"], ["group"], ["split"]])
def test_every_help_page_is_whole_in_either_language(command) -> None:
    shown = {lang: _run(*command, "--help", "--lang", lang)[1] for lang in ("en", "vi")}
    flat = {lang: " ".join(page.split()) for lang, page in shown.items()}
    target = main.commands[command[0]] if command else main
    texts = [target.text] + [p.text for p in target.params if isinstance(p, bilingual.Option)]
    assert len(texts) == 1 + sum(isinstance(p, click.Option) for p in target.params)
    for text in texts:
        for lang, other in (("en", "vi"), ("vi", "en")):
            # Wrapped onto lines, a text reads whole once its page is joined into one line.
            assert " ".join(text.render(lang).split()) in flat[lang]
            assert " ".join(text.render(lang).split()) not in flat[other]
    assert "Cách dùng: mintdim" in shown["vi"] and "Hiện trợ giúp này rồi thoát." in shown["vi"]
    english = ("Usage:", "Options:", "Commands:", "Show this message", "[default:")
    assert not [line for line in shown["vi"].splitlines() if line.strip().startswith(english)]
    assert [line for line in shown["en"].splitlines() if line.strip().startswith(english)]
    assert ("default:" in shown["en"]) == ("mặc định:" in shown["vi"]) and "default:" not in flat[
        "vi"
    ]


def test_the_version_line_is_in_the_language() -> None:
    version = importlib.metadata.version("mintdim")
    assert _run("--version") == (0, f"mintdim, version {version}\n")
    assert _run("--lang", "vi", "--version") == (0, f"mintdim, phiên bản {version}\n")


def test_a_run_leaves_the_process_as_it_found_it(monkeypatch) -> None:
    monkeypatch.setenv("LANGUAGE", "fr")
    before = gettext.textdomain()
    _run("--lang", "vi", "verify")
    assert os.environ["LANGUAGE"] == "fr"
    assert gettext.textdomain() == before
    # The next run has its own language: English here, not the vi of the run before.
    assert "Error: Missing argument" in _run("verify")[1]
