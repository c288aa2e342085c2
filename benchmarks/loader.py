"""The training loader against bare ``np.memmap`` slicing of the same shards, from the page cache.

    python benchmarks/loader.py                      # 100,000 samples, short and long, 15 rounds
    python benchmarks/loader.py --samples 50000 --tokens-per-batch 65536 --rounds 201 --passes 1

Two builds of the same generated Alpaca-form input (``generate.py``) with the bundled
SentencePiece demo model: *short* (template ``{instruction}``, units 16-256) and *long* (the
whole sample, units 128-8192). Every shard is read once before timing, so both sides read from
the page cache.

Per build, one epoch of ``build.loader(tokens_per_batch=...)`` is timed against the baseline a
user would write by hand: the *same batches* (same records, same order; worked out before timing
from the loader's sample ids and the unit indexes) sliced out of ``np.memmap`` views of the shard
files, one fancy index per shard a batch touches. Every timed loader epoch is one it has not
planned yet (``set_epoch`` to a new epoch), as in training, so its cost includes the epoch's plan;
the baseline gets that epoch's batches for free. Two pairs are timed:

* ``read``: the loader yielding its batches (input_ids, sample_ids, lengths) against the slices;
* ``+labels``: both sides also build int64 ``labels`` (PAD -> -100) and an int64
  ``attention_mask``, the loader through the batch's own properties, the baseline with the same
  numpy expressions written out;
* ``+packed`` (the ``packed`` build, whole samples packed into rows of 4096 and 8192): the loader
  also gives what packed attention and the loss total need, ``segment_ids``, ``position_ids``,
  ``cu_seqlens``, ``max_seqlen`` and ``loss_tokens``, against a plain read of the same rows
  (issue 34: at most 40 us a batch); its ``+labels`` pair times the labels as for the others.

The sides alternate within each round (the order flips every round); each timing covers
``--passes`` epochs. Per round: the loader's own cost per batch, (loader time - baseline time) /
batches, in microseconds (the target is at most 25), by the wall clock and by this thread's CPU
time (which a machine shared with other work disturbs less: time spent waiting for a core is not
counted), and the ratio loader/baseline wall time. The figures are the medians over rounds of
these paired values (take enough rounds), with tokens/s (record slots read per second) of each
side. Before timing, every epoch's loader batches are checked byte for byte against the slices.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Iterator
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
    "packed": ("{instruction}\n\n{input}\n\n{output}", [4096, 8192]),
}
"""Template and units of each build; ``packed`` packs whole samples into rows of its units."""


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
            .units(sizes=[sizes], build_batch=[4096], pack=case == "packed")
            .output.dir(str(out), samples_per_shard=[20000])
            .run(progress=False)
        )
    return out


def baseline_batches(out: Path, batches: list[tuple[int, np.ndarray]]) -> list:
    """Per batch, [(memmap of a shard, rows)]: the same records the loader gave, by hand (a
    packed batch: the rows holding its samples, each once, in order)."""
    manifest = json.loads((out / "manifest.json").read_text())
    dtype = np.dtype(manifest["token_storage"]["dtype"]).newbyteorder("<")
    per_shard = manifest["output"]["samples_per_shard"]
    packed = "pack" in manifest["units"]
    maps, places = {}, {}
    for size in manifest["units"]["sizes"]:
        if packed and (out / f"unit_{size}" / "row_offsets.npy").is_file():
            offsets = np.load(out / f"unit_{size}" / "row_offsets.npy")
            ids = np.load(out / f"unit_{size}" / "row_samples.npy")["sample_id"]
            rows = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
            places[size] = dict(zip(ids.tolist(), rows.tolist(), strict=True))
        elif not packed and (out / f"unit_{size}" / "index.npy").is_file():
            ids = np.load(out / f"unit_{size}" / "index.npy")["sample_id"]
            places[size] = dict(zip(ids.tolist(), range(ids.size), strict=True))
    for shard in manifest["shards"]:
        records = shard.get("rows", shard["samples"])
        maps[shard["path"]] = np.memmap(
            out / shard["path"], dtype=dtype, mode="r", shape=(records, shard["unit_size"])
        )
    plan = []
    for size, sample_ids in batches:
        positions = np.array([places[size][i] for i in sample_ids.tolist()])
        if packed:
            positions = positions[np.r_[True, positions[1:] != positions[:-1]]]
        shards, rows = np.divmod(positions, per_shard)
        plan.append(
            [
                (maps[f"unit_{size}/shard_{s:06d}.bin"], rows[shards == s])
                for s in np.unique(shards).tolist()
            ]
        )
    return plan


def by_hand(plan: list, lengths: list[np.ndarray], labels: bool) -> Iterator[np.ndarray]:
    """Each batch's input_ids, sliced by hand (and its labels and mask built, when asked)."""
    for groups, length in zip(plan, lengths, strict=True):
        parts = [mapped[rows] for mapped, rows in groups]
        ids = parts[0] if len(parts) == 1 else np.concatenate(parts)
        if labels:
            keep = np.arange(ids.shape[1]) < length[:, None]
            target = ids.astype(np.int64)
            target[~keep] = -100
            keep.astype(np.int64)
        yield ids


