"""Type aliases shared across pipelines."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ENCODE_MODES",
    "OVERFLOW_POLICIES",
    "EncodeMode",
    "Engine",
    "OverflowPolicy",
    "TokenizerKind",
]

TokenizerKind = Literal["sentencepiece", "hf_json"]
"""The tokenizer formats MintDim reads: a SentencePiece ``.model`` or a Hugging Face ``tokenizer.json``."""

EncodeMode = Literal["whole", "segments"]
"""How a rendered sample is encoded when segment spans are stored (tokenizer key ``encode``)."""
ENCODE_MODES: tuple[EncodeMode, ...] = ("whole", "segments")

OverflowPolicy = Literal["abort", "skip", "truncate", "extend"]
"""What ``run(on_overflow=...)`` does with a sample longer than the largest unit."""
OVERFLOW_POLICIES: tuple[OverflowPolicy, ...] = ("abort", "skip", "truncate", "extend")

Engine = Literal["reference", "fast"]
"""Which code encodes: the tokenizer's own library (``reference``) or gigatoken (``fast``)."""
