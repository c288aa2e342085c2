"""Memory and time scaling of a MintDim build: two input sizes 10x apart.

    python benchmarks/memory.py                                   # 200k and 2M samples, demo SentencePiece model
    python benchmarks/memory.py --samples 100000,1000000 --tokenizer tok.json --workers 2

Run by hand, never in CI. For each size the bundled demo data (or ``--input``) is scaled up with
generate.py (same seed and duplicate rate, so duplicate groups grow in proportion to the input),
then MintDim builds it in a fresh child process, sizes alternating, ``--repeats`` times. Reported
per size (medians over repeats for time, maxima for memory):

* peak RSS of the main process (exact: the child's own ``RUSAGE_SELF.ru_maxrss`` = VmHWM),
* peak RSS of the largest worker (exact: the child's ``RUSAGE_CHILDREN.ru_maxrss`` after the pool
  is reaped),
* peak tree PSS (sampled every ``--sample-interval`` s: main process + workers, shared pages
  counted once; see ``_harness.py``).

Growth per sample = (peak at the large size - peak at the small size) / (difference in samples),
in bytes; the goal is under 64 B/sample and under 500 MB in total at 2 million samples. Time is
linear when seconds per sample at the large size is within 15% of that at the small size.
Like throughput.py, each run waits for an idle machine first, and a run during which other
processes used more than ``--max-others`` of the cores is repeated (least disturbed attempt counts).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    DEFAULT_SIZES,
    DEFAULT_TEMPLATE,
    default_tokenizers,
    loadavg,
    machine,
    mintdim_env,
    remove,
    run_contender,
    tokenizer_kind,
    wait_for_idle,
    warm_page_cache,
)
from generate import DEFAULT_DUP_RATE, DEFAULT_FIELDS, cached, default_input  # noqa: E402

GOAL_BYTES_PER_SAMPLE = 64
GOAL_TOTAL_MB_AT_2M = 500
GOAL_TIME_TOLERANCE = 0.15


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, default=None, help="source JSONL (default: bundled demo)")
    p.add_argument("--fields", default=",".join(DEFAULT_FIELDS))
    p.add_argument("--template", default=DEFAULT_TEMPLATE)
    p.add_argument("--tokenizer", type=Path, default=None, help="default: bundled .model")
    p.add_argument(
        "--engine", default="reference", help='the tokenizer key "engine": reference or fast'
    )
    p.add_argument("--samples", default="200000,2000000", help="two sizes, small,large")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dup-rate", type=float, default=DEFAULT_DUP_RATE)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    p.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    p.add_argument("--build-batch", type=int, default=4096)
    p.add_argument("--samples-per-shard", type=int, default=100_000)
    p.add_argument("--sample-interval", type=float, default=1.0)
    p.add_argument("--json", type=Path, default=None, help="write every raw measurement here")
    p.add_argument("--wait-idle", type=float, default=120, help="max s to wait for an idle machine")
    p.add_argument("--idle-threshold", type=float, default=0.15)
    p.add_argument("--max-others", type=float, default=0.10, help="repeat a disturbed run")
    p.add_argument("--retries", type=int, default=2)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Build at both sizes, print peaks, growth per sample and time linearity."""
    args = parse_args(argv)
    args.template = args.template.replace("\\n", "\n").replace("\\t", "\t")
    args.workdir.mkdir(parents=True, exist_ok=True)
    fields = tuple(f for f in args.fields.split(",") if f)
    source = args.input or default_input()
    tokenizer = args.tokenizer or default_tokenizers()[0]
    small, large = (int(s) for s in args.samples.split(","))
    inputs = {
        n: cached(source, fields, n, args.workdir, args.seed, args.dup_rate) for n in (small, large)
    }
    info = machine()
    print(
        f"# MintDim memory/time scaling, {info['date']}\n"
        f"machine: {info['cpu']}, {info['cores']} cores, {info['memory']}, Python {info['python']}\n"
        f"command: python {' '.join(sys.argv)}\n"
        f"tokenizer: {tokenizer} ({tokenizer_kind(tokenizer)}), engine {args.engine}, "
        f"workers={args.workers}\n",
        flush=True,
    )
    env = mintdim_env()
    raw: dict[int, list[dict]] = {small: [], large: []}
    for rnd in range(args.repeats):
        for n in (small, large) if rnd % 2 == 0 else (large, small):
            warm_page_cache(inputs[n])
            out = args.workdir / f"mem-out-{n}"
            remove(out)
            spec = {
                "contender": "mintdim",
                "input": str(inputs[n]),
                "fields": list(fields),
                "template": args.template,
                "tokenizer": str(tokenizer.resolve()),
                "kind": tokenizer_kind(tokenizer),
                "cores": os.cpu_count() or 1,
                "workers": args.workers,
                "sizes": [int(s) for s in args.sizes.split(",")],
                "build_batch": args.build_batch,
                "samples_per_shard": args.samples_per_shard,
                "out": str(out),
                "engine": args.engine,
            }
            attempts = []
            for _attempt in range(1 + max(0, args.retries)):
                if args.wait_idle:
                    wait_for_idle(args.wait_idle, args.idle_threshold)
                load = loadavg()
                r = run_contender(
                    sys.executable, spec, env=env, sample_interval=args.sample_interval
                )
                remove(out)
                r["loadavg_before"] = load
                attempts.append(r)
                if r.get("status") != "ok":
                    raise SystemExit(f"{n} samples: {r.get('status')}: {r.get('reason')}")
                if r["foreign_cpu_share"] <= args.max_others:
                    break
            r = min(attempts, key=lambda a: a["foreign_cpu_share"])
            raw[n].append(r)
            print(
                f"  {n:>10,} samples: {r['seconds']:8.2f}s  main {r['self_maxrss_kb'] / 1024:6.0f} MB"
                f"  largest worker {r['children_maxrss_kb'] / 1024:6.0f} MB"
                f"  tree PSS {(r['tree_pss_kb'] or 0) / 1024:6.0f} MB  load {load}"
                f"  others' CPU {r['foreign_cpu_share']:.0%}",
                file=sys.stderr,
                flush=True,
            )
    rows = {}
    for n, runs in raw.items():
        rows[n] = {
            "samples": runs[0]["samples"],
            "seconds": statistics.median(r["seconds"] for r in runs),
            "main_mb": max(r["self_maxrss_kb"] for r in runs) / 1024,
            "worker_mb": max(r["children_maxrss_kb"] for r in runs) / 1024,
            "tree_mb": max((r["tree_pss_kb"] or 0) for r in runs) / 1024,
            "seconds_all": [round(r["seconds"], 2) for r in runs],
        }
    a, b = rows[small], rows[large]
    dn = b["samples"] - a["samples"]
    growth = {k: (b[k] - a[k]) * 1024 * 1024 / dn for k in ("main_mb", "worker_mb", "tree_mb")}
    per_sample = (b["seconds"] / b["samples"]) / (a["seconds"] / a["samples"])
    print(
        "| samples | seconds (median) | samples/s | main peak RSS MB | largest worker MB | tree PSS MB |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (small, large):
        r = rows[n]
        print(
            f"| {r['samples']:,} | {r['seconds']:.2f} ({', '.join(map(str, r['seconds_all']))}) "
            f"| {r['samples'] / r['seconds']:,.0f} | {r['main_mb']:.0f} | {r['worker_mb']:.0f} "
            f"| {r['tree_mb']:.0f} |"
        )
    print(
        f"| growth per sample (bytes) | | | {growth['main_mb']:.1f} | {growth['worker_mb']:.1f} "
        f"| {growth['tree_mb']:.1f} |\n"
    )
    at_2m = b["tree_mb"] + (2_000_000 - b["samples"]) * growth["tree_mb"] / 1024 / 1024
    print(
        f"memory: growth {growth['tree_mb']:.1f} B/sample (tree PSS), {growth['main_mb']:.1f} "
        f"B/sample (main) -> goal < {GOAL_BYTES_PER_SAMPLE}: "
        f"{'met' if max(growth['tree_mb'], growth['main_mb']) < GOAL_BYTES_PER_SAMPLE else 'MISSED'}; "
        f"tree PSS at 2M samples {at_2m:.0f} MB (goal < {GOAL_TOTAL_MB_AT_2M}: "
        f"{'met' if at_2m < GOAL_TOTAL_MB_AT_2M else 'MISSED'})"
    )
    print(
        f"time: {b['samples'] / a['samples']:.0f}x the samples took "
        f"{b['seconds'] / a['seconds']:.2f}x the time; per-sample time ratio {per_sample:.3f} "
        f"(goal within {GOAL_TIME_TOLERANCE:.0%}: "
        f"{'met' if abs(per_sample - 1) <= GOAL_TIME_TOLERANCE else 'MISSED'})"
    )
    if args.json:
        report = {"machine": info, "argv": sys.argv, "rows": rows, "growth": growth, "raw": raw}
        args.json.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
