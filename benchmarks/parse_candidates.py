"""Parsing and rendering a batch: MintDim's orjson, line by line, against pyarrow's JSON reader
and compute kernels (issue 25's candidate for bulk parsing).

    python benchmarks/parse_candidates.py --input /tmp/mintdim-bench/gen-...-100000-....jsonl \\
        --fields instruction,input,output --template '{instruction}\\n\\n{input}\\n\\n{output}'
    python benchmarks/parse_candidates.py --input .../gen-...-text-48000-....jsonl --fields text \\
        --template '{text}'

Run by hand, never in CI. Each candidate turns the file's first ``--batches`` raw batches (as a
build cuts them, ``--batch`` lines) into the rendered texts as Python strings, which is what the
tokenizers take and each sample's SHA-256 is taken of; the texts of both are checked equal
first. pyarrow's side does less than a build needs (no per-sample field values for
``empty_fields``, no line-numbered errors), so it is its best case. CPU µs a sample, one thread,
medians of ``--repeats`` alternating passes.
"""

from __future__ import annotations

import argparse
import io
import itertools
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _harness import machine, tokenizer_kind  # noqa: E402
from bound import file_plan  # noqa: E402

from mintdim.build.source import open_source  # noqa: E402
from mintdim.build.source.jsonl import RawBatch, parse_lines  # noqa: E402


def _arrow(raw: RawBatch, fields: list[str], literals: list[str]) -> list[str]:
    """The batch's rendered texts by pyarrow: one JSON read, one join of the columns."""
    options = pj.ReadOptions(block_size=1 << 26, use_threads=False)  # the worker's one core
    table = pj.read_json(io.BytesIO(raw.data), read_options=options)
    parts: list = [table.column(fields[0])]
    for literal, field in zip(literals, fields[1:], strict=True):
        parts += [pa.scalar(literal), table.column(field)]
    return pc.binary_join_element_wise(*parts, "").to_pylist()


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, required=True)
    p.add_argument("--fields", default="text", help="comma-separated keys")
    p.add_argument("--template", default="{text}", help="each field once, in --fields order")
    p.add_argument("--tokenizer", type=Path, required=True, help="any; the plan needs one")
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    fields = args.fields.split(",")
    tokenizer = {"kind": tokenizer_kind(args.tokenizer), "path": str(args.tokenizer)}
    plan = file_plan(args.input, args.fields, args.template, tokenizer, "128,8192", args.batch)
    segments = plan.template.segments()
    literals = [value for what, value in segments if what == "literal"]
    if [value for what, value in segments if what == "field"] != fields or len(literals) != len(
        fields
    ) - 1:
        raise SystemExit(
            "the template must name each field once, in --fields order, between literals"
        )
    raws = list(itertools.islice(open_source(plan).batches(), args.batches))
    samples = 0
    for raw in raws:
        texts = parse_lines(raw, plan).texts
        if _arrow(raw, fields, literals) != texts:
            raise SystemExit(f"pyarrow renders batch at line {raw.first_line} differently")
        samples += len(texts)
    candidates = {
        "orjson, line by line (MintDim)": lambda raw: parse_lines(raw, plan),
        "pyarrow.json + binary_join_element_wise": lambda raw: _arrow(raw, fields, literals),
    }
    spent: dict[str, list[float]] = {name: [] for name in candidates}
    for repeat in range(args.repeats):
        names = list(candidates) if repeat % 2 == 0 else list(candidates)[::-1]
        for name in names:
            started = time.process_time()
            for raw in raws:
                candidates[name](raw)
            spent[name].append((time.process_time() - started) / samples * 1e6)
    info = machine()
    print(f"# {info['date']}, {info['cpu']}; {args.input.name}: {samples:,} samples, texts equal")
    for name, figures in spent.items():
        print(f"{name}: {statistics.median(figures):.2f} µs a sample")


if __name__ == "__main__":
    main()
