"""Signals during a build: SIGTERM stops it as cleanly as Ctrl-C, and nothing cuts cleanup short."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from mintdim.errors import BuildInterruptedError

__all__ = ["StopSignal", "sigterm_as_interrupt", "stop_signals_ignored"]


class StopSignal:
    """Which signal stopped the build: SIGINT unless SIGTERM was received."""

    def __init__(self) -> None:
        self.name = "SIGINT"

    def error(self) -> BuildInterruptedError:
        """What the stop becomes for the caller: a ``BuildInterruptedError`` naming the signal."""
        return BuildInterruptedError(signal_name=self.name)


@contextmanager
def sigterm_as_interrupt() -> Iterator[StopSignal]:
    """Inside the block, SIGTERM raises KeyboardInterrupt, so a scheduler's or ``timeout``'s stop
    gets the same cleanup as Ctrl-C. A program that installed its own SIGTERM handler keeps it."""
    received = StopSignal()
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield received
        return

    def interrupt(signum: int, frame: object) -> None:
        received.name = signal.Signals(signum).name
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def stop_signals_ignored() -> Iterator[None]:
    """Ignore SIGINT and SIGTERM inside the block, so a second Ctrl-C or stop request cannot cut
    cleanup short (main thread only; elsewhere signals cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
