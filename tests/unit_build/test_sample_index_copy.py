"""sample_index.jsonl lines copied into another build (``MiddleReader`` and
``SampleIndexWriter.copy``, what ``mintdim split`` and ``mintdim decontaminate`` write): byte for
byte what the plainly stated rule makes of every line, whatever its form.

A copied line is ``{"sample_id":NEW,`` + the input line's middle (``helpers.copied_middle``) +
the new shard place + ``"source_sample_id"``.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mintdim.build.formats import sample_index
from tests.unit_build.helpers import copied_middle

SIZES = (8, 96, 4096)
SHARDS = [f"unit_{size}/shard_{number:06d}.bin" for size in SIZES for number in (0, 1, 12, 999999)]
SOURCES = ["data/a.jsonl", 'odd "name",\\.jsonl', "ủ/b c.jsonl", '{"sample_id":1,"shard_path":']


def _dumped(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Copied:
    """Which input lines a copy takes, in order, and what it gives each."""

    lines: list[int]
    first_id: int
    units: list[int]
    numbers: list[int]
    rows: list[int]
    source_ids: list[int]


def reference_copy(data: bytes, copied: Copied) -> bytes:
    lines = data.split(b"\n")
    if not data.endswith(b"\n"):
        lines.append(b"")
    return b"".join(
        b'{"sample_id":%d,%s,"shard_path":"unit_%d/shard_%06d.bin","shard_row":%d,'
        b'"source_sample_id":%d}\n'
        % (copied.first_id + k, copied_middle(lines[line]), unit, number, row, source)
        for k, (line, unit, number, row, source) in enumerate(
            zip(
                copied.lines,
                copied.units,
                copied.numbers,
                copied.rows,
                copied.source_ids,
                strict=True,
            )
        )
    )


def copy_with_the_writer(data: bytes, copied: Copied, directory: Path) -> bytes:
    """What MiddleReader and SampleIndexWriter.copy write (as split/write.py calls them)."""
    reader = sample_index.MiddleReader(SHARDS)
    writer = sample_index.SampleIndexWriter(directory)
    chosen = np.array(copied.lines, dtype=np.int64)
    values = [
        np.array(v, dtype=np.int64)
        for v in (copied.units, copied.numbers, copied.rows, copied.source_ids)
    ]
    for middles in reader.blocks(data):
        cut = np.searchsorted(chosen, [middles.first, middles.first + middles.count])
        if cut[1] > cut[0]:
            writer.copy(
                middles,
                chosen[cut[0] : cut[1]] - middles.first,
                copied.first_id + int(cut[0]),
                *(v[cut[0] : cut[1]] for v in values),
            )
    writer.close()
    written = (directory / sample_index.FILENAME).read_bytes()
    assert writer.file.record() == {
        "bytes": len(written),
        "sha256": hashlib.sha256(written).hexdigest(),
    }
    return written


def writer_line(
    sample_id: int,
    source: str,
    empty: list[str],
    shard: str,
    row: int,
    source_id: int | None = None,
    hash_text: str = "ab" * 32,
) -> bytes:
    """A line as MintDim's writers write it (a copy's with ``source_id``)."""
    tail = "" if source_id is None else f',"source_sample_id":{source_id}'
    return (
        f'{{"sample_id":{sample_id},"hash":"{hash_text}","token_count":7,"unit_size":8,'
        f'"source_file":{_dumped(source)},"source_line":3,"empty_fields":{_dumped(empty)},'
        f'"shard_path":"{shard}","shard_row":{row}{tail}}}\n'
    ).encode()


def as_row(line: bytes) -> dict:
    return json.loads(line)


# Lines of every form a copy meets, each with what makes it so: first those read from their
# bytes, from READ_ALONE on those taken one by one.
LINES = [
    writer_line(0, SOURCES[0], [], SHARDS[0], 0),
    writer_line(9, SOURCES[1], ["input"], SHARDS[1], 9),  # quotes and a backslash
    writer_line(10, SOURCES[2], ["input", "output"], SHARDS[5], 10),  # unicode
    writer_line(99999, SOURCES[3], [], SHARDS[3], 99999),  # a path holding a shard key
    writer_line(100000, SOURCES[0], ['"', "ủ"], SHARDS[11], 123456789012345),
    writer_line(5, SOURCES[0], [], SHARDS[2], 4, source_id=99),  # a copy's own line
    writer_line(6, SOURCES[2], ["x"], SHARDS[6], 0, source_id=100000),
    writer_line(13, SOURCES[0], [], SHARDS[0], 5).replace(  # the shard key twice
        b',"shard_path"', b',"shard_path":"unit_8/x.bin","shard_path"', 1
    ),
    writer_line(15, SOURCES[0], [], SHARDS[0], 7, hash_text="AB" * 32),
    writer_line(7, SOURCES[0], [], "unit_8/elsewhere.bin", 1),  # a shard of no build
    writer_line(8, SOURCES[0], [], SHARDS[0], 1).replace(b":8,", b":008,", 1),  # leading zeros
    (json.dumps(as_row(writer_line(11, SOURCES[1], ["a b"], SHARDS[4], 2))) + "\n").encode(),
    (  # the keys in another order
        json.dumps(dict(reversed(as_row(writer_line(12, SOURCES[2], [], SHARDS[0], 3)).items())))
        + "\n"
    ).encode(),
    writer_line(14, SOURCES[0], [], SHARDS[0], 6).replace(b'"hash"', b' "hash"', 1),
    writer_line(16, SOURCES[0], [], SHARDS[0], 8).replace(b'"shard_path"', b'"shard"', 1),
]
READ_ALONE = 9


@pytest.mark.parametrize("block", [1, 40, 700, 4 << 20])
@pytest.mark.parametrize("ended", [True, False])
def test_every_form_of_line_is_copied_as_the_rule_says(tmp_path, monkeypatch, block, ended):
    monkeypatch.setattr(sample_index, "_COPY_BLOCK", block)
    data = b"".join(LINES)
    data = data if ended else data[:-1]
    for take in (range(len(LINES)), range(0, len(LINES), 3), [len(LINES) - 1]):
        lines = list(take)
        copied = Copied(
            lines=lines,
            first_id=[0, 8, 99995, 10**9 - 3][len(lines) % 4],
            units=[SIZES[k % 3] for k in lines],
            numbers=[[0, 7, 10, 1000000][k % 4] for k in lines],
            rows=[[0, 9, 10, 99999, 100000][k % 5] for k in lines],
            source_ids=[k * 99991 for k in lines],
        )
        folder = tmp_path / f"{block}-{len(lines)}"
        folder.mkdir()
        assert copy_with_the_writer(data, copied, folder) == reference_copy(data, copied)


def test_lines_in_the_writers_form_are_read_from_their_bytes(monkeypatch):
    """The writer's lines (a copy's too, and with any source file or empty_fields) are never
    taken one by one; the others are (MiddleReader's rule for one line)."""
    alone: list[bytes] = []
    real = sample_index._middle

    def counted(line: bytes) -> bytes:
        alone.append(line)
        return real(line)

    monkeypatch.setattr(sample_index, "_middle", counted)
    middles = list(sample_index.MiddleReader(SHARDS).blocks(b"".join(LINES)))
    assert [m.count for m in middles] == [len(LINES)]
    assert [line + b"\n" for line in alone] == LINES[READ_ALONE:]


_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@st.composite
def index_lines(draw: st.DrawFn) -> bytes:
    """One line: as the writer writes it, or in another JSON form of the same values."""
    shard = draw(st.sampled_from([*SHARDS, "unit_8/shard_1.bin"]))
    line = writer_line(
        draw(st.integers(0, 10**12)),
        draw(st.sampled_from(SOURCES) | _texts),
        draw(st.lists(_texts, max_size=3)),
        shard,
        draw(st.integers(0, 10**12)),
        draw(st.none() | st.integers(0, 10**12)),
        hash_text=draw(st.sampled_from(["0123456789abcdef" * 4, "ABCDEF0123456789" * 4])),
    )
    form = draw(st.sampled_from(["writer", "writer", "spaced", "reordered", "no shard key"]))
    if form == "no shard key":
        return line.replace(b'"shard_path"', b'"shard"', 1)
    if form == "spaced":
        return (json.dumps(as_row(line)) + "\n").encode()
    if form == "reordered":
        row = as_row(line)
        keys = draw(st.permutations(list(row)))
        return (_dumped({key: row[key] for key in keys}) + "\n").encode()
    return line


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(index_lines(), min_size=1, max_size=30),
    ended=st.booleans(),
    block=st.sampled_from([1, 100, 1000, 4 << 20]),
    data=st.data(),
)
def test_any_lines_are_copied_as_the_rule_says(lines, ended, block, data):
    index = b"".join(lines)
    index = index if ended else index[:-1]
    taken = sorted(data.draw(st.sets(st.integers(0, len(lines) - 1), min_size=1)))
    number = st.integers(0, 2) | st.integers(0, 10**12)
    copied = Copied(
        lines=taken,
        first_id=data.draw(st.sampled_from([0, 7, 99990]) | st.integers(0, 10**12)),
        units=[data.draw(st.sampled_from(SIZES)) for _ in taken],
        numbers=[data.draw(st.integers(0, 10**6)) for _ in taken],
        rows=[data.draw(number) for _ in taken],
        source_ids=[data.draw(number) for _ in taken],
    )
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as folder:
        patch.setattr(sample_index, "_COPY_BLOCK", block)
        assert copy_with_the_writer(index, copied, Path(folder)) == reference_copy(index, copied)