def with_loader(loader: mintdim.UnitLoader, labels: bool | str) -> Iterator[np.ndarray]:
    """Each batch's input_ids from the loader (and its labels and mask, when asked; with
    ``"packed"``: labels and every array packed training uses)."""
    for batch in loader:
        if labels is True:
            batch.labels  # noqa: B018 - computing them is what is timed
            batch.attention_mask  # noqa: B018
        if labels == "packed":
            batch.segment_ids, batch.position_ids, batch.cu_seqlens  # noqa: B018
            batch.max_seqlen, batch.loss_tokens  # noqa: B018
        yield batch.input_ids


def quartiles(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles: how far single rounds scatter around the median."""
    cuts = statistics.quantiles(values, n=4)
    return cuts[0], cuts[2]


def measure(out: Path, tokens_per_batch: int, rounds: int, passes: int) -> dict:
    for shard in out.glob("unit_*/*"):
        warm_page_cache(shard)
    loader = mintdim.open_build(out).loader(tokens_per_batch=tokens_per_batch)
    # Timings cycle through passes + 1 epochs, so the timed loader never starts a timing in the
    # epoch it already holds: it plans every epoch it reads. The baseline's batches of each
    # come from a second loader, before timing.
    guide = mintdim.open_build(out).loader(tokens_per_batch=tokens_per_batch)
    pool = range(1, passes + 2)
    epochs = {}
    for epoch in pool:
        guide.set_epoch(epoch)
        batches = list(guide)
        epochs[epoch] = (
            baseline_batches(out, [(b.unit_size, b.sample_ids) for b in batches]),
            [b.lengths for b in batches],
        )
        by_hands = by_hand(*epochs[epoch], labels=False)
        assert all(np.array_equal(a.input_ids, b) for a, b in zip(batches, by_hands, strict=True))
    count = len(guide)
    results = {}
    timed = itertools.cycle(pool)
    modes = (False, True, "packed") if loader.builds[0].packed else (False, True)
    for labels in modes:
        # Per side: wall seconds and this thread's CPU seconds of every timing.
        times: dict[str, list[tuple[float, float]]] = {"loader": [], "memmap": []}
        for number in range(rounds):
            round_epochs = [next(timed) for _ in range(passes)]
            sides = ["loader", "memmap"] if number % 2 == 0 else ["memmap", "loader"]
            for side in sides:
                slots = 0
                started, cpu = time.perf_counter(), time.thread_time()
                for epoch in round_epochs:
                    if side == "loader":
                        loader.set_epoch(epoch)
                        batches = with_loader(loader, labels)
                    else:  # "packed" is timed against a plain read of the same rows
                        batches = by_hand(*epochs[epoch], labels is True)
                    slots += sum(ids.size for ids in batches)
                times[side].append((time.perf_counter() - started, time.thread_time() - cpu))
        pairs = list(zip(times["loader"], times["memmap"], strict=True))
        own = {
            clock: [(a[i] - b[i]) / (count * passes) * 1e6 for a, b in pairs]
            for i, clock in enumerate(("wall", "cpu"))
        }
        results[{False: "read", True: "+labels", "packed": "+packed"}[labels]] = {
            "loader_tokens_per_s": slots / statistics.median(a[0] for a, _ in pairs),
            "memmap_tokens_per_s": slots / statistics.median(b[0] for _, b in pairs),
            "ratio_median": statistics.median(a[0] / b[0] for a, b in pairs),
            **{
                f"own_{clock}_us_per_batch_median": statistics.median(v) for clock, v in own.items()
            },
            **{f"own_{clock}_us_per_batch_quartiles": quartiles(v) for clock, v in own.items()},
            **{f"own_{clock}_us_per_batch": [round(u, 1) for u in v] for clock, v in own.items()},
        }
    # The plan alone, for the record: part of the loader's time above.
    plans = []
    for _ in range(rounds):
        loader.set_epoch(next(timed))
        started = time.perf_counter()
        len(loader)
        plans.append(time.perf_counter() - started)
    return {
        "batches": count,
        "slots": slots // passes,
        "plan_seconds_median": statistics.median(plans),
        **results,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--tokens-per-batch", type=int, default=16384)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--passes", type=int, default=3, help="epochs per timing (steadier figures)"
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
        plan_us = result["plan_seconds_median"] / result["batches"] * 1e6
        print(
            f"{case:5s} {result['batches']:6d} batches an epoch, {result['slots'] / 1e6:.1f}M "
            f"slots; the epoch's plan alone {result['plan_seconds_median'] * 1e3:.2f} ms "
            f"({plan_us:.1f} us a batch), median"
        )
        for pair in ("read", "+labels", "+packed"):
            if pair not in result:
                continue
            figures = result[pair]
            print(
                f"  {pair:8s} loader {figures['loader_tokens_per_s'] / 1e6:8.1f}M tok/s   "
                f"memmap {figures['memmap_tokens_per_s'] / 1e6:8.1f}M tok/s   "
                f"loader/memmap time {figures['ratio_median']:.3f}"
            )
            for clock in ("wall", "cpu"):
                low, high = figures[f"own_{clock}_us_per_batch_quartiles"]
                print(
                    f"           loader's own cost a batch, {clock:4s} "
                    f"{figures[f'own_{clock}_us_per_batch_median']:+7.1f} us "
                    f"(median of {args.rounds} paired rounds; quartiles {low:+.1f}, {high:+.1f})"
                )
    report["load_after"] = loadavg()
    print(json.dumps(report["machine"]), f"load {report['load_before']} -> {report['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
