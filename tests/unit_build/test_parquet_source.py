"""Parquet inputs: rows are records, row groups are pieces, column values follow the JSONL rules.

Every Parquet file is written by pyarrow here, and every build is compared with the build of the
same records from a JSONL file: byte-identical but for the input's name, whatever the row groups,
worker count, piece size, build_batch, resume or a build that stages nothing. ``source_line`` is
the row. Bad files (missing or nested columns, an unreadable footer) are in test_faults.py.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import sentencepiece as spm
from click.testing import CliRunner

from mintdim import errors
from mintdim.build import runtime
from mintdim.build.contracts import FilePlan
from mintdim.build.source import open_source, parquet
from mintdim.check.verify import verify_build as mintdim_verify
from mintdim.cli import main
from tests.unit_build.helpers import (
    Expected,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    tree_bytes,
    tree_bytes_but_inputs,
    tree_bytes_but_source_names,
    verify_build,
    write_jsonl,
)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SIZES = [8, 16, 32, 64]
FIELDS = ["question", "answer"]
TEMPLATE = "{question}\n{answer}"


def _plan(path: Path, build_batch: int) -> FilePlan:
    """A resolved plan of one Parquet input with the test fields, for reading it directly."""
    return FilePlan(
        index=0,
        path=str(path),
        abs_path=str(path),
        fields=tuple(FIELDS),
        template=None,
        tokenizer=None,
        sizes=(8,),
        build_batch=build_batch,
        max_line_bytes=1 << 20,
        output_index=0,
        format="parquet",
    )


def _records(count: int) -> list[dict[str, str]]:
    words = ["the model", "a unit", "padding is waste", "xin chào thế giới", "tokens ✓ ☃", ""]
    return [
        {"question": f"{words[i % 6]} {i % 41}", "answer": words[(i * 7) % 6], "n": i}
        for i in range(count)
    ]


def _write_parquet(path: str, records: list[dict], row_group_size: int = 50, **columns) -> Path:
    """The records as a Parquet file (``columns``: an Arrow type per column to write it as)."""
    names = list(records[0]) if records else ["question", "answer"]
    arrays = {name: pa.array([r[name] for r in records], type=columns.get(name)) for name in names}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(arrays), path, row_group_size=row_group_size)
    return Path(path)


def _job(files: list[str], sp_model, out: str, source: str = "parquet", **more):
    return job(
        files,
        sp_model,
        fields=[FIELDS],
        templates=[TEMPLATE],
        sizes=[SIZES],
        samples_per_shard=[17],
        build_batch=[more.pop("build_batch", 9)],
        out=out,
        source=source,
    )


def _jsonl_reference(records: list[dict], sp_model) -> dict:
    write_jsonl("ref/a.jsonl", records)
    _job(["ref/a.jsonl"], sp_model, "ref/out", source="jsonl").run(workers=1)
    return tree_bytes_but_source_names("ref/out")


def test_the_same_records_build_the_same_output_as_jsonl(cwd, sp_model):
    records = _records(400)
    reference = _jsonl_reference(records, sp_model)
    _write_parquet("data/a.parquet", records, row_group_size=37)
    runs = [(1, None, 9), (2, 1, 9), (2, 3000, 4), (1, 20000, 200), (2, None, 1)]
    for workers, piece_bytes, build_batch in runs:
        out = f"out_{workers}_{piece_bytes}_{build_batch}"
        _job(["data/a.parquet"], sp_model, out, build_batch=build_batch).run(
            workers=workers, piece_bytes=piece_bytes
        )
        assert tree_bytes_but_source_names(out) == reference, (workers, piece_bytes, build_batch)
    _job(["data/a.parquet"], sp_model, "streamed").run(workers=2, resumable=False)
    assert tree_bytes_but_source_names("streamed") == reference


def test_source_line_is_the_row_across_row_groups(cwd, sp_model):
    records = _records(130)
    _write_parquet("data/a.parquet", records, row_group_size=16)
    _job(["data/a.parquet"], sp_model, "out").run(workers=2, piece_bytes=1)
    expected = [
        Expected("data/a.parquet", row, f"{r['question']}\n{r['answer']}")
        for row, r in enumerate(records, start=1)
    ]
    verify_build("out", expected, reference_encoder(sp_model), SIZES, 17, pad_id=0)
    assert read_json("out/stats.json")["blank_lines"] == 0


@pytest.mark.parametrize(
    "kind",
    [pa.string(), pa.large_string(), pa.string_view(), pa.dictionary(pa.int32(), pa.string())],
    ids=["string", "large_string", "string_view", "dictionary"],
)
def test_every_arrow_string_encoding_is_a_string(cwd, sp_model, kind):
    records = _records(90)
    reference = _jsonl_reference(records, sp_model)
    _write_parquet("data/a.parquet", records, question=kind, answer=kind)
    assert pq.read_schema("data/a.parquet").field("question").type == kind
    _job(["data/a.parquet"], sp_model, "out").run(workers=1)
    assert tree_bytes_but_source_names("out") == reference


def test_columns_in_another_order_and_extra_columns_are_fine(cwd, sp_model):
    records = _records(60)
    reference = _jsonl_reference(records, sp_model)
    reordered = [
        {"n": r["n"], "answer": r["answer"], "extra": [1, 2], "question": r["question"]}
        for r in records
    ]
    _write_parquet("data/a.parquet", reordered)  # a nested column nobody declared is never read
    _job(["data/a.parquet"], sp_model, "out").run(workers=1)
    assert tree_bytes_but_source_names("out") == reference


@pytest.mark.parametrize(
    ("column", "found_type"),
    [
        (pa.array([1, 2, 3, 4], pa.int64()), "number"),
        (pa.array([1.5, 2.0, 3.0, 4.0], pa.float32()), "number"),
        (pa.array([True, False, True, True]), "boolean"),
        (pa.array([None] * 4, pa.null()), "null"),
        (pa.array([b"a", b"b", b"c", b"d"], pa.binary()), "binary"),
    ],
    ids=["int", "float", "bool", "null", "binary"],
)
def test_a_column_of_another_type_fails_at_its_first_row(cwd, sp_model, column, found_type):
    table = pa.table({"question": ["a", "b", "c", "d"], "answer": column})
    pq.write_table(table, "a.parquet")
    with pytest.raises(errors.FieldValueTypeError) as caught:
        _job(["a.parquet"], sp_model, "out").run(workers=1)
    error = caught.value
    assert (error.file, error.line, error.field, error.found_type, error.kind) == (
        "a.parquet",
        1,
        "answer",
        found_type,
        "parquet",
    )
    assert "Row:" in error.message("en") and "Hàng:" in error.message("vi")
    assert not Path("out/manifest.json").exists()


def test_the_first_null_in_input_order_is_named_after_the_rows_before_it(cwd, sp_model):
    records = _records(200)
    questions = [r["question"] for r in records]
    answers: list[str | None] = [r["answer"] for r in records]
    answers[150] = None  # row 151, in the fourth row group
    questions[170] = None  # later: not the one named
    pq.write_table(
        pa.table({"question": questions, "answer": answers}), "a.parquet", row_group_size=50
    )
    failures = []
    for workers, piece_bytes in [(1, None), (2, 1)]:
        out = f"out_{workers}"
        with pytest.raises(errors.FieldValueTypeError) as caught:
            _job(["a.parquet"], sp_model, out).run(workers=workers, piece_bytes=piece_bytes)
        failures.append(caught.value.facts())
        assert not Path(f"{out}/manifest.json").exists()
    assert failures[0] == failures[1]
    assert (failures[0]["line"], failures[0]["field"], failures[0]["found_type"]) == (
        151,
        "answer",
        "null",
    )


def test_deep_verify_and_inspect_read_the_parquet_rows(cwd, sp_model):
    records = _records(120)
    path = _write_parquet("data/a.parquet", records, row_group_size=25)
    _job(["data/a.parquet"], sp_model, "out").run(workers=2, piece_bytes=1)
    (entry,) = read_json("out/manifest.json")["source"]["inputs"]
    assert entry["format"] == "parquet"
    assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    report = mintdim_verify(cwd / "out", deep=True)
    assert report.ok, report.lines("en")

    row = read_jsonl("out/sample_index.jsonl")[77]
    shown = CliRunner().invoke(main, ["inspect", "out", "--sample", "77"])
    assert shown.exit_code == 0
    # A Parquet record is a row, never shown as a line ("file:N").
    assert f"source       data/a.parquet, row {row['source_line']}\n" in shown.output
    assert "data/a.parquet:" not in shown.output
    vi = CliRunner().invoke(main, ["inspect", "out", "--sample", "77", "--lang", "vi"])
    assert f"nguồn        data/a.parquet, hàng {row['source_line']}\n" in vi.output
    record = records[row["source_line"] - 1]
    processor = spm.SentencePieceProcessor(model_file=str(sp_model))
    text = processor.decode(processor.encode(f"{record['question']}\n{record['answer']}"))
    assert shown.output.endswith(f"decoded text:\n{text}\n")

    # One value changed, in a file of the same size: the record and the fingerprint both fail.
    changed = [dict(r) for r in records]
    changed[40]["question"] = changed[40]["question"][::-1] + "!"
    _write_parquet("data/a.parquet", changed, row_group_size=25)
    codes = {f.code for f in mintdim_verify(cwd / "out", deep=True).failures}
    assert codes == {"deep_record", "deep_fingerprint"}


def test_a_resumed_build_is_identical(cwd, sp_model):
    records = _records(300)
    answers: list[str | None] = [r["answer"] for r in records]
    answers[260] = None
    table = pa.table({"question": [r["question"] for r in records], "answer": answers})
    pq.write_table(table, "a.parquet", row_group_size=20)
    with pytest.raises(errors.FieldValueTypeError):
        _job(["a.parquet"], sp_model, "out").run(workers=2, piece_bytes=1)
    assert len(list(Path("out/staging").glob("*.fragment"))) > 5
    answers[260] = "fixed"
    table = pa.table({"question": [r["question"] for r in records], "answer": answers})
    pq.write_table(table, "a.parquet", row_group_size=20)
    _job(["a.parquet"], sp_model, "out").run(workers=1, resume=True)
    _job(["a.parquet"], sp_model, "fresh").run(workers=1, piece_bytes=1)
    assert tree_bytes("out") == tree_bytes("fresh")


def test_a_row_group_rewritten_under_the_build_is_named(cwd, sp_model, monkeypatch):
    records = _records(200)
    _write_parquet("a.parquet", records, row_group_size=40)
    original = Path("a.parquet").read_bytes()
    real = runtime._all_pieces

    def pieces(plan, piece_bytes, fingerprints):
        for number, work in enumerate(real(plan, piece_bytes, fingerprints)):
            if number == 1:  # rows of another text, the file the same size: only bytes tell
                changed = [{**r, "question": r["question"].upper()} for r in records]
                _write_parquet("a.parquet", changed, row_group_size=40)
            yield work

    monkeypatch.setattr(runtime, "_all_pieces", pieces)
    with pytest.raises(errors.InputChangedError) as caught:
        _job(["a.parquet"], sp_model, "out").run(workers=1, piece_bytes=1)
    assert (caught.value.file, caught.value.change) == ("a.parquet", "content")
    start, end = (int(n) for n in caught.value.byte_range.split("-"))
    assert hashlib.sha256(original[start:end]).hexdigest() == caught.value.was
    assert not Path("out/manifest.json").exists()


def test_reading_holds_one_row_group_at_a_time(tmp_path):
    """Arrow's own allocations while every row is read: about one row group's declared columns,
    far below the file's."""
    text = "the model of padding and units " * 40
    rows = 40_000
    table = pa.table(
        {
            "question": [f"{text} {i}" for i in range(rows)],
            "answer": ["a"] * rows,
            "unused": [text] * rows,
        }
    )
    path = tmp_path / "big.parquet"
    pq.write_table(table, path, row_group_size=2000, compression="none")
    plan = _plan(path, build_batch=500)
    del table
    declared = rows * (len(text) + 6)  # the question column's text, the answer's one byte
    peak = 0
    seen = 0
    start = pa.total_allocated_bytes()
    for batch in open_source(plan).batches():
        seen += len(batch.columns[0])
        peak = max(peak, pa.total_allocated_bytes() - start)
    assert seen == rows
    assert peak < declared / 5, f"{peak / 2**20:.1f} MiB held of {declared / 2**20:.1f} MiB"


