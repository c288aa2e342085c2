"""``run(on_overflow=...)``: skip, truncate and extend against a reference computed here (abort: test_overflow.py).

Real tokenizer (phi-3-mini, PAD from ``pad_fallback="eos"``, EOS appended, spans stored) and real
data (the Alpaca-form self-instruct seeds), with units small enough that many samples overflow.
The reference takes each sample's ids straight from the tokenizers library and applies the
policy's rule sample by sample, in input order.
"""

from __future__ import annotations

import json
import random

import pytest
from tokenizers import Tokenizer

from mintdim import RunOptionError, UnitOverflowError, open_build
from mintdim.check.verify import verify_build
from tests.conftest import corpora_file
from tests.unit_build.helpers import (
    flipped_bytes,
    job,
    read_json,
    read_jsonl,
    tree_bytes,
    write_jsonl,
)

pytestmark = pytest.mark.filterwarnings("ignore::mintdim.TemplateLiteralWarning")

TEMPLATE = "Instruction: {instruction}\nInput: {input}\nResponse: {output}"
FIELDS = ["instruction", "input", "output"]
SIZES = [64, 128]
EOS = 32000


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    path = corpora_file("datasets/self_instruct_seed_alpaca.jsonl")
    return [
        {name: json.loads(line)[name] for name in FIELDS}
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


@pytest.fixture(scope="module")
def reference_ids(rows) -> list[list[int]]:
    tok = Tokenizer.from_file(str(corpora_file("tokenizers/phi-3-mini.tokenizer.json")))
    rendered = [TEMPLATE.format(**row) for row in rows]
    return [tok.encode(text, add_special_tokens=False).ids + [EOS] for text in rendered]


def _run(tmp_path, rows, policy: str, *, workers: int = 1, build_batch: int = 16, name="out"):
    data = tmp_path / "alpaca.jsonl"
    if not data.exists():
        write_jsonl(data, rows)
    tokenizer = corpora_file("tokenizers/phi-3-mini.tokenizer.json")
    out = tmp_path / name
    job(
        [str(data)],
        {"path": str(tokenizer), "pad_fallback": "eos", "append_eos": True, "encode": "whole"},
        fields=[FIELDS],
        templates=[TEMPLATE],
        sizes=[SIZES],
        build_batch=[build_batch],
        samples_per_shard=[10],
        out=str(out),
    ).run(workers=workers, progress=False, on_overflow=policy)
    return out, str(data)


def _expected(policy: str, ids: list[list[int]], source: str):
    """(kept samples as (line, tokens, unit), overflow rows, extended units) by the rule."""
    kept, events, extended = [], [], []
    for line, tokens in enumerate(ids, start=1):
        count = len(tokens)
        if count <= SIZES[-1]:
            kept.append((line, tokens, next(s for s in SIZES if s >= count)))
            continue
        event = {
            "sample_id": None,
            "source_file": source,
            "source_line": line,
            "token_count": count,
            "max_unit_size": SIZES[-1],
            "action": policy,
        }
        if policy == "truncate":
            event["sample_id"] = len(kept)
            kept.append((line, tokens[: SIZES[-1]], SIZES[-1]))
        elif policy == "extend":
            fitting = [u for u in extended if u >= count]
            unit = min(fitting) if fitting else count
            if not fitting:
                extended.append(unit)
            event["sample_id"] = len(kept)
            event["new_unit_size"] = unit
            kept.append((line, tokens, unit))
        events.append(event)
    return kept, events, sorted(extended)


@pytest.mark.parametrize("policy", ["skip", "truncate", "extend"])
def test_each_policy_matches_the_reference(tmp_path, rows, reference_ids, policy):
    out, source = _run(tmp_path, rows, policy)
    kept, events, extended = _expected(policy, reference_ids, source)
    assert events, "the data must overflow for this test to mean anything"
    build = open_build(out)
    index = read_jsonl(out / "sample_index.jsonl")
    assert len(build) == len(index) == len(kept)
    for sample_id, (line, tokens, unit) in enumerate(kept):
        assert build[sample_id].tolist() == tokens
        assert (index[sample_id]["source_line"], index[sample_id]["unit_size"]) == (line, unit)
        assert index[sample_id]["token_count"] == len(tokens)
        spans = build.segments(sample_id)
        assert spans[0][1] == 0 and spans[-1][2] == len(tokens)
        assert all(a[2] == b[1] for a, b in zip(spans, spans[1:], strict=False))
        truncated = len(tokens) < len(reference_ids[line - 1])
        # A truncated sample lost its EOS (and perhaps more): its spans are cut at the unit.
        assert (spans[-1] == ("eos", len(tokens) - 1, len(tokens))) != truncated
    assert read_jsonl(out / "overflow_index.jsonl") == events
    stats = read_json(out / "stats.json")
    assert stats["overflow"] == {
        "policy": policy,
        "samples": len(events),
        "extended_units": extended,
    }
    assert stats["total_samples"] == len(kept)
    assert stats["total_tokens"] == sum(len(t) for _, t, _ in kept)
    histogram = read_json(out / "histogram.json")
    assert list(histogram) == [str(s) for s in sorted(SIZES + extended)]
    assert sum(histogram.values()) == len(kept)
    manifest = read_json(out / "manifest.json")
    assert manifest["units"]["extended_sizes"] == extended
    assert manifest["units"]["sizes"] == sorted(SIZES + extended)
    assert manifest["units"]["on_overflow"] == policy


@pytest.mark.parametrize("policy", ["skip", "truncate", "extend"])
def test_output_is_byte_identical_for_any_worker_count_and_build_batch(tmp_path, rows, policy):
    first, _ = _run(tmp_path, rows, policy, workers=1, build_batch=16, name="a")
    second, _ = _run(tmp_path, rows, policy, workers=2, build_batch=3, name="b")
    third, _ = _run(tmp_path, rows, policy, workers=2, build_batch=64, name="c")
    assert tree_bytes(first) == tree_bytes(second) == tree_bytes(third)


def test_abort_is_the_default_and_keeps_the_overflow_error(tmp_path, rows, reference_ids):
    with pytest.raises(UnitOverflowError) as info:
        _run(tmp_path, rows, "abort")
    first = next(i for i, ids in enumerate(reference_ids) if len(ids) > SIZES[-1])
    assert info.value.line == first + 1
    assert info.value.token_count == len(reference_ids[first])


def test_an_unknown_policy_is_refused_before_any_work(tmp_path, rows):
    with pytest.raises(RunOptionError) as info:
        _run(tmp_path, rows, "wrap")
    assert info.value.option == "on_overflow"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("policy", ["skip", "truncate", "extend"])
def test_mintdim_verify_accepts_each_policy_and_catches_a_broken_span(tmp_path, rows, policy):
    out, _ = _run(tmp_path, rows, policy)
    report = verify_build(out, deep=True)  # deep: every record re-derived by the policy's rule
    assert report.ok, report.lines("en")
    # Break one stop of the first spans record (it no longer reaches the token count), and
    # re-seal nothing: verify must name the file and the record.
    spans = sorted(out.glob("unit_*/shard_*.spans.bin"))[0]
    data = bytearray(spans.read_bytes())
    data[-4:] = (0).to_bytes(4, "little")
    spans.write_bytes(bytes(data))
    report = verify_build(out)
    relative = spans.relative_to(out).as_posix()
    assert not report.ok
    assert {(f.check, f.path) for f in report.failures} >= {("spans", relative)}
    codes = {f.code for f in report.failures if f.path == relative}
    assert codes == {"sha256", "spans_record"}


def test_every_flipped_byte_of_an_sft_build_is_found(tmp_path, rows):
    """Spans files, overflow_index.jsonl and the new manifest keys are all under verify's eye."""
    out, _ = _run(tmp_path, rows[:60], "extend")
    names = {p.name for p in out.rglob("*")}
    assert "overflow_index.jsonl" in names and "shard_000000.spans.bin" in names
    for relative, offset in flipped_bytes(out, random.Random(3), per_file=3):
        assert not verify_build(out).ok, f"{relative} byte {offset} changed unnoticed"
    assert verify_build(out).ok


def test_extend_rounds_new_units_up_to_the_planned_alignment(tmp_path, rows, reference_ids):
    """units="auto" with align=64 and max_size=128: every longer sample goes to a unit that is
    the smallest multiple of 64 holding it (or an earlier such unit that holds it)."""
    data = tmp_path / "alpaca.jsonl"
    write_jsonl(data, rows)
    tokenizer = corpora_file("tokenizers/phi-3-mini.tokenizer.json")
    job(
        [str(data)],
        {"path": str(tokenizer), "pad_fallback": "eos", "append_eos": True},
        fields=[FIELDS],
        templates=[TEMPLATE],
        sizes="auto",
        build_batch=[16],
        out=str(tmp_path / "out"),
    ).units(sizes="auto", build_batch=[16], count=2, align=64, max_size=128).run(
        workers=2, progress=False, on_overflow="extend"
    )
    extended: list[int] = []
    expected = []
    for line, ids in enumerate(reference_ids, start=1):
        if len(ids) <= 128:
            continue
        fitting = [u for u in extended if u >= len(ids)]
        unit = min(fitting) if fitting else -(-len(ids) // 64) * 64
        if not fitting:
            extended.append(unit)
        expected.append((line, unit))
    events = read_jsonl(tmp_path / "out/overflow_index.jsonl")
    assert [(e["source_line"], e["new_unit_size"]) for e in events] == expected
    manifest = read_json(tmp_path / "out/manifest.json")
    assert manifest["units"]["extended_sizes"] == sorted(extended)
    assert all(size % 64 == 0 for size in manifest["units"]["sizes"])
    assert verify_build(tmp_path / "out", deep=True).ok
