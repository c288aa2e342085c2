"""Work run in a forked child beside the main process's own, its result taken later.

A packed build's finish has two long Python loops: the rows, and sample_index.jsonl's places.
Threads would take turns on the GIL, so the places are written by a forked child while this
process writes the rows (1M short samples: 0.7 s each, overlapped). A decontamination's
verification pass searches the input build again in one while the finder searches it and the
clean build is written. The child dies with its
parent (``die_with_parent``), sends back its result or its exception, pickled through a pipe,
and ends with ``os._exit``: nothing of the parent's (atexit, buffers, finalizers) runs twice.

A fork beside other threads could copy a lock one of them holds: where this process runs any
other thread (Ray's driver, a caller's own), the work runs here and now instead. The result is
the same either way: only the time differs.
"""

from __future__ import annotations

import ctypes
import errno
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Beside", "die_with_parent"]

_PR_SET_PDEATHSIG = 1
"""prctl option (linux/prctl.h): the signal a process gets when its parent exits."""


class Beside:
    """``work()`` started now, in a forked child where that is safe; ``result()`` waits for it."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self._pid: int | None = None
        self._value: Any = None
        if threading.active_count() > 1 or not hasattr(os, "fork"):
            self._value = work()
            return
        parent = os.getpid()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read)
            die_with_parent(parent)
            try:
                payload = pickle.dumps((True, work()))
            except BaseException as err:  # noqa: BLE001 - every failure goes back to the parent
                payload = pickle.dumps((False, err))
            with os.fdopen(write, "wb") as out:
                out.write(payload)
            os._exit(0)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> Any:
        """The work's result, or its exception raised here."""
        if self._pid is None:
            return self._value
        with os.fdopen(self._read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if not data:  # killed (the OOM killer) before it could answer
            code = os.waitstatus_to_exitcode(status)
            raise OSError(errno.EIO, f"the process working beside this one ended ({code})")
        done, value = pickle.loads(data)
        if not done:
            raise value
        return value

    def cancel(self) -> None:
        """Stop the child now (the build failed): it writes nothing more."""
        if self._pid is None:
            return
        os.kill(self._pid, signal.SIGKILL)
        os.waitpid(self._pid, 0)
        os.close(self._read)
        self._pid = None


def die_with_parent(parent: int) -> None:
    """End this forked process when ``parent`` ends, however it ends (SIGKILL, the OOM killer):
    a build's worker, or work run beside its main process, never outlives the build."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(1)
