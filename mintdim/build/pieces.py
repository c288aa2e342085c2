"""Pieces: the logical units of work of a build, fixed by the input alone, and their encoding.

Each input's source cuts it into pieces (``source.Source.pieces``; plain JSONL: byte ranges at
line ends), in the main process (the driver), in one pass that also fingerprints each file for
the manifest. The cuts depend on the file and the piece size only: never on the worker count,
the executor or the cluster. A ``PieceEncoder`` runs wherever the work is done (this process, a
worker process, a Ray actor): its source reads the piece's raw batches (checked against what
the driver cut) and it encodes them batch by batch with the same ``BatchEncoder`` a build always
uses, into the piece's fragment in the output's staging area (``build/write/staging.py``). A
fragment already there and intact for the same piece is reused, which is how a build resumes.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

from mintdim.build.batch import BatchEncoder, EncodedBatch
from mintdim.build.contracts import BuildPlan, FilePlan, TokenizerSpec
from mintdim.build.source import InputFingerprint, PieceWork, open_source
from mintdim.build.tokenizer import Encoder
from mintdim.build.write.staging import Fragment, Staging
from mintdim.errors import BuildWriteError, InputChangedError, MintDimError

__all__ = ["PieceEncoder", "cut_pieces", "default_piece_bytes"]

_MIN_PIECE = 1 << 20
_MAX_PIECE = 256 << 20
_PIECES_PER_INPUT = 1024


def default_piece_bytes(input_bytes: int) -> int:
    """The piece size when none is given: a function of the input's total size only.

    About 1024 pieces, a power of two between 1 MiB (a second or so of tokenizing: per-piece
    costs stay small) and 256 MiB (a terabyte is ~4000 pieces: few files, few tasks).
    """
    target = max(1, input_bytes // _PIECES_PER_INPUT)
    return min(_MAX_PIECE, max(_MIN_PIECE, 1 << (target - 1).bit_length()))


def cut_pieces(plan: FilePlan, piece_bytes: int) -> Generator[PieceWork, None, InputFingerprint]:
    """Stream one file's pieces in order, as its source cuts them; returns the file's
    fingerprint, as reading it gives."""
    return open_source(plan).pieces(piece_bytes)


class PieceEncoder:
    """Per-process state for encoding pieces: the ``BatchEncoder`` (tokenizers loaded once)."""

    def __init__(self, plan: BuildPlan, encoders: dict[TokenizerSpec, Encoder] | None = None):
        self.plan = plan
        self._batches = BatchEncoder(plan, encoders)

    def __call__(self, work: PieceWork) -> Fragment:
        """The piece's fragment: reused when intact in the staging area, else encoded now."""
        piece = work.piece
        file = self.plan.files[piece.file_index]
        output = self.plan.outputs[file.output_index]
        staging = Staging(output.abs_path)
        try:
            return staging.reuse(piece) or staging.write(piece, self._encoded(file, work))
        except OSError as err:  # a full disk, the file-size limit: the output's, named
            if isinstance(err, MintDimError):
                raise
            raise BuildWriteError.from_os_error("output", output.path, err) from err

    def _encoded(self, file: FilePlan, work: PieceWork) -> Iterator[EncodedBatch | MintDimError]:
        """The piece's batches in order, up to and including the first one that fails."""
        raws = open_source(file).piece_batches(work)
        while True:
            try:
                raw = next(raws)
            except StopIteration:
                return
            except InputChangedError:
                raise  # not the piece's content: no fragment may keep it (a resume reads again)
            except MintDimError as error:  # a line over the length limit
                yield error
                return
            try:
                batch = self._batches(raw)
            except MintDimError as error:  # a sample the tokenizer refused
                yield error
                return
            yield batch
            if batch.error is not None:
                return
