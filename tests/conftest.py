"""Shared fixtures: real tokenizers trained once per session, and the third-party corpora when present."""

from __future__ import annotations

import logging
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sentencepiece as spm
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"

_WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "it",
    "be",
    "are",
    "was",
    "model",
    "data",
    "token",
    "unit",
    "shard",
    "pad",
    "build",
    "sample",
    "template",
    "field",
    "value",
    "train",
    "test",
    "batch",
    "size",
    "length",
    "exact",
    "Viet",
    "Nam",
    "xin",
    "chao",
    "tokenizer",
    "sentence",
    "piece",
    "json",
    "line",
    "file",
    "output",
    "input",
    "instruction",
    "response",
]


def training_text(lines: int = 3000, seed: int = 7) -> list[str]:
    """Deterministic English-like lines with punctuation, digits, newlines and braces."""
    rng = random.Random(seed)
    text = []
    for _ in range(lines):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 20))]
        if rng.random() < 0.3:
            words[0] = words[0].capitalize()
        line = " ".join(words) + rng.choice([".", "!", "?", ":", ",", " {x}", " 42", "\n\n###"])
        text.append(line)
    return text


def words(count: int, start: int = 0) -> str:
    """``count`` words of the training vocabulary in order from ``start``: a text whose token
    count grows with ``count``."""
    return " ".join(_WORDS[(start + j) % len(_WORDS)] for j in range(count))


@pytest.fixture(scope="session", autouse=True)
def _converted_models_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The fast engine keeps converted SentencePiece models in a per-session directory, never
    in the home of whoever runs the suite (child processes inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINTDIM_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="session")
def sp_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small SentencePiece unigram model with pad_id 0 and unk_id 1 that keeps newlines."""
    folder = tmp_path_factory.mktemp("sp")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_text()),
        model_prefix=str(folder / "tiny"),
        vocab_size=300,
        hard_vocab_limit=False,
        model_type="unigram",
        pad_id=0,
        unk_id=1,
        bos_id=2,
        eos_id=3,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        split_by_whitespace=True,
        character_coverage=1.0,
        user_defined_symbols=["\n"],
        num_threads=1,
        minloglevel=2,
    )
    return folder / "tiny.model"


@pytest.fixture(scope="session")
def hf_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small BPE tokenizer.json with [UNK] and [PAD] special tokens."""
    folder = tmp_path_factory.mktemp("hf")
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["[PAD]", "[UNK]"], show_progress=False
    )
    tokenizer.train_from_iterator(training_text(), trainer=trainer)
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def corpora_file(relative: str) -> Path:
    """A file of ../shared/corpora, or a clean skip when the folder (or file) is absent."""
    path = CORPORA / relative
    if not path.is_file():
        pytest.skip(f"third-party corpus file not available: {path}")
    return path


@pytest.fixture
def mintdim_lines(caplog: pytest.LogCaptureFixture):
    """The lines MintDim logged (the ``mintdim`` logger at INFO) during the test, in order."""
    caplog.set_level(logging.INFO, logger="mintdim")

    def lines() -> list[str]:
        return [line for record in caplog.records for line in record.getMessage().splitlines()]

    return lines


@pytest.fixture
def small_disk(tmp_path: Path):
    """``small_disk(size)``: a tmpfs of ``size`` mounted for the test, or a clean skip."""
    mounts: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"disk{len(mounts)}"
        point.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounts.append(point)
        return point

    yield mount
    for point in mounts:
        subprocess.run(["umount", "-l", str(point)], check=False)
