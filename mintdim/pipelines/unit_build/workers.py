"""Running ``BatchEncoder`` over raw batches on N processes, results in input order.

With one worker everything runs in this process. With more, a process pool works on a bounded
window of batches (so memory stays flat however fast the file is read) and results are yielded
strictly in submission order, which keeps sample ids, shards and indexes identical to a
one-worker build. Workers ignore SIGINT: Ctrl-C reaches the main process, which stops the pool
and leaves no process behind. A worker that dies becomes a ``WorkerError``.

On Linux workers are forked: they inherit the tokenizers already loaded for validation and never
re-import the caller's ``__main__`` (spawn does, which breaks notebooks, stdin scripts and scripts
without a ``__main__`` guard). Forking is safe here because the parent never runs a parallel
tokenizer call (``tokenizers`` only objects to forks after its thread pool was used) and starts
no thread of its own before the pool exists.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from mintdim.pipelines.unit_build.batch import BatchEncoder, EncodedBatch
from mintdim.pipelines.unit_build.source.jsonl import RawBatch
from mintdim.shared.errors import MintDimError, WorkerError

__all__ = ["encode_in_order"]

_IN_FLIGHT_PER_WORKER = 3
"""Batches queued per worker: enough to keep every worker busy while the main process writes."""

_START_METHOD = "fork" if sys.platform == "linux" else "spawn"

_worker_encoder: BatchEncoder | None = None


def encode_in_order(
    encoder: BatchEncoder, batches: Iterable[RawBatch], workers: int
) -> Iterator[EncodedBatch]:
    """Encode every batch, yielding results in input order."""
    if workers == 1:
        yield from map(encoder, batches)
        return
    yield from _pool_map(encoder, batches, workers)


def _pool_map(
    encoder: BatchEncoder, batches: Iterable[RawBatch], workers: int
) -> Iterator[EncodedBatch]:
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(_START_METHOD),
        initializer=_init_worker,
        initargs=(encoder,),
    )
    pending: deque[Future[EncodedBatch]] = deque()
    finished = False
    try:
        for batch in batches:
            pending.append(pool.submit(_encode, batch))
            if len(pending) >= workers * _IN_FLIGHT_PER_WORKER:
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:  # a failing sample, a dead worker, Ctrl-C, or the consumer stopped early
            _stop(pool, pending)


def _result(future: Future[EncodedBatch]) -> EncodedBatch:
    try:
        return future.result()
    except BrokenProcessPool as err:
        raise WorkerError(detail=f"a worker process ended abruptly ({err})") from None
    except MintDimError as err:
        # The message already names file and line; the pool's remote traceback adds only noise.
        raise err from None


def _stop(pool: ProcessPoolExecutor, pending: deque[Future[EncodedBatch]]) -> None:
    for future in pending:
        future.cancel()
    processes = list((pool._processes or {}).values())  # the executor has no public handle on them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join()


def _init_worker(encoder: BatchEncoder) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # One thread per worker: the pool already puts one process on each core.
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    global _worker_encoder
    _worker_encoder = encoder


def _encode(batch: RawBatch) -> EncodedBatch:
    return _worker_encoder(batch)
