"""What one core does: each tokenizer's encoding beside JSON parsing, SHA-256 and MintDim's own work.

    python benchmarks/per_core.py                               # the bundled demo tokenizers
    python benchmarks/per_core.py --tokenizer a.tokenizer.json --tokenizer b.model

Run by hand, never in CI. These are the bounds behind benchmarks/throughput.py: a build can
run no faster than its tokenizer on the same cores, and a tool that tokenizes with the same
library can trail it only by what it spends outside the tokenizer. The texts are the generated
benchmark input rendered with the default template; every figure is CPU time of one thread
(tokenizer thread pools off), the median of ``--repeats`` passes, in MB of UTF-8 text per second.

"MintDim's own work" is what a worker spends per sample beyond the library call: a worker's whole
batch (parse, render, hash, encode, assign, pad, index fragments) against the bare library call on
the same batch's texts, timed alternately batch by batch, ``--repeats`` times over. Whole-run
comparisons cannot resolve a few percent on a shared VM, whose speed drifts by tens of percent
within seconds; alternating batch by batch exposes both sides to the same drift.

"The bound" is the highest ratio to the ceiling that any build could reach on these cores, from
what every sample must cost beside the library call, whatever the tool: parsing its JSONL line
(orjson, the fastest of one call per line and one per batch), the SHA-256 its sample_index line
and the duplicate index need, and, for tokenizer.json, taking its ids out of the library's
``Encoding`` (the ceiling only asks for their count). It leaves out rendering, padding and
writing, so a real build stays below it: a target above the bound cannot be met on this machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _contenders import _chunks, _render_all, load_library_tokenizer  # noqa: E402
from _harness import DEFAULT_TEMPLATE, default_tokenizers, machine, tokenizer_kind  # noqa: E402
from generate import DEFAULT_FIELDS, cached, default_input  # noqa: E402

from mintdim import TemplateLiteralWarning, pipeline  # noqa: E402
from mintdim.pipelines.unit_build.batch import BatchEncoder  # noqa: E402
from mintdim.pipelines.unit_build.source.jsonl import read_raw_batches  # noqa: E402
from mintdim.pipelines.unit_build.validate import validate  # noqa: E402

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one thread: the figure is per core


def _encoder(path: Path) -> Callable[[list[str]], int]:
    """The library's fastest single-threaded batch call; returns the token count."""
    kind = tokenizer_kind(path)
    tok = load_library_tokenizer(kind, str(path))
    if kind == "sentencepiece":
        return lambda texts: sum(map(len, tok.encode(texts, num_threads=1, return_type="numpy")))
    return lambda texts: sum(map(len, tok.encode_batch_fast(texts, add_special_tokens=False)))


def _worker(
    path: Path, options: dict, source: Path, batch: int, workdir: Path
) -> tuple[BatchEncoder, list]:
    """A worker's batch encoder for this tokenizer, and the raw batches of ``source``."""
    kind = tokenizer_kind(path)
    job = pipeline("unit-build").source.jsonl(
        files=[str(source)], fields=[list(DEFAULT_FIELDS)], templates=[DEFAULT_TEMPLATE]
    )
    job = getattr(job.tokenizer, kind)({"path": str(path), **options})
    job = job.units(sizes=[[128, 256, 512, 1024, 2048, 4096, 8192]], build_batch=[batch])
    job = job.output.dir(str(workdir / "per-core-unused"), samples_per_shard=[100_000])
    warnings.simplefilter("ignore", TemplateLiteralWarning)  # the build's concern, not this table's
    # What run() does before it builds (nothing is written): the plan and the loaded tokenizer.
    plan, encoders = validate(job._config)
    return BatchEncoder(plan, encoders), list(read_raw_batches(plan.files[0]))


def _own_work_us(
    worker: BatchEncoder, raw: list, texts: list[list[str]], encode: Callable, repeats: int
) -> tuple[float, float]:
    """Worker CPU per sample beyond the bare library call (µs), and the bare call's share."""
    spent = {True: 0.0, False: 0.0}  # CPU seconds of the whole batch (True) and the bare call
    for round_ in range(repeats):
        for number, (batch, chunk) in enumerate(zip(raw, texts, strict=True)):
            first_whole = (number + round_) % 2 == 0  # neither side always runs first
            for run_whole in (first_whole, not first_whole):
                started = time.process_time()
                worker(batch) if run_whole else encode(chunk)
                spent[run_whole] += time.process_time() - started
    whole, bare = spent[True], spent[False]
    samples = repeats * sum(map(len, texts))
    return (whole - bare) / samples * 1e6, bare / whole


