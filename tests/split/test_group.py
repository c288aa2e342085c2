"""``mintdim.group``: groups equal to the issue's rules computed independently, every confirmed
near-duplicate pair found, complete frozen files, and named errors with nothing written."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import shutil
from pathlib import Path

import orjson
import pytest

import mintdim
from mintdim import (
    AliasRuleError,
    ChangedSinceBuildError,
    JoinsLineError,
    NotABuildError,
    OutputNotFreshError,
    SplitOptionError,
    UnknownKeyFieldError,
    pipeline,
)
from mintdim.split.check import verify_split

from .conftest import (
    ALIAS_RULES,
    MODEL,
    TITLES,
    demo_texts,
    expected_groups,
    make_build,
    near_pairs,
    significant,
    write_rows,
)


def _groups(directory: Path) -> list[int]:
    content = json.loads((directory / "groups.json").read_text())
    group_of = [-1] * content["samples"]
    for entry in content["groups"]:
        assert entry["group"] == min(entry["members"])
        for member in entry["members"]:
            assert group_of[member] == -1, "a sample in two groups"
            group_of[member] = entry["group"]
    assert -1 not in group_of, "a sample in no group"
    assert content["group_count"] == len(content["groups"])
    return group_of


def _joins(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "joins.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def grouped(related, tmp_path_factory) -> Path:
    build, _ = related
    out = tmp_path_factory.mktemp("grouped") / "groups"
    mintdim.group(build, out, keys=["work"], alias_rules=ALIAS_RULES)
    return out


def test_groups_are_the_rules_computed_independently(related, grouped) -> None:
    _, rows = related
    assert _groups(grouped) == expected_groups(rows, keys=["work"], rules=ALIAS_RULES)


def test_every_near_duplicate_pair_is_found_with_its_exact_coverage(related, grouped) -> None:
    _, rows = related
    texts = [row["text"] for row in rows]
    brute = near_pairs(texts)
    assert len(brute) >= 15  # the data holds near copies, containments and punctuation variants
    near = {(j["a"], j["b"]): j["evidence"] for j in _joins(grouped) if j["kind"] == "near"}
    exact = ["".join(c for c in t if not c.isspace()) for t in texts]
    same_text = [significant(t) for t in texts]
    # Samples with the same significant text are reviewed once, through the first of them.
    first = {}
    for i, text in enumerate(same_text):
        first.setdefault(text, i)
    for (a, b), share in brute.items():
        ra, rb = first[same_text[a]], first[same_text[b]]
        if ra == rb:  # the same significant text: joined to the first one (or as exact text)
            for later in {a, b} - {ra}:
                assert exact[ra] == exact[later] or (ra, later) in near
            continue
        pair = (min(ra, rb), max(ra, rb))
        assert pair in near, f"missed {a}, {b} (coverage {share:.3f})"
        assert near[pair]["coverage"] == pytest.approx(share, abs=1e-6)
    for (a, b), evidence in near.items():  # and nothing else is confirmed
        assert (a, b) in brute and exact[a] != exact[b]
        short = min((a, b), key=lambda i: (len(same_text[i]), i))
        assert evidence["shorter"] == short
        other = b if short == a else a
        assert evidence["contained"] == (same_text[short] in same_text[other])


def test_keys_are_normalized_and_aliases_only_with_rules(related, grouped, tmp_path) -> None:
    _, rows = related
    joins = _joins(grouped)
    spellings = [i for i, r in enumerate(rows) if r.get("work") in TITLES]
    key_edges = [
        (j["a"], j["b"]) for j in joins if j["evidence"].get("value") == "the tale of genji"
    ]
    assert key_edges == [(spellings[0], spellings[1]), (spellings[0], spellings[2])]
    alias = [j for j in joins if j["kind"] == "alias"]
    assert len(alias) == 2 and {j["evidence"]["canonical"] for j in alias} == {"genji"}
    values = {v for j in alias for v in (j["evidence"]["value"], j["evidence"]["joined_value"])}
    assert values == {"genji 卷3", "genji 第三巻", "genji"}
    # Without rules there is no alias edge, and the volumes stay apart.
    out = tmp_path / "plain"
    mintdim.group(related[0], out, keys=["work"], near_duplicates=False)
    assert not [j for j in _joins(out) if j["kind"] == "alias"]
    assert _groups(out) == expected_groups(rows, keys=["work"], near=False)
    # Empty or missing values link nothing: those rows are joined by nothing else here.
    empty = [i for i, r in enumerate(rows) if not r.get("work")]
    assert not {j["a"] for j in _joins(out) if j["kind"] == "key"} & set(empty)


def test_the_files_are_complete_and_sealed(related, grouped) -> None:
    build, rows = related
    manifest = json.loads((grouped / "manifest.json").read_text())
    assert manifest["kind"] == "mintdim-groups" and manifest["status"] == "complete"
    raw = (build / "manifest.json").read_bytes()
    assert manifest["build"]["manifest_sha256"] == hashlib.sha256(raw).hexdigest()
    settings = manifest["settings"]
    assert settings["keys"] == ["work"] and settings["alias_rules"] == list(ALIAS_RULES)
    assert (settings["min_chars"], settings["min_distinct"], settings["coverage"]) == (
        200,
        100,
        0.9,
    )
    assert {"max_postings", "max_candidates"} <= set(settings)
    for name, facts in manifest["files"].items():
        data = (grouped / name).read_bytes()
        assert facts == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert sorted(p.name for p in grouped.iterdir()) == sorted(
        [*manifest["files"], "manifest.json"]
    )
    seal = manifest.pop("manifest_sha256")
    body = orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
    assert seal == hashlib.sha256(body).hexdigest()
    report = json.loads((grouped / "report.json").read_text())
    assert report["build"]["samples"] == len(rows)
    assert sum(report["edges"].values()) == len(_joins(grouped))
    largest = report["largest_groups"]
    assert [g["size"] for g in largest] == sorted((g["size"] for g in largest), reverse=True)
    text = (grouped / "REPORT.md").read_text()
    assert "not an exhaustive identity" in text and "không phải bảo đảm đầy đủ" in text


def test_joins_lines_are_edges_in_order(grouped) -> None:
    joins = _joins(grouped)
    kinds = ("key", "alias", "exact", "near", "manual")
    order = [(j["a"], j["b"], kinds.index(j["kind"])) for j in joins]
    assert order == sorted(order) and all(a < b for a, b, _ in order)


def test_same_output_whatever_the_worker_count(related, grouped, tmp_path) -> None:
    out = tmp_path / "two"
    mintdim.group(related[0], out, keys=["work"], alias_rules=ALIAS_RULES, workers=2)
    for name in ("groups.json", "joins.jsonl", "report.json", "REPORT.md"):
        assert (out / name).read_bytes() == (grouped / name).read_bytes()


def test_manual_joins_join_groups(related, tmp_path) -> None:
    build, rows = related
    joins = tmp_path / "joins.jsonl"
    joins.write_text('{"a": 0, "b": 3, "reason": "same author"}\n\n{"a": 5, "b": 1}\n')
    out = tmp_path / "g"
    result = mintdim.group(build, out, near_duplicates=False, joins=joins)
    manual = [j for j in _joins(out) if j["kind"] == "manual"]
    assert [(j["a"], j["b"], j["evidence"]["reason"]) for j in manual] == [
        (0, 3, "same author"),
        (1, 5, ""),
    ]
    assert result.edges["manual"] == 2
    group_of = _groups(out)
    assert group_of[3] == group_of[0] and group_of[5] == group_of[1]
    assert json.loads((out / "manifest.json").read_text())["joins_file"]["sha256"] == (
        hashlib.sha256(joins.read_bytes()).hexdigest()
    )


@pytest.mark.parametrize(
    ("line", "problem", "en", "vi"),
    [
        ("{not json", "json", "not valid JSON", "không phải JSON hợp lệ"),
        ("[1, 2]", "not_object", "not a JSON object", "không phải object JSON"),
        ('{"a": 1}', "missing", "'b' is missing", "thiếu khóa 'b'"),
        ('{"a": "x", "b": 2}', "not_an_id", "must be a sample id", "phải là một sample id"),
        ('{"a": 1, "b": 99999}', "unknown_sample", "names sample 99999", "chỉ tới mẫu 99999"),
    ],
)
def test_a_bad_joins_line_names_file_and_line_and_writes_nothing(
    related, tmp_path, line, problem, en, vi
) -> None:
    joins = tmp_path / "joins.jsonl"
    joins.write_text('{"a": 0, "b": 1}\n' + line + "\n")
    out = tmp_path / "g"
    with pytest.raises(JoinsLineError) as caught:
        mintdim.group(related[0], out, joins=joins)
    error = caught.value
    assert (error.line, error.problem) == (2, problem)
    assert f"{joins}:2" in error.message("en") and en in error.message("en")
    assert f"{joins}:2" in error.message("vi") and vi in error.message("vi")
    assert not out.exists()


@pytest.mark.parametrize(
    ("rule", "problem"),
    [("卷(\\d+)", "form"), ("=>x", "empty"), ("(卷=>", "regex"), ("卷=>\\2", "replacement")],
)
def test_a_bad_alias_rule_is_named(related, tmp_path, rule, problem) -> None:
    with pytest.raises(AliasRuleError) as caught:
        mintdim.group(related[0], tmp_path / "g", keys=["work"], alias_rules=["x=>y", rule])
    assert (caught.value.position, caught.value.problem) == (1, problem)
    assert "#2" in caught.value.message("en") and "Cách sửa" in caught.value.message("vi")
    assert not (tmp_path / "g").exists()


def test_an_unknown_key_field_is_named(related, tmp_path) -> None:
    with pytest.raises(UnknownKeyFieldError) as caught:
        mintdim.group(related[0], tmp_path / "g", keys=["work", "title"])
    error = caught.value
    assert error.field == "title" and {"text", "work", "era"} <= set(error.available)
    assert "'title'" in error.message("en") and "Không bản ghi nguồn nào" in error.message("vi")
    assert not (tmp_path / "g").exists()


def test_an_input_changed_since_the_build_is_refused(related, tmp_path) -> None:
    build = make_build(tmp_path, related[1][:40])
    data = tmp_path / "build.jsonl"
    original = data.read_bytes()
    lines = original.decode().splitlines(keepends=True)
    row = json.loads(lines[3])
    lines[3] = json.dumps({**row, "text": row["text"].replace("e", "E", 1)}) + "\n"
    data.write_text("".join(lines))
    with pytest.raises(ChangedSinceBuildError) as caught:
        mintdim.group(build, tmp_path / "g")
    error = caught.value
    assert error.change == "rendered" and error.line == 4 and error.file == str(data)
    assert f"{data}:4" in error.message("en") and "đã thay đổi" in error.message("vi")
    assert not (tmp_path / "g").exists()
    data.write_bytes(original + b"\n")  # the same samples, one more byte
    with pytest.raises(ChangedSinceBuildError) as caught:
        mintdim.group(build, tmp_path / "g")
    assert caught.value.change == "size"
    data.write_bytes(original[:-2] + b"x\n")  # the last line's closing brace changed
    with pytest.raises(ChangedSinceBuildError) as caught:
        mintdim.group(build, tmp_path / "g")
    assert caught.value.change == "line_not_sample" and caught.value.line == 40
    data.write_bytes(original)
    mintdim.group(build, tmp_path / "g", near_duplicates=False)  # as built: accepted


def test_not_a_build_or_an_incomplete_one(build_copy, tmp_path) -> None:
    with pytest.raises(NotABuildError) as caught:
        mintdim.group(tmp_path / "nothing", tmp_path / "g")
    assert caught.value.reason == "missing"
    (build_copy / "manifest.json").unlink()
    with pytest.raises(NotABuildError) as caught:
        mintdim.group(build_copy, tmp_path / "g")
    assert caught.value.reason == "no_manifest"
    assert "bản build" in caught.value.message("vi")


def test_a_used_output_directory_is_refused(related, tmp_path) -> None:
    out = tmp_path / "g"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputNotFreshError) as caught:
        mintdim.group(related[0], out)
    assert caught.value.problem == "not_empty"
    assert "not fresh" in caught.value.message("en") and "thư mục mới" in caught.value.message("vi")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    with pytest.raises(OutputNotFreshError) as caught:
        mintdim.group(related[0], related[0] / "groups")
    assert caught.value.problem == "inside_input"
    mintdim.group(related[0], tmp_path / "empty" / "nested", near_duplicates=False)


@pytest.mark.parametrize(
    ("option", "value", "rule"),
    [
        ("coverage", 0.0, "fraction"),
        ("coverage", 1.5, "fraction"),
        ("max_postings", 0, "positive"),
        ("min_chars", -1, "non_negative"),
        ("workers", 0, "positive"),
    ],
)
def test_settings_out_of_range_are_named(related, tmp_path, option, value, rule) -> None:
    with pytest.raises(SplitOptionError) as caught:
        mintdim.group(related[0], tmp_path / "g", **{option: value})
    assert (caught.value.option, caught.value.rule) == (option, rule)
    assert not (tmp_path / "g").exists()


def test_the_caps_bound_the_search_and_the_report_counts_what_they_skipped(tmp_path) -> None:
    texts = demo_texts()
    base = max(texts, key=len)
    words = base.split(" ")
    variants = [" ".join(words[:k] + ["VARIANT"] + words[k + 1 :]) for k in (5, 25, 45, 65)]
    rows = [{"text": t} for t in [base, *variants, *texts[:30]]]
    build = make_build(tmp_path, rows)
    free = mintdim.group(build, tmp_path / "free").report["near_duplicates"]
    # Five near copies of one text: every pair of them is compared, nothing is skipped.
    assert free["pairs_skipped_by_max_postings"] == free["pairs_over_max_candidates"] == 0
    assert free["confirmed"] == 10
    starred = mintdim.group(build, tmp_path / "star", max_postings=1).report["near_duplicates"]
    # Every bucket holds two or more samples, so every one is over the cap: each is compared as
    # a star (4 of its 10 pairs when the five copies share it), the rest skipped and counted.
    assert starred["buckets"] == starred["buckets_over_max_postings"] > 0
    assert starred["pairs_skipped_by_max_postings"] > 0
    assert starred["comparisons"] < free["comparisons"]
    capped = mintdim.group(build, tmp_path / "one", max_candidates=1).report["near_duplicates"]
    assert capped["pairs_over_max_candidates"] > 0 and capped["comparisons"] < free["comparisons"]
    # Groups are transitive: the bounded searches still join the five copies.
    for out in ("free", "star", "one"):
        assert _groups(tmp_path / out)[:5] == [0] * 5


def test_samples_too_short_are_counted_not_compared(tmp_path) -> None:
    text = max(demo_texts(), key=len)
    rows = [{"text": text}, {"text": text + " Extra."}, {"text": "short"}, {"text": "short!"}]
    build = make_build(tmp_path, rows)
    result = mintdim.group(build, tmp_path / "g")
    near = result.report["near_duplicates"]
    assert near["too_short"] == 2 and near["reviewed"] == 2
    assert _groups(tmp_path / "g") == [0, 0, 2, 3]
    shutil.rmtree(tmp_path / "g")
    mintdim.group(build, tmp_path / "g", min_chars=0, min_distinct=0, coverage=0.5)
    assert _groups(tmp_path / "g") == [0, 0, 2, 2]


def _stored(folder: Path, rows: list[dict], suffix: str) -> Path:
    """``rows`` as one input file of the given kind: JSONL plain or compressed, or Parquet (in
    row groups of 50 rows, so records are read across several)."""
    plain = write_rows(folder / "rows.jsonl", rows)
    if suffix == ".jsonl":
        return plain
    path = folder / f"rows{suffix}"
    if suffix == ".parquet":
        pa = pytest.importorskip("pyarrow")
        parquet = pytest.importorskip("pyarrow.parquet")
        parquet.write_table(pa.Table.from_pylist(rows), path, row_group_size=50)
        return path
    compress = {
        ".jsonl.gz": gzip.compress,
        ".jsonl.zst": lambda data: pytest.importorskip("zstandard").ZstdCompressor().compress(data),
        ".jsonl.xz": lzma.compress,
        ".jsonl.bz2": bz2.compress,
    }[suffix]
    path.write_bytes(compress(plain.read_bytes()))
    return path


SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".jsonl.xz", ".jsonl.bz2", ".parquet")


def test_every_format_gives_the_same_groups_joins_and_split(related, tmp_path) -> None:
    """Groups, splits and their verification re-read the build's records through its Source:
    the same records stored as JSONL, compressed JSONL or Parquet give the same groups, the
    same join edges and, for one seed, the same allocation; each split verifies."""
    # Every record has every key, so each format stores exactly the same records (Parquet has
    # no "absent", only null).
    rows = [{"text": r["text"], "work": r.get("work", ""), "era": r["era"]} for r in related[1]]
    found = {}
    for suffix in SUFFIXES:
        folder = tmp_path / suffix.strip(".").replace(".", "_")
        folder.mkdir()
        data = _stored(folder, rows, suffix)
        step = pipeline("unit-build").source
        read = step.parquet if suffix == ".parquet" else step.jsonl
        out = folder / "build"
        (
            read(files=[str(data)], fields=[["text"]], templates=["{text}"])
            .tokenizer.sentencepiece([{"path": str(MODEL)}])
            .units(sizes=[[32, 64, 128, 256, 512]], build_batch=[64])
            .output.dir(str(out), samples_per_shard=[16])
            .run(workers=1, progress=False, on_overflow="extend")
        )
        mintdim.group(out, folder / "groups", keys=["work"], alias_rules=ALIAS_RULES)
        ratios = {"train": 0.8, "validation": 0.1, "test": 0.1}
        mintdim.split(
            out, folder / "groups", folder / "split", seed=7, ratios=ratios, stratify="era"
        )
        report = verify_split(folder / "split")
        assert report.ok, (suffix, report.failures)
        # Each line names its input file, whose name tells the format: the rest must agree.
        splits = [
            {k: v for k, v in json.loads(line).items() if k != "source_file"}
            for line in (folder / "split" / "splits.jsonl").read_text().splitlines()
        ]
        found[suffix] = (_groups(folder / "groups"), _joins(folder / "groups"), splits)
    # The groups' REPORT.md names a Parquet record by its row, a JSONL one by its line.
    parquet_md = (tmp_path / "parquet" / "groups" / "REPORT.md").read_text()
    assert "rows.parquet, row " in parquet_md and "rows.parquet, hàng " in parquet_md
    assert "rows.parquet:" not in parquet_md
    assert "rows.jsonl:" in (tmp_path / "jsonl" / "groups" / "REPORT.md").read_text()
    assert len(found[".jsonl"][0]) == len(rows)
    assert found[".jsonl"][1], "the related rows make join edges"
    for suffix in SUFFIXES[1:]:
        assert found[suffix] == found[".jsonl"], suffix
