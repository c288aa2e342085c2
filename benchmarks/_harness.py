"""Shared plumbing of the benchmarks: default inputs, running one contender in a child, measuring it.

How memory is measured (both figures are per contender run, each run in its own fresh process):

* ``peak RSS`` (exact): the child is reaped with ``os.wait4(pid)``, whose ``ru_maxrss`` is the
  kernel's high-water mark of the child *and every descendant it reaped* (Linux propagates the
  largest ``maxrss`` up the tree on each wait). That is the peak RSS of the single largest
  process of that contender (its main process or its largest worker), unaffected by earlier
  contenders (``getrusage(RUSAGE_CHILDREN)`` in this process is a running *maximum* over all
  children ever reaped, so deltas of it are meaningless; wait4 on each child avoids that).
  The child also reports its own ``RUSAGE_SELF`` (main process only, = ``VmHWM``) and
  ``RUSAGE_CHILDREN`` (largest worker) so main process and workers can be told apart.
* ``peak tree PSS`` (sampled): every ``--sample-interval`` seconds (default 2, memory.py 1) the
  orchestrator sums ``Pss`` from ``/proc/<pid>/smaps_rollup`` over the child and all its descendants. PSS
  splits pages shared between forked workers and their parent, so the sum is the contender's real
  total footprint; being sampled, it can miss a peak shorter than the interval. One sample costs
  10-50 ms of CPU in the orchestrator (reading smaps_rollup walks page tables), so the interval
  is kept at 1-2 s (under ~3% of one core); ``--sample-interval 0`` switches it off.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
CONTENDERS_PY = HERE / "_contenders.py"
DEFAULT_TEMPLATE = "{instruction}\n\n{input}\n\n{output}"
DEFAULT_SIZES = (128, 256, 512, 1024, 2048, 4096, 8192)

sys.path.insert(0, str(HERE))
from generate import demo_dir  # noqa: E402


def default_tokenizers() -> list[Path]:
    """The two tokenizers bundled with mintdim: one SentencePiece model, one tokenizer.json."""
    demo = demo_dir()
    return sorted(demo.glob("*.model")) + sorted(demo.glob("*.tokenizer.json"))


def tokenizer_kind(path: Path) -> str:
    """``sentencepiece`` for ``.model``, ``hf_json`` for ``.json``."""
    if str(path).endswith(".json"):
        return "hf_json"
    return "sentencepiece"


def mintdim_env() -> dict[str, str]:
    """Environment for a child that imports mintdim: this checkout on PYTHONPATH if not installed."""
    env = dict(os.environ)
    probe = subprocess.run(
        [sys.executable, "-c", "import mintdim"], capture_output=True, cwd=tempfile.gettempdir()
    )
    if probe.returncode != 0:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
        )
    return env


def can_import(python: str, module: str) -> tuple[bool, str]:
    """Whether ``python`` can import ``module`` (and its version, or the error)."""
    code = f"import {module} as m; print(getattr(m, '__version__', '?'))"
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, str(err)
    if proc.returncode == 0:
        return True, proc.stdout.strip()
    return False, (proc.stderr.strip().splitlines() or ["?"])[-1]


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # the command name may hold spaces or parentheses: split after the last ')'
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def descendants(root: int) -> list[int]:
    """``root`` and every process below it."""
    kids = _children_map()
    todo, found = [root], []
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(kids.get(pid, ()))
    return found


def pss_kb(pids: list[int]) -> int:
    """Sum of PSS (kB) of ``pids``; processes that are gone count 0."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
                for line in handle:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


def tree_pss_kb(root: int) -> int:
    """Sum of PSS (kB) over ``root`` and its descendants; 0 when it is gone."""
    return pss_kb(descendants(root))


