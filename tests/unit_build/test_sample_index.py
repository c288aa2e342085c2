"""sample_index.jsonl: every field of every line, and a property-based round trip on random data in
which every record, the sample index, the duplicate index, the UNK index and stats agree with an
independent computation.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mintdim import TemplateLiteralWarning
from tests.unit_build.helpers import (
    Expected,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    verify_build,
    write_jsonl,
)

KEYS = [
    "sample_id",
    "hash",
    "token_count",
    "unit_size",
    "source_file",
    "source_line",
    "empty_fields",
    "shard_path",
    "shard_row",
]


def test_every_field_of_every_line(cwd, sp_model):
    rows_a = [{"text": "the model"}, None, {"text": "a data token unit shard build"}, {"text": ""}]
    rows_b = [None, None, {"text": "the model"}, {"text": "x"}]
    write_jsonl("data/a.jsonl", [r if r else "" for r in rows_a])
    write_jsonl("data/b.jsonl", [r if r else " " for r in rows_b])
    sizes = [2, 4, 8]
    job(
        ["./data/a.jsonl", "data/../data/b.jsonl"],
        sp_model,
        sizes=[sizes],
        samples_per_shard=[1],
        build_batch=[2],
    ).run(workers=2)
    encode = reference_encoder(str(sp_model))
    lines = Path("out/sample_index.jsonl").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    rows = [json.loads(line) for line in lines[:-1]]
    assert [list(row) for row in rows] == [KEYS] * 5
    texts = [
        ("./data/a.jsonl", 1, "the model"),
        ("./data/a.jsonl", 3, "a data token unit shard build"),
        ("./data/a.jsonl", 4, ""),
        ("data/../data/b.jsonl", 3, "the model"),
        ("data/../data/b.jsonl", 4, "x"),
    ]
    seen: dict[int, int] = defaultdict(int)
    for sample_id, (row, (source, line, text)) in enumerate(zip(rows, texts, strict=True)):
        count = len(encode(text))
        unit = next(s for s in sizes if s >= count)
        assert row == {
            "sample_id": sample_id,
            "hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "token_count": count,
            "unit_size": unit,
            "source_file": source,
            "source_line": line,
            "empty_fields": [] if text else ["text"],
            "shard_path": f"unit_{unit}/shard_{seen[unit]:06d}.bin",
            "shard_row": 0,
        }
        seen[unit] += 1
    # Lines are compact JSON (no spaces after separators).
    assert lines[0].startswith('{"sample_id":0,"hash":"')
    verify_build(
        "out",
        [Expected(s, n, t) for s, n, t in texts],
        encode,
        sizes,
        1,
        pad_id=0,
    )


@pytest.mark.parametrize(
    "declared",
    ["./data/a.jsonl", "data/a.jsonl", "ABSOLUTE", "./data/./a.jsonl"],
)
def test_source_file_is_the_path_as_declared(cwd, sp_model, declared):
    write_jsonl("data/a.jsonl", [{"text": "the"}])
    if declared == "ABSOLUTE":
        declared = str(cwd / "data" / "a.jsonl")
    job([declared], sp_model).run(workers=1)
    assert read_jsonl("out/sample_index.jsonl")[0]["source_file"] == declared
    assert read_json("out/manifest.json")["source"]["files"] == [declared]


def test_shard_row_counts_within_each_shard_across_batches(cwd, hf_json):
    texts = [" ".join(["the"] * (i % 5)) for i in range(17)]
    write_jsonl("data/a.jsonl", [{"text": t} for t in texts])
    sizes = [1, 2, 4]
    job(["./data/a.jsonl"], hf_json, sizes=[sizes], samples_per_shard=[3], build_batch=[4]).run(
        workers=3
    )
    build = verify_build(
        "out",
        [Expected("./data/a.jsonl", i, t) for i, t in enumerate(texts, start=1)],
        reference_encoder(str(hf_json)),
        sizes,
        3,
        pad_id=0,
    )
    places = [(r["shard_path"], r["shard_row"]) for r in build.samples()]
    assert len(set(places)) == len(places)  # every record slot is used by one sample


# ---------------------------------------------------------------------------
# Property-based round trip
# ---------------------------------------------------------------------------

_WORDS = ["the", "model", "data", "token", "unit", "Viet Nam", "xin chao", "{x}", "42", "\n\n###"]
_odd = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x1FFFF), max_size=10
)
_phrase = st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join)
_text = st.one_of(_phrase, _odd, st.just(""), st.sampled_from(["中文", "🎉 the", "é"]))


@st.composite
def _datasets(draw):
    pool = draw(st.lists(_text, min_size=1, max_size=6))
    # Samples drawn from a small pool, so duplicates are frequent; some lines blank.
    first = draw(st.lists(st.one_of(st.sampled_from(pool), _text, st.none()), max_size=18))
    second = draw(st.lists(st.one_of(st.sampled_from(pool), st.none()), max_size=6))
    return first, second


@settings(max_examples=25, deadline=None)
@given(
    data=_datasets(),
    kind=st.sampled_from(["sp_model", "hf_json"]),
    size_seed=st.lists(st.integers(1, 40), min_size=1, max_size=4),
    samples_per_shard=st.integers(1, 5),
    build_batch=st.integers(1, 7),
    workers=st.sampled_from([1, 1, 2]),
)
def test_round_trip_on_random_data(
    tmp_path_factory,
    request,
    data,
    kind,
    size_seed,
    samples_per_shard,
    build_batch,
    workers,
):
    tokenizer = request.getfixturevalue(kind)
    encode = reference_encoder(str(tokenizer))
    folder = tmp_path_factory.mktemp("roundtrip")
    files = []
    expected: list[Expected] = []
    for name, rows in zip(("a", "b"), data, strict=True):
        path = str(folder / f"{name}.jsonl")
        write_jsonl(
            path, [{"text": t, "n": i} if t is not None else "  " for i, t in enumerate(rows)]
        )
        files.append(path)
        expected += [Expected(path, i, t) for i, t in enumerate(rows, start=1) if t is not None]
    longest = max([len(encode(e.text)) for e in expected], default=0)
    sizes = sorted(set(size_seed))
    if sizes[-1] < longest:
        sizes.append(longest)
    out = folder / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TemplateLiteralWarning)
        result = job(
            files,
            tokenizer,
            sizes=[sizes],
            samples_per_shard=[samples_per_shard],
            build_batch=[build_batch],
            out=str(out),
        ).run(workers=workers)
    pad_id = 0
    verify_build(out, expected, encode, sizes, samples_per_shard, pad_id)
    stats = read_json(out / "stats.json")
    assert result.outputs[0].stats == stats
    blank = sum(rows.count(None) for rows in data)
    assert stats["blank_lines"] == blank

    # Duplicate index, computed independently.
    by_text: dict[str, list[int]] = defaultdict(list)
    for sample_id, e in enumerate(expected):
        by_text[e.text].append(sample_id)
    groups = sorted((ids for ids in by_text.values() if len(ids) > 1), key=lambda ids: ids[0])
    assert read_jsonl(out / "duplicate_index.jsonl") == [
        {
            "hash": hashlib.sha256(expected[ids[0]].text.encode()).hexdigest(),
            "count": len(ids),
            "samples": [
                {
                    "sample_id": i,
                    "source_file": expected[i].source_file,
                    "source_line": expected[i].line,
                }
                for i in ids
            ],
        }
        for ids in groups
    ]
    assert stats["duplicate_groups"] == len(groups)
    assert stats["duplicate_samples"] == sum(len(ids) for ids in groups)

    # UNK index, computed independently (unk_id 1 in both fixtures).
    unk_rows = []
    for sample_id, e in enumerate(expected):
        positions = np.flatnonzero(np.asarray(encode(e.text), dtype=np.int64) == 1).tolist()
        if positions:
            unk_rows.append(
                {
                    "sample_id": sample_id,
                    "hash": hashlib.sha256(e.text.encode()).hexdigest(),
                    "source_file": e.source_file,
                    "source_line": e.line,
                    "unk_count": len(positions),
                    "unk_positions": positions,
                }
            )
    assert read_jsonl(out / "unk_index.jsonl") == unk_rows
    assert stats["samples_with_unk"] == len(unk_rows)
    assert stats["unk_tokens"] == sum(r["unk_count"] for r in unk_rows)


def _written_lines(directory: Path, rng: np.random.Generator, count: int) -> tuple[list, list]:
    """Lines written by the real writer from random values; returns (sources, shard paths)."""
    from mintdim.build.formats import sample_index
    from mintdim.build.formats.shards import shard_path

    sources = ["data/a.jsonl", 'odd "name",\\.jsonl', "ủ/b c.jsonl"]
    sizes = np.array([8, 128, 4096])
    units = rng.integers(0, 3, count)
    numbers, rows = rng.integers(0, 12, count), rng.integers(0, 10**6, count)
    source = int(rng.integers(0, 3))
    parts = sample_index.sample_parts(
        [hashlib.sha256(bytes([i % 256, i // 256])).hexdigest() for i in range(count)],
        [int(rng.integers(0, sizes[u] + 1)) for u in units],
        sizes[units].tolist(),
        json.dumps(sources[source], ensure_ascii=False),
        rng.integers(1, 10**12, count).tolist(),
        [rng.choice(["[]", '["input"]', '["input","output"]']) for _ in range(count)],
    )
    writer = sample_index.SampleIndexWriter(directory)
    writer.write(int(rng.integers(0, 10**7)), parts, sizes[units], numbers, rows)
    writer.close()
    shards = [shard_path(int(size), number) for size in sizes for number in range(12)]
    return sources, shards


def test_lines_read_from_their_bytes_are_what_orjson_reads_or_declined(tmp_path):
    """ExactReader reads sample_index lines straight from their bytes. On lines the writer wrote
    it gives what orjson gives; with one byte of a line replaced, inserted or deleted it either
    declines (None: the caller parses with orjson) or still gives exactly orjson's columns."""
    import orjson

    from mintdim.build.formats import sample_index

    rng = np.random.default_rng(11)
    sources, shards = _written_lines(tmp_path, rng, 40)
    data = (tmp_path / sample_index.FILENAME).read_bytes()
    reader = sample_index.ExactReader(sources, shards)
    numbered = ({p: i for i, p in enumerate(sources)}, {p: i for i, p in enumerate(shards)})

    def same_as_orjson(block: bytes) -> bool:
        columns = reader.read(block)
        if columns is None:
            return False
        want = sample_index.parse_rows([orjson.loads(x) for x in block.splitlines()], *numbered)
        for key in sample_index.Columns.__dataclass_fields__:
            got, expected = getattr(columns, key), getattr(want, key)
            assert np.array_equal(got, expected) and got.dtype == expected.dtype, (key, block)
        return True

    assert same_as_orjson(data)
    alphabet = b'0123456789abcdefABCDEF",:{}[]\\ -x\x00\n'
    accepted = 0
    for _ in range(1500):
        at = int(rng.integers(0, len(data)))
        byte = bytes([alphabet[int(rng.integers(0, len(alphabet)))]])
        edit = int(rng.integers(0, 3))
        block = data[:at] + (byte if edit < 2 else b"") + data[at + (edit != 1) :]
        accepted += same_as_orjson(block)
    assert accepted > 100  # digit and hex edits keep the form: the reader must follow them


