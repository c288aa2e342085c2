"""The exact unit planner at scale: ``plan_units`` on 10 million counts with 32,768 distinct values.

Prints the machine, the load average, and the median (and every run) of ``plan_units(counts, 16)``
timed end to end (histogram, k-layer DP, figures), plus the same with ``cost="attention"`` and
with ``unit_cost`` choosing the count. The counts are a seeded log-normal mix clipped to
1..32768 with every length in that range present at least once, so there are exactly 32,768
candidate sizes. Usage::

    python benchmarks/planner.py [--samples 10000000] [--distinct 32768] [--count 16] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from _harness import loadavg, machine

from mintdim import plan_units


def counts(samples: int, distinct: int, seed: int = 0) -> np.ndarray:
    """``samples`` token counts in 1..distinct, every value present at least once."""
    rng = np.random.default_rng(seed)
    body = np.clip(rng.lognormal(6.0, 1.0, samples - distinct), 1, distinct).astype(np.int64)
    every = np.arange(1, distinct + 1, dtype=np.int64)
    return rng.permutation(np.concatenate([body, every]))


def timed(repeats: int, call) -> tuple[list[float], object]:
    """Wall times of ``repeats`` calls (after one warm-up call) and the last result."""
    result = call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return times, result


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--distinct", type=int, default=32_768)
    parser.add_argument("--count", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    data = counts(args.samples, args.distinct)
    assert np.unique(data).size == args.distinct
    print(" | ".join(f"{key}: {value}" for key, value in machine().items()))
    print(f"load average before: {loadavg()}")
    print(f"{args.samples:,} counts, {args.distinct:,} distinct values, count={args.count}")
    cases = {
        f"plan_units(counts, {args.count})": lambda: plan_units(data, args.count),
        f'plan_units(counts, {args.count}, cost="attention")': lambda: plan_units(
            data, args.count, cost="attention"
        ),
        f"plan_units(counts, {args.count}, align=64)": lambda: plan_units(
            data, args.count, align=64
        ),
        "plan_units(counts, None, unit_cost=1e6)": lambda: plan_units(data, None, unit_cost=1e6),
    }
    for name, call in cases.items():
        times, plan = timed(args.repeats, call)
        runs = " ".join(f"{t:.3f}" for t in times)
        print(
            f"{name}: median {statistics.median(times):.3f} s (runs: {runs}); "
            f"{len(plan.sizes)} units, padding {plan.padding_ratio:.4%}"
        )
    print(f"load average after: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
