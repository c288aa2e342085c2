"""Worker processes: Ctrl-C, SIGTERM, a killed worker or main process, and a tokenizer failure.

Each case checks what a user relies on: the real error reaches them (not a pool traceback), every
unit directory says the build failed, no manifest exists, and no worker process is left behind.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from mintdim import TokenizerEncodeError, pipeline
from mintdim.build.tokenizer.hf_json import HFJsonEncoder
from tests.conftest import training_text
from tests.waiting import children, wait_for, wait_for_exit

REPO = Path(__file__).resolve().parents[2]
SIZES = [64, 128, 256, 512, 2048]


GATE = "the gate sample"
"""The text of the row whose batch a worker holds, mid-build, until the test opens the gate."""

GATE_ROW, ROWS, PIECE_BYTES = 2000, 3000, 65536
"""The gate's row, the rows of the input (1.3 MB) and the size of its pieces (21 of them): every
piece before the gate's (some 2,000 samples) is written before the build waits on it, and some
1,000 rows remain to be built after it."""

_GATED = """
import os, time
from pathlib import Path
from mintdim.build.tokenizer.hf_json import HFJsonEncoder

main, real = os.getpid(), HFJsonEncoder.encode_batch

def encode_batch(self, texts, utf8):
    # The worker given the gate's batch says so, then holds it until the test opens the gate.
    if os.getpid() != main and any({gate!r} in text for text in texts):
        Path({reached!r}).touch()
        while not Path({opened!r}).exists():
            time.sleep(0.01)
    return real(self, texts, utf8)

HFJsonEncoder.encode_batch = encode_batch
"""


class Gate:
    """Where the build stops for the test: a worker holds the gate's batch until ``open()``, so
    the build is mid-way (earlier batches written, later ones not) whenever the test acts."""

    def __init__(self, folder: Path) -> None:
        self.reached, self.opened = folder / "gate-reached", folder / "gate-opened"

    def prelude(self) -> str:
        """The code that installs the gate in the build's process (its workers fork with it)."""
        return _GATED.format(gate=GATE, reached=str(self.reached), opened=str(self.opened))

    def open(self) -> None:
        """Let the held worker encode its batch (and every later one)."""
        self.opened.touch()


def _write_jsonl(path: Path) -> Path:
    lines = training_text(lines=ROWS, seed=3)
    with open(path, "wb") as handle:
        for i, text in enumerate(lines):
            text = GATE if i == GATE_ROW else f"{text} {i} " + text * 6
            handle.write(orjson.dumps({"text": text}) + b"\n")
    return path


@pytest.fixture
def started():
    """Subprocess builds started by a test; killed at the end whatever the test did (their
    workers die with them)."""
    processes: list[subprocess.Popen] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.communicate()


def _start_build(
    tmp_path: Path, hf_json: Path, prelude: str = ""
) -> tuple[subprocess.Popen, Path, Gate]:
    """A workers=2 build of ``ROWS`` rows in a subprocess, held at its gate; ``prelude`` runs
    first (e.g. a patch)."""
    out, gate = tmp_path / "out", Gate(tmp_path)
    data = _write_jsonl(tmp_path / "data.jsonl")
    run = textwrap.dedent(
        f"""
        import signal, sys
        from mintdim import pipeline
        # Ctrl-C raises KeyboardInterrupt, as at a terminal, even when the suite itself was
        # started with SIGINT ignored (a script's background job), which this process inherits.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        job = (pipeline("unit-build")
            .source.jsonl(files=[{str(data)!r}], fields=[["text"]], templates=["{{text}}"])
            .tokenizer.hf_json({{"path": {str(hf_json)!r}}})
            .units(sizes=[{SIZES!r}], build_batch=[64])
            .output.dir({str(out)!r}, samples_per_shard=[1000]))
        try:
            job.run(workers=2, piece_bytes={PIECE_BYTES}, progress=False)
        except KeyboardInterrupt as stop:  # how a caller catches Ctrl-C, unchanged
            print(f"caught {{type(stop).__name__}} {{stop.signal_name}}", file=sys.stderr)
            sys.exit(130)
        """
    )
    script = gate.prelude() + textwrap.dedent(prelude) + run
    spool = tmp_path / "tmp"
    spool.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(spool)},  # where workers spool their results
    )
    return process, out, gate


def _wait_at_gate(process: subprocess.Popen, out: Path, gate: Gate) -> list[int]:
    """Worker pids, once a worker holds the gate and the batches before it are written."""
    index = out / "sample_index.jsonl"

    def held() -> bool:
        written = index.exists() and index.stat().st_size > 0
        return gate.reached.exists() and written and len(children(process.pid)) == 2

    wait_for(held, "the build held at its gate, its first shard rows written", process)
    return children(process.pid)


