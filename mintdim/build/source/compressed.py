"""Compressed JSONL: gzip, zstandard, xz and bzip2 streams, read as the plain JSONL they hold.

The format is recognised by the file's first bytes (``CODECS``' magic), so ``data.jsonl`` that is
really gzip is read as gzip; a name whose extension claims a compression the bytes do not have
is refused at validation (``source/validate.py``). Every plain-JSONL rule (``jsonl.py``: lines
end at ``\\n`` only, CRLF, a BOM at the start, blank lines counted) applies to the decompressed
stream unchanged, and line numbers are lines of that stream.

A file is read whole: every gzip member, zstandard frame (skippable frames included), xz or
bzip2 stream after the first, one after the other. Each stream must end with its end marker:
python-zstandard's ``stream_reader`` stops after the first frame unless told otherwise and, like
``read_to_iter``, ends quietly on a truncated frame, so decompression here goes member by member
through each library's ``decompressobj``-style object and checks ``eof`` where the file ends.
A damaged stream (cut short, bytes that do not decompress) ends the records at the last whole
line before the damage and is a ``CompressedStreamError`` naming that line, raised in input
order after the records before it.

Pieces: a compressed stream cannot be entered in the middle, so the driver decompresses each
file once and cuts the decompressed stream at line ends exactly as a plain file's bytes are cut
(``jsonl.cut_lines``); each piece carries its decompressed lines to the worker that encodes it,
at most ``MAX_CARRIED_BYTES``, so the memory in flight stays a few pieces per worker. One piece
per file, the alternative, would put a whole file's work on one process and leave every other
core idle on a one-file input; carrying costs a few percent more CPU in all (measured with
benchmarks/sources.py: benchmarks/RESULTS.md), and the driver's decompression.

The fingerprint (manifest, unchanged check) is of the file as stored: its size, mtime and the
SHA-256 of the compressed bytes.
"""

from __future__ import annotations

import bz2
import hashlib
import lzma
import os
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import zstandard

from mintdim.build.contracts import FilePlan
from mintdim.build.source.base import (
    MAX_CARRIED_BYTES,
    FileSource,
    InputFingerprint,
    ParsedLines,
    PieceWork,
    Records,
)
from mintdim.build.source.jsonl import (
    BOM,
    READ_BLOCK,
    RawBatch,
    Stream,
    cut_lines,
    line_batches,
    parse_lines,
    whole_records,
)
from mintdim.errors import CompressedStreamError

__all__ = ["CODECS", "CompressedJsonlSource"]

_FEED = 64 << 10
"""Compressed bytes given to a decompressor at once: zstandard's objects take no output limit,
so this bounds what one call can return (measured: no slower than 1 MiB for gzip or zstd)."""


@dataclass(frozen=True)
class Codec:
    """One compression: how to recognise it and how to decompress one member of it."""

    code: str
    """The code errors name it by: ``gzip``, ``zstd``, ``xz``, ``bz2``."""
    magic: tuple[bytes, ...]
    """First bytes of a member (zstandard: of a frame, or of a skippable frame)."""
    extensions: tuple[str, ...]
    """Name endings that claim this compression."""
    member: Callable[[], Any]
    """A new decompressor for one member: ``decompress(data)``, ``eof``, ``unused_data``."""
    errors: tuple[type[BaseException], ...]
    """What the decompressor raises for bytes that do not decompress."""


CODECS: dict[str, Codec] = {
    "jsonl.gz": Codec(
        "gzip", (b"\x1f\x8b",), (".gz", ".gzip"), lambda: zlib.decompressobj(31), (zlib.error,)
    ),
    "jsonl.zst": Codec(
        "zstd",
        (b"\x28\xb5\x2f\xfd", *(bytes([0x50 + i]) + b"\x2a\x4d\x18" for i in range(16))),
        (".zst", ".zstd"),
        lambda: zstandard.ZstdDecompressor().decompressobj(),
        (zstandard.ZstdError,),
    ),
    "jsonl.xz": Codec("xz", (b"\xfd7zXZ\x00",), (".xz",), lzma.LZMADecompressor, (lzma.LZMAError,)),
    "jsonl.bz2": Codec("bz2", (b"BZh",), (".bz2",), bz2.BZ2Decompressor, (OSError,)),
}
"""The compressed JSONL formats, by the ``FilePlan.format`` that names them."""


