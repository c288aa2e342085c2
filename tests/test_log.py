"""How MintDim shows its lines in a fresh Python process, as a user's script sees them.

Each test runs a small build in a subprocess: under pytest the root logger always has pytest's
handlers, so only a fresh process shows what a person who configured nothing gets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit_build.helpers import write_word_level
from tests.waiting import SAFETY_NET

REPO = Path(__file__).resolve().parents[1]

# "\n\n" vanishes under the Whitespace pre-tokenizer; every other literal encodes to tokens.
TEMPLATE = "### Câu hỏi:\n{a}\n\n{b}"
VOCAB = {"[UNK]": 0, "[PAD]": 1, "###": 2, "Câu": 3, "hỏi": 4, ":": 5, "the": 6, "model": 7}
SHARD_LINES = [
    "[unit-build] shard=000000 samples=1 bytes=16 B unit=8",
    "[unit-build] shard=000001 samples=1 bytes=16 B unit=8",
]
WARNING_EN = (
    '[unit-build:warning] template of file 0 ("### Câu hỏi:\\n{a}\\n\\n{b}"): literal segment '
    '"\\n\\n" encodes to no tokens: the tokenizer\'s normalisation removes it, so the shards '
    "hold nothing for it. The build continues."
)


def run_build(
    folder: Path, setup: str = "", lang: str = "en", progress: bool = False
) -> subprocess.CompletedProcess:
    """A two-sample build in a fresh interpreter, after ``setup`` ran there."""
    tokenizer = write_word_level(folder / "tokenizer.json", VOCAB)
    script = "\n".join(
        [
            "import logging",
            "from mintdim.build.formats import shards as shard_writer",
            "from tests.unit_build.helpers import job, write_jsonl",
            setup,
            'write_jsonl("a.jsonl", [{"a": "the", "b": "model"}] * 2)',
            f"job(['a.jsonl'], {str(tokenizer)!r}, fields=[['a', 'b']], templates=[{TEMPLATE!r}],"
            f" sizes=[[8, 64]], samples_per_shard=[1]).run(workers=1, progress={progress})",
        ]
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MINTDIM_LANG", "PYTHONWARNINGS")}
    env.update(MINTDIM_LANG=lang, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=SAFETY_NET,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_script_that_configured_nothing_sees_each_line_once_on_stderr(tmp_path):
    done = run_build(tmp_path)
    # The warning is its text alone: no "file:line: Category:" prefix, no Python source line.
    assert done.stderr.splitlines() == [WARNING_EN, *SHARD_LINES]
    assert done.stdout == ""


def test_lines_above_a_progress_bar_show_once(tmp_path):
    done = run_build(tmp_path, progress=True)
    lines = done.stderr.replace("\r", "\n").splitlines()
    assert [line for line in lines if line.startswith("[unit-build")] == [WARNING_EN, *SHARD_LINES]
    assert any(line.startswith("unit-build: 100%|") for line in lines)


def test_vietnamese_lines_show_real_characters(tmp_path):
    done = run_build(tmp_path, lang="vi")
    assert done.stderr.splitlines() == [
        '[unit-build:warning] template của file 0 ("### Câu hỏi:\\n{a}\\n\\n{b}"): đoạn literal '
        '"\\n\\n" không tạo ra token nào: bước chuẩn hoá của tokenizer xoá nó, nên shard không '
        "chứa gì cho đoạn này. Build vẫn tiếp tục.",
        *SHARD_LINES,
    ]
    assert "\\u" not in done.stderr


@pytest.mark.parametrize(
    "setup",
    [
        'logging.getLogger("mintdim").setLevel(logging.WARNING)',
        'logging.getLogger("mintdim.unit_build").setLevel(logging.WARNING)',
        "logging.disable(logging.INFO)",
        "logging.basicConfig()",  # the application logs warnings and up only
    ],
)
def test_logging_configuration_silences_shard_lines_but_keeps_warnings(tmp_path, setup):
    # A 1-byte threshold turns every shard into an oversized one: a WARNING-level line.
    done = run_build(tmp_path, f"{setup}\nshard_writer.RECOMMENDED_SHARD_BYTES = 1")
    assert "[unit-build] shard=" not in done.stderr
    assert done.stderr.count("[unit-build:warning] shard=") == 2
    assert done.stderr.count("encodes to no tokens") == 1


def test_an_application_handler_gets_each_line_once_in_its_own_format(tmp_path):
    setup = 'logging.basicConfig(level=logging.INFO, format="%(name)s|%(levelname)s|%(message)s")'
    done = run_build(tmp_path, setup)
    shown = [line for line in done.stderr.splitlines() if "[unit-build] shard=" in line]
    assert shown == [f"mintdim.unit_build|INFO|{line}" for line in SHARD_LINES]


def test_logging_captured_warnings_show_no_source_line_either(tmp_path):
    done = run_build(tmp_path, "logging.captureWarnings(True)\nlogging.basicConfig()")
    # (logging.captureWarnings keeps the newline that ends every formatted warning.)
    assert done.stderr.rstrip().splitlines() == [f"WARNING:py.warnings:{WARNING_EN}"]
