"""What a scan costs against a build of the same job: ``job.scan()`` and ``job.run()``, alternating.

Both run in this process on the same generated input (``generate.py``, the bundled demo scaled up),
the same tokenizer and worker count; each round times a scan, then a build into a fresh directory
(removed afterwards). Prints every time, the medians, and the median of each round's ratio
scan/build (paired: both halves of a round share its load). Usage::

    python benchmarks/scan.py [--samples 100000] [--workers 1] [--repeats 3] [--tokenizer PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _harness import (
    DEFAULT_TEMPLATE,
    default_tokenizers,
    loadavg,
    machine,
    remove,
    tokenizer_kind,
)
from generate import DEFAULT_FIELDS, cached, default_input

from mintdim import pipeline


def declared(data: Path, tokenizer: Path, out: Path):
    """The benchmark job: the demo's Alpaca fields and template, powers-of-two units."""
    step = pipeline("unit-build").source.jsonl(
        files=[str(data)], fields=[list(DEFAULT_FIELDS)], templates=[DEFAULT_TEMPLATE]
    )
    job = getattr(step.tokenizer, tokenizer_kind(tokenizer))({"path": str(tokenizer)})
    sizes = [[128, 256, 512, 1024, 2048, 4096, 8192]]
    return job.units(sizes=sizes, build_batch=[4096]).output.dir(
        str(out), samples_per_shard=[100_000]
    )


def main(argv: list[str] | None = None) -> int:
    """Time scans and builds alternately and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokenizer", type=Path, default=default_tokenizers()[0])
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mintdim-scan-bench-"))
    data = cached(default_input(), DEFAULT_FIELDS, args.samples, work)
    print(" | ".join(f"{key}: {value}" for key, value in machine().items()))
    print(f"load average before: {loadavg()}")
    print(f"{args.samples:,} samples, tokenizer {args.tokenizer.name}, workers={args.workers}")
    scans, builds = [], []
    try:
        for round_number in range(args.repeats):
            out = work / f"out-{round_number}"
            job = declared(data, args.tokenizer, out)
            start = time.perf_counter()
            counts = job.scan(workers=args.workers, progress=False).token_counts
            scans.append(time.perf_counter() - start)
            start = time.perf_counter()
            stats = job.run(workers=args.workers, progress=False).outputs[0].stats
            builds.append(time.perf_counter() - start)
            assert int(counts.sum()) == stats["total_tokens"]
            remove(out)
    finally:
        remove(work)
    scan, build = statistics.median(scans), statistics.median(builds)
    ratios = [s / b for s, b in zip(scans, builds, strict=True)]
    print(f"scan : median {scan:.2f} s (runs: {' '.join(f'{t:.2f}' for t in scans)})")
    print(f"build: median {build:.2f} s (runs: {' '.join(f'{t:.2f}' for t in builds)})")
    # Each round's scan and build ran back to back: their ratio shares the round's load.
    shown = " ".join(f"{r:.2f}" for r in ratios)
    print(f"scan/build: median of paired rounds {statistics.median(ratios):.2f} (rounds: {shown})")
    print(f"load average after: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
