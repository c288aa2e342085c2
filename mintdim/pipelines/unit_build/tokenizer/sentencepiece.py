"""SentencePiece ``.model`` files: loading, special ids from the processor, exact batch encoding."""

from __future__ import annotations

import numpy as np
import sentencepiece as spm

from mintdim.pipelines.unit_build.contracts import TokenizerSpec
from mintdim.shared.errors import TokenizerLoadError, TokenizerSpecialTokenError

__all__ = ["SentencePieceEncoder"]


class SentencePieceEncoder:
    """Encodes with ``SentencePieceProcessor.encode`` as is: no BOS/EOS, no sampling, one thread."""

    engine = "reference"
    engine_version = f"sentencepiece {spm.__version__}"

    def __init__(self, spec: TokenizerSpec) -> None:
        self.spec = spec
        self._sp = spm.SentencePieceProcessor()
        try:
            self._sp.Load(model_file=spec.abs_path)
        except (OSError, RuntimeError) as err:
            raise TokenizerLoadError(path=spec.path, method=spec.kind, detail=str(err)) from err
        self.vocab_size = self._sp.get_piece_size()
        self.unk_id, self.unk_source = self._special("unk_id", self._sp.unk_id())
        self.pad_id, self.pad_source = self._special("pad_id", self._sp.pad_id())

    def _special(self, name: str, value: int) -> tuple[int, str]:
        # SentencePiece reports an absent special piece as -1.
        if value < 0:
            raise TokenizerSpecialTokenError(
                token=name, path=self.spec.path, looked_for=f"sp.{name}() returned {value}"
            )
        return value, f"sp.{name}()"

    def is_control(self, token_id: int) -> bool:
        """Whether a piece is a control symbol (``<s>``, ``</s>``): never matched in text."""
        return self._sp.is_control(token_id)

    def encode(self, text: str) -> list[int]:
        """Token ids of one text."""
        return self._sp.encode(text)

    def decode(self, ids: list[int]) -> str:
        """Text of a list of ids."""
        return self._sp.decode(ids)

    def encode_batch(self, texts: list[str], utf8: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """All ids of ``texts`` concatenated, and each text's token count."""
        # UTF-8 bytes give the same ids 5-8% faster than str, and return_type="numpy" skips
        # building Python int lists, which costs as much as encoding (benchmarks/FINDINGS).
        arrays = self._sp.encode(utf8, num_threads=1, return_type="numpy")
        lengths = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
        flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int32)
        return flat, lengths