def _assert_failed_cleanly(out: Path, workers: list[int], error_name: str) -> None:
    assert not (out / "manifest.json").exists()
    assert not list((out.parent / "tmp").iterdir()), "spooled batches were left behind"
    for size in SIZES:
        marker = out / f"unit_{size}" / "UNIT_BUILD_FAILED.md"
        text = marker.read_text(encoding="utf-8")
        assert f"{error_name}:" in text
        assert "# Build unit thất bại" in text
    assert not wait_for_exit(workers), "worker processes were left behind"


def _assert_stopped_by(process: subprocess.Popen, stderr: str, signal_name: str) -> None:
    """run() raised BuildInterruptedError, and the script's ``except KeyboardInterrupt`` caught it.

    Shards that closed before the signal may have said so first.
    """
    *before, last = stderr.splitlines()
    assert (process.returncode, last) == (130, f"caught BuildInterruptedError {signal_name}")
    assert all(line.startswith("[unit-build] shard=") for line in before), stderr


def test_ctrl_c_stops_every_worker_and_marks_the_build_failed(tmp_path, hf_json, started):
    process, out, gate = _start_build(tmp_path, hf_json)
    started.append(process)
    workers = _wait_at_gate(process, out, gate)
    process.send_signal(signal.SIGINT)
    gate.open()  # the held worker may finish its batch: the signal is already on its way
    _, stderr = process.communicate()
    _assert_stopped_by(process, stderr, "SIGINT")
    _assert_failed_cleanly(out, workers, "BuildInterruptedError")


def test_a_killed_worker_becomes_a_worker_error(tmp_path, hf_json, started):
    process, out, gate = _start_build(tmp_path, hf_json)
    started.append(process)
    workers = _wait_at_gate(process, out, gate)
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = process.communicate()
    assert process.returncode != 0
    assert "mintdim.errors.execution.WorkerError: WorkerError:" in stderr
    _assert_failed_cleanly(out, workers, "WorkerError")


def test_tokenizer_failure_inside_a_worker_names_the_sample(tmp_path, hf_json, monkeypatch):
    # Forked workers inherit this patch: the library "fails" on one sample's text.
    real_batch, real_one = HFJsonEncoder.encode_batch, HFJsonEncoder.encode

    def refuse(text: str) -> None:
        if "poison" in text:
            raise RuntimeError("library refused this text")

    def encode_batch(self, texts, utf8):
        for text in texts:
            refuse(text)
        return real_batch(self, texts, utf8)

    def encode(self, text):
        refuse(text)
        return real_one(self, text)

    monkeypatch.setattr(HFJsonEncoder, "encode_batch", encode_batch)
    monkeypatch.setattr(HFJsonEncoder, "encode", encode)
    data = tmp_path / "data.jsonl"
    rows = [{"text": f"sample number {i}"} for i in range(40)]
    rows[25]["text"] = "a poison sample"
    data.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    job = (
        pipeline("unit-build")
        .source.jsonl(files=[str(data)], fields=[["text"]], templates=["{text}"])
        .tokenizer.hf_json({"path": str(hf_json)})
        .units(sizes=[[8, 64]], build_batch=[4])
        .output.dir(str(tmp_path / "out"), samples_per_shard=[10])
    )
    with pytest.raises(TokenizerEncodeError) as caught:
        job.run(workers=2, progress=False)
    assert (caught.value.file, caught.value.line) == (str(data), 26)
    assert caught.value.detail == "library refused this text"
    assert caught.value.__cause__ is None
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert (tmp_path / "out" / "unit_8" / "UNIT_BUILD_FAILED.md").exists()


def _signal_mask(pid: int, field: str) -> int:
    line = next(
        x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith(field)
    )
    return int(line.split()[1], 16)


def test_sigterm_stops_the_build_like_ctrl_c(tmp_path, hf_json, started):
    process, out, gate = _start_build(tmp_path, hf_json)
    started.append(process)
    workers = _wait_at_gate(process, out, gate)
    for pid in workers:
        # Workers ignore Ctrl-C (the main process handles it) and die on SIGTERM: they must not
        # inherit the main process's SIGTERM handler, or terminate() could not stop them.
        assert _signal_mask(pid, "SigIgn") >> (signal.SIGINT - 1) & 1
        assert not _signal_mask(pid, "SigCgt") >> (signal.SIGTERM - 1) & 1
    process.send_signal(signal.SIGTERM)
    gate.open()
    _, stderr = process.communicate()
    _assert_stopped_by(process, stderr, "SIGTERM")
    _assert_failed_cleanly(out, workers, "BuildInterruptedError")
    marker = (out / f"unit_{SIZES[0]}" / "UNIT_BUILD_FAILED.md").read_text(encoding="utf-8")
    assert "Signal:\nSIGTERM" in marker
    assert "Tín hiệu:\nSIGTERM" in marker


