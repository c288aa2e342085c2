"""``mintdim plan``: the table of exact plans, the units YAML the runner loads, the picture."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from mintdim.cli import main
from mintdim.runner.demo import DEMO_DIR
from tests.runner.conftest import run_cli
from tests.unit_build.helpers import reference_encoder
from tests.unit_build.test_unit_planner import _reference_dp

_DEMO = DEMO_DIR / "self_instruct_seed_alpaca.jsonl"
_TEMPLATE = "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n{output}"


@pytest.fixture(autouse=True)
def _hydra_singletons(hydra_restore_singletons: None) -> None:
    """The scan composes the runner's config: restore Hydra's global state afterwards."""


@pytest.fixture(scope="module")
def demo_counts() -> np.ndarray:
    """Every demo sample's token count, straight from the SentencePiece library."""
    encode = reference_encoder(DEMO_DIR / "demo_unigram.model")
    rows = [json.loads(line) for line in _DEMO.open(encoding="utf-8")]
    return np.array([len(encode(_TEMPLATE.format(**row))) for row in rows])


def _rows(output: str) -> dict[int, list[str]]:
    table = [line for line in output.splitlines() if re.match(r"\| \d+ \|", line)]
    return {int(cells[0]): cells for cells in (line.strip("| ").split(" | ") for line in table)}


def test_table_from_a_scan_is_the_exact_optimum_for_every_k(demo_counts, tmp_path) -> None:
    done = CliRunner().invoke(main, ["plan", "-k", "5", "workers=1"])
    assert done.exit_code == 0, done.output
    rows = _rows(done.output)
    assert sorted(rows) == [1, 2, 3, 4, 5]
    lengths, samples = np.unique(demo_counts, return_counts=True)
    tokens = int(demo_counts.sum())
    for k, cells in rows.items():
        slots = _reference_dp(lengths, samples, k, square=False)
        sizes = [int(s) for s in cells[1].split(", ")]
        assert len(sizes) == k and sizes[-1] == demo_counts.max()
        assert cells[2] == f"{(slots - tokens) / slots:.2%}"
        assert cells[3] == f"{slots - tokens:,}"
        assert cells[4] == f"{slots * 2:,}"  # uint16 shards
        per_unit = [int(n.replace(",", "")) for n in cells[5].split(", ")]
        assert per_unit == [
            int(np.sum((demo_counts <= size) & (demo_counts > low)))
            for low, size in zip([0, *sizes[:-1]], sizes, strict=True)
        ]
    assert "175 samples" in done.output


def test_written_units_yaml_builds_with_the_planned_padding(tmp_path) -> None:
    target = tmp_path / "conf" / "units" / "best4.yaml"
    done = CliRunner().invoke(
        main, ["plan", "-k", "6", "--count", "4", "--write", str(target), "workers=1"]
    )
    assert done.exit_code == 0, done.output
    planned = _rows(done.output)[4]
    assert f"--config-dir {tmp_path / 'conf'} units=best4" in done.output
    built = run_cli(
        "--config-dir",
        str(tmp_path / "conf"),
        "units=best4",
        "workers=1",
        "output=dir",
        f"output.dir=[{tmp_path / 'out'}]",
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert ", ".join(str(s) for s in manifest["units"]["sizes"]) == planned[1]
    assert f"{stats['pad_tokens']:,}" == planned[3]

    from_build = CliRunner().invoke(main, ["plan", "-k", "6", "--build", str(tmp_path / "out")])
    assert from_build.exit_code == 0, from_build.output
    assert _rows(from_build.output) == _rows(done.output)


def test_vietnamese_table_and_bad_yaml_path(tmp_path) -> None:
    done = CliRunner().invoke(main, ["--lang", "vi", "plan", "-k", "2", "workers=1"])
    assert done.exit_code == 0, done.output
    assert "tỉ lệ padding" in done.output and "175 mẫu" in done.output
    bad = CliRunner().invoke(main, ["plan", "--write", str(tmp_path / "x.yaml"), "workers=1"])
    assert bad.exit_code == 2
    assert "units/<name>.yaml" in bad.output


def test_png_with_matplotlib(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    picture = tmp_path / "lengths.png"
    done = CliRunner().invoke(main, ["plan", "-k", "3", "--png", str(picture), "workers=1"])
    assert done.exit_code == 0, done.output
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_without_matplotlib_says_how_to_get_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    picture = tmp_path / "lengths.png"
    done = CliRunner().invoke(
        main, ["--lang", "vi", "plan", "-k", "3", "--png", str(picture), "workers=1"]
    )
    assert done.exit_code == 0, done.output
    assert not picture.exists()
    assert "chưa cài matplotlib" in done.output and "pip install matplotlib" in done.output
    assert _rows(done.output)


def test_a_directory_without_a_build_is_named_and_exits_2(tmp_path) -> None:
    done = CliRunner().invoke(main, ["plan", "--build", str(tmp_path / "none")])
    assert done.exit_code == 2
    assert "NotABuildError:" in done.output and str(tmp_path / "none") in done.output
    assert "Traceback" not in done.output


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_pack_predicts_the_rows_of_packing_before_a_build(demo_counts, lang) -> None:
    """``--pack W``: the rows best-fit decreasing uses (counted by brute force), the lower bound,
    the padding they leave, and the samples too long for a row."""
    from tests.unit_build.test_packing import brute_force

    width = 1024
    done = CliRunner().invoke(
        main, ["--lang", lang, "plan", "-k", "1", "--pack", "1024", "workers=1"]
    )
    assert done.exit_code == 0, done.output
    fitting = [int(n) for n in demo_counts if n <= width]
    rows = len(brute_force(fitting, width))
    bound = -(-sum(fitting) // width)
    padding = (rows * width - sum(fitting)) / (rows * width)
    word = "rows" if lang == "en" else "hàng"
    assert f"{rows:,} {word}" in done.output and f"{bound:,} (+" in done.output
    assert f"padding {padding:.2%}" in done.output
    too_long = len(demo_counts) - len(fitting)
    assert too_long and f"{too_long:,} " in done.output.splitlines()[-1]
