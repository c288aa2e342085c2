"""Decontamination against the published benchmarks of ../shared/corpora (skipped cleanly when
absent): HumanEval's indentation runs must not hit clean Alpaca samples, MT-Bench's ``turns``
are one value per turn, and a real third-party tokenizer gives the brute force's answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mintdim
from tests.conftest import corpora_file
from tests.decontaminate.conftest import (
    MODEL,
    brute_force,
    encode_values,
    make_build,
    record_ids,
    training_rows,
)

pytestmark = pytest.mark.corpora


@pytest.fixture(scope="module")
def alpaca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 175 clean Alpaca seed tasks only."""
    return make_build(tmp_path_factory.mktemp("alpaca"), training_rows()[:175])


def test_humaneval_indentation_does_not_hit_clean_alpaca(alpaca: Path, tmp_path: Path) -> None:
    humaneval = corpora_file("datasets/humaneval.jsonl")
    rows = [json.loads(line) for line in humaneval.open()]
    items = [[r["prompt"], r["canonical_solution"]] for r in rows]
    values = encode_values(MODEL, items)
    result = mintdim.decontaminate(
        alpaca, tmp_path / "o", against=[f"{humaneval}:prompt,canonical_solution"]
    )
    samples = record_ids(alpaca)
    pairs, _ = brute_force(samples, values)
    assert list(result.samples_removed) == sorted({s for s, _ in pairs})
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["benchmarks"][0]["skipped"] > 0
    # Every n-gram kept, indentation runs "find" clean samples; with the content rule only the
    # samples sharing real code lines remain (two Alpaca answers hold "count = 0" and a
    # "for i in range(" loop as HumanEval solutions do: the rule's documented limit).
    grams = {tuple(v[i : i + 13]) for item in values for v in item for i in range(len(v) - 12)}
    loose = {
        s
        for s, ids in enumerate(samples)
        if grams & {tuple(ids[i : i + 13]) for i in range(len(ids) - 12)}
    }
    indentation_only = loose - set(result.samples_removed)
    assert len(indentation_only) >= 3, "the corpus no longer shows the problem the rule solves"
    assert len(result.samples_removed) <= 2


def test_mt_bench_turns_are_one_value_each(tmp_path: Path) -> None:
    mt_bench = corpora_file("datasets/mt_bench_questions.jsonl")
    rows = [json.loads(line) for line in mt_bench.open()]
    planted = training_rows()[:20] + [
        {"instruction": rows[4]["turns"][1], "input": "", "output": "Sure."}
    ]
    build = make_build(tmp_path, planted)
    result = mintdim.decontaminate(build, tmp_path / "o", against=[f"{mt_bench}:turns"])
    items = [json.loads(line) for line in (tmp_path / "o/items/mt_bench_questions.jsonl").open()]
    assert [v["field"] for v in items[4]["values"]] == ["turns[1]", "turns[2]"]
    assert items[4]["values"][1]["coverage"] > 0.5 and items[4]["contaminated"]
    assert 20 in result.samples_removed
    assert result.contaminated_items["mt_bench_questions"] == (items[4]["item"],)


def test_a_third_party_tokenizer_gives_the_brute_force_answer(tmp_path: Path) -> None:
    tokenizer = corpora_file("tokenizers/albert-base-v2.spiece.model")
    gsm8k = corpora_file("datasets/gsm8k_test.jsonl")
    # albert has no "#": a template of newlines only.
    template = "{instruction}\n\n{input}\n\n{output}"
    build = make_build(tmp_path, training_rows(), model=tokenizer, template=template)
    rows = [json.loads(line) for line in gsm8k.open()][:300]
    items = [[r["question"], r["answer"]] for r in rows]
    small = tmp_path / "gsm.jsonl"
    small.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = mintdim.decontaminate(build, tmp_path / "o", against=[f"{small}:question,answer"])
    pairs, _ = brute_force(record_ids(build), encode_values(tokenizer, items))
    assert list(result.samples_removed) == sorted({s for s, _ in pairs})
    assert result.samples_removed
