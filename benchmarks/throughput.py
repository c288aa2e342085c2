"""Throughput of a MintDim build against the tokenizer's own ceiling and the tools users would pick.

    python benchmarks/throughput.py                      # bundled demo data, 300k samples, both demo tokenizers
    python benchmarks/throughput.py --tokenizer tok.model --tokenizer tok.json \\
        --competitor-python /path/to/venv-with-datasets-and-datatrove/bin/python

Run by hand, never in CI. In ONE run, for each tokenizer, on the same input file, it runs each
contender in alternation (the order rotates every round) ``--repeats`` times and prints a table of
median samples/s, tokens/s, input MB/s, peak memory and the ratio to the ceiling:

1. ceiling: the tokenizer library's own fastest batch call over the already rendered texts held
   in memory, all cores. SentencePiece: ``encode(texts, num_threads=cores)`` with int-list and
   numpy returns, and with the texts as UTF-8 bytes; tokenizer.json: ``encode_batch`` and
   ``encode_batch_fast`` with ``TOKENIZERS_PARALLELISM=true``. The variant with the best median
   is the ceiling. Texts go in chunks of ``--ceiling-batch``; reading and rendering are not timed.
2. mintdim: ``job.run(workers=N)`` from the JSONL file on disk to a complete output directory
   (shards, sample/duplicate/UNK indexes, stats, manifest), for each N of ``--workers``.
   mintdim-fast: the same with the tokenizer key ``engine="fast"`` (gigatoken, parity-guarded);
   fast-ceiling: gigatoken's own batch call over the rendered texts, all cores (its bound).
   mintdim-0.1.3: the earlier, unrelated MintDim 0.1.3 from the package registry, one process,
   run by ``--old-mintdim-python`` (a Python >= 3.12 venv with it and the same tokenizer
   library versions; skipped without it). It refuses tokenizers without a padding config.
3. datasets: ``load_dataset("json")`` + batched ``map`` (render + the same tokenizer, single-threaded
   per process) with ``num_proc=cores`` + ``save_to_disk``, in a fresh cache directory.
4. datatrove: ``JsonlReader`` (an adapter renders the template) + ``DocumentTokenizer`` with the
   same tokenizer.json (padding, truncation and post-processor switched off in a copy so it emits
   the same tokens; no document shuffling). One input file is one datatrove task, so it runs in one
   process and the tokenizer's own thread pool uses every core. datatrove has no SentencePiece step.

datasets and datatrove run under ``--competitor-python`` (default: this interpreter); a contender
whose package that interpreter cannot import is skipped with a message. Every contender's token
count is checked against the ceiling's, so all of them did the same tokenization.

Timing: each contender runs in a fresh child process (``_contenders.py``) that times only its own
work, after imports; the input file is read once beforehand so the page cache is warm for all.
Medians over rounds; "x ceiling" is the median rate over the ceiling's median rate, "paired" is
the median of the per-round ratios (each round's runs are minutes apart at most, which cancels
slow drifts on a shared machine). "x own ceiling" compares each MintDim engine with the library
that encodes for it: the reference engine (``mintdim``) with ``ceiling``, the fast engine
(``mintdim-fast``) with ``fast-ceiling`` (gigatoken's ``encode_batch(texts, parallel=True)``
over the same UTF-8 texts in memory, tokenizer loaded outside the timing), median and paired. Before each run the script waits (``--wait-idle``, at most 120 s
by default) until other processes use under 15% of the cores, and every run records the share of
all cores that OTHER processes used while it ran ("others' CPU"): a figure measured while that
share was high is skewed, whatever the medians say. A run disturbed by more than ``--max-others``
(10%) is repeated up to ``--retries`` (2) times and the least disturbed attempt counts.

Diagnostics (second table): every run's time, the median share of the cores other processes
used during the runs, cores kept busy (CPU seconds / wall seconds), CPU per 1k samples (main
process, threads and reaped workers, timed region only) and "x ceiling by CPU" = the ceiling's
CPU per sample over the contender's: what the ratio would be if both kept every core busy. It is
much less sensitive to other load than the wall-clock ratios, but not a substitute for them.

Memory: see ``_harness.py``. "peak RSS" is exact (``os.wait4`` ``ru_maxrss``: the largest single
process of the contender, main process or worker); "tree PSS" is the sampled peak of the sum of
PSS over the contender's whole process tree (its real total footprint).

Output identity: the MintDim output directories of the last round, one per worker count, are
compared file by file (SHA-256); the result is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    DEFAULT_SIZES,
    DEFAULT_TEMPLATE,
    can_import,
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    cores = os.cpu_count() or 1
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--input", type=Path, default=None, help="source JSONL (default: bundled demo)")
    p.add_argument("--fields", default=",".join(DEFAULT_FIELDS), help="comma-separated keys")
    p.add_argument("--template", default=DEFAULT_TEMPLATE, help="template (\\n as real newlines)")
    p.add_argument(
        "--tokenizer",
        type=Path,
        action="append",
        default=None,
        help=".model or tokenizer.json; repeat for several (default: both bundled demo tokenizers)",
    )
    p.add_argument(
        "--samples",
        type=int,
        default=300_000,
        help="scale the input up to this many samples with generate.py (0: use the input as is)",
    )
    p.add_argument("--seed", type=int, default=0, help="generator seed")
    p.add_argument("--dup-rate", type=float, default=DEFAULT_DUP_RATE, help="generator dup rate")
    p.add_argument(
        "--workers", default=f"1,{cores}", help=f"MintDim worker counts (default 1,{cores})"
    )
    p.add_argument("--repeats", type=int, default=3, help="rounds of alternation (default 3)")
    p.add_argument(
        "--contenders",
        default="ceiling,mintdim,datasets,datatrove",
        help="subset of " + ",".join(ORDER),
    )
    p.add_argument(
        "--tokenizer-options",
        type=json.loads,
        default={},
        help='extra keys of MintDim\'s tokenizer dict, as JSON, e.g. \'{"pad_fallback": "eos"}\' '
        "for a tokenizer without PAD (mistral-7b)",
    )
    p.add_argument(
        "--old-mintdim-python",
        default=None,
        help="interpreter of a venv with the registry's mintdim 0.1.3 (contender mintdim-0.1.3)",
    )
    p.add_argument(
        "--competitor-python",
        default=sys.executable,
        help="interpreter with datasets/datatrove installed (default: this one)",
    )
    p.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    p.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="MintDim unit sizes (must hold the longest sample)",
    )
    p.add_argument("--build-batch", type=int, default=4096)
    p.add_argument("--samples-per-shard", type=int, default=100_000)
    p.add_argument("--ceiling-batch", type=int, default=4096, help="texts per ceiling batch call")
    p.add_argument("--hf-batch-size", type=int, default=1000, help="datasets map batch_size")
    p.add_argument("--datatrove-batch-size", type=int, default=10_000)
    p.add_argument(
        "--sample-interval", type=float, default=2.0, help="tree PSS sampling, s (0: off)"
    )
    p.add_argument("--timeout", type=float, default=3600, help="per contender run, s")
    p.add_argument(
        "--wait-idle",
        type=float,
        default=120,
        help="before each run wait up to this many s for the machine to be idle (0: don't)",
    )
    p.add_argument(
        "--max-others",
        type=float,
        default=0.10,
        help="repeat a run when other processes used more than this share of the cores during it",
    )
    p.add_argument("--retries", type=int, default=2, help="repeats of a disturbed run (default 2)")
    p.add_argument(
        "--idle-threshold",
        type=float,
        default=0.15,
        help="idle means other processes use under this share of all cores (default 0.15)",
    )
    p.add_argument("--json", type=Path, default=None, help="write every raw measurement here")
    p.add_argument("--no-identity-check", action="store_true")
    return p.parse_args(argv)


def tree_digest(root: Path) -> dict[str, str]:
    """SHA-256 of every file under ``root``, by relative path."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            h = hashlib.sha256()
            with open(path, "rb") as handle:
                while block := handle.read(1 << 20):
                    h.update(block)
            out[str(path.relative_to(root))] = h.hexdigest()
    return out


