"""The Ray executor: pieces encoded by actors on a Ray cluster, fragments back in piece order.

Each actor deserialises one ``PieceEncoder`` (so it loads the tokenizers once, from their paths
on its own node) and runs it on one piece per task; the encoder writes the piece's fragment into
the output's staging area, which is why inputs, tokenizer files and the output directory must be
at the same path on every node (a shared filesystem). Only a piece's description goes to an
actor (a compressed JSONL piece also carries its decompressed lines, at most 8 MiB: no node can
enter the stream in the middle) and only a ``Fragment`` (a few hundred bytes) comes back: the
tokens travel through the shared filesystem, never through the driver's object store.

Order never depends on Ray: ``ActorPool`` hands each piece to an idle actor and returns results
in submission order, and the driver assembles in that order. A lost actor (its process or its
node died) is restarted and its piece retried by Ray; a retried piece writes the same bytes
under the same name. A piece that fails on bad data does not fail its task: the error is inside
its fragment, so the driver meets it at the same sample as a local build. Anything else a task
raises fails the build; an actor lost more often than Ray may restart it is a ``WorkerError``.

The executor runs any picklable callable on any items: a build's ``PieceEncoder`` on pieces, or
a scan's ``batch.BatchCounter`` on raw batches (whose lines then travel through Ray's object
store). A run that finishes logs one line per node of the cluster that ran actors: its node id
(as ``ray status`` shows it), its address, its actors and the tasks (pieces or batches) they ran.

Ray is an optional extra (``pip install ".[ray]"``): it is imported when a build asks for it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from mintdim.errors import MintDimError, RayConnectionError, RayMissingError, WorkerError
from mintdim.shared.lang import Bilingual
from mintdim.shared.log import get_logger, show

__all__ = ["check_ray_installed", "encode_on_ray"]

_MAX_RESTARTS = 4
"""Restarts of one actor (a killed process, a lost node) before the build gives up."""
_MAX_TASK_RETRIES = 4
"""Retries of one piece whose actor was lost while encoding it."""
_IN_FLIGHT_PER_ACTOR = 2
"""Pieces submitted per actor ahead of the assembly: one running, one ready to start."""

_log = get_logger("unit_build")

# The key=value fields are the same in both languages: scripts grep them.
NODE_WORK = Bilingual(
    en="[unit-build] ray node={node} address={address} actors={actors} tasks={tasks}",
    vi="[unit-build] ray node={node} address={address} actors={actors} tasks={tasks}",
)


def check_ray_installed() -> None:
    """Raise ``RayMissingError`` (saying how to install it) when Ray cannot be imported."""
    _ray()


def _ray() -> Any:
    try:
        import ray
    except ImportError as err:
        raise RayMissingError(detail=str(err)) from None
    return ray


def encode_on_ray(
    encoder: Any, pieces: Iterable[Any], workers: int | None, address: str | None
) -> Iterator[Any]:
    """Run ``encoder`` (a ``PieceEncoder``, a ``BatchCounter``) on every item with Ray actors;
    results in input order.

    Joins the Ray session of this process if there is one, else ``ray.init(address)`` (and
    shuts down what it started). ``workers``: actors, one CPU each (a share of one when there
    are more actors than CPUs); None: one per CPU of the cluster.
    """
    ray = _ray()
    from ray.util import ActorPool

    started = not ray.is_initialized()
    if started:
        _join(ray, address)
    actors: list[Any] = []
    try:
        cpus = ray.cluster_resources().get("CPU", 1)
        count = workers or max(1, int(cpus))
        # More actors than CPUs share them: an actor waiting for a free CPU would be handed
        # pieces all the same, and the build would wait for it forever.
        share = min(1.0, cpus / count)
        _log.debug("Ray executor: %d actors, %.2f CPU each", count, share)
        actor_class = ray.remote(
            num_cpus=share, max_restarts=_MAX_RESTARTS, max_task_retries=_MAX_TASK_RETRIES
        )(_PieceActor)
        # The encoder (the plan: a few kilobytes) goes inline with each actor's constructor, so
        # a restarted actor never depends on an object that may have left the object store.
        actors = [actor_class.remote(encoder) for _ in range(count)]
        pool = ActorPool(actors)
        in_flight = 0
        for piece in pieces:
            pool.submit(lambda actor, item: actor.encode.remote(item), piece)
            in_flight += 1
            if in_flight >= count * _IN_FLIGHT_PER_ACTOR:
                yield _next(ray, pool)
                in_flight -= 1
        while pool.has_next():
            yield _next(ray, pool)
        _log_nodes(ray.get([actor.where.remote() for actor in actors]))
    finally:
        for actor in actors:
            ray.kill(actor, no_restart=True)
        if started:
            ray.shutdown()


def _join(ray: Any, address: str | None) -> None:
    """``ray.init(address)``; a cluster that cannot be joined is ``RayConnectionError``."""
    refused: tuple[type[BaseException], ...] = (ConnectionError,)
    # Token authentication exists in recent Ray only.
    refused += tuple(filter(None, [getattr(ray.exceptions, "AuthenticationError", None)]))
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    except refused as err:
        raise RayConnectionError(
            address=address,
            detail=f"{type(err).__name__}: {err}",
        ) from None


def _next(ray: Any, pool: Any) -> Any:
    try:
        return pool.get_next()
    except ray.exceptions.RayTaskError as err:
        cause = getattr(err, "cause", None)
        if isinstance(cause, MintDimError):  # e.g. InputChangedError: the message says where
            raise cause from None
        raise
    except ray.exceptions.RayActorError as err:
        raise WorkerError(cause="actor_lost", detail=str(err), restarts=_MAX_RESTARTS) from None


def _log_nodes(reports: list[tuple[str, str, int]]) -> None:
    """One line per node: its actors and the tasks they ran (since each actor's last start)."""
    actors = Counter(node for node, _, _ in reports)
    tasks: Counter[str] = Counter()
    for node, _, count in reports:
        tasks[node] += count
    addresses = {node: address for node, address, _ in reports}
    for node in actors:
        show(
            _log,
            NODE_WORK,
            node=node,
            address=addresses[node],
            actors=actors[node],
            tasks=tasks[node],
        )


class _PieceActor:
    """One Ray actor: a ``PieceEncoder`` kept for every piece it is given."""

    def __init__(self, encoder: Any) -> None:
        # One actor per CPU: the tokenizer's own thread pool would only fight the other actors.
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        self._encoder = encoder
        self._tasks = 0

    def encode(self, item: Any) -> Any:
        """Run the work on one item: encode (or reuse) a piece's fragment, or count a batch."""
        result = self._encoder(item)
        self._tasks += 1
        return result

    def where(self) -> tuple[str, str, int]:
        """This actor's node id and address, and the tasks it ran since it started."""
        import ray

        return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address(), self._tasks

    def pid(self) -> int:
        """The actor's process id (tests kill it to prove a lost actor is retried)."""
        return os.getpid()
