"""Build instruction-tuning units from the bundled Alpaca-form demo file, with the Python API.

    python examples/unit_build_instruction.py [OUTPUT_DIR]   # default: ./artifacts/instruction_units

Point ``files`` and ``path`` at your own JSONL and SentencePiece model to build your data; the
output directory must be new or empty.
"""

import sys
from pathlib import Path

import mintdim
from mintdim import pipeline

DEMO = Path(mintdim.__file__).parent / "demo"


def build_instruction_units(output_dir: str) -> mintdim.BuildResult:
    """One Alpaca-form file, one SentencePiece model, one output directory."""
    job = (
        pipeline("unit-build")
        .source.jsonl(
            files=[str(DEMO / "self_instruct_seed_alpaca.jsonl")],
            fields=[["instruction", "input", "output"]],
            templates=["{instruction}\n\n{input}\n\n{output}"],
        )
        .tokenizer.sentencepiece({"path": str(DEMO / "demo_unigram.model")})
        .units(sizes=[[128, 192, 256, 320, 512, 1024, 2048, 4096]], build_batch=[4096])
        .output.dir(output_dir, samples_per_shard=[10000])
    )
    return job.run()


if __name__ == "__main__":
    result = build_instruction_units(
        sys.argv[1] if len(sys.argv) > 1 else "./artifacts/instruction_units"
    )
    for out in result.outputs:
        stats = out.stats
        print(
            f"{out.path}: {stats['total_samples']} samples, {stats['total_tokens']} tokens, "
            f"padding {stats['padding_ratio']:.2%}, {stats['samples_with_unk']} samples with UNK"
        )