ORDER = (
    "ceiling",
    "fast-ceiling",
    "mintdim",
    "mintdim-fast",
    "mintdim-0.1.3",
    "datasets",
    "datatrove",
)
"""Every contender, in table order."""
PROJECT = ("ceiling", "fast-ceiling", "mintdim", "mintdim-fast")
"""Contenders run by this interpreter with this checkout's mintdim."""
COMPETITORS = ("datasets", "datatrove")
"""Contenders run by ``--competitor-python``."""
OWN_CEILING = {"mintdim": "ceiling", "mintdim-fast": "fast-ceiling"}
"""The bound of each MintDim engine: the batch call of the library that encodes for it."""


def plan_runs(contenders: list[str], workers: list[int]) -> list[tuple[str, int | None]]:
    """The (contender, workers) runs of one round, in base order."""
    runs: list[tuple[str, int | None]] = []
    for name in contenders:
        if name in ("mintdim", "mintdim-fast"):
            runs.extend((name, w) for w in workers)
        else:
            runs.append((name, None))
    return runs


def label(name: str, workers: int | None, cores: int) -> str:
    """Row label of a run."""
    if name == "ceiling":
        return f"ceiling (tokenizer alone, {cores} cores)"
    if name == "fast-ceiling":
        return f"gigatoken alone (fast engine's library), {cores} cores"
    if name == "mintdim":
        return f"MintDim build, workers={workers}"
    if name == "mintdim-fast":
        return f"MintDim build, engine=fast, workers={workers}"
    if name == "mintdim-0.1.3":
        return "registry mintdim 0.1.3 (earlier code base), 1 process"
    if name == "datasets":
        return f"HF datasets map, num_proc={cores}"
    return "datatrove JsonlReader+DocumentTokenizer"


