"""Benchmark decontamination against the build it checks (issue 35's bounds).

    python benchmarks/decontaminate.py                          # 1M samples, 10,000 items, 2 workers
    python benchmarks/decontaminate.py --samples 100000 --rounds 1   # a quick look

Run by hand, never in CI. What it measures, and how:

* **the corpus**: ``split.py``'s seeded short samples (350-650 characters, Zipf words of the
  demo files), the same file that benchmark writes; **the benchmark**: 10,000 items
  ``{"question", "answer"}`` of the same vocabulary, 1% of them copied from training samples
  (so hits exist and the clean build is written), the rest fresh text.
* **the three contenders**, each in a fresh child process, in alternating rounds (each first in
  turn): the build of the corpus with the reference engine (the demo SentencePiece model,
  ``--workers`` processes), ``mintdim.decontaminate`` with ``match="tokens"`` and with
  ``match="words"`` (``--workers`` threads; a clean build written and verified). Wall time; the
  memory of the child's whole process tree (decontamination forks its verification pass): the
  larger of the exact peak RSS of any one process (``os.wait4``) and the peak of the tree's
  summed PSS, sampled every 0.5 s (shared pages counted once); the CPU other processes used
  meanwhile. Each starts after ``os.sync()``, so none pays for the previous one's writeback.
  Medians, and the paired ratios of each decontamination to the build of the same
  round. Bounds: tokens at most 0.5x the build and under 2 GB, words at most 1.5x.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import PssSampler, cpu_busy_seconds, machine, mintdim_env, remove  # noqa: E402
from split import _sentence, corpus, vocabulary  # noqa: E402

TOKENS_BOUND, WORDS_BOUND, MEMORY_BOUND = 0.5, 1.5, 2 << 30
COPIED = 0.01

_CHILD = """
import json, sys, time
from pathlib import Path
kind, data, out, workers, against = sys.argv[1:6]
start = time.perf_counter()
if kind == "build":
    from mintdim import pipeline
    sys.path.insert(0, sys.argv[6])
    from generate import demo_dir
    (
        pipeline("unit-build")
        .source.jsonl(files=[data], fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece([{"path": str(demo_dir() / "demo_unigram.model")}])
        .units(sizes=[[64, 96, 128, 160, 192, 256, 384, 512, 1024]], build_batch=[4096])
        .output.dir(out, samples_per_shard=[100000])
        .run(workers=int(workers), progress=False, on_overflow="extend")
    )
    found = {}
else:
    import mintdim
    result = mintdim.decontaminate(
        data, out, against=[against + ":question,answer"], match=kind, workers=int(workers)
    )
    found = {"removed": len(result.samples_removed),
             "items": sum(len(v) for v in result.contaminated_items.values())}
print(json.dumps({"seconds": time.perf_counter() - start, **found}))
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=1_000_000)
    p.add_argument("--items", type=int, default=10_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--out", type=Path, default=Path("/tmp/mintdim-decontaminate-bench"))
    p.add_argument("--json", type=Path, default=None, help="also write the results here")
    return p.parse_args(argv)


def benchmark_items(data: Path, path: Path, samples: int, items: int, seed: int) -> Path:
    """Write (once) ``items`` benchmark lines: 1% copied from training samples, the rest new."""
    if path.is_file():
        return path
    words, cumulative = vocabulary()
    rng = random.Random(seed + 1)
    copied = sorted(rng.sample(range(samples), int(items * COPIED)))
    texts = {}
    with open(data, encoding="utf-8") as lines:
        wanted = iter(copied)
        target = next(wanted, None)
        for number, line in enumerate(lines):
            if number == target:
                texts[number] = json.loads(line)["text"]
                target = next(wanted, None)
            if target is None:
                break
    rows = [{"question": texts[i][:300], "answer": texts[i][300:]} for i in copied]
    while len(rows) < items:
        question = _sentence(rng, words, cumulative, rng.randint(150, 400))
        rows.append({"question": question, "answer": _sentence(rng, words, cumulative, 120)})
    rng.shuffle(rows)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def child(kind: str, data: Path, out: Path, workers: int, against: Path) -> dict:
    """One contender in a fresh process: its wall time, the peak memory of its process tree and
    the CPU share others used while it ran."""
    remove(out)
    # The previous contender's writes reach the disk first: none pays for another's writeback.
    os.sync()
    here = str(Path(__file__).resolve().parent)
    busy = cpu_busy_seconds()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", _CHILD, kind, str(data), str(out), str(workers), str(against), here],
        stdout=subprocess.PIPE,
        env=mintdim_env(),
    )
    sampler = PssSampler(process.pid, 0.5)
    sampler.start()
    stdout = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    sampler.stop()
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{kind} failed")
    found = json.loads(stdout.decode().strip().splitlines()[-1])
    found["peak_rss_bytes"] = usage.ru_maxrss * 1024
    found["tree_pss_peak_bytes"] = sampler.peak_kb * 1024
    found["peak_bytes"] = max(found["peak_rss_bytes"], found["tree_pss_peak_bytes"])
    own = usage.ru_utime + usage.ru_stime  # the child and its reaped descendants
    others = max(0.0, cpu_busy_seconds() - busy - own)
    found["others_cpu_share"] = others / (wall * (os.cpu_count() or 1))
    return found


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    data = corpus(args.out / f"corpus-{args.samples}.jsonl", args.samples, args.seed)
    against = benchmark_items(
        data, args.out / f"items-{args.items}.jsonl", args.samples, args.items, args.seed
    )
    build_dir = args.out / "build"
    child("build", data, build_dir, args.workers, against)  # the input of what is measured
    kinds = ["build", "tokens", "words"]
    runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for round_number in range(args.rounds):
        order = kinds[round_number % 3 :] + kinds[: round_number % 3]
        for kind in order:
            source = data if kind == "build" else build_dir
            out = args.out / ("build-timed" if kind == "build" else f"out-{kind}")
            found = child(kind, source, out, args.workers, against)
            runs[kind].append(found)
            print(f"round {round_number + 1} {kind}: {found}", flush=True)
    results = {
        "machine": machine(),
        "samples": args.samples,
        "items": args.items,
        "workers": args.workers,
        "rounds": args.rounds,
    }
    for kind in kinds:
        results[kind] = {
            "median_seconds": statistics.median(r["seconds"] for r in runs[kind]),
            "peak_bytes": max(r["peak_bytes"] for r in runs[kind]),
            "others_cpu_share_max": max(r["others_cpu_share"] for r in runs[kind]),
        }
    for kind, bound in (("tokens", TOKENS_BOUND), ("words", WORDS_BOUND)):
        ratios = [
            r["seconds"] / b["seconds"] for r, b in zip(runs[kind], runs["build"], strict=True)
        ]
        results[kind]["paired_ratio_median"] = statistics.median(ratios)
        results[kind]["bound"] = bound
        results[kind]["removed"] = runs[kind][-1]["removed"]
        results[kind]["items_contaminated"] = runs[kind][-1]["items"]
    print(json.dumps(results, indent=2))
    for kind, bound in (("tokens", TOKENS_BOUND), ("words", WORDS_BOUND)):
        entry = results[kind]
        verdict = "met" if entry["paired_ratio_median"] <= bound else "NOT met"
        print(
            f"{kind}: {entry['median_seconds']:.1f} s, {entry['paired_ratio_median']:.2f}x the "
            f"build ({results['build']['median_seconds']:.1f} s), bound {bound}x: {verdict}; "
            f"peak memory {entry['peak_bytes'] / 2**30:.2f} GiB; others' CPU at most "
            f"{entry['others_cpu_share_max']:.0%}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
