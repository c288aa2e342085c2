"""``mintdim verify --deep`` of a fast-engine build against building it with the reference engine.

    python benchmarks/deep_verify.py --input /tmp/mintdim-bench/mixed_base.jsonl --fields text \\
        --template '{text}' --samples 48000 --tokenizer ../shared/corpora/tokenizers/roberta-base.tokenizer.json

Run by hand, never in CI. The input is ``generate.py``'s scaling of ``--input`` to ``--samples``
(as ``throughput.py`` makes it). One fast-engine build of it is made first (``engine="fast"``,
default parity guard, ``--workers``), not measured. Then, in ``--repeats`` rounds, each in a
fresh child process and each going first in turn: a reference-engine build of the same input
(``--workers``), and ``verify_build(deep=True, workers=--workers)`` of the fast build, which
re-derives every record with the reference library one text at a time. Printed: the medians of
each (wall and CPU seconds) and the median of the per-round ratios verify / build, the figure
issue 33 bounds at 1.3.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _harness import machine, mintdim_env, remove, run_contender, tokenizer_kind  # noqa: E402
from generate import cached  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, required=True, help="source JSONL, scaled by generate.py")
    p.add_argument("--fields", default="text", help="comma-separated keys")
    p.add_argument("--template", default="{text}")
    p.add_argument("--samples", type=int, default=48_000)
    p.add_argument("--tokenizer", type=Path, required=True)
    p.add_argument("--tokenizer-options", default="{}", help="JSON: pad_fallback, unk_fallback ...")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    p.add_argument("--sizes", default="64,128,256,512,1024,2048,4096,8192,16384,32768")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Build once with the fast engine, then alternate reference builds and deep verifies."""
    args = parse_args(argv)
    fields = args.fields.split(",")
    data = cached(args.input, tuple(fields), args.samples, args.workdir)
    base = {
        "input": str(data),
        "fields": fields,
        "template": args.template.replace("\\n", "\n"),
        "tokenizer": str(args.tokenizer.resolve()),
        "kind": tokenizer_kind(args.tokenizer),
        "tokenizer_options": json.loads(args.tokenizer_options),
        "sizes": [int(size) for size in args.sizes.split(",")],
        "build_batch": 4096,
        "samples_per_shard": 100_000,
        "workers": args.workers,
    }
    env = mintdim_env()
    fast_dir = args.workdir / "deep-verify-fast"
    remove(fast_dir)
    made = run_contender(
        sys.executable, {**base, "contender": "mintdim-fast", "out": str(fast_dir)}, env
    )
    if made.get("status") != "ok":
        sys.exit(f"the fast build failed: {made.get('reason')}")
    print(f"machine: {machine()}")
    print(f"input: {data} ({made['samples']:,} samples), workers {args.workers}")
    verify = {**base, "contender": "mintdim-deep-verify", "build": str(fast_dir), "cwd": "/"}
    reference_dir = args.workdir / "deep-verify-reference"
    rounds = []
    for round_ in range(args.repeats):
        order = ["build", "verify"] if round_ % 2 == 0 else ["verify", "build"]
        got = {}
        for side in order:
            if side == "build":
                remove(reference_dir)
                spec = {**base, "contender": "mintdim", "out": str(reference_dir)}
            else:
                spec = verify
            result = run_contender(sys.executable, spec, env, sample_interval=0)
            if result.get("status") != "ok":
                sys.exit(f"{side} failed: {result.get('reason')}")
            got[side] = result
        rounds.append(got)
        print(
            f"round {round_ + 1}: build {got['build']['seconds']:.2f} s, "
            f"verify --deep {got['verify']['seconds']:.2f} s",
            flush=True,
        )
    remove(reference_dir)
    remove(fast_dir)

    def median(side: str, key: str) -> float:
        return statistics.median(r[side][key] for r in rounds)

    ratio = statistics.median(r["verify"]["seconds"] / r["build"]["seconds"] for r in rounds)
    cpu = statistics.median(r["verify"]["cpu"] / r["build"]["cpu"] for r in rounds)
    print(
        f"reference build: {median('build', 'seconds'):.2f} s wall, {median('build', 'cpu'):.2f} "
        f"s CPU; verify --deep: {median('verify', 'seconds'):.2f} s wall, "
        f"{median('verify', 'cpu'):.2f} s CPU; verify / build (paired median): wall "
        f"{ratio:.3f}, CPU {cpu:.3f}"
    )


if __name__ == "__main__":
    main()