def test_without_pyarrow_the_error_says_how_to_get_it(cwd, sp_model, monkeypatch):
    _write_parquet("a.parquet", _records(5))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` now raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(errors.ParquetMissingError) as caught:
        _job(["a.parquet"], sp_model, "out").run(workers=1)
    assert '".[parquet]"' in caught.value.message("en")
    assert '".[parquet]"' in caught.value.message("vi")
    assert not Path("out").exists()


def test_one_large_row_group_is_cut_into_row_ranges_the_driver_carries(cwd, sp_model, monkeypatch):
    """pyarrow writes up to 1Mi rows as one row group: its rows still spread over the workers."""
    monkeypatch.setattr(parquet, "MAX_CARRIED_BYTES", 3000)
    monkeypatch.setattr(parquet, "_RANGE_STEP_ROWS", 16)
    records = _records(600)
    reference = _jsonl_reference(records, sp_model)
    path = _write_parquet("data/a.parquet", records, row_group_size=len(records))
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    plan = _plan(path, build_batch=9)
    works = list(open_source(plan).pieces(1))
    assert len(works) > 5 and all(work.data is not None for work in works)
    rows = [len(pa.ipc.open_stream(work.data).read_all()) for work in works]
    assert [work.piece.first_line for work in works] == [
        1 + sum(rows[:i]) for i in range(len(rows))
    ]
    assert sum(rows) == len(records)
    for workers, piece_bytes in [(1, 1), (2, 1), (2, None)]:
        out = f"out_{workers}_{piece_bytes}"
        _job(["data/a.parquet"], sp_model, out).run(workers=workers, piece_bytes=piece_bytes)
        assert tree_bytes_but_source_names(out) == reference, (workers, piece_bytes)

    # A bad value in a late range fails where it is, and the fixed file resumes to the same build.
    answers: list[str | None] = [r["answer"] for r in records]
    answers[555] = None
    table = pa.table({"question": [r["question"] for r in records], "answer": answers})
    pq.write_table(table, "data/a.parquet", row_group_size=len(records))
    with pytest.raises(errors.FieldValueTypeError) as caught:
        _job(["data/a.parquet"], sp_model, "resumed").run(workers=2, piece_bytes=1)
    assert caught.value.line == 556
    _write_parquet("data/a.parquet", records, row_group_size=len(records))
    _job(["data/a.parquet"], sp_model, "resumed").run(workers=1, resume=True)
    assert tree_bytes_but_inputs("resumed") == tree_bytes_but_inputs("out_1_1")  # another mtime


def test_scan_and_auto_units_count_the_rows(cwd, sp_model):
    records = _records(500)
    write_jsonl("data/a.jsonl", records)
    _write_parquet("data/a.parquet", records, row_group_size=64)
    counts = {}
    for name, source in [("data/a.jsonl", "jsonl"), ("data/a.parquet", "parquet")]:
        declared = _job([name], sp_model, out=source, source=source).units(
            sizes="auto", build_batch=[13], count=3
        )
        counts[source] = declared.scan(workers=2).token_counts
        declared.run(workers=2, piece_bytes=1)
    assert counts["jsonl"].tolist() == counts["parquet"].tolist()
    assert tree_bytes_but_source_names("parquet") == tree_bytes_but_source_names("jsonl")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_row_over_the_line_limit_is_named_by_its_row(cwd, sp_model, workers):
    """max_line_bytes bounds a Parquet row's declared values together (an undeclared column
    never counts); the build, a scan and the whole-record read name the row."""
    records = _records(120)
    records[77] = {"question": "q" * 600, "answer": "a" * 500, "n": 77}  # 1,100 bytes together
    records[30] = {"question": "short", "answer": "x", "n": 30}
    _write_parquet("data/a.parquet", records, row_group_size=50)
    build = job(
        ["data/a.parquet"], sp_model, fields=[FIELDS], templates=[TEMPLATE], sizes=[SIZES]
    ).source.parquet(
        files=["data/a.parquet"], fields=[FIELDS], templates=[TEMPLATE], max_line_bytes=1000
    )
    with pytest.raises(errors.LineTooLongError) as caught:
        build.run(workers=workers, progress=False)
    err = caught.value
    assert (err.file, err.line, err.limit, err.size, err.kind) == (
        "data/a.parquet",
        78,
        1000,
        1100,
        "parquet",
    )
    for lang, row in (("en", "Row"), ("vi", "Hàng")):
        text = err.message(lang)
        assert f"{row}:\n78" in text and "1,100" in text
    plan = replace(_plan(Path("data/a.parquet"), 16), max_line_bytes=1000)
    read = list(open_source(plan).records())
    assert [n for part in read for n in part.line_numbers] == list(range(1, 78))
    assert read[-1].error.line == 78
    # 1,100 bytes are within a limit of 1,100: the same file builds.
    job(
        ["data/a.parquet"],
        sp_model,
        fields=[FIELDS],
        templates=[TEMPLATE],
        sizes=[SIZES + [512]],
        out="ok",
    ).source.parquet(
        files=["data/a.parquet"], fields=[FIELDS], templates=[TEMPLATE], max_line_bytes=1100
    ).run(workers=workers, progress=False)


def test_errors_name_a_parquet_record_by_its_row(cwd, sp_model):
    """An overlong sample, and a record changed since the build (as grouping finds it), are
    named by their row in both languages."""
    import mintdim

    records = _records(60)
    records[41] = {"question": "the model " * 40, "answer": "a unit", "n": 41}
    _write_parquet("data/a.parquet", records, row_group_size=25)
    with pytest.raises(errors.UnitOverflowError) as caught:
        _job(["data/a.parquet"], sp_model, "over").run(workers=1)
    assert (caught.value.line, caught.value.kind) == (42, "parquet")
    assert "Sample (file:row):\ndata/a.parquet:42" in caught.value.message("en")
    assert "Mẫu (file:hàng):\ndata/a.parquet:42" in caught.value.message("vi")
    records[41] = {"question": "short", "answer": "a unit", "n": 41}
    _write_parquet("data/a.parquet", records, row_group_size=25)
    _job(["data/a.parquet"], sp_model, "out").run(workers=1)
    records[7] = {**records[7], "answer": records[7]["answer"] + "!"}
    _write_parquet("data/a.parquet", records, row_group_size=25)
    with pytest.raises(errors.ChangedSinceBuildError) as changed:
        mintdim.group("out", "groups")
    assert (changed.value.change, changed.value.line, changed.value.kind) == (
        "rendered",
        8,
        "parquet",
    )
    assert "File (file:row):\ndata/a.parquet:8" in changed.value.message("en")
    assert "File (file:hàng):\ndata/a.parquet:8" in changed.value.message("vi")


def test_groups_read_only_the_columns_they_need(cwd, sp_model):
    """A Parquet file with a large column the build does not declare: the build never reads it,
    and neither does grouping by a key column (it would pass the row limit), so the groups come
    out as from the same file without it; a key that is no column is named."""
    import mintdim

    records = [{**r, "blob": "x" * 5000, "work": f"w{i % 7}"} for i, r in enumerate(_records(90))]
    _write_parquet("data/a.parquet", records, row_group_size=30)
    build = job(
        ["data/a.parquet"], sp_model, fields=[FIELDS], templates=[TEMPLATE], sizes=[SIZES + [512]]
    ).source.parquet(
        files=["data/a.parquet"], fields=[FIELDS], templates=[TEMPLATE], max_line_bytes=2000
    )
    build.run(workers=1, progress=False)
    result = mintdim.group("out", "groups", keys=["work"], near_duplicates=False)
    assert result.groups == 7 + sum(1 for r in records if not r["work"])
    with pytest.raises(errors.UnknownKeyFieldError) as caught:
        mintdim.group("out", "groups-2", keys=["nowhere"], near_duplicates=False)
    # The error lists every column of the file, those it never read included.
    assert set(caught.value.available) == {"question", "answer", "n", "blob", "work"}
