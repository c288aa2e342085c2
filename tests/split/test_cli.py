"""``mintdim group`` and ``mintdim split`` on the command line, in English and Vietnamese: what
they write is what the API writes, every line they show is in the language in use, and their
exit codes say what happened."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import mintdim
from mintdim.cli import main
from tests.unit_build.helpers import tree_bytes

from .conftest import ALIAS_RULES


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), prog_name="mintdim")
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def by_cli(related, tmp_path_factory) -> dict[str, object]:
    """Groups and a split made on the command line, with their output (English)."""
    root = tmp_path_factory.mktemp("cli")
    build = str(related[0])
    group_args = ["group", build, "--out", str(root / "g"), "--key", "work"]
    for rule in ALIAS_RULES:
        group_args += ["--alias-rule", rule]
    grouped = _run(*group_args)
    split_args = [
        "split",
        build,
        "--groups",
        str(root / "g"),
        "--out",
        str(root / "s"),
        "--seed",
        "5",
    ]
    split_args += ["--ratios", "train=0.8,validation=0.1,test=0.1", "--stratify", "era"]
    split_args += ["--ratios-for", "heian=train=0.6,validation=0.2,test=0.2", "--window", "32"]
    split = _run(*split_args)
    return {"root": root, "group": grouped, "split": split}


def test_the_commands_write_what_the_api_writes(related, by_cli, tmp_path) -> None:
    root = by_cli["root"]
    assert by_cli["group"][0] == 0, by_cli["group"][1]
    assert by_cli["split"][0] == 0, by_cli["split"][1]
    mintdim.group(related[0], tmp_path / "g", keys=["work"], alias_rules=ALIAS_RULES)
    assert tree_bytes(tmp_path / "g") == tree_bytes(root / "g")
    mintdim.split(
        related[0],
        root / "g",
        tmp_path / "s",
        seed=5,
        ratios={"train": 0.8, "validation": 0.1, "test": 0.1},
        stratify="era",
        ratios_by_stratum={"heian": {"train": 0.6, "validation": 0.2, "test": 0.2}},
        window=32,
    )
    api = tree_bytes(tmp_path / "s")
    cli = tree_bytes(root / "s")
    assert api == cli


def test_the_lines_they_show(by_cli) -> None:
    root = by_cli["root"]
    report = json.loads((root / "g" / "report.json").read_text())
    output = by_cli["group"][1]
    assert f"{report['build']['samples']} samples in {report['groups']['count']} groups" in output
    assert "not an exhaustive identity" in output and "REPORT.md" in output
    output = by_cli["split"][1]
    assert "every check of verification.json holds" in output
    split_report = json.loads((root / "s" / "report.json").read_text())
    for name, facts in split_report["splits"].items():
        assert f"{name}: {facts['groups']} groups, {facts['samples']} samples" in output


def test_vietnamese_throughout(related, tmp_path) -> None:
    code, output = _run("--lang", "vi", "group", str(related[0]), "--out", str(tmp_path / "g"))
    assert code == 0, output
    assert "mẫu trong" in output and "không phải bảo đảm đầy đủ" in output and "Báo cáo:" in output
    args = ["split", str(related[0]), "--groups", str(tmp_path / "g"), "--out", str(tmp_path / "s")]
    code, output = _run(*args, "--seed", "1", "--lang", "vi")
    assert code == 0, output
    assert "mọi kiểm tra của verification.json đều đạt" in output and "nhóm," in output
    code, output = _run("verify", str(tmp_path / "s"), "--lang", "vi")
    assert code == 0 and "phân chia" in output


def test_errors_exit_with_their_message(related, tmp_path) -> None:
    code, output = _run("group", str(tmp_path / "none"), "--out", str(tmp_path / "g"))
    assert code == 2  # click: the build directory must exist
    empty = tmp_path / "empty"
    empty.mkdir()
    code, output = _run("group", str(empty), "--out", str(tmp_path / "g"))
    assert code == 2 and "NotABuildError" in output
    code, output = _run(
        "--lang", "vi", "group", str(related[0]), "--out", str(tmp_path / "g"), "--coverage", "2"
    )
    assert code == 1 and "SplitOptionError" in output and "Thiết lập không hợp lệ" in output
    code, output = _run(
        "group",
        str(related[0]),
        "--out",
        str(tmp_path / "g"),
        "--near-duplicates",
        "--no-near-duplicates",
    )
    assert code == 0
    base = [
        "split",
        str(related[0]),
        "--groups",
        str(tmp_path / "g"),
        "--out",
        str(tmp_path / "s"),
        "--seed",
        "1",
    ]
    code, output = _run(*base, "--ratios", "train=0.9,validation=0.2")
    assert code == 1 and "SplitRatioError" in output and "sum to 1.1" in output
    code, output = _run(*base, "--ratios-for", "nothing")
    assert code == 1 and "SplitRatioError" in output
    code, output = _run("--lang", "vi", *base, "--stratify", "era", "--ratios-for", "nara=train=1")
    assert code == 1 and "không mẫu nào thuộc tầng 'nara'" in output
    code, output = _run(*base[:2], "--groups", str(empty), *base[4:])
    assert code == 2 and "SplitDirectoryError" in output
    assert not (tmp_path / "s").exists()
