"""Pieces: the logical units of work of a build, fixed by the input alone, and their encoding.

A piece is a byte range of one input file, cut just after a newline: piece boundaries are the
ends of the first line ending at or past each multiple of ``piece_bytes`` in the file (a line
longer than that spans several multiples and makes one piece). So the cuts depend on the file's
bytes and ``piece_bytes`` only: never on the worker count, the executor or the cluster, and an
edit inside one piece moves no other cut.

``cut_pieces`` runs in the main process (the driver): one pass over each file that hashes the
file (its fingerprint for the manifest), numbers the lines and hashes each piece. A
``PieceEncoder`` runs wherever the work is done (this process, a worker process, a Ray actor):
it reads its piece from the file, checks the bytes against the piece's digest, and encodes
them batch by batch with the same ``BatchEncoder`` a build always uses, into the piece's
fragment in the output's staging area (``build/write/staging.py``). A fragment already there and
intact for the same piece is reused, which is how a build resumes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Generator, Iterator

from mintdim.build.batch import BatchEncoder, EncodedBatch
from mintdim.build.contracts import BuildPlan, FilePlan, TokenizerSpec
from mintdim.build.source.jsonl import InputFingerprint, read_raw_batches
from mintdim.build.tokenizer import Encoder
from mintdim.build.write.staging import Fragment, Piece, Staging
from mintdim.errors import BuildWriteError, InputChangedError, MintDimError

__all__ = ["PieceEncoder", "cut_pieces", "default_piece_bytes"]

_READ_BLOCK = 8 << 20
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


def cut_pieces(plan: FilePlan, piece_bytes: int) -> Generator[Piece, None, InputFingerprint]:
    """Stream one file's pieces in order; returns the file's fingerprint, as reading it gives.

    Memory holds one piece and one read block.
    """
    whole = hashlib.sha256()
    count = 0
    number = 0
    line = 1
    start = 0  # file offset of buffer[0], the next piece's start
    buffer = bytearray()
    with open(plan.abs_path, "rb") as handle:
        mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
        while block := handle.read(_READ_BLOCK):
            whole.update(block)
            count += len(block)
            buffer += block
            while (cut := _next_cut(buffer, start, piece_bytes, plan.max_line_bytes)) is not None:
                piece = Piece(plan.index, number, start, cut, line, _sha256(buffer, cut - start))
                line += buffer.count(b"\n", 0, cut - start)
                del buffer[: cut - start]
                start, number = cut, number + 1
                yield piece
    if buffer:  # the last piece, its last line perhaps without a newline
        yield Piece(plan.index, number, start, count, line, _sha256(buffer, len(buffer)))
    return InputFingerprint(count, mtime_ns, whole.hexdigest())


def _next_cut(buffer: bytearray, start: int, piece_bytes: int, max_line: int) -> int | None:
    """The file offset where the piece starting at ``start`` ends, if ``buffer`` reaches it.

    A line longer than ``max_line`` ends its piece where the buffer ends, so memory stays
    bounded: reading that piece raises ``LineTooLongError`` for it, in input order.
    """
    target = (start // piece_bytes + 1) * piece_bytes  # the next multiple past this piece's start
    newline = buffer.find(b"\n", max(0, target - 1 - start))
    if newline >= 0:
        return start + newline + 1
    if len(buffer) - (buffer.rfind(b"\n") + 1) > max_line:
        return start + len(buffer)
    return None


def _sha256(buffer: bytearray, size: int) -> str:
    with memoryview(buffer) as view:
        return hashlib.sha256(view[:size]).hexdigest()


class PieceEncoder:
    """Per-process state for encoding pieces: the ``BatchEncoder`` (tokenizers loaded once)."""

    def __init__(self, plan: BuildPlan, encoders: dict[TokenizerSpec, Encoder] | None = None):
        self.plan = plan
        self._batches = BatchEncoder(plan, encoders)

    def __call__(self, piece: Piece) -> Fragment:
        """The piece's fragment: reused when intact in the staging area, else encoded now."""
        file = self.plan.files[piece.file_index]
        output = self.plan.outputs[file.output_index]
        staging = Staging(output.abs_path)
        try:
            return staging.reuse(piece) or staging.write(piece, self._encoded(file, piece))
        except OSError as err:  # a full disk, the file-size limit: the output's, named
            if isinstance(err, MintDimError):
                raise
            raise BuildWriteError.from_os_error("output", output.path, err) from err

    def _encoded(self, file: FilePlan, piece: Piece) -> Iterator[EncodedBatch | MintDimError]:
        """The piece's batches in order, up to and including the first one that fails."""
        raws = read_raw_batches(file, piece.start, piece.end, piece.first_line)
        while True:
            try:
                raw = next(raws)
            except StopIteration as done:
                _check_same_bytes(file, piece, done.value)
                return
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


def _check_same_bytes(file: FilePlan, piece: Piece, read: InputFingerprint) -> None:
    """The bytes encoded must be the bytes the driver cut (another node, or a later moment)."""
    if read.sha256 != piece.sha256:
        raise InputChangedError(
            file=file.path,
            change="content",
            was=piece.sha256,
            now=read.sha256,
            byte_range=f"{piece.start}-{piece.end}",
        )
