"""The sample_index.jsonl of every build ``write_builds`` writes (a split's three, a
decontamination's clean one): byte for byte each member's input line, its middle kept, with its
new id, its place in the new build and its input id; computed here from the input lines alone.

Inputs: a build, a copy's build (lines ending with ``source_sample_id``), a build whose source
file has quotes and non-ASCII letters and whose samples have empty fields, and a build whose
index lines were rewritten in other JSON forms (each middle then rebuilt from the JSON).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from mintdim.build.formats import sample_index
from mintdim.check.verify import verify_build
from mintdim.errors import ChangedSinceBuildError
from mintdim.split.samples import read_build
from mintdim.split.write import write_builds
from tests.unit_build.helpers import copied_middle, reseal_build

from .conftest import make_build, write_rows


def reference_index(build: Path, members: np.ndarray, per_shard: int) -> bytes:
    """The index of the build of ``members`` (input ids, in order): records of a unit in id
    order, ``per_shard`` a shard."""
    lines = (build / "sample_index.jsonl").read_bytes().splitlines()
    seen: dict[int, int] = {}
    out = []
    for new_id, source_id in enumerate(members.tolist()):
        unit = json.loads(lines[source_id])["unit_size"]
        rank = seen[unit] = seen.get(unit, -1) + 1
        out.append(
            b'{"sample_id":%d,%s,"shard_path":"unit_%d/shard_%06d.bin","shard_row":%d,'
            b'"source_sample_id":%d}\n'
            % (
                new_id,
                copied_middle(lines[source_id]),
                unit,
                rank // per_shard,
                rank % per_shard,
                source_id,
            )
        )
    return b"".join(out)


def written_as_referenced(build: Path, split_of: np.ndarray, root: Path) -> None:
    samples = read_build(build)
    names = [f"b{k}" for k in range(int(split_of.max()) + 1)]
    root.mkdir()
    written = write_builds(samples, split_of, root, {name: {} for name in names})
    per_shard = samples.manifest["output"]["samples_per_shard"]
    for k, name in enumerate(names):
        data = (root / name / "sample_index.jsonl").read_bytes()
        assert data == reference_index(build, np.flatnonzero(split_of == k), per_shard)
        listed = written.manifests[name]["audit_files"]["sample_index.jsonl"]
        assert listed == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        assert verify_build(root / name).ok


@pytest.fixture(autouse=True, params=["one block", "blocks of a few lines"])
def blocks(request, monkeypatch) -> None:
    """The input index read whole, or a few lines at a time (``sample_index._COPY_BLOCK``)."""
    if request.param != "one block":
        monkeypatch.setattr(sample_index, "_COPY_BLOCK", 1000)


def _shares(count: int) -> list[np.ndarray]:
    """A decontamination's (all but a few, in one build) and a split's (three builds)."""
    clean = np.zeros(count, dtype=np.int64)
    clean[[1, 7, count // 2, count - 1]] = -1
    rng = np.random.default_rng(5)
    return [clean, rng.integers(0, 3, count).astype(np.int64)]


def test_a_builds_index(related, tmp_path) -> None:
    build = related[0]
    for n, split_of in enumerate(_shares(read_build(build).count)):
        written_as_referenced(build, split_of, tmp_path / str(n))


def test_a_copys_index(related, tmp_path) -> None:
    first = read_build(related[0])
    (tmp_path / "copy").mkdir()
    write_builds(first, np.zeros(first.count, dtype=np.int64), tmp_path / "copy", {"c": {}})
    copy = tmp_path / "copy" / "c"
    for n, split_of in enumerate(_shares(first.count)):
        written_as_referenced(copy, split_of, tmp_path / str(n))


def test_odd_source_names_and_empty_fields(tmp_path) -> None:
    rows = [{"text": f"sample number {i} " * (i % 6)} for i in range(40)]  # "" now and then
    build = make_build(tmp_path, rows, name='odd "ủ, name"')
    assert b'"empty_fields":["text"]' in (build / "sample_index.jsonl").read_bytes()
    for n, split_of in enumerate(_shares(len(rows))):
        written_as_referenced(build, split_of, tmp_path / str(n))


@pytest.mark.parametrize("every", [1, 5])
def test_lines_in_other_json_forms(build_copy, tmp_path, every) -> None:
    path = build_copy / "sample_index.jsonl"
    lines = path.read_bytes().splitlines()
    for k in range(0, len(lines), every):
        row = json.loads(lines[k])
        if k % 2:  # spaced, non-ASCII escaped
            lines[k] = json.dumps(row).encode()
        else:  # compact, the id last
            moved = {key: row[key] for key in row if key != "sample_id"}
            moved["sample_id"] = row["sample_id"]
            lines[k] = json.dumps(moved, separators=(",", ":")).encode()
    path.write_bytes(b"\n".join(lines) + b"\n")
    reseal_build(build_copy)
    for n, split_of in enumerate(_shares(len(lines))):
        written_as_referenced(build_copy, split_of, tmp_path / str(n))


def test_an_index_changed_since_it_was_read_is_refused(build_copy, tmp_path) -> None:
    """The index is read again, on its own thread, and checked against the manifest."""
    samples = read_build(build_copy)
    path = build_copy / "sample_index.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"shard_row":0}', b'"shard_row":0 }', 1))
    (tmp_path / "out").mkdir()
    with pytest.raises(ChangedSinceBuildError) as caught:
        write_builds(samples, np.zeros(samples.count, dtype=np.int64), tmp_path / "out", {"a": {}})
    assert caught.value.file == "sample_index.jsonl"


@pytest.mark.parametrize("removed", [(3,), (0, 1, 2, 150, 299), ()])
def test_records_and_spans_of_long_runs_and_short_ones(tmp_path, removed) -> None:
    """write_builds' records and spans, each build's read as open_build reads them, equal the
    input's of its members in order: a clean build (all but a few samples: runs of consecutive
    rows written as slices of the shard) and a split's (short runs: rows gathered)."""
    from mintdim import open_build, pipeline

    from .conftest import MODEL

    rows = [{"q": f"question {i} " * (i % 7 + 1), "a": f"answer {i}"} for i in range(300)]
    data = write_rows(tmp_path / "qa.jsonl", rows)
    (
        pipeline("unit-build")
        .source.jsonl(files=[str(data)], fields=[["q", "a"]], templates=["Q: {q}\nA: {a}"])
        .tokenizer.sentencepiece([{"path": str(MODEL), "encode": "whole"}])
        .units(sizes=[[64, 128]], build_batch=[64])
        .output.dir(str(tmp_path / "b"), samples_per_shard=[256])
        .run(workers=1, progress=False, on_overflow="extend")
    )
    samples = read_build(tmp_path / "b")
    clean = np.zeros(samples.count, dtype=np.int64)
    clean[list(removed)] = -1
    split = np.random.default_rng(1).integers(0, 3, samples.count)
    source = open_build(tmp_path / "b")
    for name, split_of in (("clean", clean), ("split", split)):
        root = tmp_path / name
        root.mkdir()
        write_builds(samples, split_of, root, {f"b{k}": {} for k in range(split_of.max() + 1)})
        for k in range(split_of.max() + 1):
            out = open_build(root / f"b{k}")
            members = np.flatnonzero(split_of == k)
            assert len(out) == members.size
            for new_id, old_id in enumerate(members.tolist()):
                assert np.array_equal(out[new_id], source[old_id])
                assert out.segments(new_id) == source.segments(old_id)
            assert verify_build(root / f"b{k}").ok
