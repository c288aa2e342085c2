"""units(sizes="auto"): scan, plan exactly, build; the build meets the predicted padding exactly."""

from __future__ import annotations

import pytest

from mintdim import UnitOverflowError, UnitValidationError, plan_units
from tests.conftest import words
from tests.unit_build.helpers import job, read_json, read_jsonl, reference_encoder, write_jsonl


def _rows(count: int) -> list[dict]:
    # Lengths spread from one word to ~80: enough distinct counts for a real choice.
    return [{"text": words(1 + (i * 37) % 80, start=i * 7)} for i in range(count)]


@pytest.mark.parametrize("workers", [1, 2])
def test_auto_units_build_meets_the_plan_exactly(sp_model, cwd, workers):
    rows = _rows(300)
    write_jsonl("a.jsonl", rows[:170])
    write_jsonl("b.jsonl", rows[170:])
    encode = reference_encoder(sp_model)
    counts = [len(encode(row["text"])) for row in rows]
    expected = plan_units(counts, 4, align=8)

    declared = job(["a.jsonl", "b.jsonl"], sp_model, sizes="auto", build_batch=[16])
    result = declared.units(sizes="auto", build_batch=[16], count=4, align=8).run(
        workers=workers, progress=False
    )

    manifest = read_json("out/manifest.json")
    stats = read_json("out/stats.json")
    assert manifest["units"]["sizes"] == list(expected.sizes)
    assert all(size % 8 == 0 for size in expected.sizes) and len(expected.sizes) == 4
    planned = manifest["units"]["planned"]
    assert planned["method"] == "exact"
    assert (planned["count"], planned["align"], planned["cost"]) == (4, 8, "tokens")
    assert planned["predicted_pad_tokens"] == stats["pad_tokens"] == expected.pad_tokens
    assert planned["predicted_total_slots"] == stats["total_slots"]
    assert planned["predicted_padding_ratio"] == stats["padding_ratio"]
    assert [r["token_count"] for r in read_jsonl("out/sample_index.jsonl")] == counts
    assert result.outputs[0].plan.sizes == expected.sizes


def test_auto_units_with_max_size_reports_every_overlong_sample_before_writing(sp_model, cwd):
    rows = _rows(120)
    write_jsonl("a.jsonl", rows)
    encode = reference_encoder(sp_model)
    counts = [len(encode(row["text"])) for row in rows]
    declared = job(["a.jsonl"], sp_model).units(
        sizes="auto", build_batch=[16], count=3, max_size=40
    )
    with pytest.raises(UnitOverflowError) as caught:
        declared.run(workers=1, progress=False)
    over = [(i + 1, n) for i, n in enumerate(counts) if n > 40]
    assert caught.value.count == len(over)
    assert (caught.value.line, caught.value.token_count) == over[0]
    assert caught.value.max_unit_size == 40
    longest = max(over, key=lambda item: item[1])
    assert (caught.value.largest_at, caught.value.largest_count) == (
        f"a.jsonl:{longest[0]}",
        longest[1],
    )
    assert caught.value.first_counts == [n for _, n in over[:5]]
    assert not (cwd / "out").exists()


def test_planner_options_only_with_auto(sp_model, cwd):
    write_jsonl("a.jsonl", _rows(3))
    with pytest.raises(UnitValidationError) as caught:
        job(["a.jsonl"], sp_model).units(sizes=[[64]], build_batch=[4], count=3).run(workers=1)
    assert caught.value.key == "units.count"
    with pytest.raises(UnitValidationError) as caught:
        job(["a.jsonl"], sp_model).units(sizes="auto", build_batch=[4], align=0).run(workers=1)
    assert caught.value.key == "units.align"


def test_auto_units_never_plan_a_size_past_the_largest_unit_allowed(sp_model, cwd, monkeypatch):
    # Samples longer than MAX_UNIT_SIZE (2**24) are impractical to write in a test: lower it.
    from mintdim.build.units import auto

    monkeypatch.setattr(auto, "MAX_UNIT_SIZE", 40)
    rows = _rows(60)
    write_jsonl("a.jsonl", rows)
    encode = reference_encoder(sp_model)
    over = [(i + 1, n) for i, row in enumerate(rows) if (n := len(encode(row["text"]))) > 40]
    declared = job(["a.jsonl"], sp_model).units(sizes="auto", build_batch=[16], count=3)
    with pytest.raises(UnitOverflowError) as caught:
        declared.run(workers=1, progress=False)
    assert (caught.value.count, caught.value.max_unit_size) == (len(over), 40)
    assert not (cwd / "out").exists()


def test_auto_units_with_max_size_leave_overlong_samples_to_a_skip_policy(sp_model, cwd):
    rows = _rows(120)
    write_jsonl("a.jsonl", rows)
    encode = reference_encoder(sp_model)
    counts = [len(encode(row["text"])) for row in rows]
    expected = plan_units(counts, 3, max_size=40)
    declared = job(["a.jsonl"], sp_model).units(
        sizes="auto", build_batch=[16], count=3, max_size=40
    )
    declared.run(workers=1, progress=False, on_overflow="skip")
    stats = read_json("out/stats.json")
    manifest = read_json("out/manifest.json")
    assert manifest["units"]["sizes"] == list(expected.sizes)
    # the plan's figures are those of the samples that fit: exactly what a skipping build writes
    assert stats["pad_tokens"] == manifest["units"]["planned"]["predicted_pad_tokens"]
    assert stats["total_samples"] == sum(1 for n in counts if n <= 40)
