"""The build as a sequence: ``len(build)``, ``build[i]``, ``build.units`` and the binary unit indexes.

Every expectation is computed independently: token ids from the tokenizer libraries, places from
sample_index.jsonl (parsed here with json), checksums with hashlib.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from mintdim import open_build
from tests.conftest import corpora_file
from tests.unit_build.helpers import (
    file_sha256,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    write_jsonl,
)

pytestmark = pytest.mark.filterwarnings("ignore::mintdim.TemplateLiteralWarning")

SIZES = [32, 48, 64, 96, 128, 192, 256, 512, 1024]


def _gsm8k(count: int) -> list[dict]:
    lines = corpora_file("datasets/gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:count]]


@pytest.fixture
def bert_build(cwd: Path) -> Path:
    """300 GSM8K questions through bert-base-uncased, several shards per unit, two workers."""
    tokenizer = corpora_file("tokenizers/bert-base-uncased.tokenizer.json")
    write_jsonl("data/gsm8k.jsonl", _gsm8k(300))
    job(
        ["./data/gsm8k.jsonl"],
        tokenizer,
        fields=[["question", "answer"]],
        templates=["Q: {question}\nA: {answer}"],
        sizes=[SIZES],
        samples_per_shard=[7],
        build_batch=[16],
    ).run(workers=2, progress=False)
    return cwd / "out"


def test_the_build_is_a_sequence_of_each_samples_exact_tokens(bert_build):
    encode = reference_encoder(corpora_file("tokenizers/bert-base-uncased.tokenizer.json"))
    rows = _gsm8k(300)
    build = open_build(bert_build)
    assert len(build) == len(rows)
    for sample_id, row in enumerate(rows):
        tokens = build[sample_id]
        assert tokens.tolist() == encode(f"Q: {row['question']}\nA: {row['answer']}")
        # A view into the read-only shard map, never a copy.
        assert not tokens.flags.owndata and not tokens.flags.writeable
    assert build[-1].tolist() == build[len(rows) - 1].tolist()
    assert build[np.int64(3)].tolist() == build[3].tolist()
    for bad in (len(rows), -len(rows) - 1):
        with pytest.raises(IndexError):
            build[bad]
    assert build.units == {int(k): v for k, v in read_json(bert_build / "histogram.json").items()}
    assert list(build.units) == SIZES


def test_each_unit_index_lists_its_records_in_order(bert_build):
    rows = read_jsonl(bert_build / "sample_index.jsonl")
    manifest = read_json(bert_build / "manifest.json")
    listed = {entry["path"]: entry for entry in manifest["unit_indexes"]}
    for size in SIZES:
        members = sorted(
            (r for r in rows if r["unit_size"] == size),
            key=lambda r: (r["shard_path"], r["shard_row"]),
        )
        path = bert_build / f"unit_{size}" / "index.npy"
        if not members:
            assert not path.exists() and f"unit_{size}/index.npy" not in listed
            continue
        entries = np.load(path)  # plain NumPy, no MintDim code
        assert entries["sample_id"].tolist() == [r["sample_id"] for r in members]
        assert entries["token_count"].tolist() == [r["token_count"] for r in members]
        assert listed[f"unit_{size}/index.npy"] == {
            "path": f"unit_{size}/index.npy",
            "unit_size": size,
            "samples": len(members),
            "bytes": path.stat().st_size,
            "sha256": file_sha256(path),
        }
    assert len(listed) == sum(1 for count in open_build(bert_build).units.values() if count)


def test_a_pickled_build_carries_no_tokens_and_reads_the_same(bert_build):
    build = open_build(bert_build)
    first = build[0].tolist()  # opens a shard map in this copy
    data = pickle.dumps(build)
    assert len(data) < 20_000
    assert pickle.loads(data)[0].tolist() == first


def test_an_empty_build_is_an_empty_sequence(cwd, sp_model):
    write_jsonl("data/a.jsonl", [])
    job(["./data/a.jsonl"], sp_model).run(workers=1)
    build = open_build("out")
    assert len(build) == 0 and set(build.units.values()) == {0}
    assert read_json("out/manifest.json")["unit_indexes"] == []
    with pytest.raises(IndexError):
        build[0]
