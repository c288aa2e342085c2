"""Loading SentencePiece and tokenizer.json files and encoding rendered text exactly."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol

import numpy as np

from mintdim.build.contracts import TokenizerSpec
from mintdim.build.tokenizer.fast import FastEncoder, FastEngineUnavailable
from mintdim.build.tokenizer.hf_json import HFJsonEncoder
from mintdim.build.tokenizer.sentencepiece import SentencePieceEncoder
from mintdim.errors import TokenizerLoadError

__all__ = ["Encoder", "FastEngineUnavailable", "load_encoder"]


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
    engine: str
    """``reference`` (the tokenizer's own library) or ``fast`` (tokenizer/fast.py)."""
    engine_version: str
    """The library that encodes and its version, e.g. ``tokenizers 0.23.3``."""
    file_sha256: str
    """SHA-256 of the bytes the tokenizer was loaded from (the manifest records it)."""

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
    """Load the tokenizer a spec names with the library its kind calls for, and its engine.

    ``engine="fast"`` raises ``FastEngineUnavailable`` (holding the reference encoder, already
    loaded) when gigatoken is missing or refuses the file: validation falls back and says why.
    """
    # One read: the libraries load from these bytes and the manifest's SHA-256 is theirs, so no
    # second read can see another file (one replaced while the build starts).
    try:
        data = Path(spec.abs_path).read_bytes()
    except OSError as err:
        raise TokenizerLoadError(path=spec.path, method=spec.kind, detail=str(err)) from err
    kind = SentencePieceEncoder if spec.kind == "sentencepiece" else HFJsonEncoder
    reference = kind(spec, data)
    reference.file_sha256 = hashlib.sha256(data).hexdigest()
    if spec.engine == "reference":
        return reference
    return FastEncoder(reference, data)