def benchmark_tokenizer(args: argparse.Namespace, tokenizer: Path, data: Path) -> dict:
    """All rounds for one tokenizer; returns the raw runs and the summary rows."""
    cores = os.cpu_count() or 1
    kind = tokenizer_kind(tokenizer)
    workers = [int(w) for w in args.workers.split(",") if w]
    contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    fields = [f for f in args.fields.split(",") if f]
    input_bytes = data.stat().st_size
    base_spec = {
        "input": str(data),
        "fields": fields,
        "template": args.template,
        "tokenizer": str(tokenizer.resolve()),
        "kind": kind,
        "cores": cores,
        "sizes": [int(s) for s in args.sizes.split(",")],
        "build_batch": args.build_batch,
        "samples_per_shard": args.samples_per_shard,
        "ceiling_batch": args.ceiling_batch,
        "hf_batch_size": args.hf_batch_size,
        "datatrove_batch_size": args.datatrove_batch_size,
        "tokenizer_options": args.tokenizer_options,
    }
    env_project = mintdim_env()
    # Other interpreters must import their own packages, never this checkout on PYTHONPATH.
    env_others = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    skipped: dict[str, str] = {}
    for name, module in (("datasets", "datasets"), ("datatrove", "datatrove")):
        if name in contenders:
            ok, info = can_import(args.competitor_python, module)
            if not ok:
                skipped[name] = f"{module} not importable by {args.competitor_python}: {info}"
    if "datatrove" in contenders and kind == "sentencepiece":
        skipped["datatrove"] = (
            "datatrove has no SentencePiece tokenizer step (DocumentTokenizer loads Hugging Face "
            "tokenizers only)"
        )
    if "mintdim-0.1.3" in contenders and not args.old_mintdim_python:
        skipped["mintdim-0.1.3"] = "no --old-mintdim-python given"
    runs = [r for r in plan_runs(contenders, workers) if r[0] not in skipped]
    raw: list[dict] = []
    kept: dict[tuple[str, int], Path] = {}
    for rnd in range(args.repeats):
        order = runs[rnd % len(runs) :] + runs[: rnd % len(runs)] if runs else []
        for name, w in order:
            out = args.workdir / f"out-{name}-{w or 0}-r{rnd}"
            remove(out)
            spec = dict(base_spec, contender=name, workers=w, out=str(out))
            python = {"datasets": args.competitor_python, "datatrove": args.competitor_python}.get(
                name, args.old_mintdim_python if name == "mintdim-0.1.3" else sys.executable
            )
            attempts = []
            for _attempt in range(1 + max(0, args.retries)):
                busy = (
                    wait_for_idle(args.wait_idle, args.idle_threshold) if args.wait_idle else None
                )
                load = loadavg()
                remove(out)
                result = run_contender(
                    python,
                    spec,
                    env=env_project if name in PROJECT else env_others,
                    sample_interval=args.sample_interval,
                    timeout=args.timeout,
                )
                result.update(
                    contender=name, workers=w, round=rnd, loadavg_before=load, busy_before=busy
                )
                attempts.append(result)
                if result.get("status") != "ok" or result["foreign_cpu_share"] <= args.max_others:
                    break
                if len(attempts) > args.retries:
                    break
                print(
                    f"  round {rnd + 1}/{args.repeats} {label(name, w, cores)}: other processes "
                    f"used {result['foreign_cpu_share']:.0%} of the CPU during the run; repeating",
                    file=sys.stderr,
                    flush=True,
                )
            # the cleanest attempt counts; the others are kept in the raw data
            result = min(attempts, key=lambda r: r.get("foreign_cpu_share", 0.0))
            result["discarded_attempts"] = [
                {k: a.get(k) for k in ("seconds", "foreign_cpu_share")}
                for a in attempts
                if a is not result
            ]
            raw.append(result)
            status = result.get("status")
            if status == "ok":
                rate = result["samples"] / result["seconds"]
                extra = f" [{result['variant']}]" if name == "ceiling" else ""
                if name.startswith("mintdim"):
                    extra = f" [mintdim {result.get('mintdim_revision', '?')}]"
                print(
                    f"  round {rnd + 1}/{args.repeats} {label(name, w, cores):44s} "
                    f"{result['seconds']:8.2f}s {rate:10,.0f} samples/s  "
                    f"peak RSS {result['peak_rss_kb'] / 1024:6.0f} MB  "
                    f"others' CPU {result['foreign_cpu_share']:4.0%}{extra}",
                    file=sys.stderr,
                    flush=True,
                )
            else:
                print(
                    f"  round {rnd + 1}/{args.repeats} {label(name, w, cores)}: {status}: "
                    f"{result.get('reason', '')[:600]}",
                    file=sys.stderr,
                    flush=True,
                )
                if status == "skipped":
                    skipped[name] = result.get("reason", "")
                    runs = [r for r in runs if r[0] != name]
            if name in ("mintdim", "mintdim-fast") and status == "ok" and rnd == args.repeats - 1:
                kept[name, w] = out
            else:
                remove(out)
    identity = None
    if len(kept) > 1 and not args.no_identity_check:
        # A fast-engine manifest adds its engine block, so manifests are compared only within
        # one engine; every other file must be identical across engines and worker counts.
        digests = {run: tree_digest(path) for run, path in kept.items()}
        first = next(iter(digests.values()))
        manifests = {(name, d.get("manifest.json")) for (name, _), d in digests.items()}
        identity = {
            "runs": [f"{name} workers={w}" for name, w in sorted(digests)],
            "identical": len(manifests) == len({name for name, _ in manifests})
            and all(
                {k: v for k, v in d.items() if k != "manifest.json"}
                == {k: v for k, v in first.items() if k != "manifest.json"}
                for d in digests.values()
            ),
            "files": len(first),
        }
    for path in kept.values():
        remove(path)
    return summarise(raw, skipped, input_bytes, identity, cores)


