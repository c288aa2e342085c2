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
from tests.conftest import corpora_file, training_text
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


@pytest.fixture
def sp_built(cwd: Path, sp_model: Path) -> tuple[Path, list[list[int]]]:
    """40 samples through a SentencePiece model, several shards per unit, and each sample's ids
    from the library itself."""
    texts = training_text(40, seed=9)
    write_jsonl("data/a.jsonl", [{"text": t} for t in texts])
    job(["./data/a.jsonl"], sp_model, sizes=[[8, 16, 32, 64]], samples_per_shard=[3]).run(
        workers=1, progress=False
    )
    encode = reference_encoder(sp_model)
    return cwd / "out", [encode(t) for t in texts]


@pytest.mark.parametrize(
    "part",
    [
        slice(0, 2),
        slice(None),
        slice(5, None, 3),
        slice(-4, None),
        slice(None, None, -1),
        slice(30, 2, -7),
        slice(10, 10),
        slice(100, 200),
        slice(np.int64(1), np.int64(6), np.int64(2)),
    ],
)
def test_a_slice_of_the_build_is_the_list_of_those_samples_tokens(sp_built, part):
    out, expected = sp_built
    build = open_build(out)
    got = build[part]
    assert isinstance(got, list)
    assert [tokens.tolist() for tokens in got] == expected[part]
    assert all(not tokens.flags.owndata and not tokens.flags.writeable for tokens in got)


@pytest.mark.parametrize("bad", [1.0, "0", None, (0, 1), [0, 1]])
def test_a_sample_id_that_is_neither_an_integer_nor_a_slice_is_a_type_error(sp_built, bad):
    build = open_build(sp_built[0])
    with pytest.raises(TypeError, match="integers or slices"):
        build[bad]
