"""``mintdim inspect``: the summary, per-unit table and bar chart match the build's own files;
``--sample`` shows the sample's source, place, ids and decoded text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import sentencepiece as spm
from click.testing import CliRunner

from mintdim.cli import main
from tests.unit_build.helpers import job, read_jsonl, write_jsonl

SIZES = [8, 16, 32, 64]


def _build(cwd: Path, sp_model: Path) -> Path:
    texts = [" ".join(["the model data"] * (i % 7 + 1)) for i in range(60)]
    write_jsonl(cwd / "data.jsonl", [{"text": t} for t in texts])
    job(["data.jsonl"], sp_model, sizes=[SIZES], samples_per_shard=[7]).run(workers=1)
    return cwd / "out"


def _inspect(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args])
    return result.exit_code, result.output


def test_the_table_and_chart_are_the_builds_own_numbers(cwd, sp_model):
    out = _build(cwd, sp_model)
    code, output = _inspect("inspect", str(out))
    assert code == 0, output
    rows = read_jsonl(out / "sample_index.jsonl")
    table = {}
    for line in output.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0].isdigit() and len(cells) == 6:
            table[int(cells[0])] = cells
    assert sorted(table) == SIZES
    for size in SIZES:
        members = [r for r in rows if r["unit_size"] == size]
        tokens = sum(r["token_count"] for r in members)
        shards = list((out / f"unit_{size}").glob("shard_*.bin"))
        _, samples, shown_tokens, padding, shard_count, _ = table[size]
        assert int(samples.replace(",", "")) == len(members)
        assert int(shown_tokens.replace(",", "")) == tokens
        assert int(padding.split()[0].replace(",", "")) == len(members) * size - tokens
        assert int(shard_count) == len(shards)
    bars = {
        int(m.group(1)): (len(m.group(2)), int(m.group(3)))
        for m in re.finditer(r"^\s*(\d+) │(█*)\S* (\d+)$", output, flags=re.M)
    }
    counts = {size: sum(r["unit_size"] == size for r in rows) for size in SIZES}
    assert {size: count for size, (_, count) in bars.items()} == counts
    largest = max(counts.values())
    for length, count in bars.values():
        assert length == count * 40 // largest
    stats = json.loads((out / "stats.json").read_text())
    assert f"samples      {stats['total_samples']:,} " in output
    assert f"padding {stats['padding_ratio']:.2%}" in output


def test_one_sample_shows_where_it_came_from_and_its_text(cwd, sp_model):
    out = _build(cwd, sp_model)
    rows = read_jsonl(out / "sample_index.jsonl")
    row = rows[5]
    code, output = _inspect("inspect", str(out), "--sample", "5")
    assert code == 0, output
    processor = spm.SentencePieceProcessor(model_file=str(sp_model))
    text = json.loads((cwd / "data.jsonl").read_text().splitlines()[5])["text"]
    ids = processor.encode(text)
    assert f"source       data.jsonl:{row['source_line']}" in output
    assert f"{row['shard_path']} row {row['shard_row']}" in output
    assert " ".join(map(str, ids[:32])) in output
    assert output.rstrip("\n").endswith(processor.decode(ids))
    code, output = _inspect("--lang", "vi", "inspect", str(out), "--sample", "5")
    assert code == 0 and f"nguồn        data.jsonl:{row['source_line']}" in output
    code, output = _inspect("inspect", str(out), "--sample", str(len(rows)))
    assert code == 2 and f"this build holds samples 0 to {len(rows) - 1}" in output


def test_inspect_refuses_what_is_not_a_build(cwd):
    code, output = _inspect("inspect", str(cwd / "nothing"))
    assert code == 2 and output.startswith("NotABuildError:")
    code, output = _inspect("--lang", "vi", "inspect", str(cwd))
    assert code == 2 and "Thư mục không chứa bản build MintDim" in output
