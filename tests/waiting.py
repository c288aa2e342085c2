"""Waiting for events the code under test produces: a file it writes, a process that ends.

A test never sleeps for a guessed time and never lets the clock decide its result. It waits for
the event itself (polling a file, or a pidfd the kernel makes readable when a process ends);
``SAFETY_NET`` only turns a hang, which is a bug, into a failure that says what never happened.
On an idle machine each event here comes within a second or two, so the net is a hundred times
that and load alone cannot reach it. pytest-timeout (pyproject.toml) is the last net, for the
waits that have no message of their own.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

__all__ = ["SAFETY_NET", "children", "wait_for", "wait_for_exit"]

SAFETY_NET = 300.0
"""Seconds before a wait for an event that must come fails instead (see the module docstring);
also the timeout of each subprocess a test runs to its end (a CLI run, a script, ``ray start``),
which takes seconds on an idle machine."""

_POLL = 0.01
"""Seconds between two looks at a condition: how soon the test sees its event, nothing more."""


def wait_for(
    condition: Callable[[], bool], what: str, process: subprocess.Popen | None = None
) -> None:
    """Return once ``condition()`` holds. Fail, naming ``what``, when ``process`` (the one that
    should produce the event) ends first, with its stderr, or when the safety net runs out."""
    deadline = time.monotonic() + SAFETY_NET
    while not condition():
        if process is not None and process.poll() is not None:
            _, stderr = process.communicate()
            pytest.fail(f"{what}: the process ended first (exit {process.returncode})\n{stderr}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within the {SAFETY_NET:.0f} s safety net")
        time.sleep(_POLL)


def children(pid: int) -> list[int]:
    """The child processes of ``pid``, forked by any of its threads (Linux /proc); ended ones
    stay listed until they are reaped."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:  # the thread (or the process) ended meanwhile
            continue
    return found


def wait_for_exit(pids: Iterable[int]) -> list[int]:
    """Wait until every process of ``pids`` has ended (a zombie has ended), as the kernel reports
    through a pidfd; return those still running when the safety net ran out (none, normally)."""
    deadline = time.monotonic() + SAFETY_NET
    running: list[int] = []
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:  # ended and reaped already
            continue
        try:
            ended, _, _ = select.select([handle], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(handle)
        if not ended:
            running.append(pid)
    return running
