"""``mintdim.split``: three complete builds that cover the input exactly once with its tokens
copied unchanged, whole groups, seeded stratified allocation, windows, byte-identical reruns,
and named errors with nothing written. Everything is checked by reading the outputs back
independently (open_build, plain JSON, hashlib)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import orjson
import pytest

import mintdim
from mintdim import (
    GroupsMismatchError,
    OutputNotFreshError,
    SplitDirectoryError,
    SplitOptionError,
    SplitRatioError,
    open_build,
)
from mintdim.check.verify import verify_build
from mintdim.split.allocate import group_targets

from .conftest import ALIAS_RULES, make_build

NAMES = ("train", "validation", "test")


@pytest.fixture(scope="module")
def grouped(related, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("groups") / "groups"
    mintdim.group(related[0], out, keys=["work"], alias_rules=ALIAS_RULES)
    return out


@pytest.fixture(scope="module")
def split_dir(related, grouped, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("split") / "split"
    mintdim.split(
        related[0],
        grouped,
        out,
        seed=7,
        ratios={"train": 0.8, "validation": 0.1, "test": 0.1},
        stratify="era",
        ratios_by_stratum={"heian": "train=0.6,validation=0.2,test=0.2"},
        window=16,
    )
    return out


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _group_of(groups: Path) -> dict[int, int]:
    content = json.loads((groups / "groups.json").read_text())
    return {m: entry["group"] for entry in content["groups"] for m in entry["members"]}


def test_the_three_builds_cover_the_input_once_with_its_tokens(related, grouped, split_dir) -> None:
    build, rows = related
    source = open_build(build)
    source_rows = list(source.samples())
    seen: dict[int, tuple[str, int]] = {}
    for name in NAMES:
        out = open_build(split_dir / name)
        index = list(out.samples())
        assert [row["sample_id"] for row in index] == list(range(len(out)))
        for row in index:
            original = row["source_sample_id"]
            assert original not in seen, f"input sample {original} copied twice"
            seen[original] = (name, row["sample_id"])
            source_row = source_rows[original]
            assert np.array_equal(out[row["sample_id"]], source[original])
            # The whole record, tokens then PAD, byte for byte.
            assert out.record(row).tobytes() == source.record(source_row).tobytes()
            assert (row["source_file"], row["source_line"]) == (
                source_row["source_file"],
                source_row["source_line"],
            )
            assert row["hash"] == source_row["hash"]
    assert sorted(seen) == list(range(len(rows)))
    # splits.jsonl says the same, with the SHA-256 of the tokens as stored (little-endian).
    group_of = _group_of(grouped)
    lines = _rows(split_dir / "splits.jsonl")
    assert [line["sample_id"] for line in lines] == list(range(len(rows)))
    for line in lines:
        i = line["sample_id"]
        assert (line["split"], line["split_sample_id"]) == seen[i]
        tokens = source[i].astype(source.dtype.newbyteorder("<"))
        assert line["token_sha256"] == hashlib.sha256(tokens.tobytes()).hexdigest()
        assert line["token_count"] == len(tokens) and line["group"] == group_of[i]
        assert line["stratum"] == rows[i]["era"]
    assert list(lines[0]) == [
        "sample_id",
        "source_file",
        "source_line",
        "stratum",
        "group",
        "split",
        "split_sample_id",
        "token_count",
        "token_sha256",
    ]


def test_no_group_and_no_join_crosses_splits(grouped, split_dir) -> None:
    where = {line["sample_id"]: line["split"] for line in _rows(split_dir / "splits.jsonl")}
    by_group: dict[int, set[str]] = {}
    for sample, group in _group_of(grouped).items():
        by_group.setdefault(group, set()).add(where[sample])
    assert all(len(splits) == 1 for splits in by_group.values())
    joins = _rows(grouped / "joins.jsonl")
    assert joins, "the related rows are joined"
    for join in joins:
        assert where[join["a"]] == where[join["b"]]
    kept = _rows(split_dir / "group-joins.jsonl")
    assert [(j["a"], j["b"], j["kind"]) for j in kept] == [
        (j["a"], j["b"], j["kind"]) for j in joins
    ]
    assert all(j["split"] == where[j["a"]] for j in kept)


def test_every_build_is_complete_for_verify_and_the_loader(split_dir) -> None:
    total = 0
    for name in NAMES:
        report = verify_build(split_dir / name)
        assert report.ok, report.lines()
        build = open_build(split_dir / name)
        ids = [
            int(i)
            for batch in build.loader(batch_size=4, seed=1, drop_last=False)
            for i in batch.sample_ids
        ]
        assert sorted(ids) == list(range(len(build)))
        total += len(build)
        stats = json.loads((split_dir / name / "stats.json").read_text())
        assert stats["total_samples"] == len(build)
    assert total == len(_rows(split_dir / "splits.jsonl"))


def test_the_input_build_has_what_the_copies_must_carry(related) -> None:
    stats = json.loads((related[0] / "stats.json").read_text())
    assert stats["samples_with_unk"] > 0 and stats["overflow"]["extended_units"]


def test_allocation_follows_strata_and_targets(related, split_dir) -> None:
    _, rows = related
    report = json.loads((split_dir / "report.json").read_text())
    lines = _rows(split_dir / "splits.jsonl")
    for entry in report["strata"]:
        members = [line for line in lines if line["stratum"] == entry["stratum"]]
        groups = {}
        for line in members:
            groups.setdefault(line["group"], line["split"])
        counts = [sum(s == name for s in groups.values()) for name in NAMES]
        assert counts == [entry["groups_by_split"][name] for name in NAMES]
        ratios = (0.6, 0.2, 0.2) if entry["stratum"] == "heian" else (0.8, 0.1, 0.1)
        assert tuple(entry["ratios"].values()) == ratios
        assert [entry["target_groups"][n] for n in NAMES] == group_targets(
            len(groups), ratios
        ).tolist()
    # Sparse strata first.
    touching = [entry["groups"] for entry in report["strata"]]
    assert touching == sorted(touching)
    heian = next(e for e in report["strata"] if e["stratum"] == "heian")
    assert heian["groups_by_split"]["validation"] > 0 and heian["groups_by_split"]["test"] > 0


@pytest.mark.parametrize(
    ("count", "shares", "expected"),
    [
        (1, (0.98, 0.01, 0.01), [1, 0, 0]),
        (2, (0.98, 0.01, 0.01), [1, 1, 0]),
        (3, (0.98, 0.01, 0.01), [1, 1, 1]),
        (5, (0.98, 0.01, 0.01), [3, 1, 1]),
        (100, (0.98, 0.01, 0.01), [98, 1, 1]),
        (10, (0.9, 0.05, 0.05), [8, 1, 1]),
        (20, (0.9, 0.05, 0.05), [18, 1, 1]),
        (2, (0.9, 0.0, 0.1), [1, 0, 1]),
        (1, (0.0, 0.0, 1.0), [0, 0, 1]),
        (7, (1.0, 0.0, 0.0), [7, 0, 0]),
    ],
)
def test_group_count_targets(count, shares, expected) -> None:
    assert group_targets(count, shares).tolist() == expected


def _strata_rows() -> list[dict]:
    """Strata of 1, 2, 3 and 12 groups; group "x" spans the strata "solo" and "big"."""
    rows = []
    for stratum, groups in (("solo", 1), ("pair", 2), ("trio", 3), ("big", 12)):
        for g in range(groups):
            for copy in range(2):  # two samples per group, joined by their key
                rows.append(
                    {
                        "text": f"{stratum} {g} {copy} " * (g + 1),
                        "work": f"{stratum}-{g}",
                        "era": stratum,
                    }
                )
    rows.append({"text": "the solo group's other member", "work": "solo-0", "era": "big"})
    return rows


def test_sparse_strata_and_groups_across_strata(tmp_path) -> None:
    build = make_build(tmp_path, _strata_rows())
    mintdim.group(build, tmp_path / "g", keys=["work"], near_duplicates=False)
    result = mintdim.split(
        build,
        tmp_path / "g",
        tmp_path / "s",
        seed=3,
        ratios="train=0.5,validation=0.25,test=0.25",
        stratify="era",
    )
    strata = {entry["stratum"]: entry for entry in result.report["strata"]}
    assert [e["stratum"] for e in result.report["strata"]] == ["solo", "pair", "trio", "big"]
    assert strata["solo"]["groups_by_split"] == {"train": 1, "validation": 0, "test": 0}
    assert strata["pair"]["groups_by_split"] == {"train": 1, "validation": 1, "test": 0}
    assert strata["trio"]["groups_by_split"] == {"train": 1, "validation": 1, "test": 1}
    # The crossing group was allocated once, by the sparser stratum, and counts in "big" too.
    assert strata["big"]["groups"] == 13 and strata["big"]["groups_allocated_earlier"] == 1
    assert result.report["groups_across_strata"] == 1
    lines = _rows(tmp_path / "s" / "splits.jsonl")
    solo = {line["split"] for line in lines if line["group"] == lines[0]["group"]}
    assert solo == {"train"}
    assert result.report["unmet_targets"] == [] and result.report["coverage_gaps"] == []


def test_unmet_targets_and_coverage_gaps_are_reported(tmp_path) -> None:
    # Two one-group strata keep their groups in train; both groups also lie in "three", whose
    # third group can then fill only one of validation and test.
    rows = [
        {"text": "alpha one", "work": "a", "era": "one"},
        {"text": "alpha three", "work": "a", "era": "three"},
        {"text": "beta two", "work": "b", "era": "two"},
        {"text": "beta three", "work": "b", "era": "three"},
        {"text": "gamma three", "work": "c", "era": "three"},
    ]
    build = make_build(tmp_path, rows)
    mintdim.group(build, tmp_path / "g", keys=["work"], near_duplicates=False)
    result = mintdim.split(
        build,
        tmp_path / "g",
        tmp_path / "s",
        seed=1,
        ratios="train=0.34,validation=0.33,test=0.33",
        stratify="era",
    )
    report = result.report
    assert report["unmet_targets"] == [
        {"stratum": "three", "split": "train", "target_groups": 1, "groups": 2},
        {"stratum": "three", "split": "test", "target_groups": 1, "groups": 0},
    ]
    assert report["coverage_gaps"] == [{"stratum": "three", "split": "test"}]
    text = (tmp_path / "s" / "REPORT.md").read_text()
    assert "three: test has 0 groups, the target is 1" in text
    assert "three: test có 0 nhóm, mục tiêu là 1" in text


def test_an_empty_split_is_a_valid_empty_build(related, grouped, tmp_path) -> None:
    result = mintdim.split(related[0], grouped, tmp_path / "s", seed=0, ratios={"train": 1.0})
    assert result.samples["validation"] == result.samples["test"] == 0
    for name in ("validation", "test"):
        assert verify_build(tmp_path / "s" / name).ok
        build = open_build(tmp_path / "s" / name)
        assert len(build) == 0 and list(build.loader(batch_size=2, drop_last=False)) == []
    assert result.report["coverage_gaps"] == []


def test_windows_are_the_brute_force_cut(split_dir) -> None:
    windows = _rows(split_dir / "evaluation-windows.jsonl")
    lines = {(r["split"], r["split_sample_id"]): r for r in _rows(split_dir / "splits.jsonl")}
    expected = []
    for name in ("validation", "test"):
        build = open_build(split_dir / name)
        for j in range(len(build)):
            n, start = len(build[j]), 0
            while start < n - 1:  # windows of at most 17 ids, each predicting the next ones
                length = min(17, n - start)
                line = lines[(name, j)]
                expected.append(
                    {
                        "split": name,
                        "sample_id": j,
                        "start": start,
                        "length": length,
                        "stratum": line["stratum"],
                        "group": line["group"],
                    }
                )
                start += 16
    assert windows == expected
    for (name, j), line in lines.items():  # predicted positions: exactly 1 .. n-1, once each
        if name == "train":
            continue
        predicted = [
            p
            for w in windows
            if (w["split"], w["sample_id"]) == (name, j)
            for p in range(w["start"] + 1, w["start"] + w["length"])
        ]
        assert predicted == list(range(1, line["token_count"]))


def test_the_manifest_and_files(related, grouped, split_dir) -> None:
    manifest = json.loads((split_dir / "manifest.json").read_text())
    assert manifest["kind"] == "mintdim-split" and manifest["status"] == "complete"
    digest = hashlib.sha256((related[0] / "manifest.json").read_bytes()).hexdigest()
    assert manifest["build"]["manifest_sha256"] == digest
    groups_digest = hashlib.sha256((grouped / "manifest.json").read_bytes()).hexdigest()
    assert manifest["groups"]["manifest_sha256"] == groups_digest
    assert manifest["seed"] == 7 and manifest["policy"]["window"] == 16
    assert manifest["policy"]["ratios_by_stratum"] == {
        "heian": {"train": 0.6, "validation": 0.2, "test": 0.2}
    }
    for name, facts in manifest["files"].items():
        data = (split_dir / name).read_bytes()
        assert facts == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    for name in NAMES:
        data = (split_dir / name / "manifest.json").read_bytes()
        assert manifest["builds"][name]["manifest_sha256"] == hashlib.sha256(data).hexdigest()
    allowed = {entry["path"] for entry in manifest["training_files"]}
    on_disk = {
        str(p.relative_to(split_dir))
        for name in ("train", "validation")
        for p in (split_dir / name).rglob("*")
        if p.is_file()
    }
    markers = {p for p in on_disk if p.endswith("EMPTY_UNIT.md")}
    assert allowed == (on_disk - markers) | {"evaluation-windows.jsonl"}
    assert not any(path.startswith("test/") for path in allowed)
    for entry in manifest["training_files"]:
        data = (split_dir / entry["path"]).read_bytes()
        assert entry["bytes"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
    verification = json.loads((split_dir / "verification.json").read_text())
    assert verification["ok"] and {c["check"] for c in verification["checks"]} == {
        "coverage",
        "copied_tokens",
        "groups",
        "joins",
        "windows",
    }


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_reruns_are_byte_identical_whatever_the_worker_count(
    related, grouped, split_dir, tmp_path
) -> None:
    mintdim.split(
        related[0],
        grouped,
        tmp_path / "again",
        seed=7,
        ratios="train=0.8,validation=0.1,test=0.1",
        stratify="era",
        ratios_by_stratum={"heian": {"train": 0.6, "validation": 0.2, "test": 0.2}},
        window=16,
        workers=3,
    )
    assert _tree(tmp_path / "again") == _tree(split_dir)
    mintdim.split(
        related[0],
        grouped,
        tmp_path / "other",
        seed=8,
        ratios="train=0.8,validation=0.1,test=0.1",
        stratify="era",
    )
    assert _tree(tmp_path / "other")["splits.jsonl"] != _tree(split_dir)["splits.jsonl"]


@pytest.mark.parametrize(
    ("ratios", "problem", "en", "vi"),
    [
        (
            {"train": 0.9, "validation": 0.2, "test": -0.1},
            "negative",
            "must be a number >= 0",
            "phải là một số >= 0",
        ),
        ({"train": 0.9, "validation": 0.2}, "sum", "sum to 1.1, not 1", "tổng các tỉ lệ là 1.1"),
        (
            {"train": 0.9, "dev": 0.1},
            "unknown_split",
            "train, validation and test",
            "train, validation và test",
        ),
        ("train:0.9", "form", "train=0.98,validation=0.01", "hãy viết dạng"),
    ],
)
def test_bad_ratios_are_named(related, grouped, tmp_path, ratios, problem, en, vi) -> None:
    with pytest.raises(SplitRatioError) as caught:
        mintdim.split(related[0], grouped, tmp_path / "s", seed=1, ratios=ratios)
    assert caught.value.problem == problem
    assert en in caught.value.message("en") and vi in caught.value.message("vi")
    assert not (tmp_path / "s").exists()


def test_ratios_for_an_unknown_stratum_are_named(related, grouped, tmp_path) -> None:
    with pytest.raises(SplitRatioError) as caught:
        mintdim.split(
            related[0],
            grouped,
            tmp_path / "s",
            seed=1,
            ratios={"train": 1},
            stratify="era",
            ratios_by_stratum={"nara": {"train": 1}},
        )
    assert caught.value.problem == "unknown_stratum" and "heian" in caught.value.message("vi")


def test_groups_of_another_build_are_refused(related, grouped, tmp_path) -> None:
    other = make_build(tmp_path, related[1][:30], name="other")
    with pytest.raises(GroupsMismatchError) as caught:
        mintdim.split(other, grouped, tmp_path / "s", seed=1, ratios={"train": 1})
    assert caught.value.problem == "other_build"
    assert "do not belong to this build" in caught.value.message("en")
    assert "không thuộc về bản build này" in caught.value.message("vi")
    assert not (tmp_path / "s").exists()


def test_incomplete_or_changed_groups_are_refused(related, grouped, tmp_path) -> None:
    copy = tmp_path / "g"
    shutil.copytree(grouped, copy)
    (copy / "joins.jsonl").write_bytes((copy / "joins.jsonl").read_bytes()[:-1])
    with pytest.raises(SplitDirectoryError) as caught:
        mintdim.split(related[0], copy, tmp_path / "s", seed=1, ratios={"train": 1})
    assert (caught.value.reason, caught.value.detail) == ("file_changed", "joins.jsonl")
    (copy / "manifest.json").unlink()
    with pytest.raises(SplitDirectoryError) as caught:
        mintdim.split(related[0], copy, tmp_path / "s", seed=1, ratios={"train": 1})
    assert caught.value.reason == "no_manifest" and "nhóm" in caught.value.message("vi")
    with pytest.raises(SplitDirectoryError) as caught:
        mintdim.split(related[0], related[0], tmp_path / "s", seed=1, ratios={"train": 1})
    assert (caught.value.reason, caught.value.found) == ("other_kind", "build")
    assert not (tmp_path / "s").exists()


def test_a_used_output_directory_is_refused(related, grouped, tmp_path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "old.txt").write_text("x")
    with pytest.raises(OutputNotFreshError):
        mintdim.split(related[0], grouped, tmp_path / "s", seed=1, ratios={"train": 1})
    with pytest.raises(OutputNotFreshError) as caught:
        mintdim.split(related[0], grouped, grouped / "s", seed=1, ratios={"train": 1})
    assert caught.value.problem == "inside_input"


@pytest.mark.parametrize(
    ("option", "value"), [("seed", -1), ("window", 0), ("workers", 0), ("stratify", "")]
)
def test_bad_options_are_named(related, grouped, tmp_path, option, value) -> None:
    options = {"seed": 1, "ratios": {"train": 1}, option: value}
    with pytest.raises(SplitOptionError) as caught:
        mintdim.split(related[0], grouped, tmp_path / "s", **options)
    assert caught.value.option == option


def test_spans_are_copied_with_their_records(tmp_path) -> None:
    rows = [{"q": f"question {i} " * (i % 5 + 1), "a": f"answer {i}"} for i in range(40)]
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from mintdim import pipeline

    from .conftest import MODEL

    (
        pipeline("unit-build")
        .source.jsonl(files=[str(data)], fields=[["q", "a"]], templates=["Q: {q}\nA: {a}"])
        .tokenizer.sentencepiece([{"path": str(MODEL), "encode": "whole"}])
        .units(sizes=[[16, 32, 64]], build_batch=[8])
        .output.dir(str(tmp_path / "b"), samples_per_shard=[4])
        .run(workers=1, progress=False)
    )
    mintdim.group(tmp_path / "b", tmp_path / "g")
    mintdim.split(
        tmp_path / "b",
        tmp_path / "g",
        tmp_path / "s",
        seed=2,
        ratios="train=0.5,validation=0.25,test=0.25",
    )
    source = open_build(tmp_path / "b")
    for name in NAMES:
        assert verify_build(tmp_path / "s" / name).ok
        out = open_build(tmp_path / "s" / name)
        for row in out.samples():
            assert out.segments(row["sample_id"]) == source.segments(row["source_sample_id"])


def test_a_split_that_fails_its_own_verification_never_looks_complete(
    related, grouped, tmp_path, monkeypatch
) -> None:
    from mintdim.split import threeway

    real = threeway.write_builds

    def then_damaged(samples, split_of, root, provenance):
        written = real(samples, split_of, root, provenance)
        shard = next((root / "train").rglob("shard_*.bin"))  # as if a disk flipped a byte
        data = bytearray(shard.read_bytes())
        data[0] ^= 1
        shard.write_bytes(bytes(data))
        return written

    monkeypatch.setattr(threeway, "write_builds", then_damaged)
    with pytest.raises(mintdim.SplitVerificationError) as caught:
        mintdim.split(related[0], grouped, tmp_path / "s", seed=1, ratios={"train": 1})
    assert "copied_tokens" in caught.value.message("en")
    assert "token khác" in caught.value.message(
        "vi"
    ) or "SHA-256 của token" in caught.value.message("vi")
    assert not (tmp_path / "s" / "manifest.json").exists()
    assert "mintdim split failed" in (tmp_path / "s" / "FAILED.md").read_text()
    verification = json.loads((tmp_path / "s" / "verification.json").read_text())
    assert not verification["ok"]
    with pytest.raises(mintdim.SplitDirectoryError) as opened:
        mintdim.open_split(tmp_path / "s")
    assert opened.value.reason == "failed"


def test_groups_that_do_not_cover_the_build_are_refused(related, grouped, tmp_path) -> None:
    copy = tmp_path / "g"
    shutil.copytree(grouped, copy)
    lines = (copy / "groups.json").read_text().splitlines(keepends=True)
    second = json.loads(lines[2].rstrip(",\n"))  # the second group, without its members
    lines[2] = json.dumps({**second, "members": second["members"][1:] or [0]}) + ",\n"
    (copy / "groups.json").write_text("".join(lines))
    manifest = json.loads((copy / "manifest.json").read_text())
    data = (copy / "groups.json").read_bytes()
    manifest["files"]["groups.json"] = {
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    del manifest["manifest_sha256"]
    body = orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
    manifest["manifest_sha256"] = hashlib.sha256(body).hexdigest()
    (copy / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    with pytest.raises(GroupsMismatchError) as caught:
        mintdim.split(related[0], copy, tmp_path / "s", seed=1, ratios={"train": 1})
    assert (caught.value.problem, caught.value.found) == ("count", "0")
    assert "every sample of the build exactly once" in caught.value.message("en")
    assert not (tmp_path / "s").exists()


def test_a_full_disk_is_a_named_error_and_nothing_looks_complete(related, grouped, small_disk):
    """The three builds do not fit on a tmpfs that really fills: BuildWriteError naming the
    split's directory, and no manifest."""
    out = small_disk("64k") / "split"
    with pytest.raises(mintdim.BuildWriteError) as caught:
        mintdim.split(related[0], grouped, out, seed=0, ratios={"train": 0.8, "test": 0.2})
    assert (caught.value.place, caught.value.reason) == ("derived", "disk_full")
    assert "Không ghi được một file của build." in caught.value.message("vi")
    assert not (out / "manifest.json").exists()
