"""JSONL reading: physical lines split on ``\\n`` only, CRLF, BOM, blank lines, the last line, and
the data errors a line can raise (SourceParseError, SampleSchemaError, FieldValueTypeError),
always the first one in input order whatever the batching or worker count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mintdim import errors
from mintdim.build.source import jsonl
from tests.conftest import corpora_file
from tests.unit_build.helpers import (
    Expected,
    assert_no_worker_left,
    file_sha256,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    sections,
    tree_bytes_but_inputs,
    verify_build,
    write_jsonl,
)

SIZES = [4, 8, 16, 64]


def build(tokenizer: Path, files=("./data/a.jsonl",), *, workers: int = 1, **kwargs):
    kwargs.setdefault("sizes", (tuple(SIZES),))
    return job(list(files), tokenizer, **kwargs).run(workers=workers)


def verify(tokenizer: Path, expected: list[Expected], sizes=SIZES, sps: int = 100, out="out"):
    return verify_build(out, expected, reference_encoder(str(tokenizer)), sizes, sps, pad_id=0)


# ---------------------------------------------------------------------------
# Line splitting
# ---------------------------------------------------------------------------


def test_unicode_line_separators_and_lone_cr_stay_inside_their_line(cwd, sp_model):
    rows = [
        json.dumps({"text": "the\u2028model"}, ensure_ascii=False).encode(),
        json.dumps({"text": "a\u2029data"}, ensure_ascii=False).encode(),
        json.dumps({"text": "unit\u0085shard"}, ensure_ascii=False).encode(),
        b'{"text": "the token",\r "extra": 1}',  # a lone CR as JSON whitespace
        b'{"text": "ab\\rcd"}',  # an escaped CR in the value
        json.dumps({"text": "x\u2028\u2029\u0085\u000by"}, ensure_ascii=False).encode(),
        b'{"text": "last"}',
    ]
    assert "\u2028".encode() in rows[0] and b"\xc2\x85" in rows[2]
    write_jsonl("data/a.jsonl", rows)
    assert len(Path("data/a.jsonl").read_text(encoding="utf-8").splitlines()) > len(rows)
    result = build(sp_model, build_batch=(2,))
    texts = [
        "the\u2028model",
        "a\u2029data",
        "unit\u0085shard",
        "the token",
        "ab\rcd",
        "x\u2028\u2029\u0085\u000by",
        "last",
    ]
    expected = [Expected("./data/a.jsonl", i, t) for i, t in enumerate(texts, start=1)]
    verify(sp_model, expected)
    assert result.outputs[0].stats["total_samples"] == 7
    assert result.outputs[0].stats["blank_lines"] == 0


@pytest.mark.corpora
@pytest.mark.parametrize("fixture", ["sp_model", "hf_json"])
def test_blns_has_515_samples_each_rendered_as_its_json_value(cwd, request, fixture):
    tokenizer = request.getfixturevalue(fixture)
    source = corpora_file("datasets/blns.jsonl")
    raw = source.read_bytes()
    values = [json.loads(line)["text"] for line in raw.split(b"\n") if line]
    assert len(values) == 515
    Path("data").mkdir()
    Path("data/blns.jsonl").write_bytes(raw)
    encode = reference_encoder(str(tokenizer))
    longest = max(len(encode(v)) for v in values)
    sizes = [8, 32, 128, max(longest, 129)]
    result = build(
        tokenizer, ["./data/blns.jsonl"], sizes=(tuple(sizes),), build_batch=(64,), workers=2
    )
    assert result.outputs[0].stats["total_samples"] == 515
    expected = [Expected("./data/blns.jsonl", i, v) for i, v in enumerate(values, start=1)]
    verify(tokenizer, expected, sizes=sizes)
    assert Path("data/blns.jsonl").read_bytes() == raw


def _same_output(rows: list, sp_model: Path, make, build_batch: int = 2) -> dict[str, bytes]:
    """Build ``rows`` written by ``make`` from the same relative path in a fresh directory."""
    make(Path("data/a.jsonl"), rows)
    build(sp_model, build_batch=(build_batch,))
    return tree_bytes_but_inputs("out")


ROWS = [{"text": "the model"}, {"text": "a\u2028unit"}, {"text": ""}, {"text": "data token"}]


@pytest.mark.parametrize(
    "variant",
    ["crlf", "crlf_no_final", "mixed", "bom", "bom_crlf", "no_final_newline"],
)
def test_crlf_bom_and_final_newline_give_identical_output(tmp_path, monkeypatch, sp_model, variant):
    (tmp_path / "lf").mkdir()
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "lf")
    reference = _same_output(ROWS, sp_model, lambda p, r: write_jsonl(p, r))

    def make(path: Path, rows: list) -> None:
        if variant == "crlf":
            write_jsonl(path, rows, newline=b"\r\n")
        elif variant == "crlf_no_final":
            write_jsonl(path, rows, newline=b"\r\n", final_newline=False)
        elif variant == "mixed":
            lines = [json.dumps(r, ensure_ascii=False).encode() for r in rows]
            path.parent.mkdir(parents=True)
            path.write_bytes(lines[0] + b"\r\n" + lines[1] + b"\n" + lines[2] + b"\r\n" + lines[3])
        elif variant == "bom":
            write_jsonl(path, rows, bom=True)
        elif variant == "bom_crlf":
            write_jsonl(path, rows, bom=True, newline=b"\r\n")
        else:
            write_jsonl(path, rows, final_newline=False)

    monkeypatch.chdir(tmp_path / "other")
    assert _same_output(ROWS, sp_model, make) == reference


def test_a_bom_only_counts_at_the_start_of_the_file(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "\ufeffthe model"}, {"text": "a\ufeff"}], bom=True)
    build(sp_model)
    verify(
        sp_model,
        [
            Expected("./data/a.jsonl", 1, "\ufeffthe model"),
            Expected("./data/a.jsonl", 2, "a\ufeff"),
        ],
    )


def test_a_bom_at_the_start_of_a_later_line_is_a_parse_error(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "a"}, b"\xef\xbb\xbf" + b'{"text": "b"}'])
    with pytest.raises(errors.SourceParseError) as info:
        build(sp_model)
    assert (info.value.line, info.value.reason) == (2, "invalid_json")


def test_blank_and_whitespace_lines_are_skipped_counted_and_keep_line_numbers(cwd, sp_model):
    rows = [
        "",
        {"text": "the model"},
        "   ",
        "\t",
        {"text": "a unit"},
        "",
        "\r",
        " \t \x0c\x0b",
        {"text": "data"},
        "",
    ]
    write_jsonl("data/a.jsonl", rows, final_newline=True)
    result = build(sp_model, build_batch=(2,), workers=2)
    stats = result.outputs[0].stats
    assert stats["blank_lines"] == 7
    assert stats["total_samples"] == 3
    assert read_json("out/stats.json")["blank_lines"] == 7
    verify(
        sp_model,
        [
            Expected("./data/a.jsonl", 2, "the model"),
            Expected("./data/a.jsonl", 5, "a unit"),
            Expected("./data/a.jsonl", 9, "data"),
        ],
    )


def test_blank_lines_are_summed_over_files_of_one_output(cwd, sp_model):
    write_jsonl("data/a.jsonl", ["", {"text": "the"}, ""])
    write_jsonl("data/b.jsonl", [" ", " ", {"text": "model"}])
    result = build(sp_model, ["./data/a.jsonl", "./data/b.jsonl"])
    assert result.outputs[0].stats["blank_lines"] == 4
    verify(sp_model, [Expected("./data/a.jsonl", 2, "the"), Expected("./data/b.jsonl", 3, "model")])


def test_trailing_empty_lines_count_as_blank_lines(cwd, sp_model):
    Path("data").mkdir()
    Path("data/a.jsonl").write_bytes(b'{"text": "the"}\n\n\n')
    result = build(sp_model)
    assert (result.outputs[0].stats["total_samples"], result.outputs[0].stats["blank_lines"]) == (
        1,
        2,
    )


@pytest.mark.parametrize("content", [b"", b"\n", b"\xef\xbb\xbf", b"  \n\t\n"])
def test_files_without_samples_build_an_empty_dataset(cwd, sp_model, content):
    Path("data").mkdir()
    Path("data/a.jsonl").write_bytes(content)
    result = build(sp_model)
    stats = result.outputs[0].stats
    assert stats["total_samples"] == 0
    assert stats["blank_lines"] == content.count(b"\n")
    assert stats["padding_ratio"] == 0.0
    assert read_jsonl("out/sample_index.jsonl") == []
    for size in SIZES:
        assert (cwd / "out" / f"unit_{size}" / "EMPTY_UNIT.md").is_file()


def test_last_line_without_newline(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the"}, "", {"text": "model"}], final_newline=False)
    assert not Path("data/a.jsonl").read_bytes().endswith(b"\n")
    build(sp_model)
    verify(sp_model, [Expected("./data/a.jsonl", 1, "the"), Expected("./data/a.jsonl", 3, "model")])


@pytest.mark.parametrize("block_size", [1, 2, 3, 5, 16])
def test_lines_cut_across_read_blocks_are_joined(tmp_path, monkeypatch, sp_model, block_size):
    """The reader splits the file in fixed-size blocks; lines spanning blocks are whole again."""
    rows = [{"text": "the model é 中"}, "", {"text": "a\u2028b"}, {"text": "data token"}]
    for name in ("ref", "small"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        write_jsonl("data/a.jsonl", rows, bom=True, newline=b"\r\n")
        if name == "small":
            monkeypatch.setattr(jsonl, "READ_BLOCK", block_size)
        build(sp_model, build_batch=(3,))
    assert tree_bytes_but_inputs(tmp_path / "small" / "out") == tree_bytes_but_inputs(
        tmp_path / "ref" / "out"
    )


def test_extra_keys_and_json_escapes(cwd, sp_model):
    rows = [
        b'{"meta": {"a": [1, 2, {"b": null}]}, "text": "caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\/", '
        b'"n": 1.5e3}',
        b'  {"text":"the"}  ',
    ]
    write_jsonl("data/a.jsonl", rows)
    build(sp_model)
    verify(
        sp_model,
        [
            Expected("./data/a.jsonl", 1, 'café 😀 "q" \\ /'),
            Expected("./data/a.jsonl", 2, "the"),
        ],
    )


def test_duplicate_keys_take_the_last_value(cwd, sp_model):
    write_jsonl("data/a.jsonl", [b'{"text": "first", "text": "the model"}'])
    build(sp_model)
    verify(sp_model, [Expected("./data/a.jsonl", 1, "the model")])


# ---------------------------------------------------------------------------
# SourceParseError
# ---------------------------------------------------------------------------


def _parse_error(sp_model: Path, rows: list, **kwargs) -> errors.SourceParseError:
    write_jsonl("data/a.jsonl", rows)
    with pytest.raises(errors.SourceParseError) as info:
        build(sp_model, **kwargs)
    return info.value


@pytest.mark.parametrize(
    "bad",
    [
        b'{"text": "a",}',
        b'{"text": "a"',
        b"{text: 'a'}",
        b'{"text": "a"} {"text": "b"}',
        b'{"text": "a\rb"}',  # a raw control character inside a string is not JSON
        b'{"text": "\\ud800"}',  # a lone surrogate escape
        b"NaN",
    ],
)
def test_invalid_json(cwd, sp_model, bad):
    err = _parse_error(sp_model, [{"text": "the"}, "", bad, {"text": "model"}])
    assert (err.file, err.line, err.reason) == ("./data/a.jsonl", 3, "invalid_json")
    assert err.detail
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["File"] == ["./data/a.jsonl"] == vi["File"]
    assert en["Line"] == ["3"] == vi["Dòng"]
    assert en["Reason"] == ["invalid JSON syntax", err.detail]
    assert vi["Lý do"] == ["JSON không hợp lệ", err.detail]


@pytest.mark.parametrize(
    ("bad", "offset"),
    [
        (b'{"text": "\xff\xfe"}', 10),
        (b'{"text": "caf\xc3"}', 13),
        (b'{"text": "\xed\xa0\x80"}', 10),  # an encoded surrogate is not UTF-8
        (b"\x80", 0),
    ],
)
def test_invalid_utf8(cwd, sp_model, bad, offset):
    err = _parse_error(sp_model, [{"text": "the"}, bad])
    assert (err.file, err.line, err.reason) == ("./data/a.jsonl", 2, "invalid_utf8")
    assert (err.byte, err.offset) == (bad[offset], offset)
    assert sections(err.message("en"))["Reason"] == [
        "bytes are not valid UTF-8",
        f"byte 0x{bad[offset]:02x} at byte offset {offset}",
    ]
    assert sections(err.message("vi"))["Lý do"] == [
        "byte không phải UTF-8 hợp lệ",
        f"byte 0x{bad[offset]:02x} ở vị trí byte {offset}",
    ]


@pytest.mark.parametrize(
    ("bad", "found"),
    [
        (b"[1, 2]", "array"),
        (b'[{"text": "a"}]', "array"),
        (b"42", "number"),
        (b"-1.5", "number"),
        (b'"the model"', "string"),
        (b"null", "null"),
        (b"true", "boolean"),
    ],
)
def test_json_value_that_is_not_an_object(cwd, sp_model, bad, found):
    err = _parse_error(sp_model, [bad])
    assert (err.file, err.line, err.reason, err.detail) == (
        "./data/a.jsonl",
        1,
        "not_object",
        found,
    )
    assert sections(err.message("en"))["Reason"] == [
        "JSON value is not an object",
        f"found: {found}",
    ]
    assert sections(err.message("vi"))["Lý do"] == [
        "giá trị JSON không phải object",
        f"tìm thấy: {found}",
    ]


# ---------------------------------------------------------------------------
# SampleSchemaError, FieldValueTypeError
# ---------------------------------------------------------------------------


def test_sample_missing_declared_fields(cwd, sp_model):
    write_jsonl(
        "data/qa.jsonl",
        [{"q": "the", "a": "model", "c": "x"}, {"z": 1, "q": "data"}],
    )
    with pytest.raises(errors.SampleSchemaError) as info:
        build(
            sp_model,
            ["./data/qa.jsonl"],
            fields=[["q", "a", "c"]],
            templates=["{q} {a} {c}"],
        )
    err = info.value
    assert (err.file, err.line) == ("./data/qa.jsonl", 2)
    assert err.declared_fields == ["q", "a", "c"]
    assert err.missing_fields == ["a", "c"]
    assert err.available_keys == ["z", "q"]
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["Missing fields"] == ["a", "c"] == vi["Fields bị thiếu"]
    assert en["Available keys"] == ["z", "q"] == vi["Keys hiện có"]
    assert en["Declared fields"] == ["q", "a", "c"] == vi["Fields đã khai báo"]


def test_empty_object_has_no_available_keys(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{}])
    with pytest.raises(errors.SampleSchemaError) as info:
        build(sp_model)
    assert (info.value.missing_fields, info.value.available_keys) == (["text"], [])


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (1, "number"),
        (2.5, "number"),
        ([1], "array"),
        (None, "null"),
        ({"a": "b"}, "object"),
        (True, "boolean"),
    ],
)
def test_declared_field_value_that_is_not_a_string(cwd, sp_model, value, found):
    write_jsonl("data/qa.jsonl", [{"q": "the", "a": "model"}, {"q": "the", "a": value}])
    with pytest.raises(errors.FieldValueTypeError) as info:
        build(sp_model, ["./data/qa.jsonl"], fields=[["q", "a"]], templates=["{q}{a}"])
    err = info.value
    assert (err.file, err.line, err.field, err.found_type) == ("./data/qa.jsonl", 2, "a", found)
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["<sentence>"] == ["JSONL field value is not a string."]
    assert vi["<sentence>"] == ["Giá trị field trong JSONL không phải string."]
    assert en["Field"] == ["a"] == vi["Field"]
    assert en["Found type"] == [found] == vi["Kiểu tìm thấy"]
    assert en["Line"] == ["2"] == vi["Dòng"]


def test_undeclared_keys_may_hold_any_type(cwd, sp_model):
    write_jsonl("data/a.jsonl", [{"text": "the", "n": 1, "l": [None], "o": {}}])
    assert build(sp_model).outputs[0].stats["total_samples"] == 1


# ---------------------------------------------------------------------------
# The first failing sample, in input order
# ---------------------------------------------------------------------------


def _rows_with_bad(lines: dict[int, object], count: int = 12) -> list:
    return [lines.get(i, {"text": f"the model {i}"}) for i in range(1, count + 1)]


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize(
    ("first", "later", "cls"),
    [
        (b'{"text": ', {"nope": "x"}, errors.SourceParseError),
        ({"nope": "x"}, b'{"text": ', errors.SampleSchemaError),
        ({"text": 3}, b"\xff", errors.FieldValueTypeError),
        (b"[]", {"text": None}, errors.SourceParseError),
    ],
)
def test_build_stops_at_the_first_failing_sample(cwd, sp_model, workers, first, later, cls):
    write_jsonl("data/a.jsonl", _rows_with_bad({3: first, 9: later}))
    with pytest.raises(cls) as info:
        build(sp_model, workers=workers, build_batch=(2,), samples_per_shard=(1,))
    assert (info.value.file, info.value.line) == ("./data/a.jsonl", 3)
    assert not (cwd / "out" / "manifest.json").exists()
    for size in SIZES:
        failed = cwd / "out" / f"unit_{size}" / "UNIT_BUILD_FAILED.md"
        text = failed.read_text(encoding="utf-8")
        assert info.value.message("en") in text
        assert info.value.message("vi") in text
    assert_no_worker_left()


def test_a_later_file_failing_does_not_hide_an_earlier_one(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows_with_bad({7: b"{"}, count=8))
    write_jsonl("data/b.jsonl", _rows_with_bad({1: b"{"}, count=2))
    with pytest.raises(errors.SourceParseError) as info:
        build(sp_model, ["./data/a.jsonl", "./data/b.jsonl"], workers=2, build_batch=(1,))
    assert (info.value.file, info.value.line) == ("./data/a.jsonl", 7)


def test_bad_line_in_the_second_file_names_that_file(cwd, sp_model):
    write_jsonl("data/a.jsonl", _rows_with_bad({}, count=3))
    write_jsonl("data/b.jsonl", _rows_with_bad({2: {"text": []}}, count=3))
    with pytest.raises(errors.FieldValueTypeError) as info:
        build(sp_model, ["./data/a.jsonl", "./data/b.jsonl"], out=["./o1", "./o2"])
    assert (info.value.file, info.value.line) == ("./data/b.jsonl", 2)
    for out in ("o1", "o2"):
        assert not (cwd / out / "manifest.json").exists()
        assert all((cwd / out / f"unit_{s}" / "UNIT_BUILD_FAILED.md").is_file() for s in SIZES)


# ---------------------------------------------------------------------------
# Inputs are never modified
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fail", [False, True])
def test_input_files_are_byte_for_byte_unchanged(cwd, sp_model, fail):
    rows = [{"text": "the model"}, "", {"text": "a\u2028b"}]
    if fail:
        rows.append(b"{")
    write_jsonl("data/a.jsonl", rows, bom=True, newline=b"\r\n", final_newline=False)
    before = file_sha256("data/a.jsonl")
    stat = Path("data/a.jsonl").stat()
    if fail:
        with pytest.raises(errors.SourceParseError):
            build(sp_model, workers=2, build_batch=(1,))
    else:
        build(sp_model, workers=2, build_batch=(1,))
    assert file_sha256("data/a.jsonl") == before
    assert Path("data/a.jsonl").stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in Path("data").iterdir()) == ["a.jsonl"]
