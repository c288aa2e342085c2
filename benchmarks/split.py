"""Leakage-free splits at scale: grouping with near-duplicates, its growth, the sketch library,
and split's copy speed.

    python benchmarks/split.py                                  # 100k and 1M samples, 2 workers
    python benchmarks/split.py --samples 100000 --skip-copy     # a quick look

Run by hand, never in CI. What it measures, and how:

* **the corpus**: seeded, reproducible short samples (350-650 characters, about 500 on average:
  1M samples are about 500 MB of text) of words drawn with Zipf weights from the vocabulary of
  the bundled demo files, with related samples injected at a fixed rate whatever the size: 5%
  near copies of an earlier sample (one to three words replaced), 2% exact copies, 1% an earlier
  sample inside a longer one. A smaller size is a prefix of a larger one (each related sample
  copies an earlier one), so "10x the samples" is the same data, ten times as much. Each size is
  built once with the demo SentencePiece model (not measured: the input of what is measured).
* **grouping** (``mintdim.group`` with near-duplicates, ``--workers``): each size in a fresh
  child process; wall time, and the exact peak RSS of the child and every worker it reaped
  (``os.wait4``: the largest single process), and the CPU seconds of the child and its
  workers (less disturbed than wall time when other work shares the machine). Targets: 1M samples in 5 minutes and 4 GB on 2
  cores; growth 100k -> 1M near-linear (time per sample within 25%).
* **the sketch library**: on the first ``--sketch-samples`` samples, this project's numpy
  one-permutation MinHash with LSH bands (``mintdim.split.near``) against datasketch's
  ``MinHash`` + ``MinHashLSH`` with the same signature size and bands (40 values, 8 bands of
  5) over the same significant 5-grams, in alternating rounds (medians): seconds to the
  candidate pairs, and recall: the share of the injected near copies and containments meeting
  the near-duplicate rule (compared exactly) that are candidates.
* **formats** (``--formats``): the smallest size stored again as ``.jsonl.zst`` and ``.parquet``
  (the same records), each built once; then ``mintdim.group`` of the three builds, each in a
  fresh child, in alternating rounds (each format first in turn): medians, and the paired ratios
  of each format to plain JSONL (issue 32's bound: 1.2). Grouping re-reads every record through
  the build's own source, so the difference is decompressing or decoding the input again.
* **copying**: ``mintdim.split`` of the largest build against a plain ``shutil.copytree`` of
  the same build, alternating rounds (medians, the paired ratio); split's own record copy
  (``write_builds``: every shard read, checked against its digest and written again) is timed
  beside it in the same rounds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import machine, mintdim_env, remove  # noqa: E402
from generate import demo_dir  # noqa: E402

GOAL_SECONDS = 300
GOAL_BYTES = 4 << 30
GOAL_LINEARITY = 0.25
NEAR_RATE, EXACT_RATE, CONTAINED_RATE = 0.05, 0.02, 0.01


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", default="100000,1000000", help="sizes, comma-separated")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sketch-samples", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of each comparison")
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--out", type=Path, default=Path("/tmp/mintdim-split-bench"))
    p.add_argument("--skip-copy", action="store_true")
    p.add_argument(
        "--skip-group", action="store_true", help="reuse the groups of an earlier run (copy only)"
    )
    p.add_argument("--skip-sketch", action="store_true")
    p.add_argument(
        "--formats", action="store_true", help="also group the smallest size from zst and Parquet"
    )
    p.add_argument("--json", type=Path, default=None, help="also write the results here")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------


def vocabulary() -> tuple[list[str], list[float]]:
    """The words of the bundled demo files, most frequent first, with cumulative Zipf weights."""
    counts: dict[str, int] = {}
    for path in sorted(demo_dir().glob("*.jsonl")):
        for line in path.open(encoding="utf-8"):
            for value in json.loads(line).values():
                if isinstance(value, str):
                    for word in re.findall(r"[A-Za-z]+", value):
                        counts[word.lower()] = counts.get(word.lower(), 0) + 1
    words = sorted(counts, key=lambda w: (-counts[w], w))
    cumulative = list(itertools.accumulate(1 / (rank + 1) ** 1.1 for rank in range(len(words))))
    return words, cumulative


def corpus(path: Path, samples: int, seed: int) -> Path:
    """Write (once) ``samples`` lines ``{"id": i, "text": ...}``; returns the path."""
    if path.is_file() and path.with_suffix(".done").is_file():
        return path
    words, cumulative = vocabulary()
    rng = random.Random(seed)
    texts: list[str] = []
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(samples):
            draw, of, kind = rng.random(), rng.randrange(max(i, 1)), None
            if texts and draw < NEAR_RATE:
                parts = texts[of].split(" ")
                for _ in range(rng.randint(1, 3)):
                    parts[rng.randrange(len(parts))] = rng.choices(words, cum_weights=cumulative)[0]
                text, kind = " ".join(parts), "near"
            elif texts and draw < NEAR_RATE + EXACT_RATE:
                text, kind = texts[of], "exact"
            elif texts and draw < NEAR_RATE + EXACT_RATE + CONTAINED_RATE:
                text = texts[of] + " " + _sentence(rng, words, cumulative, 80)
                kind = "contained"
            else:
                text = _sentence(rng, words, cumulative, rng.randint(350, 650))
            texts.append(text)
            related = {"of": of, "kind": kind} if kind else {}
            out.write(json.dumps({"id": i, "text": text, **related}) + "\n")
    path.with_suffix(".done").touch()
    return path


def _sentence(rng: random.Random, words: list[str], cumulative: list[float], length: int) -> str:
    chosen: list[str] = []
    size = 0
    while size < length:
        batch = rng.choices(words, cum_weights=cumulative, k=16)
        chosen += batch
        size += sum(len(w) + 1 for w in batch)
    text = " ".join(chosen)[:length]
    return text[:1].upper() + text[1:] + "."


def prefix(source: Path, target: Path, samples: int) -> Path:
    """The first ``samples`` lines of ``source`` (the same data, fewer of it)."""
    if not target.is_file():
        with open(source, encoding="utf-8") as lines, open(target, "w", encoding="utf-8") as out:
            out.writelines(itertools.islice(lines, samples))
    return target


def build(data: Path, out: Path, workers: int) -> float:
    """Build ``data`` once (not measured); seconds it took."""
    if (out / "manifest.json").is_file():
        return 0.0
    remove(out)
    from mintdim import pipeline

    start = time.perf_counter()
    source = pipeline("unit-build").source
    read = source.parquet if data.suffix == ".parquet" else source.jsonl
    (
        read(files=[str(data)], fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece([{"path": str(demo_dir() / "demo_unigram.model")}])
        .units(sizes=[[64, 96, 128, 160, 192, 256, 384, 512, 1024]], build_batch=[4096])
        .output.dir(str(out), samples_per_shard=[100000])
        .run(workers=workers, progress=False, on_overflow="extend")
    )
    return time.perf_counter() - start


# ---------------------------------------------------------------------------
# Grouping in a child process
# ---------------------------------------------------------------------------

_GROUP_CHILD = """
import json, sys, time
import mintdim
start = time.perf_counter()
result = mintdim.group(sys.argv[1], sys.argv[2], workers=int(sys.argv[3]))
print(json.dumps({"seconds": time.perf_counter() - start, "groups": result.groups,
                  "edges": result.edges, "near": result.report["near_duplicates"]}))
