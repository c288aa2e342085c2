"""``mintdim.decontaminate`` on a real build with GSM8K questions planted in Alpaca samples,
checked against brute force (n-gram sets over ids SentencePiece gives, computed in the tests)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import sentencepiece

import mintdim
from mintdim.check.verify import verify_build
from tests.decontaminate.conftest import (
    ANSWER_ONLY,
    GSM8K,
    MODEL,
    PLANTED,
    VARIANT,
    brute_force,
    encode_values,
    gsm8k_rows,
    record_ids,
)
from tests.unit_build.helpers import tree_bytes

AGAINST = [{"path": str(GSM8K), "fields": ["question", "answer"]}]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def tokens_run(planted: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("tokens") / "out"
    return out, mintdim.decontaminate(planted, out, against=AGAINST)


@pytest.fixture(scope="module")
def reference(planted: Path):
    items = [[row["question"], row["answer"]] for row in gsm8k_rows()]
    return brute_force(record_ids(planted), encode_values(MODEL, items))


def test_removed_samples_and_hits_equal_brute_force(tokens_run, reference, planted):
    out, result = tokens_run
    pairs, _ = reference
    alpaca = 175
    expected = sorted({s for s, _ in pairs})
    assert list(result.samples_removed) == expected
    # The planted question samples and the answer sample; no plain Alpaca sample.
    assert {alpaca + k for k in range(len(PLANTED))} | {alpaca + len(PLANTED) + 1} <= set(expected)
    assert all(s >= alpaca for s in expected)
    rows = _lines(out / "contamination.jsonl")
    found = {(r["sample_id"], r["item"] - 1): r["ngrams_shared"] for r in rows}
    assert found == pairs
    first = rows[0]
    assert list(first) == [
        "sample_id",
        "source_file",
        "source_line",
        "benchmark",
        "item",
        "ngrams_shared",
        "longest_shared_run",
    ]
    assert first["benchmark"] == "gsm8k_test_first300"
    assert first["source_line"] == first["sample_id"] + 1
    assert all(r["longest_shared_run"] >= 13 for r in rows)


def test_item_coverage_equals_brute_force(tokens_run, reference):
    out, result = tokens_run
    _, coverage = reference
    items = _lines(out / "items" / "gsm8k_test_first300.jsonl")
    assert [row["item"] for row in items] == list(range(1, 301))
    for row, expected in zip(items, coverage, strict=True):
        got = [value["coverage"] for value in row["values"]]
        for g, e in zip(got, expected, strict=True):
            assert (g is None and e is None) or g == pytest.approx(e, abs=1e-6)
        assert row["contaminated"] == any(e is not None and e >= 0.5 for e in expected)
    contaminated = {row["item"] for row in items if row["contaminated"]}
    assert {k + 1 for k in PLANTED} | {ANSWER_ONLY + 1} <= contaminated
    assert set(result.contaminated_items["gsm8k_test_first300"]) == contaminated
    assert [v["field"] for v in items[0]["values"]] == ["question", "answer"]


def test_clean_build_is_a_build_that_verifies_and_loads(tokens_run, planted):
    out, result = tokens_run
    assert json.loads((out / "verification.json").read_text())["ok"] is True
    clean = out / "clean"
    assert verify_build(clean).ok
    opened = mintdim.open_build(clean)
    original = mintdim.open_build(planted)
    assert len(opened) == len(original) - len(result.samples_removed)
    sources = [row["source_sample_id"] for row in opened.samples()]
    assert sources == sorted(set(range(len(original))) - set(result.samples_removed))
    for new, old in enumerate(sources):
        assert np.array_equal(opened[new], original[old])
    batches = list(opened.loader(batch_size=8, seed=0, drop_last=False))
    assert sum(len(b.sample_ids) for b in batches) == len(opened)


def test_report_and_manifest(tokens_run, planted):
    out, result = tokens_run
    report = json.loads((out / "report.json").read_text())
    (bench,) = report["benchmarks"]
    assert bench["items"] == 300
    assert bench["contaminated"] == len(result.contaminated_items["gsm8k_test_first300"])
    assert report["files"][0]["removed"] == len(result.samples_removed)
    assert report["examples"] and report["examples"][0]["sample_text"]
    text = (out / "REPORT.md").read_text()
    assert "Training sample:" in text and "Mẫu huấn luyện:" in text
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "mintdim-decontamination"
    assert (
        manifest["benchmarks"][0]["sha256"]
        == __import__("hashlib").sha256(GSM8K.read_bytes()).hexdigest()
    )
    assert manifest["options"]["ngram"] == 13
    assert manifest["clean"]["path"] == "clean"


def test_words_mode_catches_case_space_and_punctuation_variants(planted, tmp_path, tokens_run):
    _, by_tokens = tokens_run
    variant_sample = 175 + len(PLANTED)
    assert variant_sample not in by_tokens.samples_removed  # its token ids differ
    result = mintdim.decontaminate(planted, tmp_path / "w", against=AGAINST, match="words")
    assert variant_sample in result.samples_removed
    assert set(by_tokens.samples_removed) <= set(result.samples_removed)
    assert VARIANT + 1 in result.contaminated_items["gsm8k_test_first300"]
    assert json.loads((tmp_path / "w" / "verification.json").read_text())["ok"]


def test_words_mode_equals_brute_force_over_normalised_words(planted, tmp_path):
    import unicodedata

    def words(text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text).lower()
        text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
        return text.split()

    vocabulary: dict[str, int] = {}
    items = [
        [
            [vocabulary.setdefault(w, len(vocabulary) + 1) for w in words(t)]
            for t in (r["question"], r["answer"])
        ]
        for r in gsm8k_rows()
    ]
    from tests.decontaminate.conftest import TEMPLATE, training_rows

    texts = [TEMPLATE.format(**row) for row in training_rows()]
    samples = [[vocabulary.get(w, 0) for w in words(t)] for t in texts]
    pairs, _ = brute_force(samples, items)
    result = mintdim.decontaminate(planted, tmp_path / "w", against=AGAINST, match="words")
    assert list(result.samples_removed) == sorted({s for s, _ in pairs})


def test_report_only_writes_no_clean_build(planted, tmp_path, tokens_run):
    _, full = tokens_run
    out = tmp_path / "r"
    result = mintdim.decontaminate(planted, out, against=AGAINST, report_only=True)
    assert not (out / "clean").exists()
    assert result.samples_removed == full.samples_removed
    assert {p.name for p in out.iterdir()} == {
        "contamination.jsonl",
        "items",
        "verification.json",
        "report.json",
        "REPORT.md",
        "manifest.json",
    }
    assert json.loads((out / "verification.json").read_text())["ok"]


def test_same_bytes_whatever_the_worker_count(planted, tmp_path):
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        mintdim.decontaminate(planted, out, against=AGAINST, workers=workers)
        outs.append(out)
    assert tree_bytes(outs[0]) == tree_bytes(outs[1])


def test_min_matches_and_ngram_are_applied(planted, tmp_path, reference):
    items = [[row["question"], row["answer"]] for row in gsm8k_rows()]
    pairs, _ = brute_force(record_ids(planted), encode_values(MODEL, items), n=8, min_matches=20)
    result = mintdim.decontaminate(
        planted, tmp_path / "o", against=AGAINST, ngram=8, min_matches=20
    )
    assert list(result.samples_removed) == sorted({s for s, _ in pairs})


def _round_trip_slice(ids: list[int], length: int) -> str:
    """The text of the first slice of ``length`` ids of a record that encodes back to them
    alone (a value matched whole must have the ids the record holds)."""
    processor = sentencepiece.SentencePieceProcessor(model_file=str(MODEL))
    for start in range(len(ids) - length):
        text = processor.decode(ids[start : start + length])
        if processor.encode(text) == ids[start : start + length]:
            return text
    raise AssertionError("no slice encodes back to itself")


def test_short_values_are_matched_whole_or_counted(planted, tmp_path):
    records = record_ids(planted)
    short = [
        {"q": _round_trip_slice(records[175], 9)},  # shorter than 13: matched whole
        {"q": "step by"},  # too short to check
        {"q": gsm8k_rows()[3]["question"]},
    ]
    bench = tmp_path / "short.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in short))
    result = mintdim.decontaminate(planted, tmp_path / "o", against=[f"{bench}:q"])
    items = _lines(tmp_path / "o" / "items" / "short.jsonl")
    ids = encode_values(MODEL, [[r["q"]] for r in short])
    assert len(ids[0][0]) == 9 and len(ids[1][0]) < 8
    pairs, coverage = brute_force(records, ids)
    assert list(result.samples_removed) == sorted({s for s, _ in pairs})
    assert 175 in result.samples_removed
    assert [row["values"][0]["coverage"] for row in items] == [
        None if c[0] is None else round(c[0], 6) for c in coverage
    ]
    assert items[0]["values"][0]["coverage"] == 1.0
    assert items[1]["values"][0]["too_short"] is True
    assert items[1]["values"][0]["coverage"] is None
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["benchmarks"][0]["too_short"] == 1


def test_distinct_id_rule_skips_runs_without_content(planted, tmp_path):
    bench = tmp_path / "pad.jsonl"
    filler = " ".join(["the"] * 40)
    bench.write_text(json.dumps({"text": filler}) + "\n")
    result = mintdim.decontaminate(planted, tmp_path / "o", against=[f"{bench}:text"])
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    (ids,) = encode_values(MODEL, [[filler]])[0]
    assert report["benchmarks"][0]["skipped"] == len(ids) - 13 + 1
    assert result.samples_removed == ()


def test_parquet_and_compressed_benchmarks_and_names(planted, tmp_path):
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = gsm8k_rows()
    table = pa.table({"question": [r["question"] for r in rows]})
    pq.write_table(table, tmp_path / "gsm.parquet")
    with gzip.open(tmp_path / "gsm8k.jsonl.gz", "wt") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    result = mintdim.decontaminate(
        planted,
        tmp_path / "o",
        against=[
            {"path": str(tmp_path / "gsm.parquet"), "fields": ["question"]},
            {"path": str(tmp_path / "gsm8k.jsonl.gz"), "fields": ["question"], "name": "g2"},
        ],
        report_only=True,
    )
    assert set(result.contaminated_items) == {"gsm", "g2"}
    assert result.contaminated_items["gsm"] == result.contaminated_items["g2"]
    assert {k + 1 for k in PLANTED} <= set(result.contaminated_items["gsm"])


def test_the_input_build_is_untouched(build_copy, tmp_path):
    before = tree_bytes(build_copy)
    mintdim.decontaminate(build_copy, tmp_path / "o", against=AGAINST)
    assert before == tree_bytes(build_copy)
    shutil.rmtree(tmp_path / "o")


def test_two_inputs_with_spans_and_eos(tmp_path):
    """Two input files (one gzip), segment spans stored, EOS appended: the clean copy keeps the
    spans and verifies; the report counts the samples removed per input file."""
    import gzip

    from mintdim import pipeline
    from tests.decontaminate.conftest import TEMPLATE, training_rows

    rows = training_rows()
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:100]))
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows[100:])
    build = tmp_path / "build"
    (
        pipeline("unit-build")
        .source.jsonl(
            files=[str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl.gz")],
            fields=[["instruction", "input", "output"]],
            templates=[TEMPLATE],
        )
        .tokenizer.sentencepiece([{"path": str(MODEL), "encode": "segments", "append_eos": True}])
        .units(sizes=[[128, 256, 512]], build_batch=[64])
        .output.dir(str(build), samples_per_shard=[16])
        .run(workers=1, progress=False, on_overflow="extend")
    )
    out = tmp_path / "o"
    result = mintdim.decontaminate(build, out, against=AGAINST)
    items = [[row["question"], row["answer"]] for row in gsm8k_rows()]
    pairs, _ = brute_force(record_ids(build), encode_values(MODEL, items))
    assert list(result.samples_removed) == sorted({s for s, _ in pairs})
    assert result.samples_removed and min(result.samples_removed) >= 100
    clean = mintdim.open_build(out / "clean")
    assert verify_build(out / "clean").ok
    assert clean.manifest["segment_spans"]["stored"] is True
    original = mintdim.open_build(build)
    sources = [row["source_sample_id"] for row in clean.samples()]
    for new, old in zip(range(len(clean)), sources, strict=True):
        assert clean.segments(new) == original.segments(old)
    report = json.loads((out / "report.json").read_text())
    assert [f["removed"] for f in report["files"]] == [0, len(result.samples_removed)]
