"""Loading SentencePiece and tokenizer.json files and encoding rendered text exactly."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from mintdim.pipelines.unit_build.contracts import TokenizerSpec
from mintdim.pipelines.unit_build.tokenizer.hf_json import HFJsonEncoder
from mintdim.pipelines.unit_build.tokenizer.sentencepiece import SentencePieceEncoder

__all__ = ["Encoder", "load_encoder"]


class Encoder(Protocol):
    """What the build needs from a tokenizer, whichever library backs it."""

    spec: TokenizerSpec
    vocab_size: int
    unk_id: int | None
    pad_id: int
    eos_id: int | None
    unk_source: str
    pad_source: str
    eos_source: str | None
    offset_unit: str
    """``"bytes"`` or ``"chars"``: the unit of ``encode_batch_starts``'s offsets."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...

    def encode_batch(self, texts: list[str], utf8: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Ids of every text back to back, and each text's count; ``utf8[i]`` is
        ``texts[i].encode()``, already made for hashing, for libraries that read bytes faster."""

    def encode_batch_starts(
        self, texts: list[str], utf8: list[bytes]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``encode_batch``'s ids and counts, plus each token's start offset from the library
        (in ``offset_unit``): the position of the token's first character in its text."""


def load_encoder(spec: TokenizerSpec) -> Encoder:
    """Load the tokenizer a spec names with the library its kind calls for."""
    if spec.kind == "sentencepiece":
        return SentencePieceEncoder(spec)
    return HFJsonEncoder(spec)
