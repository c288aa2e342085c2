"""The verification pass on its own: each of its checks fails when what it states is false (a
finder that misses a sample or removes an innocent one, a clean record that differs from its
input behind resealed digests), and it runs in a forked child beside the finder with the same
result as run here."""

from __future__ import annotations

import json
import os
import shutil
import threading
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pytest

import mintdim
from mintdim.decontaminate import job, verification
from mintdim.decontaminate.findings import Pairs
from mintdim.decontaminate.prepare import prepare
from mintdim.decontaminate.settings import decontaminate_settings
from tests.decontaminate.conftest import GSM8K
from tests.unit_build.helpers import reseal_build, tree_bytes

AGAINST = [{"path": str(GSM8K), "fields": ["question", "answer"]}]


def _failed(caught: pytest.ExceptionInfo) -> str:
    return caught.value.message("en")


def _keeping(found: Pairs, chosen: np.ndarray) -> Pairs:
    return Pairs(*(getattr(found, name)[chosen] for name in Pairs.__slots__))


@pytest.fixture(scope="module")
def decontaminated(planted: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("verification") / "out"
    mintdim.decontaminate(planted, out, against=AGAINST)
    return out


def test_a_sample_the_finder_missed_is_caught(planted, tmp_path, monkeypatch):
    """The finder forgets a contaminated sample: the clean build holds it, and the pass's own
    search of the input build says so; no manifest is written."""
    real = job.pairs

    def missing_one(hits, cat, min_matches):
        found = real(hits, cat, min_matches)
        return _keeping(found, found.sample != found.samples()[0])

    monkeypatch.setattr(job, "pairs", missing_one)
    out = tmp_path / "out"
    with pytest.raises(mintdim.DecontaminationVerificationError) as caught:
        mintdim.decontaminate(planted, out, against=AGAINST)
    assert "retained_clean: 1 failures" in _failed(caught)
    assert "removed_contaminated" not in _failed(caught)
    assert not (out / "manifest.json").exists()
    checks = json.loads((out / "verification.json").read_text())["checks"]
    assert [c["check"] for c in checks if not c["ok"]] == ["retained_clean"]


def test_an_innocent_sample_removed_is_caught(planted, tmp_path, monkeypatch):
    """The finder removes sample 0, which holds no benchmark run."""
    real = job.pairs

    def with_an_innocent(hits, cat, min_matches):
        found = real(hits, cat, min_matches)
        assert 0 not in found.sample
        first = {name: getattr(found, name)[:1] for name in Pairs.__slots__}
        first["sample"] = np.array([0])
        return Pairs(**{n: np.concatenate([first[n], getattr(found, n)]) for n in Pairs.__slots__})

    monkeypatch.setattr(job, "pairs", with_an_innocent)
    with pytest.raises(mintdim.DecontaminationVerificationError) as caught:
        mintdim.decontaminate(planted, tmp_path / "out", against=AGAINST)
    assert "removed_contaminated: 1 failures (samples [0])" in _failed(caught)


def _checks(root: Path, planted: Path) -> dict[str, dict]:
    settings = decontaminate_settings(AGAINST, match="tokens")
    prepared = prepare(planted, settings)
    result = verification.verify(
        root, prepared.samples, prepared.catalogue, "tokens", settings.min_matches, 1
    )
    return {c["check"]: c for c in result["checks"]}


@pytest.mark.parametrize("slot", ["token", "pad"])
def test_a_changed_clean_record_is_caught_behind_resealed_digests(
    decontaminated, planted, tmp_path, slot
):
    """One slot of a retained sample's clean record changed (a token, or a PAD slot after its
    tokens), the clean manifest resealed: retained_tokens names the sample's input id."""
    root = tmp_path / "copy"
    shutil.copytree(decontaminated, root)
    clean = mintdim.open_build(root / "clean")
    row = list(clean.samples())[7]
    size, count = row["unit_size"], row["token_count"]
    assert count < size
    shard = root / "clean" / row["shard_path"]
    data = np.fromfile(shard, dtype="<u2").reshape(-1, size)
    column = 2 if slot == "token" else count
    data[row["shard_row"], column] ^= 1
    data.tofile(shard)
    reseal_build(root / "clean")
    checks = _checks(root, planted)
    assert checks["retained_tokens"]["examples"] == [row["source_sample_id"]]
    assert checks["retained_tokens"]["failures"] == 1
    assert all(c["ok"] for name, c in checks.items() if name != "retained_tokens")


def test_every_check_holds_on_the_real_directory(decontaminated, planted):
    checks = _checks(decontaminated, planted)
    assert set(checks) == {"coverage", "removed_contaminated", "retained_clean", "retained_tokens"}
    assert all(c["ok"] for c in checks.values())
    recorded = json.loads((decontaminated / "verification.json").read_text())
    assert recorded["checks"] == list(checks.values())


def test_the_pass_runs_beside_the_finder_with_the_same_result(planted, tmp_path, monkeypatch):
    """Forked beside the finder when no other thread runs, here and now when one does: the
    same directory, byte for byte."""
    forks = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or real_fork())
    mintdim.decontaminate(planted, tmp_path / "forked", against=AGAINST)
    assert len(forks) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        mintdim.decontaminate(planted, tmp_path / "here", against=AGAINST)
    finally:
        stop.set()
        other.join()
    assert len(forks) == 1
    assert tree_bytes(tmp_path / "forked") == tree_bytes(tmp_path / "here")


