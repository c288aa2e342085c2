"""The fast engine: gigatoken encodes batches, the reference library stays the judge.

gigatoken (the optional extra ``[fast]``) encodes byte-level BPE ``tokenizer.json`` files and BPE
SentencePiece models to the same ids as ``tokenizers`` and ``sentencepiece``, several times
faster, and returns a batch as one flat id array plus offsets. It refuses WordPiece and Unigram
by name. Only ``encode_batch`` is gigatoken's: special ids, single-text ``encode`` (the template
checks) and ``decode`` are the reference encoder's, so validation sees exactly the same tokenizer
and the parity guard (``parity.py``) has the reference at hand to compare with.

A SentencePiece model reaches gigatoken through its own converter, which lists the model's
control pieces (``<s>``, ``</s>``) as added tokens, so it would read the text ``</s>`` as the EOS
id. SentencePiece itself never matches control pieces in text (only user-defined ones): they are
dropped from the converted file, which makes mistral-7b's ids identical (measured on the corpora).
"""

from __future__ import annotations

import importlib.metadata
import json

import numpy as np
import orjson

from mintdim.build.tokenizer.converted import converted
from mintdim.build.tokenizer.hf_json import HFJsonEncoder
from mintdim.build.tokenizer.sentencepiece import SentencePieceEncoder
from mintdim.shared.lang import Bilingual

__all__ = ["REASONS", "FastEncoder", "FastEngineUnavailable"]

Reference = HFJsonEncoder | SentencePieceEncoder

REASONS: dict[str, Bilingual] = {
    "not_installed": Bilingual(
        'gigatoken is not installed: install the optional extra with pip install ".[fast]" '
        "from a MintDim checkout, or pip install gigatoken",
        'chưa cài gigatoken: cài phần tuỳ chọn bằng pip install ".[fast]" trong thư mục mã '
        "nguồn MintDim, hoặc pip install gigatoken",
    ),
    "unsupported": Bilingual(
        "gigatoken encodes only byte-level BPE tokenizer.json files and BPE SentencePiece "
        "models, and refuses this one ({detail})",
        "gigatoken chỉ hỗ trợ tokenizer.json BPE byte-level và model SentencePiece BPE, và từ "
        "chối file này ({detail})",
    ),
}
"""Why the fast engine cannot run, by reason code (the manifest records the code)."""


class FastEngineUnavailable(Exception):
    """The fast engine cannot encode this tokenizer here; the reference engine will."""

    def __init__(self, reason: str, reference: Reference, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.reference = reference
        """The reference encoder, already loaded: it encodes instead."""
        self.detail = detail

    def explain(self) -> Bilingual:
        """The reason, filled in, in both languages: a field of another text, which formats it
        again when shown, so the library's own words (a ``{`` in a JSON error) are escaped."""
        text = REASONS[self.reason]
        detail = self.detail.replace("{", "{{").replace("}", "}}")
        return Bilingual(text.en.format(detail=detail), text.vi.format(detail=detail))


class FastEncoder:
    """``encode_batch`` by gigatoken on one thread; every other member is the reference's
    (``encode_batch_starts`` too: token offsets come from the tokenizer's own library)."""

    engine = "fast"

    def __init__(self, reference: Reference, data: bytes) -> None:
        """``data``: the tokenizer file's bytes, the ones ``reference`` was loaded from."""
        try:
            import gigatoken
        except ImportError as err:
            raise FastEngineUnavailable("not_installed", reference) from err
        self.reference = reference
        self.spec = reference.spec
        self.vocab_size = reference.vocab_size
        self.unk_id, self.unk_source = reference.unk_id, reference.unk_source
        self.pad_id, self.pad_source = reference.pad_id, reference.pad_source
        self.eos_id, self.eos_source = reference.eos_id, reference.eos_source
        self.offset_unit = reference.offset_unit
        self.engine_version = f"gigatoken {importlib.metadata.version('gigatoken')}"
        self.file_sha256 = reference.file_sha256
        try:
            loaded = _tokenizer_json(reference, data, self.engine_version)
            self._fast = gigatoken.Tokenizer.from_json(loaded)
        except Exception as err:  # gigatoken raises RuntimeError or ValueError, naming the model
            raise FastEngineUnavailable("unsupported", reference, str(err).splitlines()[0]) from err

    def encode(self, text: str) -> list[int]:
        """Token ids of one text (the reference library's)."""
        return self.reference.encode(text)

    def decode(self, ids: list[int]) -> str:
        """Text of a list of ids (the reference library's)."""
        return self.reference.decode(ids)

    def encode_batch_starts(
        self, texts: list[str], utf8: list[bytes]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reference's ids, counts and token starts (gigatoken reports no offsets)."""
        return self.reference.encode_batch_starts(texts, utf8)

    def encode_batch(self, texts: list[str], utf8: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """All ids of ``utf8`` back to back (uint32), and each text's count (int64)."""
        if not utf8:
            return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.int64)
        # parallel=False: one thread, like the reference engine; the worker pool owns the cores.
        import awkward as ak  # gigatoken's own dependency

        batch = self._fast.encode_batch(utf8, parallel=False)
        layout = batch.layout
        if not hasattr(layout, "offsets"):  # a list layout of starts and stops: pack it first
            layout = ak.to_packed(batch).layout
        offsets = np.asarray(layout.offsets.data)
        # The flat buffer and offsets of the awkward array, without a per-text object.
        flat = np.asarray(layout.content.data)[offsets[0] : offsets[-1]]
        return flat, np.diff(offsets)


def _tokenizer_json(reference: Reference, data: bytes, library: str) -> str | bytes:
    """The file gigatoken loads: padding and truncation off, SentencePiece control pieces out.

    A tokenizer.json that asks for neither is loaded from its own bytes, never parsed here: a
    parse and a rewrite of its vocabulary and merges took 40 ms of roberta-base's 140 ms load,
    and their freed objects kept 20-60 MB of the process that forks the workers (orjson kept
    the most), for nothing. A SentencePiece model's conversion is kept on disk (converted.py).
    """
    if isinstance(reference, SentencePieceEncoder):
        return converted(data, library, lambda: _sentencepiece_json(reference, data))
    if not reference.pads_or_truncates:
        return data
    return _switched_off(json.loads(data.decode("utf-8")))


def _sentencepiece_json(reference: SentencePieceEncoder, data: bytes) -> bytes:
    from gigatoken._load.sentencepiece import sentencepiece_to_tokenizer_json

    content = json.loads(sentencepiece_to_tokenizer_json(data))
    content["added_tokens"] = [
        token for token in content["added_tokens"] if not reference.is_control(token["id"])
    ]
    return _switched_off(content)


def _switched_off(content: dict) -> bytes:
    # The reference encoder switches both off on its loaded object (hf_json.py); so must this.
    content["padding"] = None
    content["truncation"] = None
    # orjson: the standard library's encoder took 0.18 s for mistral-7b's converted model.
    return orjson.dumps(content)
