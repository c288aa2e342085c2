"""The training loops the loader's docs show, written as a user writes them, for the resume tests.

Each loop hands every batch it gets, with the state a checkpoint would save after it, to a
``record`` callback. The uninterrupted run is the reference; a run resumed from one of its states
must get exactly the batches the reference got after that state.

Run as ``python -m tests.unit_build.loader_loops`` with a JSON job on stdin (builds, options, loop,
epochs, states), it resumes every state in this fresh process (nothing here saved them) and prints,
per state, the digests of the batches the resumed run got.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
from collections.abc import Callable

import numpy as np

import mintdim
from mintdim.read.loader import UnitBatch, UnitLoader

Record = Callable[[UnitBatch, dict], None]


def readme(loader: UnitLoader, epochs: int, record: Record) -> None:
    """README.md's PyTorch loop."""
    for epoch in range(loader.epoch, epochs):
        loader.set_epoch(epoch)
        for batch in loader:
            record(batch, loader.state_dict())


def bare(loader: UnitLoader, epochs: int, record: Record) -> None:
    """A bare ``for batch in loader``: one epoch, whatever ``epochs`` says."""
    for batch in loader:
        record(batch, loader.state_dict())


def workers(loader: UnitLoader, epochs: int, record: Record) -> None:
    """docs/training.md's DataLoader loop: each epoch the workers get a pickled copy of the loader
    and the sampler ``remaining()``; batches come back pickled and are saved with ``after=``."""
    for epoch in range(loader.epoch, epochs):
        loader.set_epoch(epoch)
        worker = pickle.loads(pickle.dumps(loader))
        for index in loader.remaining():
            batch = pickle.loads(pickle.dumps(worker[index]))
            record(batch, loader.state_dict(after=batch))


LOOPS = {"readme": readme, "bare": bare, "workers": workers}


def digest(batch: UnitBatch) -> str:
    """What a batch is: where it sits, which records of which build, their exact tokens."""
    content = hashlib.sha256()
    for part in (
        np.array([batch.source, batch.unit_size, batch.epoch, batch.position], dtype=np.int64),
        batch.sample_ids,
        batch.input_ids,
    ):
        content.update(np.ascontiguousarray(part).tobytes())
    return content.hexdigest()[:16]


def run(job: dict, state: dict | None = None) -> list[tuple[str, dict]]:
    """The job's loop over a new loader (from ``state`` when given): (digest, saved state) per batch."""
    loader = mintdim.loader(job["builds"], state=state, **job["options"])
    seen: list[tuple[str, dict]] = []
    LOOPS[job["loop"]](
        loader, job["epochs"], lambda batch, saved: seen.append((digest(batch), saved))
    )
    return seen


if __name__ == "__main__":
    job = json.load(sys.stdin)
    resumed = [[name for name, _ in run(job, state)] for state in job["states"]]
    print(json.dumps(resumed))
