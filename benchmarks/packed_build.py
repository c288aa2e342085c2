"""What packing adds to a build: the same build with ``units(pack=True)`` and without, paired.

    python benchmarks/packed_build.py                              # 1M short samples, 3 rounds
    python benchmarks/packed_build.py --samples 200000 --rounds 5 --sizes 64,128,256,512

Issue 34 asks that packing add at most 10 % to a reference-engine build of 1M short samples, and
at most 64 bytes per sample of memory. The bundled demo data is scaled up with generate.py to
``--samples`` rows, rendered with the short template ``{instruction}`` (a few dozen tokens a
sample), and built with the bundled SentencePiece model, reference engine, ``--workers``
processes, twice: unpacked (one sample a record) and packed (whole samples packed into rows of
each unit), into the same unit sizes, or the packed build into ``--packed-sizes`` (a user's
switch from ``units=small`` to ``units=packed``: ``--sizes`` of small, ``--packed-sizes 4096``). Each build runs in a fresh child (benchmarks/_harness.py:
exact peak RSS of the main process and of its largest worker), the two alternating within each
round (the order flips every round).

Printed: per round the wall seconds of both and their ratio, their CPU seconds (the main process
and its workers: steadier than the wall clock on a machine doing other work) and that ratio, and
the share of the cores other processes used meanwhile; the median ratios over rounds;
the peak RSS of the main process of each (max over rounds) and the difference per sample; the
padding and, for the packed build, its rows against the lower bound.
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
    default_tokenizers,
    loadavg,
    machine,
    mintdim_env,
    remove,
    run_contender,
    tokenizer_kind,
    warm_page_cache,
)
from generate import DEFAULT_FIELDS, cached, default_input  # noqa: E402

GOAL_RATIO = 1.10
GOAL_BYTES_PER_SAMPLE = 64


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=1_000_000)
    p.add_argument("--template", default="{instruction}")
    p.add_argument("--sizes", default="32,64,128,256,512")
    p.add_argument(
        "--packed-sizes", default=None, help="the packed build's units (default: --sizes)"
    )
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--build-batch", type=int, default=4096)
    p.add_argument("--samples-per-shard", type=int, default=100_000)
    p.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    args.template = args.template.replace("\\n", "\n")
    args.workdir.mkdir(parents=True, exist_ok=True)
    source = cached(default_input(), DEFAULT_FIELDS, args.samples, args.workdir)
    tokenizer = default_tokenizers()[0]
    info = machine()
    print(
        f"# packing's cost in a build, {info['date']}\n"
        f"machine: {info['cpu']}, {info['cores']} cores, {info['memory']}, Python {info['python']}\n"
        f"command: python {' '.join(sys.argv)}\n"
        f"input: {args.samples:,} samples, template {args.template!r}, units {args.sizes} "
        f"(packed: {args.packed_sizes or args.sizes}), "
        f"{tokenizer.name}, reference engine, workers={args.workers}\n",
        flush=True,
    )
    env = mintdim_env()
    packed_sizes = args.packed_sizes or args.sizes
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for number in range(args.rounds):
        order = (False, True) if number % 2 == 0 else (True, False)
        for pack in order:
            warm_page_cache(source)
            out = args.workdir / f"packed-build-{int(pack)}"
            remove(out)
            spec = {
                "contender": "mintdim",
                "input": str(source),
                "fields": [f for f in DEFAULT_FIELDS if f"{{{f}}}" in args.template],
                "template": args.template,
                "tokenizer": str(tokenizer.resolve()),
                "kind": tokenizer_kind(tokenizer),
                "cores": os.cpu_count() or 1,
                "workers": args.workers,
                "sizes": [int(s) for s in (packed_sizes if pack else args.sizes).split(",")],
                "build_batch": args.build_batch,
                "samples_per_shard": args.samples_per_shard,
                "out": str(out),
                "pack": pack,
            }
            result = run_contender(sys.executable, spec, env=env, sample_interval=0)
            remove(out)
            if result.get("status", "ok") != "ok" and "seconds" not in result:
                raise SystemExit(f"pack={pack}: {result.get('reason')}")
            runs[pack].append(result)
        plain, packed = runs[False][-1], runs[True][-1]
        print(
            f"round {number + 1}: unpacked {plain['seconds']:.2f} s ({plain['child_cpu']:.2f} s "
            f"CPU), packed {packed['seconds']:.2f} s ({packed['child_cpu']:.2f} s CPU), ratio "
            f"{packed['seconds'] / plain['seconds']:.3f} wall, "
            f"{packed['child_cpu'] / plain['child_cpu']:.3f} CPU; others' CPU "
            f"{plain['foreign_cpu_share']:.0%} / {packed['foreign_cpu_share']:.0%}",
            flush=True,
        )
    pairs = list(zip(runs[False], runs[True], strict=True))
    ratios = [b["seconds"] / a["seconds"] for a, b in pairs]
    cpu_ratios = [b["child_cpu"] / a["child_cpu"] for a, b in pairs]
    peak = {pack: max(r["peak_rss_kb"] for r in runs[pack]) for pack in runs}
    per_sample = (peak[True] - peak[False]) * 1024 / args.samples
    packed = runs[True][-1]
    rows = sum(packed["packing"]["rows"].values())
    bound = sum(packed["packing"]["lower_bound_rows"].values())
    print(
        f"\nmedian packed/unpacked time: {statistics.median(ratios):.3f} (goal <= {GOAL_RATIO}); "
        f"rounds {', '.join(f'{r:.3f}' for r in ratios)}\n"
        f"median packed/unpacked CPU (main process and workers): "
        f"{statistics.median(cpu_ratios):.3f}; rounds {', '.join(f'{r:.3f}' for r in cpu_ratios)}\n"
        f"peak RSS of the main process: unpacked {peak[False] / 1024:.1f} MiB, packed "
        f"{peak[True] / 1024:.1f} MiB: {per_sample:+.1f} B a sample "
        f"(goal <= {GOAL_BYTES_PER_SAMPLE})\n"
        f"padding: unpacked {runs[False][-1]['padding_ratio']:.2%}, packed "
        f"{packed['padding_ratio']:.2%} in {rows:,} rows (lower bound {bound:,})\n"
        f"load {loadavg()}"
    )
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"workdir": str(args.workdir),
                                         "json": str(args.json)}, "runs": {str(k): v for k, v in runs.items()}}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
