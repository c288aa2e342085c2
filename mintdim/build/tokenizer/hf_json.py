"""Hugging Face ``tokenizer.json`` files: loading, special ids from the library, exact batch encoding.

A tokenizer.json may carry padding and truncation settings (all-MiniLM-L6-v2 pads and truncates to
128); both are switched off on the loaded object so every encoding is exact. The file is untouched.
"""

from __future__ import annotations

import array
import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import orjson
import tokenizers
from tokenizers import Tokenizer, models

from mintdim.build.contracts import TokenizerSpec
from mintdim.build.tokenizer.specials import Found, resolve_specials
from mintdim.errors import TokenizerLoadError

__all__ = ["PARALLELISM", "HFJsonEncoder", "one_thread_per_call"]

PARALLELISM = "TOKENIZERS_PARALLELISM"
"""``tokenizers`` reads this variable on every batch call: "false" runs it on the calling thread."""

_UNK_TOKENS = ("[UNK]", "<unk>")
_PAD_TOKENS = ("[PAD]", "<pad>")
_EOS_TOKENS = ("</s>", "<|endoftext|>", "<eos>")


class HFJsonEncoder:
    """Encodes with ``Tokenizer.encode_batch_fast(add_special_tokens=False)``, padding and truncation off."""

    offset_unit = "chars"
    """``encode_batch_starts`` reports offsets in characters of the Python string."""
    engine = "reference"
    engine_version = f"tokenizers {tokenizers.__version__}"

    def __init__(self, spec: TokenizerSpec, data: bytes) -> None:
        """``data``: the bytes of the ``tokenizer.json`` file ``spec`` names."""
        self.spec = spec
        try:
            self._tok = Tokenizer.from_buffer(data)
        except Exception as err:  # the library raises a bare Exception for every load failure
            raise TokenizerLoadError(path=spec.path, method=spec.kind, detail=str(err)) from err
        vocab = self._tok.get_vocab(with_added_tokens=True)
        self.vocab_size = max(len(vocab), max(vocab.values(), default=-1) + 1)
        # Each special is read from the part of the loaded object that holds it: serialising the
        # whole tokenizer (vocabulary and merges) to JSON and parsing it back took a third of
        # loading roberta-base, before any worker could start.
        ids = resolve_specials(
            spec,
            unk=self._unk(),
            pad=self._pad(),
            eos=self._eos(),
            looked_for={
                "unk_id": ["model.unk_token", "model.unk_id", *(f"token {t}" for t in _UNK_TOKENS)],
                "pad_id": ["padding.pad_id", *(f"token {t}" for t in _PAD_TOKENS)],
                "eos_id": ["post_processor", *(f"special token {t}" for t in _EOS_TOKENS)],
            },
            token_id=self._tok.token_to_id,
        )
        self.unk_id, self.unk_source = ids.unk_id, ids.unk_source
        self.pad_id, self.pad_source = ids.pad_id, ids.pad_source
        self.eos_id, self.eos_source = ids.eos_id, ids.eos_source
        self.pads_or_truncates = self._tok.padding is not None or self._tok.truncation is not None
        """Whether the file asks for padding or truncation (switched off here, as in gigatoken)."""
        self._tok.no_padding()
        self._tok.no_truncation()

    def _unk(self) -> Found:
        model = self._tok.model
        token = getattr(model, "unk_token", None)  # BPE, WordPiece, WordLevel
        if isinstance(token, str) and self._tok.token_to_id(token) is not None:
            return self._tok.token_to_id(token), f"model.unk_token {token!r}"
        if isinstance(model, models.Unigram):
            # Unigram models keep unk_id only in the serialised model; the Python object hides it.
            unk_id = orjson.loads(model.__getstate__()).get("unk_id")
            if isinstance(unk_id, int):
                return unk_id, "model.unk_id"
        return self._by_token(_UNK_TOKENS)

    def _pad(self) -> Found:
        padding = self._tok.padding
        if padding is not None:
            return padding["pad_id"], "padding.pad_id"
        return self._by_token(_PAD_TOKENS)

    def _eos(self) -> Found:
        """The token the file's own post-processor closes a sequence with (t5 ``</s>``, bert
        ``[SEP]``), else a special added token with a conventional EOS name (phi-2's
        ``<|endoftext|>``): what HF's ``add_special_tokens`` and tokenizer configs use."""
        loaded = self._tok.post_processor
        for processor in _processors(
            None if loaded is None else orjson.loads(loaded.__getstate__())
        ):
            token = _closing_token(processor)
            if token is not None and self._tok.token_to_id(token) is not None:
                return self._tok.token_to_id(token), f"post_processor {processor['type']} {token!r}"
        added = self._tok.get_added_tokens_decoder().values()
        special = {token.content for token in added if token.special}
        for token in _EOS_TOKENS:
            if token in special:
                return self._tok.token_to_id(token), f"special token {token}"
        return None

    def _by_token(self, tokens: tuple[str, ...]) -> Found:
        for token in tokens:
            token_id = self._tok.token_to_id(token)
            if token_id is not None:
                return token_id, f"token {token}"
        return None

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
        # The library gives ids only as one Python list per text. Appending each to one C array
        # of u32 (tokenizer.json ids are u32, and every one must survive) and viewing it costs half
        # of gathering a Python list and converting it (5% of encoding on 1-2k token samples).
        ids = array.array("I")
        gather = ids.extend
        for encoding in encodings:
            gather(encoding.ids)
        return np.frombuffer(ids, dtype=np.uint32), lengths

    def encode_batch_starts(
        self, texts: list[str], utf8: list[bytes]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``encode_batch`` plus each token's start offset (characters), from the library's
        own offsets (``encode_batch`` computes them; ``encode_batch_fast`` does not)."""
        encodings = self._tok.encode_batch(texts, add_special_tokens=False)
        lengths = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        if not encodings:
            return np.zeros(0, dtype=np.uint32), lengths, np.zeros(0, dtype=np.int64)
        flat = np.concatenate([np.array(e.ids, dtype=np.uint32) for e in encodings])
        starts = np.fromiter(
            (start for e in encodings for start, _ in e.offsets), dtype=np.int64, count=flat.size
        )
        return flat, lengths, starts


def _processors(processor: dict | None) -> list[dict]:
    """A post-processor, or each member of a ``Sequence`` of them."""
    if not processor:
        return []
    if processor.get("type") == "Sequence":
        return [p for member in processor.get("processors", []) for p in _processors(member)]
    return [processor]


def _closing_token(processor: dict) -> str | None:
    """The special token a single-sequence post-processor puts after the sequence, if any."""
    if processor.get("type") in ("RobertaProcessing", "BertProcessing"):
        return processor["sep"][0]
    if processor.get("type") != "TemplateProcessing":
        return None
    single = processor.get("single", [])
    after = False
    for piece in single:
        if "Sequence" in piece:
            after = True
        elif after and "SpecialToken" in piece:
            return piece["SpecialToken"]["id"]
    return None


@contextmanager
def one_thread_per_call() -> Iterator[None]:
    """Every ``tokenizers`` batch call inside runs on its calling thread, not the library's pool.

    Set before the caller starts threads of its own and restored after they end: the variable
    is the process's, and its pool's idle threads spin for work (at validation they took a
    third more CPU than the encoding itself on a busy machine).
    """
    previous = os.environ.get(PARALLELISM)
    os.environ[PARALLELISM] = "false"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[PARALLELISM]
        else:
            os.environ[PARALLELISM] = previous
