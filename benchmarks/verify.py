"""``mintdim verify`` against the bound it should meet: hashlib SHA-256 of the same bytes.

    python benchmarks/verify.py                        # short and long records, 5 rounds each
    python benchmarks/verify.py --repeats 11 --cold    # page cache dropped before every timing

Two builds are made from generate.py input with the bundled SentencePiece demo model:

* ``short``: ``--samples`` samples (default 200,000) in units ``--units`` (default 128 to 4096):
  records of a few hundred tokens, so sample_index.jsonl is a third of the bytes;
* ``long``: ``--long-samples`` samples (default 50,000) all in one unit of ``--long-unit`` slots
  (default 4096): long, mostly-PAD records, so the shards are nearly all of the bytes.

Then, per build, in each round (each contender going first in turn): (a) a plain ``verify_build`` of it, (b) SHA-256 of
every file of the build read in fresh 8 MiB blocks (the bound as the earlier RESULTS entries
measured it), (c) SHA-256 of every file with ``hashlib.file_digest`` (one small reused buffer:
the fastest single-threaded pass the standard library offers). The first, unmeasured, round
warms the page cache; ``--cold`` drops it before every timing instead (root only), so every side
reads from the disk. Printed per build: medians of each (wall and CPU seconds, CPU counted over
all of this process's threads), the medians of the per-round ratios verify / (b) and verify / (c),
and the CPU that verify spends per CPU second of (c) with the floor it sets: on n cores no schedule
runs verify in less than its CPU / n, so the ratio to (c) cannot fall below that floor. The
machine has other work: read ratios, not single times.

``--parts`` also times each step of a plain verify alone, on one thread, over the same build
(medians of ``--repeats`` runs, thread CPU): the steps are ``mintdim.check.verify.STEPS``, the
order ``verify_build`` runs, taken from there (a step added to verify is timed here unchanged),
with the work they hand to verify's threads run in place; beside each, how much of it that work
took (for the index: reading its lines, against checking them). Their sum over the cores is the
least time any schedule of this very work could take, whatever the threads: the floor the last
line prints against SHA-256 (``file_digest``) of every file, and the CPU the steps beside the
hash could spend for a ratio of 1.10.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import Executor, Future
from pathlib import Path

from _harness import default_tokenizers, loadavg, machine
from generate import DEFAULT_FIELDS, cached, default_input

from mintdim import pipeline
from mintdim.check.report import VerifyReport
from mintdim.check.verify import STEPS, verify_build
from mintdim.check.verify.manifest import read_manifest
from mintdim.check.verify.order import Pools, Run

_BLOCK = 8 << 20


def files_of(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def sha256_blocks(root: Path) -> int:
    """Hash every file of the build in fresh 8 MiB blocks; return the byte count."""
    total = 0
    for path in files_of(root):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
                total += len(block)
    return total


def sha256_file_digest(root: Path) -> None:
    """Hash every file of the build with hashlib.file_digest."""
    for path in files_of(root):
        with open(path, "rb") as handle:
            hashlib.file_digest(handle, "sha256")


def drop_caches() -> None:
    """Write dirty pages, then drop the page cache (root only)."""
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def timed(call, cold: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    if cold:
        drop_caches()
    started, cpu = time.perf_counter(), time.process_time()  # every thread's CPU
    call()
    return time.perf_counter() - started, time.process_time() - cpu


def build(out: Path, samples: int, sizes: list[int], workdir: Path) -> None:
    data = cached(default_input(), DEFAULT_FIELDS, samples, workdir)
    tokenizer = next(t for t in default_tokenizers() if t.suffix == ".model")
    pipeline("unit-build").source.jsonl(
        files=[str(data)],
        fields=[list(DEFAULT_FIELDS)],
        templates=["{instruction}\n\n{input}\n\n{output}"],
    ).tokenizer.sentencepiece({"path": str(tokenizer)}).units(
        sizes=[sizes], build_batch=[1024]
    ).output.dir(str(out), samples_per_shard=[100_000]).run(workers=2, progress=False)


def measure(name: str, out: Path, sizes: list[int], repeats: int, cold: bool) -> None:
    report = verify_build(out)
    assert report.ok, report.lines()
    size = sha256_blocks(out)  # also warms the page cache
    contenders = {
        "verify": lambda: verify_build(out),
        "sha256, 8 MiB blocks": lambda: sha256_blocks(out),
        "sha256, file_digest": lambda: sha256_file_digest(out),
    }
    times: dict[str, list[float]] = {key: [] for key in contenders}
    cpus: dict[str, list[float]] = {key: [] for key in contenders}
    keys = list(contenders)
    for round_number in range(repeats):
        turn = round_number % len(keys)  # each contender goes first in turn
        for key in keys[turn:] + keys[:turn]:
            wall, cpu = timed(contenders[key], cold)
            times[key].append(wall)
            cpus[key].append(cpu)
    print(
        f"{name}: {report.samples:,} samples, {report.shards} shards, "
        f"{report.shard_bytes / 1e6:.1f} MB of shards, {size / 1e6:.1f} MB in all; units {sizes}; "
        f"page cache {'dropped before each timing' if cold else 'warm'}"
    )
    for key, values in times.items():
        median = statistics.median(values)
        print(
            f"  {key:22s} median {median:.3f} s ({size / median / 1e6:.0f} MB/s), "
            f"CPU {statistics.median(cpus[key]):.3f} s"
        )
    for key in list(contenders)[1:]:
        ratios = [v / h for v, h in zip(times["verify"], times[key], strict=True)]
        print(
            f"  ratio verify / {key}: {statistics.median(ratios):.2f}x "
            f"(median of {repeats} paired rounds; min {min(ratios):.2f}, max {max(ratios):.2f})"
        )
    # Hashing is one thread's work; verify spreads its CPU over every core at best, so no
    # schedule beats (its CPU / cores) against the hash's wall time.
    cores = os.cpu_count() or 1
    floors = [
        c / cores / h for c, h in zip(cpus["verify"], times["sha256, file_digest"], strict=True)
    ]
    cpu_ratio = statistics.median(cpus["verify"]) / statistics.median(cpus["sha256, file_digest"])
    print(
        f"  CPU verify / sha256, file_digest: {cpu_ratio:.2f}x; "
        f"floor of the ratio on {cores} cores: {statistics.median(floors):.2f}x"
    )


class InPlace(Executor):
    """An executor that runs each task at once on the calling thread, adding up its thread CPU:
    verify's steps run one by one, each timed with the work it would hand to a thread."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        started = time.thread_time()
        future.set_result(fn(*args, **kwargs))
        self.seconds += time.thread_time() - started
        return future