"""


def group_in_child(build_dir: Path, out: Path, workers: int) -> dict:
    """``mintdim.group`` in a fresh process: its report, and the exact peak RSS (``wait4``)."""
    remove(out)
    process = subprocess.Popen(
        [sys.executable, "-c", _GROUP_CHILD, str(build_dir), str(out), str(workers)],
        stdout=subprocess.PIPE,
        env=mintdim_env(),
    )
    stdout = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"grouping failed ({process.returncode})")
    found = json.loads(stdout.decode().strip().splitlines()[-1])
    found["peak_rss_bytes"] = usage.ru_maxrss * 1024
    # CPU of the child and the workers it reaped: on a shared machine, less disturbed by
    # others than the wall time.
    found["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    found["loadavg_after"] = os.getloadavg()
    return found


def stored_as(data: Path, suffix: str) -> Path:
    """The records of ``data`` (JSONL) stored again as ``.jsonl.zst`` or ``.parquet`` (once)."""
    target = data.with_name(data.stem + suffix)
    if target.is_file():
        return target
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        with open(data, encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines]
        # Every record has every key, as in the JSONL (Parquet has no absent field, only null).
        for row in rows:
            row.setdefault("of", None)
            row.setdefault("kind", None)
        pq.write_table(pa.Table.from_pylist(rows), target)
    else:
        import zstandard

        with open(data, "rb") as source, open(target, "wb") as out:
            zstandard.ZstdCompressor().copy_stream(source, out)
    return target


def format_comparison(data: Path, work: Path, workers: int, rounds: int) -> dict:
    """Grouping the same records built from JSONL, zstandard JSONL and Parquet, alternating."""
    builds = {".jsonl": work / "format-jsonl"}
    build(data, builds[".jsonl"], workers)
    for suffix in (".jsonl.zst", ".parquet"):
        builds[suffix] = work / f"format-{suffix.strip('.').replace('.', '-')}"
        build(stored_as(data, suffix), builds[suffix], workers)
    taken: dict[str, list[dict]] = {suffix: [] for suffix in builds}
    order = list(builds)
    for round_ in range(rounds):
        for suffix in order[round_ % len(order) :] + order[: round_ % len(order)]:
            taken[suffix].append(group_in_child(builds[suffix], work / "format-groups", workers))
        print(json.dumps({s: taken[s][-1]["seconds"] for s in order}), flush=True)
    found = {
        suffix: {
            "seconds": statistics.median(r["seconds"] for r in runs),
            "cpu_seconds": statistics.median(r["cpu_seconds"] for r in runs),
            "groups": runs[0]["groups"],
        }
        for suffix, runs in taken.items()
    }
    for suffix in (".jsonl.zst", ".parquet"):
        pairs = zip(taken[suffix], taken[".jsonl"], strict=True)
        found[suffix]["x_jsonl_paired"] = statistics.median(
            a["seconds"] / b["seconds"] for a, b in pairs
        )
    if len({entry["groups"] for entry in found.values()}) != 1:
        raise SystemExit(f"the formats gave different groups: {found}")
    return found


# ---------------------------------------------------------------------------
# numpy MinHash bands against datasketch
# ---------------------------------------------------------------------------


def sketch_comparison(data: Path, count: int, rounds: int) -> dict:
    """Seconds to candidate pairs and recall of the rule's pairs, numpy against datasketch."""
    from mintdim.split.near import NearSettings, candidates, coverage, prepare

    with open(data, encoding="utf-8") as lines:
        rows = [json.loads(line) for line in itertools.islice(lines, count)]
    texts = [row["text"] for row in rows]
    settings = NearSettings()
    truth = _true_pairs(rows, settings, coverage)

    def numpy_run() -> set[tuple[int, int]]:
        prepared = prepare(texts, settings)
        stats: dict[str, int] = {}
        lo, hi, _ = candidates(prepared.keys, settings, stats)
        ids = prepared.eligible.tolist()
        return {(ids[a], ids[b]) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)}

    def datasketch_run() -> set[tuple[int, int]]:
        from datasketch import MinHash, MinHashLSH

        from mintdim.split.text import significant

        # The same signature size and banding as mintdim's: 40 values, 8 bands of 5.
        size, bands = settings.sketch_size, settings.bands
        lsh = MinHashLSH(num_perm=size, params=(bands, settings.band_rows))
        found = set()
        for i, text in enumerate(texts):
            reduced = significant(text)
            if len(reduced) < settings.min_chars:
                continue
            sketch = MinHash(num_perm=size)
            sketch.update_batch([reduced[k : k + 5].encode() for k in range(len(reduced) - 4)])
            found |= {(j, i) for j in lsh.query(sketch)}
            lsh.insert(i, sketch)
        return found

    contenders = {"numpy OPH MinHash + bands (mintdim)": numpy_run}
    try:  # not a project dependency: the comparison needs it installed beside mintdim
        import datasketch  # noqa: F401

        contenders["datasketch MinHash + LSH"] = datasketch_run
    except ImportError:
        print("datasketch is not installed: only numpy's sketches are timed", file=sys.stderr)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    recall: dict[str, float] = {}
    for turn in range(rounds):
        for name in list(contenders)[turn % 2 :] + list(contenders)[: turn % 2]:
            start = time.perf_counter()
            found = contenders[name]()
            times[name].append(time.perf_counter() - start)
            recall[name] = len(truth & found) / len(truth) if truth else 1.0
    return {
        "samples": len(texts),
        "rule_pairs": len(truth),
        "contenders": {
            name: {"seconds": statistics.median(times[name]), "recall": recall[name]}
            for name in contenders
        },
    }


