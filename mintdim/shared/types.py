"""Type aliases shared across pipelines."""

from __future__ import annotations

from typing import Literal

__all__ = ["Engine", "TokenizerKind"]

TokenizerKind = Literal["sentencepiece", "hf_json"]
"""The tokenizer formats MintDim reads: a SentencePiece ``.model`` or a Hugging Face ``tokenizer.json``."""

Engine = Literal["reference", "fast"]
"""Which code encodes: the tokenizer's own library (``reference``) or gigatoken (``fast``)."""