def test_workers_end_when_the_main_process_is_killed(tmp_path, hf_json, started):
    """SIGKILL (or the OOM killer) gives the main process no chance to clean up: the workers
    must still not outlive it."""
    process, out, gate = _start_build(tmp_path, hf_json)
    started.append(process)
    workers = _wait_at_gate(process, out, gate)
    process.kill()
    process.communicate()
    assert not wait_for_exit(workers), "workers outlived the main process"
    assert not (out / "manifest.json").exists()


def test_a_worker_stuck_past_the_grace_period_is_terminated(tmp_path, hf_json, started):
    """After Ctrl-C each worker may finish its batch; one that never does (a tokenizer hanging
    on some input) is terminated once the grace period ends, instead of holding the build open.

    The gate never opens: the held worker can only end by being terminated, so the build ending
    at all (with every worker gone) is the proof, whatever the machine's speed."""
    patch = """
        from mintdim.build import workers
        workers._STOP_GRACE_SECONDS = 1.0
        """
    process, out, gate = _start_build(tmp_path, hf_json, prelude=patch)
    started.append(process)
    workers = _wait_at_gate(process, out, gate)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate()
    _assert_stopped_by(process, stderr, "SIGINT")
    _assert_failed_cleanly(out, workers, "BuildInterruptedError")
    assert not gate.opened.exists()


def test_a_short_result_crosses_the_pipe_and_a_long_one_a_spool_file(tmp_path, monkeypatch):
    """A piece's report comes back pickled, with no file made for it; a batch comes back as the
    path of a spool file that holds it, which the main process reads and removes. Either message
    the pool writes stays below PIPE_BUF, so a worker killed mid-write cannot leave half of it."""
    from concurrent.futures import Future
    from concurrent.futures.process import _ResultItem

    from mintdim.build import workers

    short, long = {"piece": 7, "reused": False}, list(range(5000))
    monkeypatch.setattr(workers, "_worker_encoder", lambda item: item)
    monkeypatch.setattr(workers, "_worker_spool", str(tmp_path))
    # The largest result kept in memory, and one byte more.
    edge = next(
        b"x" * n
        for n in range(workers._INLINE_BYTES)
        if len(pickle.dumps(b"x" * n, protocol=pickle.HIGHEST_PROTOCOL)) == workers._INLINE_BYTES
    )
    assert workers._encode(edge) == pickle.dumps(edge, protocol=pickle.HIGHEST_PROTOCOL)
    over = workers._encode(edge + b"x")
    assert Path(over).read_bytes() == pickle.dumps(edge + b"x", protocol=pickle.HIGHEST_PROTOCOL)
    Path(over).unlink()
    replies = [workers._encode(short), workers._encode(long)]
    assert isinstance(replies[0], bytes)
    assert [p.name for p in tmp_path.iterdir()] == [Path(replies[1]).name]
    largest = _ResultItem(2**31, result=b"\xff" * workers._INLINE_BYTES)
    # The pool pickles each result item whole into its pipe (multiprocessing.queues.SimpleQueue).
    for message in (largest, _ResultItem(2**31, result=replies[1])):
        assert len(pickle.dumps(message)) + 4 <= select.PIPE_BUF
    received = []
    for reply in replies:
        future: Future = Future()
        future.set_result(reply)
        received.append(workers._result(future))
    assert received == [short, long]
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("call", ["run", "scan"])
def test_no_worker_count_means_every_core_this_process_may_run_on(cwd, sp_model, monkeypatch, call):
    """``workers=None`` runs one process per core of this process's affinity mask; the build
    resolves that once, in ``run()`` and ``scan()``, and hands the executor a count."""
    from mintdim.build import runtime
    from tests.unit_build.helpers import job, write_jsonl

    asked: list[object] = []
    real = runtime.encode_in_order

    def counting(work, items, workers):
        asked.append(workers)
        return real(work, items, 1)  # the work itself in this process: only the count matters

    monkeypatch.setattr(runtime, "encode_in_order", counting)
    write_jsonl("a.jsonl", [{"text": t} for t in training_text(12, seed=2)])
    getattr(job(["./a.jsonl"], sp_model), call)(workers=None, progress=False)
    assert asked and set(asked) == {len(os.sched_getaffinity(0))}
