"""Grouping and splitting a real Vietnamese QA set (XQuAD-vi: many questions per context, titles
shared by many contexts) with a real third-party tokenizer: the groups are the rules computed
independently (every pair meeting the near-duplicate rule by brute force), and the split keeps
every context and title in one split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mintdim
from mintdim.check.verify import verify_build
from tests.conftest import corpora_file

from .conftest import expected_groups, near_pairs

pytestmark = pytest.mark.corpora
_ROWS = 120


def test_xquad_vi_groups_and_split(tmp_path: Path) -> None:
    data = corpora_file("datasets/xquad_vi.jsonl")
    tokenizer = corpora_file("tokenizers/albert-base-v2.spiece.model")
    lines = data.read_text(encoding="utf-8").splitlines()[:_ROWS]
    source = tmp_path / "xquad_vi.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [json.loads(line) for line in lines]
    (
        mintdim.pipeline("unit-build")
        .source.jsonl(
            files=[str(source)],
            fields=[["context", "question"]],
            templates=["{context} question: {question}"],
        )
        .tokenizer.sentencepiece([{"path": str(tokenizer)}])
        .units(sizes=[[128, 256, 512, 1024]], build_batch=[64])
        .output.dir(str(tmp_path / "build"), samples_per_shard=[50])
        .run(workers=1, progress=False, on_overflow="extend")
    )
    result = mintdim.group(tmp_path / "build", tmp_path / "groups", keys=["title"])
    rendered = [
        {"text": f"{r['context']} question: {r['question']}", "title": r["title"]} for r in rows
    ]
    content = json.loads((tmp_path / "groups" / "groups.json").read_text())
    group_of = {m: g["group"] for g in content["groups"] for m in g["members"]}
    assert [group_of[i] for i in range(_ROWS)] == expected_groups(rendered, keys=["title"])
    # Questions on one context are near-duplicates of each other: the search finds them all.
    pairs = near_pairs([r["text"] for r in rendered])
    assert len(pairs) > 50 and result.edges["near"] > 0
    contexts = {}
    for i, row in enumerate(rows):
        contexts.setdefault(row["context"], []).append(i)
    mintdim.split(
        tmp_path / "build",
        tmp_path / "groups",
        tmp_path / "split",
        seed=3,
        ratios="train=0.5,validation=0.25,test=0.25",
        stratify="title",
        window=128,
    )
    where = [
        json.loads(line)["split"]
        for line in (tmp_path / "split" / "splits.jsonl").read_text().splitlines()
    ]
    for members in contexts.values():
        assert len({where[i] for i in members}) == 1
    titles = {}
    for i, row in enumerate(rows):
        titles.setdefault(row["title"], set()).add(where[i])
    assert all(len(found) == 1 for found in titles.values())
    for name in ("train", "validation", "test"):
        assert verify_build(tmp_path / "split" / name).ok