def summarise(
    raw: list[dict], skipped: dict[str, str], input_bytes: int, identity: dict | None, cores: int
) -> dict:
    """Medians per contender, the ceiling variant, ratios; the raw runs kept alongside."""
    ok = [r for r in raw if r.get("status") == "ok"]
    ceiling_runs = [r for r in ok if r["contender"] == "ceiling"]
    ceiling_variant, ceiling_by_round = None, {}
    if ceiling_runs:
        variants = ceiling_runs[0]["variants"].keys()
        medians = {
            v: statistics.median(r["variants"][v]["seconds"] for r in ceiling_runs)
            for v in variants
        }
        ceiling_variant = min(medians, key=medians.get)
        for r in ceiling_runs:
            r["seconds"] = r["variants"][ceiling_variant]["seconds"]
            r["cpu"] = r["variants"][ceiling_variant].get("cpu")
            r["tokens"] = r["variants"][ceiling_variant]["tokens"]
            ceiling_by_round[r["round"]] = r
    groups: dict[tuple[str, int | None], list[dict]] = {}
    for r in ok:
        groups.setdefault((r["contender"], r["workers"]), []).append(r)
    # Each round's run of every ceiling: a MintDim engine is paired with its own in each round.
    by_round = {(r["contender"], r["round"]): r for r in ok if r["contender"] in PROJECT[:2]}
    rows = []
    ceiling_rate = None
    if ceiling_runs:
        ceiling_rate = statistics.median(r["samples"] / r["seconds"] for r in ceiling_runs)
    reference_tokens = ceiling_runs[0]["tokens"] if ceiling_runs else None
    ceiling_cpu = None
    if ceiling_runs and all(r.get("cpu") is not None for r in ceiling_runs):
        ceiling_cpu = statistics.median(r["cpu"] / r["samples"] for r in ceiling_runs)
    for (name, w), runs in groups.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        samples, tokens = runs[0]["samples"], runs[0]["tokens"]
        rate = statistics.median(r["samples"] / r["seconds"] for r in runs)
        paired = [
            (r["samples"] / r["seconds"])
            / (ceiling_by_round[r["round"]]["samples"] / ceiling_by_round[r["round"]]["seconds"])
            for r in runs
            if r["round"] in ceiling_by_round
        ]
        own = OWN_CEILING.get(name)
        own_paired = [
            by_round[own, r["round"]]["seconds"] / r["seconds"]
            for r in runs
            if (own, r["round"]) in by_round
        ]
        own_runs = [r for r in ok if r["contender"] == own]
        cpu = None
        if all(r.get("cpu") is not None for r in runs):
            cpu = statistics.median(r["cpu"] / r["samples"] for r in runs)
        rows.append(
            {
                "cpu_ms_per_1k_samples": None if cpu is None else cpu * 1e6,
                "cores_busy": (
                    statistics.median(r["cpu"] / r["seconds"] for r in runs) if cpu else None
                ),
                "x_ceiling_cpu": ceiling_cpu / cpu if (cpu and ceiling_cpu) else None,
                "contender": name,
                "workers": w,
                "label": label(name, w, cores),
                "runs": len(runs),
                "median_seconds": seconds,
                "samples": samples,
                "tokens": tokens,
                "tokens_match_ceiling": None
                if reference_tokens is None
                else tokens == reference_tokens,
                "samples_per_s": rate,
                "tokens_per_s": tokens / seconds,
                "input_mb_per_s": input_bytes / 1e6 / seconds,
                "peak_rss_mb": max(r["peak_rss_kb"] for r in runs) / 1024,
                "tree_pss_mb": max((r["tree_pss_kb"] or 0) for r in runs) / 1024 or None,
                "x_ceiling": rate / ceiling_rate if ceiling_rate else None,
                "x_ceiling_paired": statistics.median(paired) if paired else None,
                "x_own_ceiling": (
                    statistics.median(r["seconds"] for r in own_runs) / seconds
                    if own_runs
                    else None
                ),
                "x_own_ceiling_paired": statistics.median(own_paired) if own_paired else None,
                "own_ceiling": own if own_runs else None,
                "loadavg": [r.get("loadavg_before") for r in runs],
                "seconds_all": [round(r["seconds"], 3) for r in runs],
                "foreign_cpu_share": statistics.median(r["foreign_cpu_share"] for r in runs),
            }
        )
    rows.sort(key=lambda row: (ORDER.index(row["contender"]), row["workers"] or 0))
    return {
        "rows": rows,
        "skipped": skipped,
        "ceiling_variant": ceiling_variant,
        "identity": identity,
        "input_bytes": input_bytes,
        "raw": raw,
    }