def parts(out: Path, repeats: int) -> None:
    """Each step of a plain verify alone, on this thread: median thread CPU, and the floor."""
    cpu: dict[str, list[float]] = {step.name: [] for step in STEPS}
    handed: dict[str, list[float]] = {step.name: [] for step in STEPS}
    hashing: list[float] = []
    own_hashing: list[float] = []
    for _ in range(repeats):
        started = time.thread_time()
        sha256_file_digest(out)
        hashing.append(time.thread_time() - started)
        report = VerifyReport(directory=str(out), deep=False)
        pools = Pools(hashing=InPlace(), shards=InPlace(), lines=InPlace())
        threads = (pools.hashing, pools.shards, pools.lines)
        run = Run(read_manifest(out, report), report, pools)
        for step in STEPS:
            started, before = time.thread_time(), sum(pool.seconds for pool in threads)
            step.run(run)
            cpu[step.name].append(time.thread_time() - started)
            handed[step.name].append(sum(pool.seconds for pool in threads) - before)
        assert report.ok, report.lines()
        own_hashing.append(pools.hashing.seconds)
    print(
        "  steps of a plain verify (mintdim.check.verify.STEPS), each alone on one thread, "
        "median thread CPU (of it, the work verify hands to its threads):"
    )
    medians = {name: statistics.median(times) for name, times in cpu.items()}
    for name, seconds in medians.items():
        beside = statistics.median(handed[name])
        note = f" ({beside * 1e3:.1f} ms)" if beside else ""
        print(f"    {name:44s} {seconds * 1e3:7.1f} ms{note}")
    cores = os.cpu_count() or 1
    bound = statistics.median(hashing)
    total = sum(medians.values())
    own_hash = statistics.median(own_hashing)
    print(f"    SHA-256 of every file (file_digest), for comparison: {bound * 1e3:.1f} ms")
    print(
        f"    sum {total * 1e3:.0f} ms: on {cores} cores no schedule runs it in less than "
        f"{total / cores * 1e3:.0f} ms, {total / cores / bound:.2f}x the hash alone; a ratio of "
        f"1.10 leaves the steps beside the hash {(1.10 * cores - 1) * bound * 1e3:.0f} ms "
        f"(they take {(total - own_hash) * 1e3:.0f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--units", default="128,256,512,1024,2048,4096")
    parser.add_argument("--long-samples", type=int, default=50_000)
    parser.add_argument("--long-unit", type=int, default=4096)
    parser.add_argument("--cases", default="short,long", help="which builds: short, long or both")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    parser.add_argument("--cold", action="store_true", help="drop the page cache before timings")
    parser.add_argument("--parts", action="store_true", help="also time each step of verify alone")
    args = parser.parse_args()
    cases = {
        "short": (args.samples, [int(size) for size in args.units.split(",")]),
        "long": (args.long_samples, [args.long_unit]),
    }
    print(" | ".join(f"{k}: {v}" for k, v in machine().items()), f"| load average {loadavg()}")
    scratch = Path(tempfile.mkdtemp(prefix="mintdim-verify-bench-"))
    try:
        for name in args.cases.split(","):
            samples, sizes = cases[name]
            out = scratch / name
            build(out, samples, sizes, args.workdir)
            measure(name, out, sizes, args.repeats, args.cold)
            if args.parts:
                parts(out, args.repeats)
            shutil.rmtree(out)
    finally:
        shutil.rmtree(scratch)
    print(f"load average {loadavg()} at the end")
    sys.exit(0)


if __name__ == "__main__":
    main()
