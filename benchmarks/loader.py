"""The training loader against bare ``np.memmap`` slicing of the same shards, from the page cache.

    python benchmarks/loader.py                      # 100,000 samples, short and long, 7 rounds
    python benchmarks/loader.py --samples 300000 --tokens-per-batch 32768 --rounds 9

Two builds of the same generated Alpaca-form input (``generate.py``) with the bundled
SentencePiece demo model: *short* (template ``{instruction}``, units 16-256) and *long* (the
whole sample, units 128-8192). Every shard is read once before timing, so both sides read from
the page cache.

Per build, one epoch of ``build.loader(tokens_per_batch=...)`` is timed against the baseline a
user would write by hand: the *same batches* (same records, same order; worked out before timing
from the loader's sample ids and the unit indexes) sliced out of ``np.memmap`` views of the shard
files, one fancy index per shard a batch touches. Two pairs are timed:

* ``read``: the loader yielding its batches (input_ids, sample_ids, lengths) against the slices;
* ``+labels``: both sides also build int64 ``labels`` (PAD -> -100) and an int64
  ``attention_mask``, the loader through the batch's own properties, the baseline with the same
  numpy expressions written out.

The sides alternate within each round (the order flips every round); each timing covers
``--passes`` epochs, and the figures are medians over rounds: tokens/s (record slots read per second) of each side and the median of the
per-round ratios loader/baseline time (1.00 = as fast as the bare slicing; the target is <= 1.10).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _harness import REPO_ROOT, loadavg, machine, warm_page_cache  # noqa: E402
from generate import cached, default_input  # noqa: E402

sys.path.insert(0, str(REPO_ROOT))
import mintdim  # noqa: E402

CASES = {
    "short": ("{instruction}", [16, 32, 48, 64, 96, 128, 256, 512]),
    "long": (
        "{instruction}\n\n{input}\n\n{output}",
        [128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192],
    ),
}


def build(case: str, source: Path, tokenizer: Path, workdir: Path) -> Path:
    """Build ``case`` once per input file (kept in ``workdir``)."""
    template, sizes = CASES[case]
    fields = [name for name in ("instruction", "input", "output") if f"{{{name}}}" in template]
    out = workdir / f"loader-{case}-{source.stem}"
    if not (out / "manifest.json").is_file():
        (
            mintdim.pipeline("unit-build")
            .source.jsonl(files=[str(source)], fields=[fields], templates=[template])
            .tokenizer.sentencepiece({"path": str(tokenizer)})
            .units(sizes=[sizes], build_batch=[4096])
            .output.dir(str(out), samples_per_shard=[20000])
            .run(progress=False)
        )
    return out


def baseline_batches(out: Path, batches: list[tuple[int, np.ndarray]]) -> list:
    """Per batch, [(memmap of a shard, rows)]: the same records the loader gave, by hand."""
    manifest = json.loads((out / "manifest.json").read_text())
    dtype = np.dtype(manifest["token_storage"]["dtype"]).newbyteorder("<")
    per_shard = manifest["output"]["samples_per_shard"]
    maps, places = {}, {}
    for size in manifest["units"]["sizes"]:
        index = out / f"unit_{size}" / "index.npy"
        if index.is_file():
            ids = np.load(index)["sample_id"]
            places[size] = dict(zip(ids.tolist(), range(ids.size), strict=True))
    for shard in manifest["shards"]:
        maps[shard["path"]] = np.memmap(
            out / shard["path"], dtype=dtype, mode="r", shape=(shard["samples"], shard["unit_size"])
        )
    plan = []
    for size, sample_ids in batches:
        positions = np.array([places[size][i] for i in sample_ids.tolist()])
        shards, rows = np.divmod(positions, per_shard)
        plan.append(
            [
                (maps[f"unit_{size}/shard_{s:06d}.bin"], rows[shards == s])
                for s in np.unique(shards).tolist()
            ]
        )
    return plan


def by_hand(plan: list, lengths: list[np.ndarray], labels: bool) -> int:
    slots = 0
    for groups, length in zip(plan, lengths, strict=True):
        parts = [mapped[rows] for mapped, rows in groups]
        ids = parts[0] if len(parts) == 1 else np.concatenate(parts)
        if labels:
            keep = np.arange(ids.shape[1]) < length[:, None]
            target = ids.astype(np.int64)
            target[~keep] = -100
            keep.astype(np.int64)
        slots += ids.size
    return slots


def with_loader(loader: mintdim.UnitLoader, labels: bool) -> int:
    slots = 0
    loader.position = 0  # the same epoch again: a finished epoch yields nothing
    for batch in loader:
        if labels:
            batch.labels  # noqa: B018 - computing them is what is timed
            batch.attention_mask  # noqa: B018
        slots += batch.input_ids.size
    return slots


def measure(out: Path, tokens_per_batch: int, rounds: int, passes: int) -> dict:
    for shard in out.glob("unit_*/*"):
        warm_page_cache(shard)
    loader = mintdim.open_build(out).loader(tokens_per_batch=tokens_per_batch)
    started = time.perf_counter()
    count = len(loader)  # the epoch's plan
    plan_seconds = time.perf_counter() - started
    epoch = list(loader)
    batches = [(b.unit_size, b.sample_ids) for b in epoch]
    lengths = [b.lengths for b in epoch]
    plan = baseline_batches(out, batches)
    results = {}
    for labels in (False, True):
        times: dict[str, list[float]] = {"loader": [], "memmap": []}
        for number in range(rounds):
            sides = ["loader", "memmap"] if number % 2 == 0 else ["memmap", "loader"]
            for side in sides:
                started = time.perf_counter()
                for _ in range(passes):
                    if side == "loader":
                        slots = with_loader(loader, labels)
                    else:
                        slots = by_hand(plan, lengths, labels)
                times[side].append((time.perf_counter() - started) / passes)
        ratios = [a / b for a, b in zip(times["loader"], times["memmap"], strict=True)]
        results["+labels" if labels else "read"] = {
            "loader_tokens_per_s": slots / statistics.median(times["loader"]),
            "memmap_tokens_per_s": slots / statistics.median(times["memmap"]),
            "ratio_median": statistics.median(ratios),
            "ratios": [round(r, 3) for r in ratios],
        }
    return {"batches": count, "slots": slots, "plan_seconds": plan_seconds, **results}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--tokens-per-batch", type=int, default=16384)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--passes", type=int, default=5, help="epochs per timing (steadier figures)"
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    tokenizer = next((REPO_ROOT / "mintdim" / "demo").glob("*.model"))
    source = cached(default_input(), ("instruction", "input", "output"), args.samples, args.workdir)
    report = {"machine": machine(), "load_before": loadavg(), "args": vars(args) | {}}
    report["args"]["workdir"] = str(args.workdir)
    report["args"].pop("json")
    for case in CASES:
        out = build(case, source, tokenizer, args.workdir)
        result = measure(out, args.tokens_per_batch, args.rounds, args.passes)
        report[case] = result
        print(
            f"{case:5s} {result['batches']:6d} batches, {result['slots'] / 1e6:.1f}M slots "
            f"(plan {result['plan_seconds'] * 1e3:.0f} ms)"
        )
        for pair in ("read", "+labels"):
            figures = result[pair]
            print(
                f"  {pair:8s} loader {figures['loader_tokens_per_s'] / 1e6:8.1f}M tok/s   "
                f"memmap {figures['memmap_tokens_per_s'] / 1e6:8.1f}M tok/s   "
                f"loader/memmap time {figures['ratio_median']:.3f} (rounds {figures['ratios']})"
            )
    report["load_after"] = loadavg()
    print(json.dumps(report["machine"]), f"load {report['load_before']} -> {report['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
