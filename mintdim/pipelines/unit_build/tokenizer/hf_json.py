"""Hugging Face ``tokenizer.json`` files: loading, special ids from the library, exact batch encoding.

A tokenizer.json may carry padding and truncation settings (all-MiniLM-L6-v2 pads and truncates to
128); both are switched off on the loaded object so every encoding is exact. The file is untouched.
"""

from __future__ import annotations

import json

import numpy as np
import tokenizers
from tokenizers import Tokenizer

from mintdim.pipelines.unit_build.contracts import TokenizerSpec
from mintdim.shared.errors import TokenizerLoadError, TokenizerSpecialTokenError

__all__ = ["HFJsonEncoder"]

_UNK_TOKENS = ("[UNK]", "<unk>")
_PAD_TOKENS = ("[PAD]", "<pad>")


class HFJsonEncoder:
    """Encodes with ``Tokenizer.encode_batch_fast(add_special_tokens=False)``, padding and truncation off."""

    engine = "reference"
    engine_version = f"tokenizers {tokenizers.__version__}"

    def __init__(self, spec: TokenizerSpec) -> None:
        self.spec = spec
        try:
            self._tok = Tokenizer.from_file(spec.abs_path)
        except Exception as err:  # the library raises a bare Exception for every load failure
            raise TokenizerLoadError(path=spec.path, method=spec.kind, detail=str(err)) from err
        vocab = self._tok.get_vocab(with_added_tokens=True)
        self.vocab_size = max(len(vocab), max(vocab.values(), default=-1) + 1)
        self.unk_id, self.unk_source = self._unk()
        self.pad_id, self.pad_source = self._pad()
        self._tok.no_padding()
        self._tok.no_truncation()

    def _unk(self) -> tuple[int, str]:
        # Unigram models keep unk_id only in the serialised model; the Python object hides it.
        model = json.loads(self._tok.to_str())["model"]
        token = model.get("unk_token")
        if isinstance(token, str) and self._tok.token_to_id(token) is not None:
            return self._tok.token_to_id(token), f"model.unk_token {token!r}"
        if isinstance(model.get("unk_id"), int):
            return model["unk_id"], "model.unk_id"
        return self._by_token("unk_id", _UNK_TOKENS, "model unk_token / unk_id")

    def _pad(self) -> tuple[int, str]:
        padding = self._tok.padding
        if padding is not None:
            return padding["pad_id"], "padding.pad_id"
        return self._by_token("pad_id", _PAD_TOKENS, "padding.pad_id")

    def _by_token(self, name: str, tokens: tuple[str, ...], first: str) -> tuple[int, str]:
        for token in tokens:
            token_id = self._tok.token_to_id(token)
            if token_id is not None:
                return token_id, f"token {token}"
        raise TokenizerSpecialTokenError(
            token=name,
            path=self.spec.path,
            looked_for=f"{first}, then tokens {' and '.join(tokens)}",
        )

    def encode(self, text: str) -> list[int]:
        """Token ids of one text."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        """Text of a list of ids."""
        return self._tok.decode(ids, skip_special_tokens=False)

    def encode_batch(self, texts: list[str], utf8: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """All ids of ``texts`` concatenated, and each text's token count (the library reads str)."""
        encodings = self._tok.encode_batch_fast(texts, add_special_tokens=False)
        lengths = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        # The library gives ids only as one Python list per text: gather them into one list and
        # make one array (as fast as an array per text and a concatenate, without those arrays).
        # uint32: tokenizer.json ids are u32, and every one of them must survive.
        ids: list[int] = []
        gather = ids.extend
        for encoding in encodings:
            gather(encoding.ids)
        return np.array(ids, dtype=np.uint32), lengths
