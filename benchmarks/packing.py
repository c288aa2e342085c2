"""The packing step alone: best-fit decreasing (``units/packing.py``) on 1M samples, one core.

    python benchmarks/packing.py                          # the demo's lengths, resampled
    python benchmarks/packing.py --input /tmp/mintdim-bench/mixed_base.jsonl --fields text \\
        --template '{text}' --tokenizer ../shared/corpora/tokenizers/roberta-base.tokenizer.json

Run by hand, never in CI. The token counts of ``--input`` (every row rendered with
``--template`` and encoded by ``--tokenizer``, exactly) are resampled with a fixed seed to
``--samples`` samples, then packed into rows of ``--width``, ``--repeats`` times: the CPU
seconds of each (median printed), the rows against the lower bound ``ceil(tokens / width)``,
and the padding. Two synthetic distributions are packed beside it (uniform and log-normal
lengths), so a change's cost shows on more than one shape. Issue 34's bound: under 5 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import machine  # noqa: E402
from generate import demo_dir  # noqa: E402

from mintdim.build.units.packing import pack  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, default=demo_dir() / "self_instruct_seed_alpaca.jsonl")
    p.add_argument("--fields", default="instruction,input,output")
    p.add_argument("--template", default="{instruction}\n\n{input}\n\n{output}")
    p.add_argument("--tokenizer", type=Path, default=demo_dir() / "demo_unigram.model")
    p.add_argument("--samples", type=int, default=1_000_000)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=5)
    return p.parse_args(argv)


def _counts(args: argparse.Namespace) -> np.ndarray:
    """Every input row's exact token count with the tokenizer's own library."""
    fields = args.fields.split(",")
    template = args.template.replace("\\n", "\n")
    texts = []
    with open(args.input, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                texts.append(template.format(**{name: row[name] for name in fields}))
    if str(args.tokenizer).endswith(".json"):
        from tokenizers import Tokenizer

        encoded = Tokenizer.from_file(str(args.tokenizer)).encode_batch(
            texts, add_special_tokens=False
        )
        return np.array([len(e.ids) for e in encoded], dtype=np.int64)
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(args.tokenizer))
    return np.array([len(ids) for ids in processor.encode(texts)], dtype=np.int64)


def main(argv: list[str] | None = None) -> None:
    """Pack each distribution ``--repeats`` times and print the medians."""
    args = parse_args(argv)
    rng = np.random.default_rng(20261204)
    real = _counts(args)
    real = real[real <= args.width]
    shapes = {
        f"{args.input.name} resampled": rng.choice(real, size=args.samples),
        "uniform 1..W/8": rng.integers(1, args.width // 8 + 1, size=args.samples),
        "log-normal": np.clip(rng.lognormal(5, 1, size=args.samples), 1, args.width).astype(
            np.int64
        ),
    }
    print(f"machine: {machine()}")
    print(f"{args.samples:,} samples, rows of {args.width:,}, {args.repeats} runs each")
    print("| lengths | CPU s (median) | rows | lower bound | rows / bound | padding |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, lengths in shapes.items():
        spent = []
        for _ in range(args.repeats):
            started = time.process_time()
            packing = pack(lengths, args.width)
            spent.append(time.process_time() - started)
        print(
            f"| {name} | {statistics.median(spent):.2f} | {packing.rows:,} | "
            f"{packing.lower_bound:,} | {packing.rows / packing.lower_bound:.4f} | "
            f"{packing.padding_ratio:.2%} |"
        )


if __name__ == "__main__":
    main()
