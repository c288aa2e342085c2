"""``mintdim verify``: an intact build passes, any changed byte and any inconsistency fails.

Tampering tests change a file and then, where the point is the consistency check behind the
digest, repair every digest (shard entry, audit file, manifest seal) with plain hashlib, so only
the check under test can notice.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
import signal
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner

from mintdim.cli import main
from tests.unit_build.helpers import flipped_bytes, job, read_json, reseal_build, write_jsonl

_WORDS = ["the", "model", "data", "token", "unit", "shard", "pad", "build", "sample", "xin", "chao"]


def _build(cwd: Path, tokenizer: Path, rows: int = 120, out: str = "out") -> Path:
    rng = random.Random(5)
    samples = []
    for i in range(rows):
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 25)))
        samples.append({"text": text + (" ☃ ☄" if i % 9 == 0 else "")})
        if i % 10 == 0:
            samples.append({"text": "the same line again"})
        if i % 17 == 0:
            samples.append("   ")  # a blank line, counted in stats.blank_lines
    write_jsonl(cwd / "data.jsonl", samples)
    job(
        ["data.jsonl"],
        tokenizer,
        sizes=[[8, 16, 32, 64, 128]],
        build_batch=[16],
        samples_per_shard=[10],
        out=out,
    ).run(workers=1, progress=False)
    return cwd / out


def _verify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", *args])
    return result.exit_code, result.output


def _report(directory: Path, *extra: str) -> dict:
    code, output = _verify(str(directory), "--json", *extra)
    report = json.loads(output)
    assert code == (0 if report["ok"] else 1)
    return report


def _move_to_the_next_row(directory: Path, sample_id: int) -> None:
    """Rewrite one sample_index line (compact, keys in order) with its shard_row one too far."""
    index = directory / "sample_index.jsonl"
    lines = index.read_text().splitlines()
    row = json.loads(lines[sample_id])
    row["shard_row"] += 1
    lines[sample_id] = json.dumps(row, separators=(",", ":"), ensure_ascii=False)
    index.write_text("\n".join(lines) + "\n")


def _codes(report: dict) -> set[tuple[str, str]]:
    return {(failure["path"], failure["code"]) for failure in report["failures"]}


@pytest.mark.parametrize("tokenizer", ["sp_model", "hf_json"])
def test_an_intact_build_passes_every_check(cwd, tokenizer, request):
    out = _build(cwd, request.getfixturevalue(tokenizer))
    code, output = _verify(str(out))
    assert code == 0, output
    assert output.startswith(f"verify {out}: OK: ")
    stats = read_json(out / "stats.json")
    assert stats["samples_with_unk"] > 0 and stats["duplicate_groups"] >= 1
    assert stats["blank_lines"] > 0
    report = _report(out)
    assert report["ok"] and report["failures"] == []
    assert report["samples"] == stats["total_samples"]
    assert report["shards"] == stats["shard_count"]
    assert report["shard_bytes"] == stats["shard_bytes"]
    # The hidden reserve for a failure marker is gone once the build is complete ...
    assert not [p for p in out.rglob("*") if p.name.endswith(".room")]


def test_a_left_behind_marker_reserve_is_not_part_of_a_build(cwd, sp_model):
    """... and one found beside a manifest (a file put there later) is listed as unlisted."""
    out = _build(cwd, sp_model)
    unit = sorted(out.glob("unit_*"))[0]
    (unit / ".UNIT_BUILD_FAILED.md.room").write_bytes(bytes(16 << 10))
    assert _codes(_report(out)) == {(f"{unit.name}/.UNIT_BUILD_FAILED.md.room", "unlisted")}


def test_every_flipped_byte_in_every_file_is_found(cwd, hf_json):
    out = _build(cwd, hf_json)
    rng = random.Random(12)
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert {p.name for p in files} >= {
        "manifest.json",
        "stats.json",
        "histogram.json",
        "sample_index.jsonl",
        "duplicate_index.jsonl",
        "unk_index.jsonl",
        "shard_000000.bin",
        "EMPTY_UNIT.md",
        "index.npy",
    }
    for relative, offset in flipped_bytes(out, rng, per_file=6):
        report = _report(out)
        assert not report["ok"], f"{relative} byte {offset} changed unnoticed"
        assert relative in {f["path"] for f in report["failures"]}, (relative, report)
    assert _report(out)["ok"]


def test_a_non_pad_slot_after_the_tokens_is_found(cwd, sp_model):
    out = _build(cwd, sp_model)
    row = json.loads((out / "sample_index.jsonl").read_text().splitlines()[3])
    width, itemsize = row["unit_size"], 2
    assert row["token_count"] < width
    shard = out / row["shard_path"]
    data = bytearray(shard.read_bytes())
    slot = row["shard_row"] * width + row["token_count"]
    data[slot * itemsize : (slot + 1) * itemsize] = np.uint16(5).tobytes()
    shard.write_bytes(bytes(data))
    reseal_build(out)
    report = _report(out)
    (failure,) = report["failures"]
    assert (failure["path"], failure["code"]) == (row["shard_path"], "padding")
    assert failure["facts"]["sample_id"] == 3 and failure["facts"]["value"] == 5
    assert failure["facts"]["slot"] == row["token_count"]


def test_index_stats_duplicates_and_unks_must_agree_with_the_data(cwd, hf_json):
    out = _build(cwd, hf_json)
    _move_to_the_next_row(out, 1)
    stats = json.loads((out / "stats.json").read_text())
    stats["total_tokens"] += 1
    (out / "stats.json").write_bytes(orjson.dumps(stats, option=orjson.OPT_INDENT_2) + b"\n")
    unks = (out / "unk_index.jsonl").read_text().splitlines()
    (out / "unk_index.jsonl").write_text("\n".join(unks[1:]) + "\n")
    (out / "duplicate_index.jsonl").write_text("")
    reseal_build(out)
    report = _report(out)
    found = {(f["path"], f["code"], f["facts"].get("key")) for f in report["failures"]}
    assert ("sample_index.jsonl", "index_place", "shard_row") in found
    assert ("stats.json", "total", "total_tokens") in found
    assert ("unk_index.jsonl", "index_file_line", None) in found
    assert ("duplicate_index.jsonl", "index_file_count", None) in found


def test_missing_and_unlisted_files_are_found(cwd, sp_model):
    out = _build(cwd, sp_model)
    content = read_json(out / "manifest.json")
    gone = content["shards"][0]["path"]
    (out / gone).unlink()
    unit = gone.split("/")[0]
    (out / unit / "UNIT_BUILD_FAILED.md").write_text("left over")
    (out / "notes.txt").write_text("foreign")
    report = _report(out)
    assert {(gone, "missing"), (f"{unit}/UNIT_BUILD_FAILED.md", "unlisted")} <= _codes(report)
    assert ("notes.txt", "unlisted") in _codes(report)


def test_a_manifest_of_an_unknown_version_fails_and_stops(cwd, sp_model):
    out = _build(cwd, sp_model)
    content = read_json(out / "manifest.json")
    content["format_version"] = 99
    (out / "manifest.json").write_text(json.dumps(content))
    report = _report(out)
    assert _codes(report) == {("manifest.json", "manifest_status")}
    assert report["skipped"] == "manifest"


def test_not_a_build_exits_2_with_a_named_error(cwd, sp_model):
    (cwd / "empty").mkdir()
    (cwd / "file").write_text("x")
    failed = cwd / "failed" / "unit_8"
    failed.mkdir(parents=True)
    (failed / "UNIT_BUILD_FAILED.md").write_text("no")
    for target, reason in [
        ("missing", "does not exist"),
        ("file", "is a file"),
        ("empty", "no manifest.json"),
        ("failed", "UNIT_BUILD_FAILED.md"),
    ]:
        code, output = _verify(str(cwd / target))
        assert code == 2, output
        assert output.startswith("NotABuildError:") and reason in output


def test_the_report_speaks_vietnamese(cwd, sp_model, monkeypatch):
    out = _build(cwd, sp_model)
    (out / "notes.txt").write_text("foreign")
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    code, output = _verify(str(out))
    assert code == 1
    assert "THẤT BẠI" in output and "manifest không liệt kê nó" in output
    code, output = _verify(str(cwd / "nothing"))
    assert code == 2 and "Thư mục không chứa" in output


@pytest.mark.parametrize("tokenizer", ["sp_model", "hf_json"])
def test_deep_proves_every_record_is_its_reference_encoding(cwd, tokenizer, request):
    out = _build(cwd, request.getfixturevalue(tokenizer))
    code, output = _verify(str(out), "--deep")
    assert code == 0, output
    assert "every record equals the reference encoding" in output
    # A token changed inside a record, with every digest made to match: only --deep can know.
    row = json.loads((out / "sample_index.jsonl").read_text().splitlines()[4])
    shard = out / row["shard_path"]
    data = bytearray(shard.read_bytes())
    slot = (row["shard_row"] * row["unit_size"]) * 2
    data[slot : slot + 2] = np.uint16(int.from_bytes(data[slot : slot + 2], "little") ^ 1).tobytes()
    shard.write_bytes(bytes(data))
    reseal_build(out)
    assert _report(out)["ok"]
    report = _report(out, "--deep")
    (failure,) = report["failures"]
    assert (failure["code"], failure["facts"]["sample_id"]) == ("deep_record", 4)
    assert failure["facts"]["keys"] == "tokens"


def test_deep_gives_the_same_report_for_every_worker_count(cwd, sp_model):
    """Records re-derived on 1, 2 or 3 processes, over many batches (1,024 lines each): the
    same report, failures in the same order, for an intact build and for tampered ones."""
    out = _build(cwd, sp_model, rows=4000)
    counts = ("1", "2", "3")

    def reports() -> list[dict]:
        found = [_report(out, "--deep", "--workers", n) for n in counts]
        for report in found:
            report.pop("directory", None)
        return found

    intact = reports()
    assert intact[0]["ok"] and all(r == intact[0] for r in intact)
    rows = (out / "sample_index.jsonl").read_text().splitlines()
    vocab = read_json(out / "manifest.json")["tokenizer"]["vocab_size"]
    # A sample's first token (a word: never PAD, UNK, BOS or EOS, ids 0-3) made another word,
    # in samples read in three different batches, behind a resealed manifest.
    tampered_lines = (40, 2100, len(rows) - 3)
    for line in tampered_lines:
        row = json.loads(rows[line])
        shard = out / row["shard_path"]
        data = bytearray(shard.read_bytes())
        slot = row["shard_row"] * row["unit_size"] * 2
        value = int.from_bytes(data[slot : slot + 2], "little")
        assert value > 3
        data[slot : slot + 2] = np.uint16(4 + (value - 4 + 1) % (vocab - 4)).tobytes()
        shard.write_bytes(bytes(data))
    reseal_build(out)
    assert _report(out)["ok"]
    tampered = reports()
    assert all(r == tampered[0] for r in tampered)
    found = [(f["code"], f["facts"]["sample_id"]) for f in tampered[0]["failures"]]
    expected = [json.loads(rows[line])["sample_id"] for line in tampered_lines]
    assert found == [("deep_record", sample_id) for sample_id in expected]
    # An input changed after the build: the same failures, in order, whatever the count.
    data = cwd / "data.jsonl"
    data.write_bytes(data.read_bytes().replace(b"token", b"TOKEN", 1))
    changed = reports()
    assert all(r == changed[0] for r in changed)
    assert [f["code"] for f in changed[0]["failures"]][-1] == "deep_fingerprint"


def _dies_on_a_later_batch(index, batch):
    """``deep_verify._derive`` that SIGKILLs its worker on a batch past line 1,024 (module-level:
    the pool pickles it by name; it runs in the forked worker, never in the parent)."""
    from mintdim.check import deep_verify

    if batch.first_line > 1024:
        os.kill(os.getpid(), signal.SIGKILL)
    return deep_verify.__dict__["_real_derive"](index, batch)


def test_a_worker_killed_mid_deep_verify_is_a_failure_never_an_ok(cwd, sp_model, monkeypatch):
    """A worker SIGKILLed while it re-derives a batch (as the OOM killer would): the report
    fails with the WorkerError, the CLI exits 1 (en and vi), and no worker is left."""
    from mintdim.check import deep_verify

    out = _build(cwd, sp_model, rows=3000)
    monkeypatch.setattr(deep_verify, "_real_derive", deep_verify._derive, raising=False)
    monkeypatch.setattr(deep_verify, "_derive", _dies_on_a_later_batch)
    report = _report(out, "--deep", "--workers", "2")
    (failure,) = report["failures"]
    assert (failure["path"], failure["code"]) == ("workers", "deep_error")
    assert "WorkerError" in failure["message"] and "-9" in failure["message"]
    code, output = _verify(str(out), "--deep", "--workers", "2", "--lang", "vi")
    assert code == 1 and "THẤT BẠI" in output and "WorkerError" in output
    assert not [child for child in multiprocessing.active_children() if child.is_alive()]


def test_deep_workers_must_be_a_positive_count(cwd, sp_model):
    out = _build(cwd, sp_model, rows=10)
    code, output = _verify(str(out), "--deep", "--workers", "0")
    assert code == 2 and "--workers" in output


def test_deep_finds_inputs_and_tokenizers_that_changed(cwd, sp_model):
    local = cwd / "tok.model"
    local.write_bytes(sp_model.read_bytes())
    out = _build(cwd, local)
    data = cwd / "data.jsonl"
    original = data.read_bytes()
    changed = original.replace(b"model", b"MODEL", 1)  # same length, another sample text
    data.write_bytes(changed)
    assert _report(out)["ok"]  # the build itself is intact
    report = _report(out, "--deep")
    codes = [f["code"] for f in report["failures"]]
    assert codes == ["deep_record", "deep_fingerprint"], report
    assert report["failures"][1]["facts"]["sha256"] == hashlib.sha256(changed).hexdigest()
    data.write_bytes(original)
    local.write_bytes(local.read_bytes() + b"\0")
    report = _report(out, "--deep")
    assert _codes(report) == {(str(local), "sha256")}
    local.unlink()
    assert _codes(_report(out, "--deep")) == {(str(local), "deep_input_missing")}


def test_an_id_outside_the_vocabulary_is_found(cwd, sp_model):
    out = _build(cwd, sp_model)
    vocab = read_json(out / "manifest.json")["tokenizer"]["vocab_size"]
    row = json.loads((out / "sample_index.jsonl").read_text().splitlines()[2])
    shard = out / row["shard_path"]
    data = bytearray(shard.read_bytes())
    slot = row["shard_row"] * row["unit_size"]
    data[slot * 2 : slot * 2 + 2] = np.uint16(vocab).tobytes()
    shard.write_bytes(bytes(data))
    reseal_build(out)
    report = _report(out)
    found = {(f["code"], f["facts"]["sample_id"], f["facts"]["value"]) for f in report["failures"]}
    assert ("vocabulary", 2, vocab) in found
    code, output = _verify(str(out))
    assert f"outside the vocabulary of {vocab}" in output


def test_deep_reads_lines_with_the_builds_line_limit(cwd, sp_model):
    """The manifest records source.max_line_bytes; --deep reads the inputs with that limit."""
    out = _build(cwd, sp_model)
    path = out / "manifest.json"
    content = read_json(path)
    assert content["source"]["max_line_bytes"] == 64 << 20  # the documented default
    longest = max(len(line) for line in (cwd / "data.jsonl").read_bytes().splitlines())
    content["source"]["max_line_bytes"] = longest - 1  # as if the build had read with this limit
    path.write_bytes(orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n")
    reseal_build(out)
    assert _report(out)["ok"]
    report = _report(out, "--deep")
    failure = report["failures"][0]  # then the samples it could not reach are missing
    assert (failure["path"], failure["code"]) == ("data.jsonl", "deep_error")
    assert "LineTooLongError" in failure["message"]
    assert f"{longest - 1:,} bytes" in failure["message"]
    assert "max_line_bytes" in failure["message"]


def test_sample_index_read_from_raw_bytes_equals_orjson_and_falls_back(cwd, sp_model):
    """The vectorised reader of sample_index lines gives exactly orjson's columns; a line not in
    the writer's exact form (still valid JSON) sends its block through orjson, and verify holds."""
    from mintdim.build.formats import sample_index
    from mintdim.check.report import VerifyReport
    from mintdim.check.verify.index_scan import IndexScan, Lines, parse_block
    from mintdim.check.verify.manifest import read_manifest

    out = _build(cwd, sp_model)
    report = VerifyReport(directory=str(out), deep=False)
    scan = IndexScan(read_manifest(out, report), report)
    data = (out / "sample_index.jsonl").read_bytes()
    reader = sample_index.ExactReader(scan.build.sources, list(scan.shard_of))
    fast = reader.read(data)
    assert fast is not None
    rows = parse_block(data, 0, report)
    lazy = Lines(out / "sample_index.jsonl", 0, len(data))
    assert [lazy[i] for i in range(len(lazy))] == rows
    want = sample_index.parse_rows(rows, scan.source_of, scan.shard_of)
    for key in sample_index.Columns.__dataclass_fields__:
        got, expected = getattr(fast, key), getattr(want, key)
        assert np.array_equal(got, expected) and got.dtype == expected.dtype, key
    spaced = data.replace(b'{"sample_id":3,', b'{"sample_id": 3,', 1)
    assert spaced != data and reader.read(spaced) is None
    (out / "sample_index.jsonl").write_bytes(spaced)
    reseal_build(out)
    assert _report(out)["ok"]


