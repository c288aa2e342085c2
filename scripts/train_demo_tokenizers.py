"""Train the two small demo tokenizers shipped in ``mintdim/demo/``.

Run from anywhere (paths are taken from this file's location)::

    python scripts/train_demo_tokenizers.py          # (re)write the two files
    python scripts/train_demo_tokenizers.py --check  # exit 1 if the committed files differ

Both tokenizers are trained on the bundled demo data only (``mintdim/demo/*.jsonl``), rendered
with every template the bundled configs use, so that each template's literal text (``"\\n\\n"``,
``"### Instruction:\\n"``, ``"Question: "`` ...) is covered and MintDim's template check passes.
They are deliberately small and have no byte fallback, so rare characters (Arabic, Chinese,
some typographic symbols in the data) become UNK: the demo build then shows the UNK audit
(``unk_index.jsonl``) at work.

Training is deterministic: one thread, no input shuffling, no sampling. The same library
versions give byte-identical files (checked with sentencepiece 0.2.3 and tokenizers 0.23.3);
other versions may differ, which ``--check`` reports.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import string
import sys
import tempfile
from collections import Counter
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent.parent / "mintdim" / "demo"
ALPACA_FILE = DEMO_DIR / "self_instruct_seed_alpaca.jsonl"
QA_FILE = DEMO_DIR / "gsm8k_test_first300.jsonl"
SENTENCEPIECE_FILE = DEMO_DIR / "demo_unigram.model"
HF_JSON_FILE = DEMO_DIR / "demo_bpe.tokenizer.json"

# Keep in sync with conf/source/*.yaml (the runner tests build every bundled source with both
# demo tokenizers, so a template whose literal text is not covered fails there).
ALPACA_TEMPLATES = (
    "{instruction}\n\n{input}\n\n{output}",
    "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n{output}",
)
QA_TEMPLATES = ("Question: {question}\nAnswer: {answer}",)

# Printable ASCII is always in the alphabet, whatever its frequency in the demo data (space and
# "\n" are handled by each library's own whitespace rules, below).
REQUIRED_CHARS = "".join(c for c in string.printable if not c.isspace())

SENTENCEPIECE_VOCAB = 1500
HF_JSON_VOCAB = 2000


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _render(template: str, row: dict) -> str:
    # The demo templates hold no escaped braces, so plain replacement is exact.
    text = template
    for key, value in row.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def training_texts() -> list[str]:
    """Every demo row rendered with every demo template, in a fixed order."""
    alpaca, qa = _rows(ALPACA_FILE), _rows(QA_FILE)
    texts = [_render(t, r) for t in ALPACA_TEMPLATES for r in alpaca]
    texts += [_render(t, r) for t in QA_TEMPLATES for r in qa]
    return texts


def train_sentencepiece(texts: list[str]) -> bytes:
    """A unigram SentencePiece model: pad 0, unk 1, bos 2, eos 3, text kept exactly."""
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=buf,
        model_type="unigram",
        vocab_size=SENTENCEPIECE_VOCAB,
        pad_id=0,
        unk_id=1,
        bos_id=2,
        eos_id=3,
        byte_fallback=False,
        character_coverage=0.9995,
        required_chars=REQUIRED_CHARS,
        # identity + no whitespace squeezing: "\n\n" and double spaces survive encode/decode.
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        user_defined_symbols=["\n"],
        num_threads=1,
        shuffle_input_sentence=False,
        input_sentence_size=0,
        max_sentence_length=1 << 16,
        minloglevel=2,
    )
    return buf.getvalue()


def train_hf_json(texts: list[str]) -> bytes:
    """A BPE tokenizer.json with ``[PAD]`` (id 0) and ``[UNK]`` (id 1), text kept exactly."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    # Metaspace without a prepended space: spaces become "▁" and words split on them, nothing
    # else is changed, so decode(encode(text)) == text whenever no UNK occurs.
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="never")
    # The alphabet is chosen here, not by the trainer: its limit_alphabet breaks frequency ties
    # in hash order, which made two runs differ. Characters seen fewer than 3 times stay UNK.
    counts = Counter("".join(texts).replace(" ", "▁"))
    alphabet = sorted(set(REQUIRED_CHARS + "▁\n") | {c for c, n in counts.items() if n >= 3})
    trainer = trainers.BpeTrainer(
        vocab_size=HF_JSON_VOCAB,
        min_frequency=2,
        special_tokens=["[PAD]", "[UNK]"],
        initial_alphabet=alphabet,
        limit_alphabet=len(alphabet),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tokenizer.json"
        tok.save(str(out))
        return out.read_bytes()


def main(argv: list[str] | None = None) -> int:
    """Train both tokenizers; write them, or with ``--check`` compare them to the files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="compare with the committed files, write nothing"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    texts = training_texts()
    built = {
        SENTENCEPIECE_FILE: train_sentencepiece(texts),
        HF_JSON_FILE: train_hf_json(texts),
    }
    status = 0
    for path, data in built.items():
        if args.check:
            same = path.is_file() and path.read_bytes() == data
            print(f"{'same' if same else 'DIFFERENT'}: {path.name}")
            status |= 0 if same else 1
        else:
            path.write_bytes(data)
            print(f"wrote {path} ({len(data)} bytes)")
    return status


if __name__ == "__main__":
    sys.exit(main())