def test_source_ids_read_from_line_ends_are_what_orjson_reads_or_refused(tmp_path):
    """A copied build's index (split, clean build): ``source_ids`` reads each line's last key
    straight from its bytes, across the reader's 1 MiB blocks, equal to orjson's reading; a line
    edited there (after the key's comma, up to its closing brace) either still reads as orjson reads
    it, or is refused naming its line. (The rest of a line is the index digest's to vouch for.)"""
    import orjson

    from mintdim.build.formats import sample_index

    rng = np.random.default_rng(5)
    count = 6000  # ~2 MiB: lines cross the reader's block boundaries
    parts = sample_index.sample_parts(
        [hashlib.sha256(i.to_bytes(4, "little")).hexdigest() for i in range(count)],
        [3] * count,
        [8] * count,
        json.dumps('ủ/odd "name".jsonl', ensure_ascii=False),
        list(range(1, count + 1)),
        ["[]"] * count,
    )
    # Ids across digit boundaries: 0, 9, 10, 99999, 100000, up to 2**40.
    source = np.sort(rng.integers(0, 1 << 40, count))
    source[:5] = [0, 9, 10, 99999, 100000]
    # An index written by the build's writer, then copied by the copy writer (as a split's or a
    # clean build's is), each line gaining its source id.
    (tmp_path / "input").mkdir()
    writer = sample_index.SampleIndexWriter(tmp_path / "input")
    writer.write(0, parts, np.full(count, 8), np.zeros(count, np.int64), np.arange(count))
    writer.close()
    writer = sample_index.SampleIndexWriter(tmp_path)
    reader = sample_index.MiddleReader(["unit_8/shard_000000.bin"])
    for middles in reader.blocks((tmp_path / "input" / sample_index.FILENAME).read_bytes()):
        ids = np.arange(middles.first, middles.first + middles.count)
        zeros = np.zeros(ids.size, np.int64)
        writer.copy(middles, ids - middles.first, int(ids[0]), zeros + 8, zeros, ids, source[ids])
    writer.close()
    path = tmp_path / sample_index.FILENAME
    data = path.read_bytes()
    assert np.array_equal(sample_index.source_ids(path), source)
    assert np.array_equal(source, [orjson.loads(x)["source_sample_id"] for x in data.splitlines()])

    lines = data.splitlines(keepends=True)
    alphabet = b'0123456789-+ "}x:,'
    outcomes = {"read": 0, "refused": 0}
    for _ in range(300):
        k = int(rng.integers(0, 20))
        line = lines[k]
        tail = len(line) - line.rindex(b',"source_sample_id":')
        at = len(line) - int(rng.integers(2, tail))
        byte = bytes([alphabet[int(rng.integers(0, len(alphabet)))]])
        edit = int(rng.integers(0, 3))
        changed = line[:at] + (byte if edit < 2 else b"") + line[at + (edit != 1) :]
        path.write_bytes(b"".join(lines[:k]) + changed + b"".join(lines[k + 1 : 40]))
        try:
            got = sample_index.source_ids(path)
        except ValueError as err:
            assert f"sample_index.jsonl line {k + 1}:" in str(err)
            outcomes["refused"] += 1
            continue
        try:
            want = [orjson.loads(x)["source_sample_id"] for x in path.read_bytes().splitlines()]
        except (orjson.JSONDecodeError, KeyError, TypeError) as err:
            raise AssertionError(f"read {got[k]} from a line orjson refuses: {changed!r}") from err
        assert got.tolist() == want, changed
        outcomes["read"] += 1
    assert min(outcomes.values()) > 30, outcomes  # digit edits keep the form, others do not