class CompressedJsonlSource(FileSource):
    """A compressed JSONL file: decompressed once by the driver, pieces carry their lines."""

    def __init__(self, plan: FilePlan) -> None:
        super().__init__(plan)
        self.codec = CODECS[plan.format]

    def pieces(self, piece_bytes: int) -> Generator[PieceWork, None, InputFingerprint]:
        """The decompressed stream cut at line ends, each piece with its lines; returns the
        stored file's fingerprint."""
        stream = _Decompressed(self.plan, self.codec, drop_bom=False)  # offsets count every byte
        yield from cut_lines(self.plan, stream, min(piece_bytes, MAX_CARRIED_BYTES), carry=True)
        return stream.fingerprint

    def piece_batches(self, work: PieceWork) -> Iterator[RawBatch]:
        """The raw batches of the lines the piece carries, then the stream's damage if the
        driver met it right after them."""
        data = work.data or b""
        if work.piece.start == 0 and data.startswith(BOM):
            data = data[len(BOM) :]
        yield from line_batches(self.plan, _Carried(data, work.ratio), work.piece.first_line)
        if work.error is not None:
            raise work.error

    def batches(self) -> Generator[RawBatch, None, InputFingerprint]:
        """The decompressed stream as batches of raw lines; returns the stored file's
        fingerprint."""
        stream = _Decompressed(self.plan, self.codec)
        yield from line_batches(self.plan, stream, 1)
        return stream.fingerprint

    def check(self) -> None:
        """Nothing to check before reading: validation matched the magic bytes already."""

    def parse(self, batch: RawBatch) -> ParsedLines:
        """``jsonl.parse_lines``: the decompressed lines are JSONL lines."""
        return parse_lines(batch, self.plan)

    def records(self) -> Generator[Records, None, InputFingerprint]:
        """``jsonl.whole_records`` of ``batches``."""
        return (yield from whole_records(self.batches(), self.plan))


class _Carried(Stream):
    """A piece's lines as the driver decompressed them: one block."""

    def __init__(self, data: bytes, ratio: float) -> None:
        self.data = data
        self.ratio = ratio

    def __iter__(self) -> Iterator[bytes]:
        yield self.data


class _Decompressed(Stream):
    """The decompressed stream of a stored file, in blocks of about ``READ_BLOCK`` bytes.

    The stored bytes are hashed as read (``fingerprint``, once iterated). A damaged stream ends
    the blocks early and sets ``damage``; unless ``drop_bom`` is False, a BOM at the start of
    the decompressed stream is dropped.
    """

    def __init__(self, plan: FilePlan, codec: Codec, drop_bom: bool = True) -> None:
        self.plan = plan
        self.codec = codec
        self.drop_bom = drop_bom
        self.fingerprint = InputFingerprint(0, 0, "")

    def __iter__(self) -> Iterator[bytes]:
        digest = hashlib.sha256()
        stored = produced = 0
        held: list[bytes] = []
        first = True
        with open(self.plan.abs_path, "rb") as handle:
            mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
            members = _Members(self.codec)
            while block := handle.read(_FEED):
                digest.update(block)
                stored += len(block)
                try:
                    members.decompress(block, held)
                except self.codec.errors as err:
                    self.damage = self._damage("corrupt", str(err))
                    break
                if members.held >= READ_BLOCK:
                    produced += members.held
                    self.ratio = stored / produced
                    yield self._block(held, first)
                    held, first, members.held = [], False, 0
            else:
                if members.open:
                    self.damage = self._damage("truncated", "")
        if held:
            self.ratio = stored / (produced + members.held)
            yield self._block(held, first)
        self.fingerprint = InputFingerprint(stored, mtime_ns, digest.hexdigest())

    def _block(self, held: list[bytes], first: bool) -> bytes:
        block = b"".join(held)
        if first and self.drop_bom and block.startswith(BOM):
            return block[len(BOM) :]
        return block

    def _damage(self, problem: str, detail: str) -> Callable[[int], CompressedStreamError]:
        plan, code = self.plan, self.codec.code

        def error(last_line: int) -> CompressedStreamError:
            return CompressedStreamError(
                file=plan.path,
                compression=code,
                problem=problem,
                last_line=last_line,
                detail=detail,
            )

        return error


class _Members:
    """Decompression across members (frames, streams), one decompressor each."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.member = codec.member()
        self.open = False
        """A member has begun and not ended: the stream must go on."""
        self.held = 0
        """Bytes decompressed since the caller last set it to 0."""

    def decompress(self, data: bytes, out: list[bytes]) -> None:
        """Append what ``data`` decompresses to, member after member, to ``out``: when a later
        member is damaged, what the earlier ones gave is already there."""
        while data:
            out.append(self.member.decompress(data))
            self.held += len(out[-1])
            self.open = not self.member.eof
            if self.open:
                break
            data = self.member.unused_data
            self.member = self.codec.member()
