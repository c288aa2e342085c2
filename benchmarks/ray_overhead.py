"""Ray's overhead against local worker processes, end to end, on one machine.

    python benchmarks/ray_overhead.py                        # 300k samples, demo SentencePiece
    python benchmarks/ray_overhead.py --samples 300000 --repeats 3 --workers 2

Run by hand, never in CI. ONE run builds the same generated input (benchmarks/generate.py,
Alpaca form) with ``job.run(workers=N)`` and with ``job.run(executor="ray", workers=N)`` (N
actors on a local Ray cluster started once, before the timings, as a user's cluster would
be), alternating the order every round. Each build is timed from ``run()`` to a complete
output directory (validation, pieces, encoding, assembly, manifest). It prints each run, the
median of each, the median of the per-round ratios ray/local ("paired": rounds are a minute
apart, which cancels slow drifts of a shared machine), the share of all cores other processes
used during each run, and checks the two output directories are byte-identical. It also prints
the per-core encode rate (input MB/s per worker) that docs/cluster.md scales to a terabyte.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import cpu_busy_seconds, machine  # noqa: E402
from generate import cached, default_input  # noqa: E402

from mintdim import pipeline  # noqa: E402

FIELDS = ("instruction", "input", "output")
TEMPLATE = "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n{output}"


def _job(data: Path, tokenizer: Path, out: Path):
    return (
        pipeline("unit-build")
        .source.jsonl(files=[str(data)], fields=[list(FIELDS)], templates=[TEMPLATE])
        .tokenizer.sentencepiece({"path": str(tokenizer)})
        .units(sizes=[[64, 128, 192, 256, 384, 512, 1024, 2048, 4096]], build_batch=[4096])
        .output.dir(str(out), samples_per_shard=[100000])
    )


def _timed(build) -> tuple[float, float]:
    """(seconds, share of all cores busy during the run) for one build."""
    cores = os.cpu_count() or 1
    busy = cpu_busy_seconds()
    started = time.perf_counter()
    build()
    seconds = time.perf_counter() - started
    return seconds, (cpu_busy_seconds() - busy) / (seconds * cores)


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def main() -> None:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tokenizer", type=Path)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "mintdim-ray")
    args = parser.parse_args()
    import ray

    demo = Path(default_input()).parent
    tokenizer = args.tokenizer or demo / "demo_unigram.model"
    args.workdir.mkdir(parents=True, exist_ok=True)
    data = cached(default_input(), FIELDS, args.samples, args.workdir)
    data.read_bytes()  # warm the page cache for every run
    print(machine(), flush=True)
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    times: dict[str, list[float]] = {"local": [], "ray": []}
    loads: dict[str, list[float]] = {"local": [], "ray": []}
    digests: dict[str, str] = {}
    for round_number in range(args.repeats):
        order = ["local", "ray"] if round_number % 2 == 0 else ["ray", "local"]
        for name in order:
            out = args.workdir / f"out-{name}"
            shutil.rmtree(out, ignore_errors=True)
            options = {"executor": "ray"} if name == "ray" else {}
            job = _job(data, tokenizer, out)
            seconds, load = _timed(lambda j=job, o=options: j.run(workers=args.workers, **o))
            times[name].append(seconds)
            loads[name].append(load)
            digests[name] = _tree_digest(out)
            print(f"round {round_number} {name:5s} {seconds:7.2f} s  cores busy {load:.0%}")
    ray.shutdown()
    size = data.stat().st_size
    ratios = [r / loc for r, loc in zip(times["ray"], times["local"], strict=True)]
    for name in ("local", "ray"):
        median = statistics.median(times[name])
        print(
            f"{name:5s} median {median:7.2f} s  {args.samples / median:9.0f} samples/s  "
            f"{size / median / 1e6 / args.workers:6.2f} input MB/s per worker"
        )
    print(
        f"ray / local: paired median {statistics.median(ratios):.3f} (per round: "
        + ", ".join(f"{r:.3f}" for r in ratios)
        + ")"
    )
    print(f"outputs byte-identical: {digests['local'] == digests['ray']}")
    print(f"input: {args.samples} samples, {size / 1e6:.1f} MB, workers/actors: {args.workers}")


if __name__ == "__main__":
    main()