class PssSampler(threading.Thread):
    """The peak of ``tree_pss_kb(pid)``, sampled every ``interval`` seconds until ``stop()``."""

    # Reading smaps_rollup walks the page tables (tens of ms for a few hundred MB), and listing
    # /proc costs ~10 ms: the tree is re-listed every third sample only, and the default
    # intervals (1-2 s) keep the sampler under ~3% of one core.
    def __init__(self, pid: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak_kb = pid, interval, 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        pids: list[int] = []
        tick = 0
        while not self._stop_event.wait(self.interval):
            if tick % 3 == 0:
                pids = descendants(self.pid)
            tick += 1
            self.peak_kb = max(self.peak_kb, pss_kb(pids))

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


_HZ = os.sysconf("SC_CLK_TCK")


def cpu_busy_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (``/proc/stat``; idle and iowait excluded)."""
    with open("/proc/stat", encoding="utf-8") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    busy = sum(values[:8]) - values[3] - values[4]  # user..steal minus idle, iowait
    return busy / _HZ


def wait_for_idle(max_wait: float, threshold: float, window: float = 1.0) -> float:
    """Wait (at most ``max_wait`` s) until other processes use under ``threshold`` of all cores.

    Returns the busy share of the last window. A shared machine's other work skews every figure;
    runs also record the CPU others used while they ran (``foreign_cpu_share``).
    """
    cores = os.cpu_count() or 1
    deadline = time.monotonic() + max_wait
    while True:
        before = cpu_busy_seconds()
        time.sleep(window)
        share = (cpu_busy_seconds() - before) / (window * cores)
        if share < threshold or time.monotonic() >= deadline:
            return share


def run_contender(
    python: str,
    spec: dict,
    env: dict[str, str] | None = None,
    sample_interval: float = 2.0,
    timeout: float | None = None,
) -> dict:
    """Run one contender in a fresh child; its result plus exact peak RSS and sampled tree PSS."""
    with tempfile.TemporaryDirectory(prefix="mintdim-bench-") as tmp:
        spec_path, result_path = Path(tmp, "spec.json"), Path(tmp, "result.json")
        spec_path.write_text(json.dumps(spec))
        log_path = Path(tmp, "log.txt")
        with open(log_path, "wb") as log:
            busy_before, own_before = cpu_busy_seconds(), time.process_time()
            started = time.perf_counter()
            proc = subprocess.Popen(
                [python, str(CONTENDERS_PY), str(spec_path), str(result_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=tmp,
            )
            sampler = PssSampler(proc.pid, sample_interval) if sample_interval > 0 else None
            if sampler:
                sampler.start()
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    proc.kill()
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.05)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if sampler:
                sampler.stop()
            wall = time.perf_counter() - started
            busy = cpu_busy_seconds() - busy_before
            own = time.process_time() - own_before
        try:
            result = json.loads(result_path.read_text())
        except (OSError, ValueError):
            tail = log_path.read_text(errors="replace")[-3000:]
            result = {"status": "error", "reason": f"child exited {proc.returncode}: {tail}"}
        result["peak_rss_kb"] = usage.ru_maxrss
        result["tree_pss_kb"] = sampler.peak_kb if sampler else None
        result["child_wall"] = wall
        child_cpu = usage.ru_utime + usage.ru_stime  # the child and all its reaped descendants
        result["child_cpu"] = child_cpu
        # CPU that other processes on the machine used while this contender ran, as a share of
        # all cores: a noisy neighbour shows up here rather than silently in the rates.
        result["foreign_cpu_share"] = max(0.0, busy - child_cpu - own) / (
            wall * (os.cpu_count() or 1)
        )
        if result.get("status") == "error":
            result.setdefault("log", log_path.read_text(errors="replace")[-3000:])
    return result


def _proc_field(path: str, key: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine() -> dict[str, str]:
    """CPU model, core count, memory, OS, library versions: the header of every report."""
    model = _proc_field("/proc/cpuinfo", "model name") or "?"
    mem_kb = _proc_field("/proc/meminfo", "MemTotal")
    mem = f"{int(mem_kb.split()[0]) / 1024 / 1024:.1f} GiB" if mem_kb else "?"
    return {
        "cpu": model,
        "cores": str(os.cpu_count()),
        "memory": mem,
        "os": platform.platform(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def loadavg() -> str:
    """The 1-minute load average: other processes on a 2-core machine skew every figure."""
    try:
        with open("/proc/loadavg", encoding="utf-8") as handle:
            return handle.read().split()[0]
    except OSError:
        return "?"


def warm_page_cache(path: Path) -> None:
    """Read a file once so every contender starts from the same (warm) page cache."""
    with open(path, "rb") as handle:
        while handle.read(16 << 20):
            pass


def remove(path: str | Path) -> None:
    """Delete a file or a directory tree, quietly."""
    path = Path(path)
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink()