def render_table(summary: dict) -> str:
    """A Markdown table of the summary rows."""

    def fmt(value: float | None, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    head = (
        "| contender | samples/s | tokens/s | input MB/s | peak RSS MB | tree PSS MB "
        "| x ceiling | x ceiling (paired) | x own ceiling | x own ceiling (paired) |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    diag = [
        "",
        "| contender | runs (s) | others' CPU (median) | cores busy | CPU ms per 1k samples "
        "| x ceiling by CPU | load average before each run |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for row in summary["rows"]:
        mark = "" if row["tokens_match_ceiling"] in (None, True) else " (TOKENS DIFFER)"
        lines.append(
            f"| {row['label']}{mark} | {row['samples_per_s']:,.0f} | {row['tokens_per_s']:,.0f} "
            f"| {row['input_mb_per_s']:.2f} | {row['peak_rss_mb']:,.0f} "
            f"| {fmt(row['tree_pss_mb'], ',.0f')} | {fmt(row['x_ceiling'], '.3f')} "
            f"| {fmt(row['x_ceiling_paired'], '.3f')} | {fmt(row['x_own_ceiling'], '.3f')} "
            f"| {fmt(row['x_own_ceiling_paired'], '.3f')} |"
        )
        diag.append(
            f"| {row['label']} | {', '.join(map(str, row['seconds_all']))} "
            f"| {row['foreign_cpu_share']:.0%} | {fmt(row['cores_busy'], '.2f')} "
            f"| {fmt(row['cpu_ms_per_1k_samples'], ',.0f')} | {fmt(row['x_ceiling_cpu'], '.3f')} "
            f"| {', '.join(map(str, row['loadavg']))} |"
        )
    for name, reason in summary["skipped"].items():
        lines.append(f"| {name}: skipped: {reason} | | | | | | | | | |")
    return head + "\n".join(lines + diag) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Run every tokenizer's benchmark and print the tables."""
    args = parse_args(argv)
    args.template = args.template.replace("\\n", "\n").replace("\\t", "\t")
    args.workdir.mkdir(parents=True, exist_ok=True)
    fields = tuple(f for f in args.fields.split(",") if f)
    source = args.input or default_input()
    data = (
        cached(source, fields, args.samples, args.workdir, args.seed, args.dup_rate)
        if args.samples
        else source
    )
    warm_page_cache(data)
    tokenizers = args.tokenizer or default_tokenizers()
    info = machine()
    print(
        f"# MintDim throughput benchmark, {info['date']}\n"
        f"machine: {info['cpu']}, {info['cores']} cores, {info['memory']}, {info['os']}, "
        f"Python {info['python']}\n"
        f"command: python {' '.join(sys.argv)}\n"
        f"input: {data} ({data.stat().st_size / 1e6:.1f} MB, generated from {source})\n",
        flush=True,
    )
    report = {"machine": info, "argv": sys.argv, "input": str(data), "tokenizers": {}}
    for tok in tokenizers:
        print(f"## {tok.name} ({tokenizer_kind(tok)})", file=sys.stderr, flush=True)
        started = time.perf_counter()
        summary = benchmark_tokenizer(args, tok, data)
        report["tokenizers"][str(tok)] = summary
        rows = summary["rows"]
        samples = rows[0]["samples"] if rows else 0
        print(f"## {tok.name} ({tokenizer_kind(tok)}), {samples:,} samples, {args.repeats} rounds")
        print(f"ceiling variant: {summary['ceiling_variant']}")
        print(render_table(summary))
        revisions = sorted(
            {
                str(r.get("mintdim_revision"))
                for r in summary["raw"]
                if str(r.get("contender")).startswith("mintdim")
            }
            - {"None"}
        )
        if revisions:
            print(f"MintDim revision: {', '.join(revisions)}")
        if summary["identity"] is not None:
            ident = summary["identity"]
            verdict = "byte-identical" if ident["identical"] else "DIFFERENT"
            print(
                f"MintDim output of {', '.join(ident['runs'])}: {verdict} ({ident['files']} files)"
            )
        print(f"(took {time.perf_counter() - started:.0f}s)\n", flush=True)
        if args.json:
            args.json.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
