"""Running a work function on N processes, results in input order: the local executor.

A build runs a ``PieceEncoder`` over pieces, a scan a ``BatchCounter`` over raw batches.

With one worker everything runs in this process. With more, a process pool works on a bounded
window of items (so memory stays flat however fast the file is read) and results are yielded
strictly in submission order, which keeps sample ids, shards and indexes identical to a
one-worker build. A long result (a batch) travels through a spool file, so only a short path
crosses the pool's pipe; a short one (a piece's report) crosses it pickled. Workers ignore
SIGINT: Ctrl-C reaches the main process, which stops the pool and leaves no process behind. A
worker that dies becomes a ``WorkerError``.

On Linux workers are forked: they inherit the tokenizers already loaded for validation and never
re-import the caller's ``__main__`` (spawn does, which breaks notebooks, stdin scripts and scripts
without a ``__main__`` guard). Forking is safe here because the parent never runs a parallel
tokenizer call (``tokenizers`` only objects to forks after its thread pool was used; validation
encodes on threads of its own, ``tokenizer.hf_json.one_thread_per_call``, gone before it
returns) and no thread of its own is running when the pool forks.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from multiprocessing.process import BaseProcess
from typing import Any, BinaryIO, TypeVar

from mintdim.build.signals import stop_signals_ignored
from mintdim.build.tokenizer.hf_json import PARALLELISM, one_thread_per_call
from mintdim.errors import BuildWriteError, MintDimError, WorkerError
from mintdim.shared.beside import die_with_parent

__all__ = ["encode_in_order"]

Item = TypeVar("Item")
Result = TypeVar("Result")

_IN_FLIGHT_PER_WORKER = 3
"""Batches queued per worker: enough to keep every worker busy while the main process writes."""

_INLINE_BYTES = 2048
"""A result that pickles to at most this many bytes (a piece's short report) comes back through
the pool's pipe itself: with the pool's envelope its message stays below PIPE_BUF (4096 bytes on
Linux). A spool file for it would cost more than the report: creating a file took 0.6 ms of CPU
on the benchmark VM, a few percent of a build of 1 MiB pieces with a fast tokenizer."""

_STOP_GRACE_SECONDS = 60.0
"""How long a worker may take to finish its batch after the build was stopped."""

_START_METHOD = "fork" if sys.platform == "linux" else "spawn"

_worker_encoder: Callable[[Any], Any] | None = None
_worker_spool = ""
_spool_numbers = itertools.count()


def encode_in_order(
    encoder: Callable[[Item], Result], batches: Iterable[Item], workers: int
) -> Iterator[Result]:
    """Run ``encoder`` on every item (a picklable callable), yielding results in input order."""
    if workers == 1:
        with one_thread_per_call():  # one worker means one core
            yield from map(encoder, batches)
        return
    yield from _pool_map(encoder, batches, workers)


def _pool_map(
    encoder: Callable[[Item], Result], batches: Iterable[Item], workers: int
) -> Iterator[Result]:
    try:
        spool_dir = tempfile.TemporaryDirectory(prefix="mintdim-batches-")
    except OSError as err:
        raise BuildWriteError.from_os_error("spool", tempfile.gettempdir(), err) from None
    with spool_dir as spool:
        yield from _spooled_pool_map(encoder, batches, workers, spool)


def _spooled_pool_map(
    encoder: Callable[[Item], Result], batches: Iterable[Item], workers: int, spool: str
) -> Iterator[Result]:
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(_START_METHOD),
        initializer=_init_worker,
        initargs=(encoder, spool, os.getpid()),
    )
    pending: deque[Future[bytes | str]] = deque()
    # The executor has no public handle on its processes, and forgets them once it breaks:
    # keep our own record to report a dead worker's exit code and to stop every one.
    processes: dict[int, BaseProcess] = {}
    outcome = "stopped"  # a failing sample, Ctrl-C, SIGTERM, or the consumer stopped early
    try:
        for batch in batches:
            pending.append(pool.submit(_encode, batch))
            processes.update(pool._processes or {})
            if len(pending) >= workers * _IN_FLIGHT_PER_WORKER:
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
        outcome = "finished"
    except BrokenProcessPool as err:
        # Raised by result() and, once a worker is gone, by submit() too.
        outcome = "broken"
        raise _worker_error(processes.values(), err) from None
    finally:
        with stop_signals_ignored():
            if outcome == "finished":
                pool.shutdown(wait=True)
            else:
                _stop(pool, list(processes.values()), cancel=outcome == "stopped")


def _result(future: Future[bytes | str]) -> Any:
    try:
        reply = future.result()
    except MintDimError as err:
        # The message already names file and line; the pool's remote traceback adds only noise.
        raise err from None
    if isinstance(reply, bytes):
        return pickle.loads(reply)
    with open(reply, "rb") as handle:
        batch = pickle.load(handle)
    os.unlink(reply)
    return batch


def _worker_error(processes: Iterable[BaseProcess], err: BrokenProcessPool) -> WorkerError:
    processes = list(processes)
    deadline = time.monotonic() + 5
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
        # The pool's own thread reaps the same processes. When it wins, our waitpid() fails
        # (ECHILD) and join() returns before the exit code is stored in the Process object that
        # both threads share: wait for the pool's thread to store it, or the dead worker would be
        # missing below and a survivor's SIGTERM reported instead.
        while process.exitcode is None and time.monotonic() < deadline:
            time.sleep(0.005)
    exitcodes = [p.exitcode for p in processes if p.exitcode]
    # The news is the worker that died on its own: killed by a signal other than the SIGTERM the
    # broken pool sends its survivors, then one that exited with an error, then anything.
    news = sorted(exitcodes, key=lambda code: (code == -signal.SIGTERM, code > 0))
    return WorkerError(cause="process_ended", detail=str(err), exitcode=news[0] if news else None)


def _stop(pool: ProcessPoolExecutor, processes: list[BaseProcess], cancel: bool) -> None:
    """Stop early without corrupting the pool: each worker finishes the batch in hand and exits.

    Killing a worker mid-task could leave the pool's queues half-used and its thread waiting
    forever (also at interpreter exit). Queued batches are cancelled only while the pool is
    healthy: a broken pool fails them itself, and a future cancelled under it crashes its thread
    before it has stopped the surviving workers.
    """
    pool.shutdown(wait=False, cancel_futures=cancel)
    deadline = time.monotonic() + _STOP_GRACE_SECONDS
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():  # stuck past the grace period: no clean way is left
            process.terminate()
            process.join()


def _init_worker(encoder: Callable[[Any], Any], spool: str, parent: int) -> None:
    die_with_parent(parent)
    # Ctrl-C is the main process's to handle. SIGTERM must kill: a fork inherits the main
    # process's handler (which turns SIGTERM into KeyboardInterrupt), and a worker blocked in a
    # lock would then survive terminate().
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # One thread per worker: the pool already puts one process on each core.
    os.environ[PARALLELISM] = "false"
    global _worker_encoder, _worker_spool
    _worker_encoder, _worker_spool = encoder, spool


def _encode(batch: Any) -> bytes | str:
    """Encode a batch; a short result comes back pickled, a longer one through a spool file
    whose path alone goes back through the pool.

    A worker killed while writing a multi-megabyte result into the pool's pipe would leave half
    a message there, and the pool's reader would wait for the rest forever. A short result or a
    path keeps the message far below PIPE_BUF, so the kernel writes it whole or not at all.
    """
    result = _worker_encoder(batch)
    path = os.path.join(_worker_spool, f"{os.getpid()}-{next(_spool_numbers)}.pickle")
    spill = _Spill(path)
    try:
        pickle.dump(result, spill, protocol=pickle.HIGHEST_PROTOCOL)
        return spill.close()
    except OSError as err:
        spill.discard()  # half a pickle, and it holds space others need
        raise BuildWriteError.from_os_error("spool", _worker_spool, err) from None


class _Spill:
    """A pickle's destination: memory while it is at most ``_INLINE_BYTES`` long, past that the
    spool file ``path``, written as the pickler goes (a batch is never copied whole)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._held = bytearray()
        self._file: BinaryIO | None = None

    def write(self, data: bytes) -> None:
        if self._file is None and len(self._held) + len(data) <= _INLINE_BYTES:
            self._held += data
            return
        if self._file is None:
            self._file = open(self.path, "wb")  # noqa: SIM115 - closed by close() or discard()
            self._file.write(self._held)
        self._file.write(data)

    def close(self) -> bytes | str:
        """The pickle itself when it stayed short, else the path of the file now holding it."""
        if self._file is None:
            return bytes(self._held)
        self._file.close()
        return self.path

    def discard(self) -> None:
        if self._file is not None:
            with suppress(OSError):
                self._file.close()
            with suppress(OSError):
                os.unlink(self.path)