def _true_pairs(rows: list[dict], settings, coverage) -> set[tuple[int, int]]:
    """The injected near copies and containments (a sample and the earlier one it was made
    from) that meet the rule, compared exactly."""
    from mintdim.split.text import significant

    pairs = set()
    for i, row in enumerate(rows):
        if row.get("kind") not in ("near", "contained"):
            continue
        a, b = row["of"], i
        texts = significant(rows[a]["text"]), significant(rows[b]["text"])
        short, other = sorted(zip((a, b), texts, strict=True), key=lambda p: (len(p[1]), p[0]))
        if len(short[1]) < settings.min_chars:
            continue
        distinct, common = coverage(short[1], other[1])
        if distinct >= settings.min_distinct and common / distinct >= settings.coverage:
            pairs.add((a, b))
    return pairs


# ---------------------------------------------------------------------------
# Copying
# ---------------------------------------------------------------------------


def copy_comparison(build_dir: Path, groups: Path, work: Path, rounds: int) -> dict:
    """``mintdim.split`` and its record copy against ``shutil.copytree`` of the build."""
    import numpy as np

    import mintdim
    from mintdim.split.samples import read_build
    from mintdim.split.write import write_builds

    samples = read_build(build_dir)
    split_of = np.random.default_rng(0).choice(3, p=[0.98, 0.01, 0.01], size=samples.count)

    def plain_copy() -> None:
        shutil.copytree(build_dir, work / "copy")

    def durable_copy() -> None:
        # What a split must do too before its manifest: every byte on disk, not in the cache.
        shutil.copytree(build_dir, work / "copy")
        for path in (work / "copy").rglob("*"):
            descriptor = os.open(path, os.O_RDONLY)
            os.fsync(descriptor)
            os.close(descriptor)

    def record_copy() -> None:
        (work / "records").mkdir()
        write_builds(samples, split_of, work / "records", {"benchmark": True})

    def whole_split() -> None:
        mintdim.split(
            build_dir,
            groups,
            work / "split",
            seed=1,
            ratios={"train": 0.98, "validation": 0.01, "test": 0.01},
        )

    contenders = {
        "plain copy (shutil.copytree)": plain_copy,
        "plain copy, then fsync": durable_copy,
        "split's record copy": record_copy,
        "mintdim.split": whole_split,
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for turn in range(rounds):
        order = list(contenders)
        order = order[turn % len(order) :] + order[: turn % len(order)]
        for name in order:
            for folder in ("copy", "records", "split"):
                remove(work / folder)
            start = time.perf_counter()
            contenders[name]()
            times[name].append(time.perf_counter() - start)
    for folder in ("copy", "records", "split"):
        remove(work / folder)
    base = statistics.median(times["plain copy (shutil.copytree)"])
    size = sum(p.stat().st_size for p in build_dir.rglob("*") if p.is_file())
    return {
        "build_bytes": size,
        "contenders": {
            name: {
                "seconds": statistics.median(values),
                "mb_per_second": size / statistics.median(values) / 1e6,
                "ratio_to_plain_copy": statistics.median(values) / base,
            }
            for name, values in times.items()
        },
    }


def main(argv: list[str] | None = None) -> None:
    """Run every measurement and print the report (JSON)."""
    args = parse_args(argv)
    sizes = sorted(int(s) for s in args.samples.split(","))
    work = args.out
    work.mkdir(parents=True, exist_ok=True)
    results: dict = {"machine": machine(), "command": " ".join(sys.argv), "sizes": {}}
    largest = corpus(work / f"corpus-{sizes[-1]}.jsonl", sizes[-1], args.seed)
    for size in sizes:
        data = (
            largest if size == sizes[-1] else prefix(largest, work / f"corpus-{size}.jsonl", size)
        )
        built = work / f"build-{size}"
        seconds = build(data, built, args.workers)
        if args.skip_group:
            continue
        grouped = group_in_child(built, work / f"groups-{size}", args.workers)
        grouped["build_seconds"] = seconds
        grouped["text_bytes"] = data.stat().st_size
        results["sizes"][size] = grouped
        print(json.dumps({size: grouped}, indent=1), flush=True)
    if len(results["sizes"]) > 1:
        small, large = results["sizes"][sizes[0]], results["sizes"][sizes[-1]]
        per = [results["sizes"][s]["seconds"] / s for s in (sizes[0], sizes[-1])]
        results["growth"] = {
            "seconds_per_sample": per,
            "time_ratio_per_sample": per[1] / per[0],
            "peak_rss_growth_bytes_per_sample": (large["peak_rss_bytes"] - small["peak_rss_bytes"])
            / (sizes[-1] - sizes[0]),
        }
    big = results["sizes"].get(sizes[-1])
    if big is not None:
        results["targets"] = {
            "seconds": big["seconds"] <= GOAL_SECONDS,
            "peak_rss": big["peak_rss_bytes"] <= GOAL_BYTES,
            "near_linear": "growth" not in results
            or abs(results["growth"]["time_ratio_per_sample"] - 1) <= GOAL_LINEARITY,
        }
    if not args.skip_sketch:
        results["sketch"] = sketch_comparison(largest, args.sketch_samples, args.rounds)
        print(json.dumps(results["sketch"], indent=1), flush=True)
    if args.formats:
        data = largest if len(sizes) == 1 else work / f"corpus-{sizes[0]}.jsonl"
        results["formats"] = format_comparison(data, work, args.workers, args.rounds)
        print(json.dumps(results["formats"], indent=1), flush=True)
    if not args.skip_copy:
        results["copy"] = copy_comparison(
            work / f"build-{sizes[-1]}", work / f"groups-{sizes[-1]}", work, args.rounds
        )
        print(json.dumps(results["copy"], indent=1), flush=True)
    print(json.dumps(results, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
