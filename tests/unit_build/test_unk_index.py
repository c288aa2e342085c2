"""unk_index.jsonl: one line per sample whose field values produce UNK, with 0-based positions into
the sample's tokens, and the UNK totals in stats.json.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from mintdim.build.formats.unk_index import unk_parts, unk_parts_flat
from mintdim.read.reader import open_build
from tests.conftest import corpora_file
from tests.unit_build.helpers import job, read_json, read_jsonl, reference_encoder, write_jsonl

KEYS = ["sample_id", "hash", "source_file", "source_line", "unk_count", "unk_positions"]


def expected_unk_rows(encode, samples: list[tuple[str, int, str]], unk_id: int) -> list[dict]:
    """The unk_index lines computed independently: (source_file, line, text) in sample order."""
    rows = []
    for sample_id, (source, line, text) in enumerate(samples):
        tokens = np.asarray(encode(text), dtype=np.int64)
        positions = np.flatnonzero(tokens == unk_id).tolist()
        if positions:
            rows.append(
                {
                    "sample_id": sample_id,
                    "hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                    "source_file": source,
                    "source_line": line,
                    "unk_count": len(positions),
                    "unk_positions": positions,
                }
            )
    return rows


@pytest.mark.corpora
def test_thai_with_bert_base_uncased(cwd):
    tokenizer = corpora_file("tokenizers/bert-base-uncased.tokenizer.json")
    thai = corpora_file("datasets/xquad_th.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    rows = [json.loads(line) for line in thai]
    rows.insert(2, {"question": "what is the model", "answer": "a unit"})  # no UNK at all
    write_jsonl("data/th.jsonl", [{"question": r["question"], "answer": r["answer"]} for r in rows])
    unk_id = Tokenizer.from_file(str(tokenizer)).token_to_id("[UNK]")
    assert unk_id == 100
    encode = reference_encoder(str(tokenizer))
    texts = [f"{r['question']}?{r['answer']}" for r in rows]
    longest = max(len(encode(t)) for t in texts)
    result = job(
        ["./data/th.jsonl"],
        tokenizer,
        fields=[["question", "answer"]],
        templates=["{question}?{answer}"],
        sizes=[[16, max(longest, 17)]],
        build_batch=[3],
    ).run(workers=2)
    samples = [("./data/th.jsonl", i, t) for i, t in enumerate(texts, start=1)]
    expected = expected_unk_rows(encode, samples, unk_id)
    assert len(expected) >= 5  # Thai is mostly [UNK] for this English vocabulary
    assert read_jsonl("out/unk_index.jsonl") == expected
    assert all(row["sample_id"] != 2 for row in expected)
    stats = result.outputs[0].stats
    assert stats["samples_with_unk"] == len(expected)
    assert stats["unk_tokens"] == sum(r["unk_count"] for r in expected)
    # The positions point at UNK slots of the records read back.
    build = open_build("out")
    index = list(build.samples())
    for row in expected:
        tokens = build.tokens(index[row["sample_id"]])
        assert np.flatnonzero(tokens == unk_id).tolist() == row["unk_positions"]


@pytest.mark.parametrize("fixture", ["sp_model", "hf_json"])
@pytest.mark.parametrize(("workers", "build_batch"), [(1, 1), (1, 50), (2, 2)])
def test_positions_counts_and_stats_with_the_fixtures(cwd, request, fixture, workers, build_batch):
    tokenizer = request.getfixturevalue(fixture)
    texts = [
        "",
        "中",
        "",
        "the 中 model 🎉 data 中",
        "the model",
        "",
        "中中 the é",
        "Ω",
        "the",
    ]
    write_jsonl("data/a.jsonl", [{"text": t} for t in texts])
    encode = reference_encoder(str(tokenizer))
    longest = max(len(encode(t)) for t in texts)
    result = job(
        ["./data/a.jsonl"], tokenizer, sizes=[[4, max(longest, 5)]], build_batch=[build_batch]
    ).run(workers=workers)
    samples = [("./data/a.jsonl", i, t) for i, t in enumerate(texts, start=1)]
    expected = expected_unk_rows(encode, samples, unk_id=1)
    assert len(expected) >= 3
    lines = Path("out/unk_index.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == expected
    assert all(list(json.loads(line)) == KEYS for line in lines)
    stats = result.outputs[0].stats
    assert stats["samples_with_unk"] == len(expected)
    assert stats["unk_tokens"] == sum(r["unk_count"] for r in expected)
    assert read_json("out/stats.json") == stats


def test_unk_lines_match_the_sample_index(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the"}, "", {"text": "中 the"}])
    write_jsonl("data/b.jsonl", [{"text": "🎉"}])
    job(["./data/a.jsonl", "./data/b.jsonl"], sp_model).run(workers=1)
    index = read_jsonl("out/sample_index.jsonl")
    unk = read_jsonl("out/unk_index.jsonl")
    assert [row["sample_id"] for row in unk] == [1, 2]
    for row in unk:
        sample = index[row["sample_id"]]
        assert (row["hash"], row["source_file"], row["source_line"]) == (
            sample["hash"],
            sample["source_file"],
            sample["source_line"],
        )
        assert row["unk_count"] == len(row["unk_positions"])
        assert max(row["unk_positions"]) < sample["token_count"]


def test_no_unk_gives_an_empty_file_and_zero_stats(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the model"}, {"text": "a data token"}])
    result = job(["./data/a.jsonl"], sp_model).run(workers=1)
    assert Path("out/unk_index.jsonl").read_bytes() == b""
    assert (result.outputs[0].stats["samples_with_unk"], result.outputs[0].stats["unk_tokens"]) == (
        0,
        0,
    )


def test_template_literals_never_reach_the_unk_index(cwd, sp_model):
    """Literals are validated before the build (tier 1); only field values can produce UNK."""
    write_jsonl("data/a.jsonl", [{"a": "the", "b": "中"}, {"a": "model", "b": "data"}])
    job(["./data/a.jsonl"], sp_model, fields=[["a", "b"]], templates=["#{a}: {b}!"]).run(workers=1)
    encode = reference_encoder(str(sp_model))
    samples = [("./data/a.jsonl", 1, "#the: 中!"), ("./data/a.jsonl", 2, "#model: data!")]
    assert read_jsonl("out/unk_index.jsonl") == expected_unk_rows(encode, samples, unk_id=1)
    assert [r["sample_id"] for r in read_jsonl("out/unk_index.jsonl")] == [0]


def test_unk_ids_are_counted_by_id_not_piece_text(cwd, sp_model):
    """SentencePiece returns the original text as the piece of an UNK id; MintDim counts ids."""
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(sp_model))
    assert "中" in processor.encode("中", out_type=str)
    write_jsonl("data/a.jsonl", [{"text": "中"}])
    job(["./data/a.jsonl"], sp_model).run(workers=1)
    (row,) = read_jsonl("out/unk_index.jsonl")
    assert row["unk_positions"] == [i for i, t in enumerate(processor.encode("中")) if t == 1]


@pytest.mark.parametrize("samples", [1, 2, 37])
def test_bulk_unk_parts_equal_one_json_document_per_sample(samples):
    """Every sample's positions come from one orjson call split at "],[": each part must read
    back as exactly the JSON a per-sample dump gives."""
    rng = np.random.default_rng(samples)
    positions = [
        sorted(rng.choice(2**31 - 1, size=int(rng.integers(1, 9)), replace=False).tolist())
        for _ in range(samples)
    ]
    hexes = [hashlib.sha256(bytes([i])).hexdigest() for i in range(samples)]
    lines = rng.integers(1, 10**9, size=samples).tolist()
    parts = unk_parts(hexes, '"d\\u00e2t\\"a.jsonl"', lines, positions)
    for part, digest, line, found in zip(parts, hexes, lines, positions, strict=True):
        assert json.loads("{" + part + "}") == {
            "hash": digest,
            "source_file": 'dât"a.jsonl',
            "source_line": line,
            "unk_count": len(found),
            "unk_positions": found,
        }
    assert unk_parts([], '"a"', [], []) == []


def test_bulk_unk_parts_cut_every_number_whole_at_each_decimal_width():
    """A batch's runs are cut out of one text by counted digits (``unk_parts_flat``): every
    width from 1 digit to 19 (the largest int64), each sample ending on a number of another
    width, must read back as exactly the sample's own positions, and as ``unk_parts`` writes
    them from one list per sample."""
    edges = sorted({0, 1, 2**63 - 1} | {v for k in range(1, 19) for v in (10**k - 1, 10**k)})
    positions = [edges[i : i + width] for width in (1, 2, 3) for i in range(len(edges) - 2)]
    hexes = [hashlib.sha256(bytes([i % 256])).hexdigest() for i in range(len(positions))]
    lines = list(range(1, len(positions) + 1))
    flat = np.asarray([p for found in positions for p in found], dtype=np.int64)
    parts = unk_parts_flat(hexes, '"a.jsonl"', lines, flat, list(map(len, positions)))
    assert [json.loads("{" + part + "}")["unk_positions"] for part in parts] == positions
    assert [json.loads("{" + part + "}")["unk_count"] for part in parts] == list(
        map(len, positions)
    )
    assert parts == unk_parts(hexes, '"a.jsonl"', lines, positions)
    assert unk_parts_flat([], '"a"', [], np.zeros(0, dtype=np.int64), []) == []
