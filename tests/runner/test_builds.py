"""Run the runner's job function on composed configs, in-process: every bundled source x tokenizer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
from tokenizers import Tokenizer

from mintdim import LineTooLongError, PipelineValidationError, UnitOverflowError
from mintdim.runner.app import run_job
from mintdim.runner.demo import DEMO_DIR
from tests.unit_build.helpers import tree_bytes_but_source_names

from .conftest import REPO

SOURCES = {"demo": 175, "alpaca": 175, "qa": 300, "mapped": 475}
TOKENIZERS = ("demo_sentencepiece", "demo_hf_json")


pytestmark = pytest.mark.usefixtures("english_from_the_repo_root")


def encoder(tokenizer: str):
    if tokenizer == "demo_sentencepiece":
        sp = spm.SentencePieceProcessor(model_file=str(DEMO_DIR / "demo_unigram.model"))
        return lambda text: sp.encode(text), 0
    hf = Tokenizer.from_file(str(DEMO_DIR / "demo_bpe.tokenizer.json"))
    return lambda text: hf.encode(text, add_special_tokens=False).ids, 0


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_every_bundled_source_builds_with_both_demo_tokenizers(
    compose_cfg, tmp_path, source, tokenizer
) -> None:
    out = tmp_path / "out"
    cfg = compose_cfg(
        f"source={source}",
        f"tokenizer={tokenizer}",
        "output=dir",
        f"output.dir=[{out}]",
        "workers=1",
    )
    summary = run_job(cfg)

    stats = json.loads((out / "stats.json").read_text())
    (only,) = summary["outputs"]
    assert only["path"] == str(out)
    assert only["samples"] == stats["total_samples"] == summary["samples"] == SOURCES[source]
    assert only["tokens"] == stats["total_tokens"]
    assert only["slots"] == stats["total_slots"] == only["tokens"] + only["pad_tokens"]
    assert only["padding_ratio"] == stats["padding_ratio"] == summary["padding_ratio"]
    assert only["padding_ratio"] == pytest.approx(only["pad_tokens"] / only["slots"], abs=1e-6)
    assert only["sizes"] == [64, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 1536, 2048, 3072]
    assert only["bytes_on_disk"] == sum(p.stat().st_size for p in out.rglob("*") if p.is_file())

    # the first sample, read back from its shard, is the tokenizer's own encoding plus PAD
    encode, pad = encoder(tokenizer)
    row = json.loads((out / "sample_index.jsonl").read_text().splitlines()[0])
    manifest = json.loads((out / "manifest.json").read_text())
    first = json.loads(Path(row["source_file"]).read_text().splitlines()[0])
    text = manifest["source"]["templates"][0]
    for field in manifest["source"]["fields"][0]:
        text = text.replace("{" + field + "}", first[field])
    records = np.fromfile(out / row["shard_path"], dtype="<u2").reshape(-1, row["unit_size"])
    record = records[row["shard_row"]].tolist()
    assert record[: row["token_count"]] == encode(text)
    assert set(record[row["token_count"] :]) <= {pad}


def test_mapped_source_with_one_output_per_file(compose_cfg, tmp_path) -> None:
    cfg = compose_cfg(
        "source=mapped",
        "output=dir",
        f"output.dir=[{tmp_path}/alpaca,{tmp_path}/qa]",
        "output.samples_per_shard=[50,1000]",
        "units.sizes=[[128,256,512,1024,2048,4096],[128,256,512]]",
        "units.build_batch=[64,32]",
        "workers=1",
    )
    summary = run_job(cfg)
    alpaca, qa = summary["outputs"]
    assert (alpaca["samples"], qa["samples"]) == (175, 300)
    assert qa["sizes"] == [128, 256, 512]
    assert summary["samples"] == 475
    assert summary["pad_tokens"] == alpaca["pad_tokens"] + qa["pad_tokens"]
    assert len(list((tmp_path / "alpaca" / "unit_128").glob("shard_*.bin"))) >= 1


def test_a_mintdim_error_propagates_with_its_language(compose_cfg, tmp_path) -> None:
    cfg = compose_cfg("units.sizes=[[64]]", "output=dir", f"output.dir=[{tmp_path}/o]", "lang=vi")
    with pytest.raises(UnitOverflowError) as info:
        run_job(cfg)
    assert str(info.value).startswith(f"UnitOverflowError:\n{UnitOverflowError.summary.vi}")


def test_missing_values_are_listed_by_the_core(compose_cfg) -> None:
    cfg = compose_cfg("source=prompt_response", "output=dir")
    with pytest.raises(PipelineValidationError) as info:
        run_job(cfg)
    assert info.value.missing == ["source.files", "output.dir"]


def test_the_bundled_parquet_source_builds_what_the_alpaca_jsonl_builds(compose_cfg, tmp_path):
    """conf/source/parquet.yaml: the demo rows as Parquet (three row groups), kind parquet."""
    pytest.importorskip("pyarrow")
    outputs = {}
    for source in ("alpaca", "parquet"):
        out = tmp_path / source
        cfg = compose_cfg(f"source={source}", "output=dir", f"output.dir=[{out}]", "workers=2")
        run_job(cfg)
        outputs[source] = out
    (entry,) = json.loads((outputs["parquet"] / "manifest.json").read_text())["source"]["inputs"]
    assert entry["format"] == "parquet" and entry["path"].endswith(".parquet")
    assert tree_bytes_but_source_names(outputs["parquet"]) == tree_bytes_but_source_names(
        outputs["alpaca"]
    )


def test_the_bundled_parquet_file_holds_the_alpaca_rows() -> None:
    pytest.importorskip("pyarrow")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_demo_parquet.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_max_line_bytes_reaches_a_parquet_source(compose_cfg, tmp_path) -> None:
    """source.max_line_bytes bounds a Parquet row's declared values as it bounds a JSONL line:
    the demo's longest row holds more than 1,000 bytes, so the build names it."""
    pytest.importorskip("pyarrow")
    cfg = compose_cfg(
        "source=parquet", "source.max_line_bytes=1000", "output=dir", f"output.dir=[{tmp_path}]"
    )
    with pytest.raises(LineTooLongError) as info:
        run_job(cfg)
    assert info.value.kind == "parquet" and info.value.limit == 1000
    assert "Row" in info.value.message("en") and "Hàng" in info.value.message("vi")


def test_units_pack_packs_any_unit_set_and_units_packed_one_width(compose_cfg, tmp_path) -> None:
    from mintdim import open_build

    builds = {}
    for name, overrides in (
        ("small", ["units=small", "units.pack=true"]),
        ("packed", ["units=packed"]),
        ("plain", ["units=small"]),
    ):
        out = tmp_path / name
        summary = run_job(compose_cfg(*overrides, "output=dir", f"output.dir=[{out}]", "workers=1"))
        builds[name] = (open_build(out), summary)
    plain = builds["plain"][0]
    for name in ("small", "packed"):
        build, summary = builds[name]
        assert build.packed and len(build) == len(plain)
        assert all(np.array_equal(build[i], plain[i]) for i in range(len(plain)))
        packing = json.loads((Path(build.path) / "stats.json").read_text())["packing"]
        assert summary["outputs"][0]["packing"] == packing
    assert list(builds["packed"][0].units) == [4096]
    assert builds["small"][0].units == plain.units  # the same smallest unit per sample
    ratios = [builds[name][1]["padding_ratio"] for name in ("packed", "small", "plain")]
    assert ratios == sorted(ratios) and ratios[0] < 0.05
