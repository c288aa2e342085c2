"""What one core does: each tokenizer's encoding beside JSON parsing, SHA-256 and MintDim's own work.

    python benchmarks/per_core.py                               # the bundled demo tokenizers
    python benchmarks/per_core.py --tokenizer a.tokenizer.json --tokenizer b.model
    python benchmarks/per_core.py --input /tmp/mintdim-bench/long_source.jsonl \\
        --fields docstring,code --template '{docstring}\\n\\n{code}' --batch 512 --tokenizer b.model

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
from functools import partial
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _contenders import _chunks, _render_all, load_library_tokenizer  # noqa: E402
from _harness import DEFAULT_TEMPLATE, default_tokenizers, machine, tokenizer_kind  # noqa: E402
from generate import DEFAULT_FIELDS, cached, default_input  # noqa: E402

from mintdim import TemplateLiteralWarning, pipeline  # noqa: E402
from mintdim.build.batch import BatchEncoder  # noqa: E402
from mintdim.build.source import open_source  # noqa: E402
from mintdim.build.validate import validate  # noqa: E402

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one thread: the figure is per core


def _encoder(path: Path) -> tuple[Callable[[list[str]], object], Callable[[list[str]], object]]:
    """The library's fastest single-threaded batch call as the ceiling makes it (it asks only for
    the token counts), and the same call with the ids taken out, as any writer of them must."""
    kind = tokenizer_kind(path)
    tok = load_library_tokenizer(kind, str(path))
    if kind == "sentencepiece":  # the arrays are the call's own result
        call = partial(tok.encode, num_threads=1, return_type="numpy")
        return lambda texts: sum(map(len, call(texts))), call
    call = partial(tok.encode_batch_fast, add_special_tokens=False)
    return lambda texts: sum(map(len, call(texts))), partial(_ids_out, call)


def _ids_out(call: Callable[[list[str]], list], texts: list[str]) -> None:
    # Each text's ids list is made and dropped at once, the least any writer of them can spend.
    for encoding in call(texts):
        encoding.ids  # noqa: B018


def validated(
    source: str, fields: list[str], template: str, tokenizer: dict, sizes: list[int], batch: int
) -> tuple:
    """What ``run()`` does before it builds (nothing is written): the plan of a one-file job and
    its loaded tokenizers. ``tokenizer``: the tokenizer step's dict, its ``kind`` key naming the
    step (``sentencepiece`` or ``hf_json``)."""
    job = pipeline("unit-build").source.jsonl(files=[source], fields=[fields], templates=[template])
    step = dict(tokenizer)
    job = getattr(job.tokenizer, step.pop("kind"))(step)
    job = job.units(sizes=[sizes], build_batch=[batch])
    job = job.output.dir(str(Path(source).parent / "plan-unused"), samples_per_shard=[100_000])
    warnings.simplefilter("ignore", TemplateLiteralWarning)  # the build's concern, not a bound's
    return validate(job._config)


def _worker(
    path: Path, options: dict, spec: dict, batch: int, workdir: Path
) -> tuple[BatchEncoder, list]:
    """A worker's batch encoder for this tokenizer, and the raw batches of ``source``."""
    tokenizer = {"kind": tokenizer_kind(path), "path": str(path), **options}
    sizes = [128, 256, 512, 1024, 2048, 4096, 8192]
    plan, encoders = validated(
        spec["input"], list(spec["fields"]), spec["template"], tokenizer, sizes, batch
    )
    return BatchEncoder(plan, encoders), list(open_source(plan.files[0]).batches())


def _alternated(
    whole: Callable[[int], object], bare: Callable[[int], object], batches: int, repeats: int
) -> tuple[float, float]:
    """CPU seconds of ``whole(i)`` and of ``bare(i)`` over every batch ``i``, run alternately
    batch by batch (neither side always first), ``repeats`` times over."""
    spent = {True: 0.0, False: 0.0}
    for round_ in range(repeats):
        for number in range(batches):
            first_whole = (number + round_) % 2 == 0
            for run_whole in (first_whole, not first_whole):
                started = time.process_time()
                whole(number) if run_whole else bare(number)
                spent[run_whole] += time.process_time() - started
    return spent[True], spent[False]


def _mb_per_cpu_second(work: Callable[[], object], megabytes: float, repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        started = time.process_time()
        work()
        rates.append(megabytes / (time.process_time() - started))
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokenizer", type=Path, action="append", help="repeatable (default: demo)")
    p.add_argument("--input", type=Path, default=None, help="source JSONL (default: bundled demo)")
    p.add_argument("--fields", default=",".join(DEFAULT_FIELDS), help="comma-separated keys")
    p.add_argument("--template", default=DEFAULT_TEMPLATE, help="template (\\n as real newlines)")
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
    fields = tuple(f for f in args.fields.split(",") if f)
    source = cached(args.input or default_input(), fields, args.samples, args.workdir)
    template = args.template.replace("\\n", "\n").replace("\\t", "\t")
    spec = {"input": str(source), "fields": fields, "template": template}
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
    parse_batch = _mb_per_cpu_second(
        lambda: list(map(orjson.loads, arrays)), jsonl_mb, args.repeats
    )
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

    def floor(number: int, with_ids: Callable) -> None:
        # Every sample must be parsed (orjson's fastest way: one array per batch) and hashed.
        orjson.loads(arrays[number])
        [hashlib.sha256(text.encode("utf-8")).digest() for text in chunks[number]]
        with_ids(chunks[number])

    samples = args.repeats * len(texts)
    for path in args.tokenizer or default_tokenizers():
        encode, with_ids = _encoder(path)
        rate = _mb_per_cpu_second(
            lambda encode=encode: [encode(chunk) for chunk in chunks], rendered_mb, args.repeats
        )
        print(f"| {path.name} | {rate:,.2f} |")
        worker, raw = _worker(path, args.tokenizer_options, spec, args.batch, args.workdir)
        bare_call = lambda number, encode=encode: encode(chunks[number])  # noqa: E731
        whole_batch = lambda number, worker=worker, raw=raw: worker(raw[number])  # noqa: E731
        whole, bare = _alternated(whole_batch, bare_call, len(chunks), args.repeats)
        own.append(f"| {path.name} | {(whole - bare) / samples * 1e6:,.1f} | {bare / whole:.3f} |")
        least, bare = _alternated(
            partial(floor, with_ids=with_ids), bare_call, len(chunks), args.repeats
        )
        bound.append(
            f"| {path.name} | {bare / samples * 1e6:,.1f} | {(least - bare) / samples * 1e6:,.2f} "
            f"| {bare / least:.3f} |"
        )
    print("\n# MintDim's own work in a worker, beyond the library call")
    print("| tokenizer | µs per sample | library call / whole batch |\n|---|---:|---:|")
    print("\n".join(own))
    print("\n# The bound: the best ratio to the ceiling after what every sample must cost")
    print("| tokenizer | library µs/sample | parse, SHA-256, ids out µs | bound |")
    print("|---|---:|---:|---:|")
    print("\n".join(bound))


if __name__ == "__main__":
    main()
