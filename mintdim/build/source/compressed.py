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

Zero bytes after the last member are padding, as the reference tools read them (tar and some
writers pad this way): accepted after gzip and bzip2 members, and after and between xz streams
in multiples of four bytes (the xz format's Stream Padding); zstandard has none (``zstd -t``
refuses it). Any other byte after the last member is ``CompressedStreamError`` (``trailing``),
a member after gzip or bzip2 zeros too (their tools stop at the zeros and drop it).

**Memory is bounded by MintDim's limits, never by the input.** A decompression bomb (a few KB
that expand to gigabytes) must not be able to exhaust memory, so no call ever returns more than
about ``_CHUNK`` bytes: gzip, xz and bzip2 decompress with ``max_length`` and are called again for
what they hold back; zstandard's objects take no output bound, so they are fed ``_ZSTD_SLICE``
bytes at a time, and one zstandard block (4 bytes at the least) expands to 128 KiB at the most.
The line readers downstream refuse a line as soon as it passes ``max_line_bytes``.

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
from collections.abc import Callable, Generator, Iterator, Sequence
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
"""Compressed bytes read from the file at once."""
_CHUNK = 1 << 20
"""The most one gzip, xz or bzip2 decompression call returns (``max_length``)."""
_ZSTD_SLICE = 256
"""Compressed bytes one zstandard call is given: a zstandard block of 4 bytes (an RLE block)
can stand for 128 KiB, so one call returns 8 MiB at the most."""


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
    bounded: bool = True
    """Whether ``decompress`` takes ``max_length`` (zlib, lzma, bz2); else it is fed slices."""
    padding: int = 0
    """Zero bytes after the last member are padding in multiples of this (0: none allowed)."""


CODECS: dict[str, Codec] = {
    "jsonl.gz": Codec(
        "gzip",
        (b"\x1f\x8b",),
        (".gz", ".gzip"),
        lambda: zlib.decompressobj(31),
        (zlib.error,),
        padding=1,
    ),
    "jsonl.zst": Codec(
        "zstd",
        (b"\x28\xb5\x2f\xfd", *(bytes([0x50 + i]) + b"\x2a\x4d\x18" for i in range(16))),
        (".zst", ".zstd"),
        lambda: zstandard.ZstdDecompressor().decompressobj(),
        (zstandard.ZstdError,),
        bounded=False,
    ),
    "jsonl.xz": Codec(
        "xz", (b"\xfd7zXZ\x00",), (".xz",), lzma.LZMADecompressor, (lzma.LZMAError,), padding=4
    ),
    "jsonl.bz2": Codec("bz2", (b"BZh",), (".bz2",), bz2.BZ2Decompressor, (OSError,), padding=1),
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

    def records(
        self, fields: Sequence[str] | None = None
    ) -> Generator[Records, None, InputFingerprint]:
        """``jsonl.whole_records`` of ``batches`` (every line is parsed whole: ``fields``
        changes nothing)."""
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
        stored = produced = size = 0
        held: list[bytes] = []
        first = True
        with open(self.plan.abs_path, "rb") as handle:
            mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
            members = _Members(self.codec)
            while block := handle.read(_FEED):
                digest.update(block)
                stored += len(block)
                try:
                    for chunk in members.feed(block):
                        held.append(chunk)
                        size += len(chunk)
                        if size >= READ_BLOCK:
                            produced += size
                            self.ratio = stored / produced
                            yield self._block(held, first)
                            held, first, size = [], False, 0
                except _Trailing as err:
                    self.damage = self._damage("trailing", str(err))
                    break
                except self.codec.errors as err:
                    self.damage = self._damage("corrupt", str(err))
                    break
            else:
                if members.open:
                    self.damage = self._damage("truncated", "")
                elif members.padded % max(self.codec.padding, 1):
                    self.damage = self._damage("trailing", f"{members.padded} zero bytes")
        if held:
            self.ratio = stored / (produced + size)
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


class _Trailing(Exception):
    """Bytes after the last member that are neither a member nor padding."""


class _Members:
    """Decompression across members (frames, streams), one decompressor each, in chunks of a
    bounded size (module docstring)."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.member = codec.member()
        self.open = False
        """A member has begun and not ended: the stream must go on."""
        self.padded = 0
        """Zero bytes read after the last member (then nothing else may follow)."""

    def feed(self, data: bytes) -> Iterator[bytes]:
        """What ``data`` decompresses to, member after member, in chunks: when a later member is
        damaged, what the earlier ones gave is out already."""
        while data:
            if self.padded or (not self.open and self.codec.padding and not data[0]):
                rest = data.lstrip(b"\0")
                self.padded += len(data) - len(rest)
                if not rest:
                    return
                # xz's Stream Padding may stand between two streams (xz -t reads on); after
                # gzip and bzip2 the reference tools stop at the zeros and drop what follows.
                if self.codec.padding == 1 or self.padded % self.codec.padding:
                    raise _Trailing(f"a byte other than zero after {self.padded} zero bytes")
                data, self.padded = rest, 0
            self.open = True
            data = yield from (self._bounded if self.codec.bounded else self._sliced)(data)
            if self.member.eof:
                self.open = False
                self.member = self.codec.member()

    def _bounded(self, data: bytes) -> Generator[bytes, None, bytes]:
        """zlib, lzma and bz2: at most ``_CHUNK`` bytes a call, called again while they hold
        output back; returns the bytes after the member's end."""
        member = self.member
        while True:
            out = member.decompress(data, _CHUNK)
            if out:
                yield out
            if member.eof:
                return member.unused_data
            # zlib hands back the input it did not reach; lzma and bz2 keep it, and say when
            # they need more.
            data = getattr(member, "unconsumed_tail", b"")
            if not data and (
                member.needs_input if hasattr(member, "needs_input") else len(out) < _CHUNK
            ):
                return b""

    def _sliced(self, data: bytes) -> Generator[bytes, None, bytes]:
        """zstandard: ``_ZSTD_SLICE`` bytes a call; returns the bytes after the frame's end."""
        member = self.member
        for start in range(0, len(data), _ZSTD_SLICE):
            out = member.decompress(data[start : start + _ZSTD_SLICE])
            if out:
                yield out
            if member.eof:
                return member.unused_data + data[start + _ZSTD_SLICE :]
        return b""
