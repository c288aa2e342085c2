"""The project around the runner: README examples, committed outputs, demo tokenizers, the wheel, CI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
import sentencepiece as spm
from tokenizers import Tokenizer

from mintdim.runner.demo import DEMO_DIR
from tests.waiting import SAFETY_NET

from .conftest import REPO, cli_env

README = REPO / "README.md"


def script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / name), *args],
        cwd=REPO,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=SAFETY_NET,
        check=False,
    )


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.S | re.M)


def test_readme_python_examples_run_against_the_demo_data(tmp_path, monkeypatch) -> None:
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
    stats = namespace["result"].outputs[0].stats
    assert stats["total_samples"] == 175
    assert (tmp_path / "artifacts" / "instruction_units" / "manifest.json").is_file()
    assert len(namespace["tokens"]) == namespace["row"]["token_count"]


def test_outputs_examples_readme_example_runs(monkeypatch) -> None:
    (block,) = python_blocks((REPO / "outputs_examples" / "README.md").read_text(encoding="utf-8"))
    monkeypatch.chdir(REPO)
    namespace: dict = {}
    exec(compile(block, "outputs_examples/README.md", "exec"), namespace)  # noqa: S102
    assert len(namespace["tokens"]) == namespace["row"]["token_count"]


def test_outputs_examples_are_rebuilt_byte_for_byte() -> None:
    done = script("build_outputs_examples.py", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "outputs_examples/demo_sweep is current" in done.stdout
    total = sum(p.stat().st_size for p in (REPO / "outputs_examples").rglob("*") if p.is_file())
    assert total < 3 * 1024 * 1024


def test_every_outputs_examples_file_is_committed() -> None:
    # .gitignore ignores build/, so a rebuilt example file is easy to leave out of a commit.
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "outputs_examples"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert untracked == [], "run: git add -f outputs_examples"


def test_demo_tokenizers_are_reproducible() -> None:
    done = script("train_demo_tokenizers.py", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_demo_tokenizers_have_pad_unk_and_keep_the_templates_exact() -> None:
    sp = spm.SentencePieceProcessor(model_file=str(DEMO_DIR / "demo_unigram.model"))
    hf = Tokenizer.from_file(str(DEMO_DIR / "demo_bpe.tokenizer.json"))
    assert (sp.pad_id(), sp.unk_id(), sp.vocab_size()) == (0, 1, 1500)
    assert (hf.token_to_id("[PAD]"), hf.token_to_id("[UNK]"), hf.get_vocab_size()) == (0, 1, 2000)
    for literal in (
        "\n\n",
        "### Instruction:\n",
        "\n\n### Response:\n",
        "Question: ",
        "\nAnswer: ",
    ):
        ids = sp.encode(literal)
        assert sp.unk_id() not in ids and sp.decode(ids) == literal
        ids = hf.encode(literal, add_special_tokens=False).ids
        assert 1 not in ids and hf.decode(ids) == literal
    assert 1 in sp.encode("Arabic: مرحبا")  # no byte fallback: rare characters are UNK
    for path in DEMO_DIR.glob("demo_*"):
        assert path.stat().st_size < 500 * 1024


def test_the_wheel_ships_conf_and_demo_and_runs_from_elsewhere(tmp_path) -> None:
    pytest.importorskip("hatchling")
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
         "--quiet", "-w", str(dist)],
        capture_output=True, text=True, timeout=SAFETY_NET, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("mintdim-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(zf.read(n).decode() for n in names if n.endswith("entry_points.txt"))
        zf.extractall(tmp_path / "site")
    for conf in (REPO / "conf").rglob("*.yaml"):
        assert f"mintdim/conf/{conf.relative_to(REPO / 'conf').as_posix()}" in names
    for demo in ("self_instruct_seed_alpaca.jsonl", "demo_unigram.model", "NOTICE"):
        assert f"mintdim/demo/{demo}" in names
    assert "mintdim/demo/licenses/Apache-2.0.txt" in names
    assert "mintdim/cli/locale/vi/LC_MESSAGES/mintdim-click.mo" in names
    assert "mintdim-run = mintdim.run:main" in entry_points

    # The unpacked wheel first on sys.path, run from a directory outside the checkout.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(cli_env(), PYTHONPATH=str(tmp_path / "site"))
    info = subprocess.run(
        [sys.executable, "-m", "mintdim.run", "--info", "searchpath"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=SAFETY_NET, check=False,
    )  # fmt: skip
    assert info.returncode == 0, info.stderr
    assert f"file://{tmp_path / 'site' / 'mintdim' / 'conf'}" in info.stdout
    run = subprocess.run(
        [sys.executable, "-m", "mintdim.run", "units=large", "workers=1"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=SAFETY_NET, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (manifest,) = elsewhere.glob("outputs/*/*/build/manifest.json")
    site_demo = tmp_path / "site" / "mintdim" / "demo" / "self_instruct_seed_alpaca.jsonl"
    assert str(site_demo) in manifest.read_text()
    # click's own messages come in Vietnamese from the wheel's catalogue too.
    usage = subprocess.run(
        [sys.executable, "-m", "mintdim.cli", "--lang", "vi", "verify"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=SAFETY_NET, check=False,
    )  # fmt: skip
    assert usage.returncode == 2
    assert "Lỗi: Thiếu đối số 'DIRECTORY'." in usage.stderr


def test_ci_runs_exactly_the_readme_test_command_and_it_lints_first() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in ci and ci.rstrip().endswith("make test")
    assert os.access(REPO / ".ci" / "run", os.X_OK)
    assert "make test" in README.read_text() and "make demo" in README.read_text()
    makefile = (REPO / "Makefile").read_text()
    assert re.search(
        r"^test: \$\(STAMP\)\n\t\$\(BIN\)/ruff check \.\n\t\$\(BIN\)/ruff format --check \.\n"
        r"\t\$\(BIN\)/lint-imports\n\t\$\(BIN\)/python -m pytest\b",
        makefile,
        re.M,
    )
    assert re.search(
        r"^lint: \$\(STAMP\)\n\t\$\(BIN\)/ruff check \.\n\t\$\(BIN\)/ruff format --check \.\n"
        r"\t\$\(BIN\)/lint-imports$",
        makefile,
        re.M,
    )
    assert 'pip install --quiet -e ".[dev]"' in makefile


@pytest.mark.parametrize(
    ("example", "outputs"),
    [
        ("unit_build_instruction.py", ["out"]),
        ("mapped_outputs.py", ["out/alpaca_units", "out/qa_units"]),
    ],
)
def test_examples_run(tmp_path, example, outputs) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / example), "out"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=SAFETY_NET, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for out in outputs:
        assert (tmp_path / out / "manifest.json").is_file()
        assert f"{out}:" in done.stdout


def test_every_page_the_package_cites_is_part_of_the_repository():
    """A reader of the code (or of an installed wheel) must be able to open what it cites: a
    ``.md`` path named in the package's source is one of the repository's pages."""
    cited = {
        (path.relative_to(REPO).as_posix(), page)
        for path in (REPO / "mintdim").rglob("*.py")
        for page in re.findall(r"[\w./-]+/[\w.-]+\.md\b", path.read_text(encoding="utf-8"))
    }
    assert cited
    repo = REPO.resolve()

    def inside(page: str) -> bool:
        target = (repo / page).resolve()
        return target.is_relative_to(repo) and target.is_file()

    missing = [(source, page) for source, page in cited if not inside(page)]
    assert not missing, missing