def test_record_checks_report_what_a_slot_by_slot_reading_finds():
    """The block check of shard records (PAD after the tokens, ids inside the vocabulary, UNK
    positions) proves the common case from each record's extremes; on random blocks, with
    records no sample points at (count -1), full and empty records, EOS sharing the UNK id and
    truncated samples, it reports exactly what reading every slot one by one finds."""
    from types import SimpleNamespace

    from mintdim.check.report import VerifyReport
    from mintdim.check.verify.shards import check_records

    rng = np.random.default_rng(7)
    for _ in range(400):
        width, rows, vocab = int(rng.integers(1, 9)), int(rng.integers(1, 40)), 12
        pad, unk = (int(value) for value in rng.choice(vocab, 2, replace=False))
        counts = rng.integers(-1, width + 1, rows)
        ids = np.where(counts < 0, -1, rng.permutation(rows) + 100)
        records = rng.integers(0, vocab + int(rng.integers(0, 2)), (rows, width))
        tails = np.arange(width) >= counts[:, None]
        records[tails & (rng.random((rows, width)) < 0.97)] = pad
        build = SimpleNamespace(
            pad_id=pad,
            vocab_size=vocab,
            unk_id=None if rng.random() < 0.1 else unk,
            eos_is_unk=bool(rng.random() < 0.3),
            truncated=ids[rng.random(rows) < 0.3],
        )
        report = VerifyReport(directory="d", deep=False)
        unks: dict[int, list[int]] = {}
        records = records.astype(np.uint16)
        check_records(build, "s", records, (counts, ids), 50, unks, report)

        want: dict[str, list[tuple[int, int]]] = {"padding": [], "vocabulary": []}
        want_unks: dict[int, list[int]] = {}
        for row, (count, sample_id) in enumerate(zip(counts.tolist(), ids.tolist(), strict=True)):
            positions = []
            for slot, value in enumerate(records[row].tolist()):
                if 0 <= count <= slot and value != pad:
                    want["padding"].append((50 + row, slot))
                if value >= vocab:
                    want["vocabulary"].append((50 + row, slot))
                eos = build.eos_is_unk and slot == count - 1 and sample_id not in build.truncated
                if value == build.unk_id and (count < 0 or slot < count) and not eos:
                    positions.append(slot)
            if positions:
                want_unks[sample_id] = positions
        for code, slots in want.items():
            got = [(f.facts["row"], f.facts["slot"]) for f in report.failures if f.code == code]
            assert got == slots[:20] and report.hidden.get(code, 0) == max(0, len(slots) - 20)
        assert unks == want_unks


