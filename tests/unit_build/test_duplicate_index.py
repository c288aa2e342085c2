"""duplicate_index.jsonl: groups of identical rendered texts, ordered by first sample_id, with the
samples in sample_id order, within one output directory (across its files), and the stats.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import orjson
import pytest

from mintdim.build.formats import duplicate_index
from tests.unit_build.helpers import job, read_json, read_jsonl, write_jsonl


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def member(sample_id: int, source: str, line: int) -> dict:
    return {"sample_id": sample_id, "source_file": source, "source_line": line}


A, B, C, D = "the model", "a data token", "unit shard", "build"


@pytest.mark.parametrize(("workers", "build_batch"), [(1, 1), (1, 100), (2, 1), (3, 2)])
def test_groups_ordered_by_first_sample_with_samples_in_order(cwd, sp_model, workers, build_batch):
    texts = [A, B, A, C, B, A, D, C]
    write_jsonl("data/a.jsonl", [{"text": t} for t in texts])
    result = job(["./data/a.jsonl"], sp_model, build_batch=[build_batch]).run(workers=workers)
    source = "./data/a.jsonl"
    assert read_jsonl("out/duplicate_index.jsonl") == [
        {
            "hash": sha(A),
            "count": 3,
            "samples": [member(0, source, 1), member(2, source, 3), member(5, source, 6)],
        },
        {"hash": sha(B), "count": 2, "samples": [member(1, source, 2), member(4, source, 5)]},
        {"hash": sha(C), "count": 2, "samples": [member(3, source, 4), member(7, source, 8)]},
    ]
    stats = result.outputs[0].stats
    assert (stats["duplicate_groups"], stats["duplicate_samples"]) == (3, 7)
    # Lines are compact JSON, keys in the documented order.
    first = Path("out/duplicate_index.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert list(json.loads(first)) == ["hash", "count", "samples"]
    assert first.startswith('{"hash":"')


def test_duplicates_across_two_files_of_one_output(cwd, sp_model):
    """Different fields and templates, the same rendered text: one group across both files."""
    write_jsonl("data/a.jsonl", [{"text": "the model"}, "", {"text": "xin chao"}])
    write_jsonl("data/b.jsonl", [{"p": "xin", "q": "chao"}, {"p": "the", "q": "model"}])
    result = job(
        ["./data/a.jsonl", "./data/b.jsonl"],
        sp_model,
        fields=[["text"], ["p", "q"]],
        templates=["{text}", "{p} {q}"],
    ).run(workers=1)
    assert read_jsonl("out/duplicate_index.jsonl") == [
        {
            "hash": sha("the model"),
            "count": 2,
            "samples": [member(0, "./data/a.jsonl", 1), member(3, "./data/b.jsonl", 2)],
        },
        {
            "hash": sha("xin chao"),
            "count": 2,
            "samples": [member(1, "./data/a.jsonl", 3), member(2, "./data/b.jsonl", 1)],
        },
    ]
    assert result.outputs[0].stats["duplicate_samples"] == 4


def test_duplicates_are_per_output_directory(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": A}, {"text": B}])
    write_jsonl("data/b.jsonl", [{"text": A}, {"text": A}])
    result = job(["./data/a.jsonl", "./data/b.jsonl"], sp_model, out=["./o1", "./o2"]).run(
        workers=1
    )
    assert read_jsonl("o1/duplicate_index.jsonl") == []
    assert read_jsonl("o2/duplicate_index.jsonl") == [
        {
            "hash": sha(A),
            "count": 2,
            "samples": [member(0, "./data/b.jsonl", 1), member(1, "./data/b.jsonl", 2)],
        }
    ]
    assert [o.stats["duplicate_groups"] for o in result.outputs] == [0, 1]


def test_duplicates_are_of_rendered_text_not_field_values(cwd, sp_model):
    rows = [
        {"p": "the", "q": "model"},
        {"p": "the model", "q": ""},  # renders "the model ", like the next row
        {"p": "the", "q": "model "},
        {"p": "the", "q": "model"},
    ]
    write_jsonl("data/a.jsonl", rows)
    job(["./data/a.jsonl"], sp_model, fields=[["p", "q"]], templates=["{p} {q}"]).run(workers=1)
    rendered = [f"{r['p']} {r['q']}" for r in rows]
    assert rendered == ["the model", "the model ", "the model ", "the model"]
    groups = read_jsonl("out/duplicate_index.jsonl")
    assert [(g["hash"], [s["sample_id"] for s in g["samples"]]) for g in groups] == [
        (sha("the model"), [0, 3]),
        (sha("the model "), [1, 2]),
    ]


def test_near_duplicates_are_not_grouped(cwd, sp_model):
    texts = ["the model", "the model ", "The model", "the  model", "the model\n", "the\u00a0model"]
    write_jsonl("data/a.jsonl", [{"text": t} for t in texts])
    result = job(["./data/a.jsonl"], sp_model).run(workers=1)
    assert read_jsonl("out/duplicate_index.jsonl") == []
    assert Path("out/duplicate_index.jsonl").read_bytes() == b""
    assert (
        result.outputs[0].stats["duplicate_groups"],
        result.outputs[0].stats["duplicate_samples"],
    ) == (
        0,
        0,
    )


def test_empty_texts_are_duplicates_of_each_other(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": ""}, {"text": "the"}, {"text": ""}, "", {"text": ""}])
    job(["./data/a.jsonl"], sp_model).run(workers=1)
    assert read_jsonl("out/duplicate_index.jsonl") == [
        {
            "hash": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "count": 3,
            "samples": [
                member(0, "./data/a.jsonl", 1),
                member(2, "./data/a.jsonl", 3),
                member(3, "./data/a.jsonl", 5),
            ],
        }
    ]


def test_many_groups_with_shared_hash_prefixes_are_not_merged(cwd, sp_model):
    """Hundreds of distinct texts, each twice, interleaved: exactly one group per text."""
    texts = [f"the model {i}" for i in range(300)]
    order = texts + texts[::-1]
    write_jsonl("data/a.jsonl", [{"text": t} for t in order])
    result = job(["./data/a.jsonl"], sp_model, sizes=[[64]], build_batch=[64]).run(workers=2)
    groups = read_jsonl("out/duplicate_index.jsonl")
    assert len(groups) == 300
    assert [g["samples"][0]["sample_id"] for g in groups] == list(range(300))
    for i, group in enumerate(groups):
        assert group["hash"] == sha(texts[i])
        assert [s["sample_id"] for s in group["samples"]] == [i, 599 - i]
    stats = read_json("out/stats.json")
    assert (stats["duplicate_groups"], stats["duplicate_samples"]) == (300, 600)
    assert result.outputs[0].stats == stats


def test_group_hash_matches_the_sample_index(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": t} for t in [A, B, B, A]])
    job(["./data/a.jsonl"], sp_model).run(workers=1)
    index = read_jsonl("out/sample_index.jsonl")
    for group in read_jsonl("out/duplicate_index.jsonl"):
        for sample in group["samples"]:
            row = index[sample["sample_id"]]
            assert row["hash"] == group["hash"]
            assert (row["source_file"], row["source_line"]) == (
                sample["source_file"],
                sample["source_line"],
            )


def test_tracker_groups_equal_brute_force_across_lookup_chunks():
    """Groups from the prefix sort equal grouping the whole digests, over more samples than one
    lookup chunk, with digests that share an 8-byte prefix but differ after it."""
    rng = np.random.default_rng(7)
    count = 3 * duplicate_index._CHUNK + 123
    digests = rng.integers(0, 256, size=(count, 32), dtype=np.uint8)
    copies = rng.integers(0, count, size=(2000, 2))
    digests[copies[:, 0]] = digests[copies[:, 1]]
    near = rng.integers(0, count, size=(500, 2))
    digests[near[:, 0], :8] = digests[near[:, 1], :8]  # same prefix, different digest
    tracker = duplicate_index.DuplicateTracker()
    for start in range(0, count, 4096):
        lines = np.arange(start, min(start + 4096, count), dtype=np.int64) + 1
        tracker.add(digests[start : start + 4096].tobytes(), "a.jsonl", lines)
    by_digest: dict[bytes, list[int]] = {}
    for sample_id, row in enumerate(digests):
        by_digest.setdefault(row.tobytes(), []).append(sample_id)
    expected = sorted((ids for ids in by_digest.values() if len(ids) > 1), key=lambda ids: ids[0])
    assert len(expected) > 1000
    assert tracker.groups() == expected  # blocks as batches bring them
    assert duplicate_index.groups([digests]) == expected  # one block of several lookup chunks


def test_tracker_writes_each_group_with_its_samples_sources_and_lines(tmp_path):
    """The written lines equal groups found by brute force, with every sample's own source file
    and line, in blocks from two files, one of them past line 2**32 (kept as int64)."""
    rng = np.random.default_rng(11)
    digests = rng.integers(0, 256, size=(900, 32), dtype=np.uint8)
    digests[rng.integers(0, 900, 150)] = digests[rng.integers(0, 900, 150)]
    places = [("a.jsonl", 3 * i + 1) for i in range(500)]
    places += [("dir/b.jsonl", (1 << 32) + 2 * i) for i in range(400)]
    tracker = duplicate_index.DuplicateTracker()
    for start, stop in ((0, 200), (200, 500), (500, 700), (700, 900)):
        lines = np.array([line for _, line in places[start:stop]], dtype=np.int64)
        tracker.add(digests[start:stop].tobytes(), places[start][0], lines)
    assert tracker._lines[0].dtype == np.uint32 and tracker._lines[3].dtype == np.int64
    by_digest: dict[bytes, list[int]] = {}
    for sample_id, row in enumerate(digests):
        by_digest.setdefault(row.tobytes(), []).append(sample_id)
    expected = [
        {
            "hash": digest.hex(),
            "count": len(ids),
            "samples": [
                {"sample_id": i, "source_file": places[i][0], "source_line": places[i][1]}
                for i in ids
            ],
        }
        for digest, ids in sorted(by_digest.items(), key=lambda item: item[1][0])
        if len(ids) > 1
    ]
    assert len(expected) > 50
    assert tracker.write(tmp_path) == (len(expected), sum(e["count"] for e in expected))
    written = (tmp_path / duplicate_index.FILENAME).read_bytes().splitlines()
    assert [orjson.loads(line) for line in written] == expected
