"""Two files, each with its own fields, template, unit sizes and output directory (fully mapped).

    python examples/mapped_outputs.py [OUTPUT_ROOT]   # default: ./artifacts

Alpaca-form rows and question/answer rows from the bundled demo files, encoded by the bundled
tokenizer.json (Hugging Face), shared by both files: lists of one entry are shared, lists of N
entries are mapped onto the N files by index.
"""

import sys
from pathlib import Path

import mintdim
from mintdim import pipeline

DEMO = Path(mintdim.__file__).parent / "demo"


def build_mapped(root: str) -> mintdim.BuildResult:
    """files[i] <-> fields[i] <-> templates[i] <-> sizes[i] <-> build_batch[i] <-> output[i]."""
    job = (
        pipeline("unit-build")
        .source.jsonl(
            files=[
                str(DEMO / "self_instruct_seed_alpaca.jsonl"),
                str(DEMO / "gsm8k_test_first300.jsonl"),
            ],
            fields=[["instruction", "input", "output"], ["question", "answer"]],
            templates=[
                "{instruction}\n\n{input}\n\n{output}",
                "Question: {question}\nAnswer: {answer}",
            ],
        )
        .tokenizer.hf_json({"path": str(DEMO / "demo_bpe.tokenizer.json")})
        .units(
            sizes=[[128, 256, 512, 1024, 2048], [96, 128, 160, 192, 256, 384, 512]],
            build_batch=[4096, 2048],
        )
        .output.dir([f"{root}/alpaca_units", f"{root}/qa_units"], samples_per_shard=[10000, 100])
    )
    return job.run()


if __name__ == "__main__":
    for out in build_mapped(sys.argv[1] if len(sys.argv) > 1 else "./artifacts").outputs:
        stats = out.stats
        print(
            f"{out.path}: {stats['total_samples']} samples in {stats['shard_count']} shards, "
            f"padding {stats['padding_ratio']:.2%}"
        )
