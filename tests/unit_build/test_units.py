"""Units: assignment by exact token count, overflow, histogram and EMPTY_UNIT.md, shards rolled by
samples_per_shard with exact byte sizes, the stderr line per closed shard, padding statistics.

The HF fixture splits on whitespace and has "the" as one token, so ``"the " * n`` is exactly n
tokens: token counts below are chosen, not measured (and checked against the library once).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mintdim import errors
from mintdim.build.formats import shards as shard_writer
from mintdim.shared.human import human_bytes
from tests.unit_build.helpers import (
    Expected,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    sections,
    verify_build,
    write_jsonl,
)


def the(n: int) -> str:
    """A text of exactly n tokens for the HF fixture."""
    return " ".join(["the"] * n)


def build_counts(hf_json: Path, counts: list[int], sizes: list[int], **kwargs):
    encode = reference_encoder(str(hf_json))
    assert [len(encode(the(n))) for n in counts] == counts
    write_jsonl("data/a.jsonl", [{"text": the(n)} for n in counts])
    kwargs.setdefault("workers", 1)
    workers = kwargs.pop("workers")
    result = job(["./data/a.jsonl"], hf_json, sizes=[sizes], **kwargs).run(workers=workers)
    expected = [Expected("./data/a.jsonl", i, the(n)) for i, n in enumerate(counts, start=1)]
    return result, expected


# ---------------------------------------------------------------------------
# Assignment
# ---------------------------------------------------------------------------

COUNTS = [0, 1, 3, 4, 5, 8, 9, 16, 2, 15]
SIZES = [4, 8, 16]
UNITS = [4, 4, 4, 4, 8, 8, 16, 16, 4, 16]


def test_each_sample_goes_to_the_smallest_unit_that_holds_it(cwd, hf_json):
    result, expected = build_counts(hf_json, COUNTS, SIZES, build_batch=(3,))
    build = verify_build("out", expected, reference_encoder(str(hf_json)), SIZES, 100, pad_id=0)
    rows = list(build.samples())
    assert [r["token_count"] for r in rows] == COUNTS
    assert [r["unit_size"] for r in rows] == UNITS
    # 0 tokens: the smallest unit, a record of PAD only.
    assert build.record(rows[0]).tolist() == [0, 0, 0, 0]
    # token_count == size: that size, no PAD at all.
    assert rows[3]["unit_size"] == 4 and 0 not in build.record(rows[3]).tolist()
    assert result.outputs[0].stats["unit_distribution"] == {"4": 5, "8": 2, "16": 3}


def test_a_single_unit_takes_everything_up_to_its_size(cwd, hf_json):
    result, expected = build_counts(hf_json, [0, 7, 32], [32])
    verify_build("out", expected, reference_encoder(str(hf_json)), [32], 100, pad_id=0)
    assert result.outputs[0].stats["unit_distribution"] == {"32": 3}


def test_spec_example_143_tokens_go_to_192(cwd, hf_json):
    result, _ = build_counts(hf_json, [143], [128, 192, 256, 320])
    assert read_json("out/histogram.json") == {"128": 0, "192": 1, "256": 0, "320": 0}
    row = read_jsonl("out/sample_index.jsonl")[0]
    assert (row["token_count"], row["unit_size"]) == (143, 192)


# ---------------------------------------------------------------------------
# Overflow
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_overflow_names_the_sample_its_count_and_the_largest_unit(cwd, hf_json, workers):
    counts = [1, 2, 3, 4, 17, 5, 40]
    with pytest.raises(errors.UnitOverflowError) as info:
        build_counts(hf_json, counts, SIZES, build_batch=(2,), workers=workers)
    err = info.value
    assert (err.file, err.line, err.token_count, err.max_unit_size) == ("./data/a.jsonl", 5, 17, 16)
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["Sample"] == ["./data/a.jsonl:5"] == vi["Mẫu"]
    assert en["token_count"] == ["17"] == vi["token_count"]
    assert en["max_unit_size"] == ["16"] == vi["max_unit_size"]
    # both samples over 16 are reported at once: the count, the longest, the first ones
    assert (err.count, err.largest_at, err.largest_count) == (2, "./data/a.jsonl:7", 40)
    assert en["Overflowing samples"] == ["2 (every sample longer than 16 tokens)"]
    assert vi["Số mẫu bị tràn"] == ["2 (mọi mẫu dài hơn 16 token)"]
    assert en["Largest"] == ["./data/a.jsonl:7 (40 tokens)"]
    assert vi["Mẫu dài nhất"] == ["./data/a.jsonl:7 (40 token)"]
    assert en["First overflowing samples"] == [
        "- ./data/a.jsonl:5 (17 tokens)",
        "- ./data/a.jsonl:7 (40 tokens)",
    ]
    assert en["<text>"][0] == "Increase unit sizes and run again."
    assert vi["<text>"][0] == "Hãy tăng unit sizes rồi chạy lại."
    assert not Path("out/manifest.json").exists()
    for size in SIZES:
        assert Path(f"out/unit_{size}/UNIT_BUILD_FAILED.md").is_file()


def test_one_token_over_the_largest_unit_overflows(cwd, hf_json):
    with pytest.raises(errors.UnitOverflowError) as info:
        build_counts(hf_json, [16, 17], SIZES)
    assert (info.value.line, info.value.token_count) == (2, 17)


def test_overflow_before_a_bad_line_of_the_same_batch_wins(cwd, hf_json):
    write_jsonl("data/a.jsonl", [{"text": the(2)}, {"text": the(30)}, b"{", {"text": the(1)}])
    with pytest.raises(errors.UnitOverflowError) as info:
        job(["./data/a.jsonl"], hf_json, sizes=[SIZES], build_batch=[10]).run(workers=1)
    assert info.value.line == 2


def test_bad_line_before_an_overflow_of_the_same_batch_wins(cwd, hf_json):
    write_jsonl("data/a.jsonl", [{"text": the(2)}, b"{", {"text": the(30)}])
    with pytest.raises(errors.SourceParseError) as info:
        job(["./data/a.jsonl"], hf_json, sizes=[SIZES], build_batch=[10]).run(workers=1)
    assert info.value.line == 2


def test_overflow_in_a_later_file_names_that_file(cwd, hf_json):
    write_jsonl("data/a.jsonl", [{"text": the(3)}])
    write_jsonl("data/b.jsonl", [{"text": the(1)}, {"text": the(9)}])
    with pytest.raises(errors.UnitOverflowError) as info:
        job(["./data/a.jsonl", "./data/b.jsonl"], hf_json, sizes=[[8]]).run(workers=1)
    assert (info.value.file, info.value.line, info.value.max_unit_size) == ("./data/b.jsonl", 2, 8)


def test_overflow_uses_the_files_own_sizes(cwd, hf_json):
    write_jsonl("data/a.jsonl", [{"text": the(20)}])
    write_jsonl("data/b.jsonl", [{"text": the(20)}])
    with pytest.raises(errors.UnitOverflowError) as info:
        job(
            ["./data/a.jsonl", "./data/b.jsonl"],
            hf_json,
            sizes=[[32], [8, 16]],
            out=["./o1", "./o2"],
        ).run(workers=1)
    assert (info.value.file, info.value.max_unit_size) == ("./data/b.jsonl", 16)


# ---------------------------------------------------------------------------
# Histogram, EMPTY_UNIT.md
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_histogram_lists_every_declared_size_in_order_including_zeros(
    cwd, hf_json, monkeypatch, lang
):
    monkeypatch.setenv("MINTDIM_LANG", lang)  # marker files hold both languages whatever it is
    sizes = [2, 4, 8, 16, 32, 64]
    result, expected = build_counts(hf_json, [3, 3, 20, 4], sizes)
    histogram = {"2": 0, "4": 3, "8": 0, "16": 0, "32": 1, "64": 0}
    assert read_json("out/histogram.json") == histogram
    assert list(read_json("out/histogram.json")) == [str(s) for s in sizes]
    assert result.outputs[0].stats["unit_distribution"] == histogram
    assert list(result.outputs[0].stats["unit_distribution"]) == [str(s) for s in sizes]
    for size in sizes:
        empty = Path(f"out/unit_{size}/EMPTY_UNIT.md")
        shards = sorted(Path(f"out/unit_{size}").glob("shard_*.bin"))
        if histogram[str(size)]:
            assert not empty.exists() and shards
        else:
            assert empty.is_file() and not shards
            text = empty.read_text(encoding="utf-8")
            english, vietnamese = text.split(f"\n\n# unit_{size} trống\n\n")
            assert english.startswith(f"# unit_{size} is empty\n\n")
            assert f"needs unit size {size}:" in english
            assert f"cần đúng unit size {size}:" in vietnamese and vietnamese.endswith(
                "hoàn tất.\n"
            )
            assert sorted(p.name for p in Path(f"out/unit_{size}").iterdir()) == ["EMPTY_UNIT.md"]


# ---------------------------------------------------------------------------
# Shards rolled by samples_per_shard
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("samples_per_shard", [1, 2, 3, 7, 100])
@pytest.mark.parametrize("build_batch", [1, 4])
def test_shards_roll_by_sample_count(cwd, hf_json, samples_per_shard, build_batch):
    counts = [(i * 7) % 17 for i in range(23)]
    _, expected = build_counts(
        hf_json,
        counts,
        [4, 8, 16, 32],
        samples_per_shard=(samples_per_shard,),
        build_batch=(build_batch,),
    )
    verify_build(
        "out", expected, reference_encoder(str(hf_json)), [4, 8, 16, 32], samples_per_shard, 0
    )
    manifest = read_json("out/manifest.json")
    per_unit = {size: sum(1 for n in counts if _unit(n) == size) for size in (4, 8, 16, 32)}
    listed = [(s["unit_size"], s["samples"], s["bytes"]) for s in manifest["shards"]]
    expected_shards = []
    for size, count in per_unit.items():
        for k in range(math.ceil(count / samples_per_shard)):
            records = min(samples_per_shard, count - k * samples_per_shard)
            expected_shards.append((size, records, records * size * 2))
    assert listed == expected_shards
    stats = read_json("out/stats.json")
    assert stats["shard_count"] == len(expected_shards)
    assert stats["shard_bytes"] == sum(b for _, _, b in expected_shards)


def _unit(n: int) -> int:
    return next(s for s in (4, 8, 16, 32) if s >= n)


def test_one_line_per_closed_shard_in_closing_order(cwd, hf_json, mintdim_lines):
    counts = [1, 5, 1, 1, 5, 1, 2, 5]  # unit 4 fills shards at samples 3 and 6
    build_counts(hf_json, counts, [4, 8], samples_per_shard=(2,), build_batch=(1,))
    # uint16 records: 2 records of unit 4 are 16 bytes; never "0.0 MiB" for a non-empty shard.
    assert [line for line in mintdim_lines() if line.startswith("[unit-build")] == [
        "[unit-build] shard=000000 samples=2 bytes=16 B unit=4",
        "[unit-build] shard=000000 samples=2 bytes=32 B unit=8",
        "[unit-build] shard=000001 samples=2 bytes=16 B unit=4",
        "[unit-build] shard=000002 samples=1 bytes=8 B unit=4",
        "[unit-build] shard=000001 samples=1 bytes=16 B unit=8",
    ]


def test_shard_line_reports_a_human_size(cwd, hf_json, mintdim_lines):
    # unit 4096 in uint16: 8 KiB per record; 96 records = 768 KiB; 40 = 320 KiB.
    build_counts(hf_json, [1] * 136, [4096], samples_per_shard=(96,), build_batch=(64,), workers=2)
    assert [line for line in mintdim_lines() if line.startswith("[unit-build")] == [
        "[unit-build] shard=000000 samples=96 bytes=768.0 KiB unit=4096",
        "[unit-build] shard=000001 samples=40 bytes=320.0 KiB unit=4096",
    ]


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (1, "1 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (1024**2 - 1, "1.0 MiB"),  # rounds up into the next unit, never "1024.0 KiB"
        (int(241.8 * 2**20), "241.8 MiB"),
        (5 * 1024**3, "5.0 GiB"),
    ],
)
def test_human_bytes(count, shown):
    assert human_bytes(count) == shown


def test_oversized_shard_warns_and_the_build_continues(cwd, hf_json, mintdim_lines, monkeypatch):
    assert shard_writer.RECOMMENDED_SHARD_BYTES == 512 * 2**20
    # Lower the internal threshold to 1 MiB so a small build crosses it: 141 records of 8 KiB.
    monkeypatch.setattr(shard_writer, "RECOMMENDED_SHARD_BYTES", 1 << 20)
    result, expected = build_counts(
        hf_json, [1] * 150, [4096], samples_per_shard=(141,), build_batch=(50,)
    )
    assert mintdim_lines() == [
        "[unit-build] shard=000000 samples=141 bytes=1.1 MiB unit=4096",
        "[unit-build:warning] shard=000000 size=1.1 MiB exceeds recommended 1 MiB.",
        "Build continues because sharding is controlled by samples_per_shard.",
        # the 9-record shard stays under the threshold
        "[unit-build] shard=000001 samples=9 bytes=72.0 KiB unit=4096",
    ]
    assert result.outputs[0].stats["total_samples"] == 150
    assert Path("out/manifest.json").is_file()


def test_shard_lines_in_vietnamese_keep_their_fields(cwd, hf_json, mintdim_lines, monkeypatch):
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    monkeypatch.setattr(shard_writer, "RECOMMENDED_SHARD_BYTES", 1 << 20)
    build_counts(hf_json, [1] * 141, [4096], samples_per_shard=(141,), build_batch=(50,))
    assert mintdim_lines() == [
        "[unit-build] shard=000000 samples=141 bytes=1.1 MiB unit=4096",
        "[unit-build:warning] shard=000000 size=1.1 MiB vượt mức khuyến nghị 1 MiB.",
        "Build vẫn tiếp tục vì số mẫu mỗi shard do samples_per_shard quyết định.",
    ]


# ---------------------------------------------------------------------------
# Padding statistics
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "sizes"),
    [
        (COUNTS, SIZES),
        ([4, 8, 16], SIZES),  # no padding at all
        ([0, 0], [8]),  # only padding
        ([1, 2, 3, 5, 7, 11, 13], [2, 3, 5, 7, 11, 13]),
    ],
)
def test_padding_statistics(cwd, hf_json, counts, sizes):
    result, _ = build_counts(hf_json, counts, sizes)
    stats = result.outputs[0].stats
    slots = sum(next(s for s in sizes if s >= n) for n in counts)
    pad = slots - sum(counts)
    assert stats["total_tokens"] == sum(counts)
    assert stats["total_slots"] == slots
    assert stats["pad_tokens"] == pad
    assert stats["padding_ratio"] == pytest.approx(pad / slots, abs=1e-6)
    assert stats == read_json("out/stats.json")