def _ids_out_us(path: Path, chunks: list[list[str]], repeats: int) -> float:
    """CPU per sample (µs) to take the ids out of the library's result: tokenizer.json's
    ``Encoding.ids`` Python lists; 0 for SentencePiece, whose fastest call returns the arrays."""
    if tokenizer_kind(path) == "sentencepiece":
        return 0.0
    tok = load_library_tokenizer("hf_json", str(path))
    results = [tok.encode_batch_fast(chunk, add_special_tokens=False) for chunk in chunks]
    samples = sum(map(len, chunks))
    return (
        statistics.median(
            _cpu_seconds(lambda: [[e.ids for e in result] for result in results])
            for _ in range(repeats)
        )
        / samples
        * 1e6
    )


def _cpu_seconds(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def _mb_per_cpu_second(work: Callable[[], object], megabytes: float, repeats: int) -> float:
    return statistics.median(megabytes / _cpu_seconds(work) for _ in range(repeats))


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokenizer", type=Path, action="append", help="repeatable (default: demo)")
    p.add_argument("--samples", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch", type=int, default=1024, help="texts per encoding call")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    p.add_argument(
        "--tokenizer-options",
        type=orjson.loads,
        default={},
        help='JSON, for every tokenizer, e.g. \'{"pad_fallback": "eos"}\' (mistral, phi-2)',
    )
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    source = cached(default_input(), DEFAULT_FIELDS, args.samples, args.workdir)
    spec = {"input": str(source), "fields": DEFAULT_FIELDS, "template": DEFAULT_TEMPLATE}
    texts = _render_all(spec)
    lines = source.read_bytes().splitlines()
    rendered_mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    jsonl_mb = sum(map(len, lines)) / 1e6
    info = machine()
    print(f"# one core, {len(texts):,} samples ({rendered_mb:.1f} MB rendered), {info['cpu']}")
    print("| work | MB/s per core |\n|---|---:|")
    parse = _mb_per_cpu_second(lambda: list(map(orjson.loads, lines)), jsonl_mb, args.repeats)
    print(f"| orjson.loads (JSONL lines) | {parse:,.1f} |")
    arrays = [b"[" + b",".join(chunk) + b"]" for chunk in _chunks(lines, args.batch)]
    parse_batch = _mb_per_cpu_second(lambda: list(map(orjson.loads, arrays)), jsonl_mb, args.repeats)
    print(f"| orjson.loads (one JSON array per batch) | {parse_batch:,.1f} |")
    digest = _mb_per_cpu_second(
        lambda: [hashlib.sha256(t.encode("utf-8")).digest() for t in texts],
        rendered_mb,
        args.repeats,
    )
    print(f"| SHA-256 (rendered texts) | {digest:,.1f} |")
    own: list[str] = []
    bound: list[str] = []
    chunks = list(_chunks(texts, args.batch))
    per_sample = 1e6 / len(texts)  # µs per sample of one second over all of them
    parse_us = jsonl_mb / max(parse, parse_batch) * per_sample
    digest_us = rendered_mb / digest * per_sample
    for path in args.tokenizer or default_tokenizers():
        encode = _encoder(path)
        rate = _mb_per_cpu_second(
            lambda encode=encode: [encode(chunk) for chunk in chunks], rendered_mb, args.repeats
        )
        print(f"| {path.name} | {rate:,.2f} |")
        worker, raw = _worker(path, args.tokenizer_options, source, args.batch, args.workdir)
        extra, share = _own_work_us(worker, raw, chunks, encode, args.repeats)
        own.append(f"| {path.name} | {extra:,.1f} | {share:.3f} |")
        library_us = rendered_mb / rate * per_sample
        ids_us = _ids_out_us(path, chunks, args.repeats)
        best = library_us / (library_us + parse_us + digest_us + ids_us)
        bound.append(
            f"| {path.name} | {library_us:,.1f} | {parse_us:,.2f} | {digest_us:,.2f} "
            f"| {ids_us:,.2f} | {best:.3f} |"
        )
    print("\n# MintDim's own work in a worker, beyond the library call")
    print("| tokenizer | µs per sample | library call / whole batch |\n|---|---:|---:|")
    print("\n".join(own))
    print("\n# The bound: the best ratio to the ceiling after what every sample must cost")
    print("| tokenizer | library µs/sample | parse µs | SHA-256 µs | ids out µs | bound |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(bound))


if __name__ == "__main__":
    main()
