"""Type aliases shared across pipelines."""

from __future__ import annotations

from typing import Literal

__all__ = ["TokenizerKind"]

TokenizerKind = Literal["sentencepiece", "hf_json"]
"""The tokenizer formats MintDim reads: a SentencePiece ``.model`` or a Hugging Face ``tokenizer.json``."""
