"""Type aliases shared across pipelines."""

from __future__ import annotations

from typing import Literal

__all__ = ["Language", "TokenizerKind"]

TokenizerKind = Literal["sentencepiece", "hf_json"]
"""The tokenizer formats MintDim reads: a SentencePiece ``.model`` or a Hugging Face ``tokenizer.json``."""

Language = Literal["en", "vi"]
"""The languages every MintDim error is written in."""