def test_a_failure_of_the_pass_beside_fails_the_run_by_name(planted, tmp_path, monkeypatch):
    """The forked pass meets a changed input build: its named error reaches the caller, and
    the directory is marked failed, with no manifest."""

    def changed(*_args):
        raise mintdim.ChangedSinceBuildError(build=str(planted), file="x.bin", change="missing")

    monkeypatch.setattr(job, "input_pass", changed)
    out = tmp_path / "out"
    with pytest.raises(mintdim.ChangedSinceBuildError):
        mintdim.decontaminate(planted, out, against=AGAINST)
    assert (out / "FAILED.md").is_file()
    assert not (out / "manifest.json").exists()


def test_the_records_compared_name_exactly_the_changed_ones(decontaminated, planted, tmp_path):
    """Slots changed in several clean records across shards (digests resealed), and source ids
    swapped or out of range: exactly those samples are named, by their input ids."""
    from mintdim.build.formats import sample_index
    from mintdim.decontaminate.records import differing
    from mintdim.split.samples import read_build
    from mintdim.split.write import BuildFiles

    root = tmp_path / "copy"
    shutil.copytree(decontaminated, root)
    clean = root / "clean"
    samples = read_build(planted)
    source = sample_index.source_ids(clean / sample_index.FILENAME)

    def found(ids: np.ndarray) -> set[int]:
        files = BuildFiles(clean, str(clean), mintdim.open_build(clean).manifest)
        source: Future[np.ndarray] = Future()
        source.set_result(ids)
        return set(differing(samples, files, source).tolist())

    assert found(source) == set()
    rows = list(mintdim.open_build(clean).samples())
    rng = np.random.default_rng(3)
    chosen = rng.choice(len(rows), 7, replace=False).tolist()
    for k in chosen:
        row = rows[k]
        shard = clean / row["shard_path"]
        data = np.fromfile(shard, dtype="<u2").reshape(-1, row["unit_size"])
        data[row["shard_row"], int(rng.integers(0, row["unit_size"]))] ^= 3
        data.tofile(shard)
        reseal_build(clean)
    assert len({rows[k]["shard_path"] for k in chosen}) > 2
    changed = {rows[k]["source_sample_id"] for k in chosen}
    assert found(source) == changed
    swapped = source.copy()
    a, b = [k for k in range(len(rows)) if k not in chosen and rows[k]["unit_size"] == 128][:2]
    swapped[[a, b]] = source[[b, a]]
    assert found(swapped) == changed | {int(source[a]), int(source[b])}
    beyond = source.copy()
    beyond[[a, b]] = [samples.count, -7]  # ids that name no input sample: named as they are
    assert found(beyond) == changed | {samples.count, -7}


def test_a_search_slip_of_the_finder_is_caught_by_the_pass_beside_it(
    planted, tmp_path, monkeypatch
):
    """The finder's table misses every run: the pass, searching with its own table (and hash
    base) beside it, does not."""
    from mintdim.decontaminate.ngrams import Table

    class Slipping(Table):
        def find(self, *args):
            return [(length, at[:0], gram[:0]) for length, at, gram in super().find(*args)]

    monkeypatch.setattr(job, "Table", Slipping)
    with pytest.raises(mintdim.DecontaminationVerificationError) as caught:
        mintdim.decontaminate(planted, tmp_path / "out", against=AGAINST)
    assert "retained_clean" in _failed(caught)


_KILLED = """
import sys, time
from pathlib import Path
import mintdim
from mintdim.decontaminate import job, verification

def held(where, then=None):
    def hold(*args, **kwargs):
        if then is not None:
            then(*args, **kwargs)
        Path(where).touch()
        while True:  # only the test's kill ends this
            time.sleep(3600)
    return hold

build, out, against, moment = sys.argv[1:5]
if moment == "searching":  # the forked pass and the finder, both mid-search
    verification.scan = held("pass-held")
    job.scan = held("held")
elif moment == "copying":  # the clean build written, nothing proved or sealed yet
    job.write_builds = held("held", job.write_builds)
else:
    job.verify = held("held")
mintdim.decontaminate(build, out, against=[against + ":question,answer"], match="words")
"""


@pytest.mark.parametrize("moment", ["searching", "copying", "verifying"])
def test_killed_at_any_moment_nothing_looks_complete(planted, tmp_path, monkeypatch, moment):
    """SIGKILL mid-run (each moment reached as an event the run produces): the forked pass
    dies with it, the directory has no manifest (verify: incomplete, exit 2), the input build
    is untouched and still verifies."""
    import signal
    import subprocess
    import sys

    from mintdim.check.verify import verify_build
    from tests.waiting import SAFETY_NET, children, wait_for, wait_for_exit

    before = tree_bytes(planted)
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = tmp_path / "out"
    run = subprocess.Popen(
        [sys.executable, "-c", _KILLED, str(planted), str(out), str(GSM8K), moment],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(Path("held").exists, f"the run held while {moment}", run)
        if moment == "searching":
            wait_for(Path("pass-held").exists, "the forked pass held", run)
        forked = children(run.pid)
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.communicate(timeout=SAFETY_NET)
    assert run.returncode == -signal.SIGKILL
    # The words pass, forked beside the finder: collected (reaped) once the run verifies.
    assert len(forked) == (0 if moment == "verifying" else 1)
    assert wait_for_exit(forked) == []
    assert not (out / "manifest.json").exists()
    from click.testing import CliRunner

    from mintdim.cli import main

    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 2
    assert tree_bytes(planted) == before
    assert verify_build(planted).ok
