"""One build by two checkouts of MintDim, alternating: did a change make a build slower?

    git archive main | tar -x -C /tmp/base          # the code to compare against
    python benchmarks/ab.py --base /tmp/base --input data.jsonl --tokenizer sp.model --rounds 30

Run by hand, never in CI. Each round builds the same plain JSONL input once with each checkout
(``--base`` and ``--head``, default this one) on its PYTHONPATH, in fresh child processes, the
order alternating round by round; each child times ``job.run()`` only, in wall time and in CPU
(the child and its reaped workers). Printed: every round, the medians, and the median over rounds
of each round's head/base ratio (below 1: the head is faster), in wall time and in CPU. On a
machine shared with other work the CPU ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    DEFAULT_TEMPLATE,
    REPO_ROOT,
    default_tokenizers,
    loadavg,
    machine,
    remove,
    tokenizer_kind,
)
from generate import DEFAULT_FIELDS, cached, default_input  # noqa: E402

_CHILD = r"""
import json, resource, sys, time
import mintdim
spec = json.loads(sys.argv[1])
step = mintdim.pipeline("unit-build").source.jsonl(
    files=[spec["input"]], fields=[spec["fields"]], templates=[spec["template"]]
)
job = getattr(step.tokenizer, spec["kind"])({"path": spec["tokenizer"]}).units(
    sizes=[[64, 128, 256, 512, 1024, 2048, 4096]], build_batch=[4096]
).output.dir(spec["out"], samples_per_shard=[20000])

def cpu():
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime

wall, used = time.perf_counter(), cpu()
job.run(workers=spec["workers"], progress=False, on_overflow="skip")
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": cpu() - used, "at": mintdim.__file__}))
"""


def main(argv: list[str] | None = None) -> int:
    """Alternate the two checkouts' builds and print the paired ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="a checkout to compare against")
    parser.add_argument("--head", type=Path, default=REPO_ROOT, help="default: this checkout")
    parser.add_argument("--input", type=Path, default=None, help="JSONL (default: generated)")
    parser.add_argument("--samples", type=int, default=100_000, help="generated samples")
    parser.add_argument("--tokenizer", type=Path, default=default_tokenizers()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    args = parser.parse_args(argv)
    data = args.input or cached(default_input(), DEFAULT_FIELDS, args.samples, args.workdir)
    trees = {"base": args.base.resolve(), "head": args.head.resolve()}
    print(" | ".join(f"{key}: {value}" for key, value in machine().items()))
    print(f"{data} ({data.stat().st_size / 2**20:.1f} MiB), {args.tokenizer.name}, "
          f"workers={args.workers}")  # fmt: skip
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for number in range(args.rounds):
        for name in list(trees) if number % 2 == 0 else list(trees)[::-1]:
            out = args.workdir / f"ab-{name}"
            remove(out)
            spec = {
                "input": str(data),
                "fields": list(DEFAULT_FIELDS),
                "template": DEFAULT_TEMPLATE,
                "kind": tokenizer_kind(args.tokenizer),
                "tokenizer": str(args.tokenizer),
                "out": str(out),
                "workers": args.workers,
            }
            env = {**os.environ, "PYTHONPATH": str(trees[name])}
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, json.dumps(spec)],
                env=env,
                cwd=args.workdir,
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(done.stdout.strip().splitlines()[-1])
            assert result["at"].startswith(str(trees[name])), result["at"]
            runs[name].append(result)
            remove(out)
        shown = "  ".join(
            f"{n} {runs[n][-1]['wall']:.2f}s/{runs[n][-1]['cpu']:.2f}s" for n in trees
        )
        print(f"round {number + 1}: {shown} (wall/CPU, load {loadavg()})", flush=True)
    for key in ("wall", "cpu"):
        base = [r[key] for r in runs["base"]]
        head = [r[key] for r in runs["head"]]
        ratio = statistics.median(h / b for h, b in zip(head, base, strict=True))
        print(
            f"{key:4}: median base {statistics.median(base):.3f}s, head "
            f"{statistics.median(head):.3f}s, head/base median of paired rounds {ratio:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
