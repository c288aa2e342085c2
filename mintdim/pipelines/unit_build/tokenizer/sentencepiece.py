"""SentencePiece ``.model`` files: loading, special ids from the processor, exact batch encoding."""

from __future__ import annotations

import numpy as np
import sentencepiece as spm

from mintdim.pipelines.unit_build.contracts import TokenizerSpec
from mintdim.pipelines.unit_build.tokenizer.specials import Found, resolve_specials
from mintdim.shared.errors import TokenizerLoadError

__all__ = ["SentencePieceEncoder"]


class SentencePieceEncoder:
    """Encodes with ``SentencePieceProcessor.encode`` as is: no BOS/EOS, no sampling, one thread."""

    offset_unit = "bytes"
    """``encode_batch_starts`` reports UTF-8 byte offsets (the texts are passed as bytes)."""
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
        ids = resolve_specials(
            spec,
            unk=self._found("unk_id", self._sp.unk_id()),
            pad=self._found("pad_id", self._sp.pad_id()),
            eos=self._found("eos_id", self._sp.eos_id()),
            looked_for={
                name: f"sp.{name}() returned {value}"
                for name, value in (
                    ("unk_id", self._sp.unk_id()),
                    ("pad_id", self._sp.pad_id()),
                    ("eos_id", self._sp.eos_id()),
                )
            },
            token_id=self._piece_id,
        )
        self.unk_id, self.unk_source = ids.unk_id, ids.unk_source
        self.pad_id, self.pad_source = ids.pad_id, ids.pad_source
        self.eos_id, self.eos_source = ids.eos_id, ids.eos_source

    @staticmethod
    def _found(name: str, value: int) -> Found:
        # SentencePiece reports an absent special piece as -1.
        return (value, f"sp.{name}()") if value >= 0 else None

    def _piece_id(self, piece: str) -> int | None:
        # piece_to_id answers unk_id for a piece it does not know: check the round trip.
        piece_id = self._sp.piece_to_id(piece)
        return piece_id if self._sp.id_to_piece(piece_id) == piece else None

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

    def encode_batch_starts(
        self, texts: list[str], utf8: list[bytes]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``encode_batch`` plus each token's start: the UTF-8 byte offset of its first byte.

        sentencepiece 0.2.3 gives per-piece offsets only as protos (``return_type="proto"``,
        which needs ``protobuf``; the old ``immutable_proto`` spelling is refused). The ids are
        the same as ``encode_batch``'s: one encoder, one normalisation.
        """
        protos = self._sp.encode(utf8, num_threads=1, return_type="proto")
        lengths = np.fromiter((len(p.pieces) for p in protos), dtype=np.int64, count=len(protos))
        pieces = [piece for proto in protos for piece in proto.pieces]
        flat = np.fromiter((p.id for p in pieces), dtype=np.int32, count=len(pieces))
        starts = np.fromiter((p.begin for p in pieces), dtype=np.int64, count=len(pieces))
        return flat, lengths, starts