def test_shards_checked_early_with_a_wrong_unit_index_are_checked_again(cwd, sp_model):
    """Shards are checked from the start with the token counts of unit_<u>/index.npy; where those
    differ from sample_index.jsonl's (here one count made shorter, every digest made to match)
    the shard is checked again with the index's, so the only failure is the unit index's own,
    not a PAD failure the wrong count would give."""
    from mintdim.build.formats import unit_index

    out = _build(cwd, sp_model)
    path = sorted(out.glob("unit_*/index.npy"))[0]
    entries = np.load(path)
    assert entries["token_count"][1] > 0
    entries["token_count"][1] -= 1
    with open(path, "r+b") as handle:
        handle.seek(len(path.read_bytes()) - entries.nbytes)
        handle.write(entries.astype(unit_index.DTYPE).tobytes())
    reseal_build(out)
    report = _report(out)
    relative = f"{path.parent.name}/index.npy"
    assert _codes(report) == {(relative, "index_file_line")}, report


def test_the_index_read_in_many_small_parts_gives_the_same_report(cwd, sp_model, monkeypatch):
    """sample_index.jsonl is read in byte ranges whose lines are parsed apart: with ranges much
    shorter than a line (so most hold no line start) verify still passes an intact build, and
    names the same line when one is changed."""
    from mintdim.check.verify import index_scan

    out = _build(cwd, sp_model)
    with monkeypatch.context() as patch:
        patch.setattr(index_scan, "INDEX_BLOCK_BYTES", 97)
        assert _report(out)["ok"]
    _move_to_the_next_row(out, 7)
    reseal_build(out)
    whole = _report(out)
    monkeypatch.setattr(index_scan, "INDEX_BLOCK_BYTES", 97)
    assert _report(out) == whole
    assert ("sample_index.jsonl", "index_place") in _codes(whole)
    assert {f["facts"]["line"] for f in whole["failures"] if f["code"] == "index_place"} == {8}
