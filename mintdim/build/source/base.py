"""What every input format gives the build: the ``Source`` protocol and the values it trades in.

A ``Source`` is one input file read in the format it is stored in; ``open_source`` (this
package's ``__init__``) opens the one a ``FilePlan`` names. The build asks each source for these
things, and nothing else about the format leaks out of its module:

- ``check``: what can be known before reading a record (validation);
- ``pieces``: the file cut into pieces, the logical units of work (driver; one pass that also
  fingerprints the file as stored, for the manifest);
- ``piece_batches``: one piece's raw batches, wherever a worker runs, checked against what the
  driver cut (``InputChangedError`` when they differ);
- ``batches``: the whole file's raw batches in one stream (a scan, a build that stages nothing,
  the parity guard's first batch, ``verify --deep``), returning the same fingerprint;
- ``parse``: a raw batch's field values and rendered texts, up to its first record that breaks
  a rule of the spec (in whichever process encodes);
- ``records``: every record of the file whole, all its fields as stored, in batches (groups,
  splits and decontamination re-read records through it, whatever the format), returning the
  same fingerprint;
- ``check_unchanged``: whether the stored file still has the size and mtime it was read with.

A raw batch (``Batch``) is up to ``build_batch`` consecutive records and the 1-based number of
the first: a line of the (decompressed) stream for JSONL, a row for Parquet. Numbers count
every record, blank lines included, so they are the places a user finds in the file.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from mintdim.build.contracts import FilePlan
from mintdim.errors import InputChangedError, MintDimError

__all__ = [
    "MAX_CARRIED_BYTES",
    "Batch",
    "FileSource",
    "InputFingerprint",
    "ParsedLines",
    "Piece",
    "PieceWork",
    "Records",
    "Source",
    "check_unchanged",
]


MAX_CARRIED_BYTES = 8 << 20
"""The most a piece that carries its records to the worker holds (decompressed lines, decoded
Parquet rows): such pieces are in flight a few per worker, and this keeps that memory small."""


@dataclass(frozen=True, slots=True)
class InputFingerprint:
    """An input file as the build read it: recorded in the manifest, checked at the end."""

    bytes: int
    """Bytes of the file as stored (compressed, BOM included), all read."""
    mtime_ns: int
    """Modification time when the file was opened."""
    sha256: str
    """SHA-256 of the stored bytes, taken while reading (no second pass)."""


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes ``start`` to ``end`` of input file ``file_index``, as its source cut them.

    The offsets are in the stream the source cuts: the file itself for plain JSONL and Parquet,
    the decompressed stream for compressed JSONL. A piece is fixed by the input and the piece
    size alone, never by the workers: it names a fragment in the staging area.
    """

    file_index: int
    number: int
    """The piece's position in its file, from 0."""
    start: int
    end: int
    first_line: int
    """The 1-based number of the piece's first record (line, or Parquet row)."""
    sha256: str
    """SHA-256 of the piece's bytes, as the driver read them."""


@dataclass(frozen=True, slots=True)
class PieceWork:
    """A piece as the driver hands it to the work function."""

    piece: Piece
    data: bytes | None = None
    """The piece's records when no worker can read them from the file itself, read once by the
    driver: a compressed stream's decompressed lines, or the rows of a Parquet row group too
    large for one piece (Arrow IPC); None: the worker reads them."""
    error: MintDimError | None = None
    """What stopped the driver's reading just after this piece (a damaged stream): the worker
    raises it after the piece's records, so it comes in input order."""
    ratio: float = 1.0
    """Stored bytes per byte of carried lines, or per carried Parquet row (the progress bar
    counts the file as stored)."""
    row_groups: range | None = None
    """Parquet: the row groups the piece holds (the worker checks them against the file)."""


@dataclass(slots=True)
class ParsedLines:
    """The rendered texts of a batch up to its first bad record, and that record's error if any."""

    texts: list[str]
    values: list[tuple[str, ...]]
    """Per sample, its field values in declared field order (segments, ``empty_fields``)."""
    line_numbers: list[int]
    """Per sample, its 1-based line (JSONL) or row (Parquet) in its file."""
    blank_lines: int
    error: MintDimError | None


@dataclass(slots=True)
class Records:
    """Whole records of consecutive lines (rows) of one file, up to the first line that holds no
    record, and that line's error if any."""

    records: list[dict[str, object]]
    """Each record with every field it has, as stored (JSON values; Parquet: the row's columns)."""
    line_numbers: list[int]
    """Per record, its 1-based line (JSONL) or row (Parquet) in its file."""
    blank_lines: int
    error: MintDimError | None
    fields: tuple[str, ...] = ()
    """Every field a record of the file may hold, where the format declares them (Parquet: its
    columns, read or not); empty where only the records themselves tell (JSONL)."""


class Batch(Protocol):
    """Consecutive raw records of one file, not parsed yet (picklable: it travels to workers)."""

    file_index: int
    first_line: int
    """The 1-based number of the batch's first record."""

    @property
    def last_line(self) -> int:
        """The 1-based number of the batch's last record."""

    @property
    def input_bytes(self) -> int:
        """The share of the stored file the batch stands for (the progress bar's unit)."""


class Source(Protocol):
    """One input file, read in the format it is stored in (see the module docstring)."""

    plan: FilePlan

    def check(self) -> None:
        """What can be known before any record is read (Parquet: the footer reads and holds
        every declared field): validation calls it, so a bad file fails before any work."""

    def pieces(self, piece_bytes: int) -> Generator[PieceWork, None, InputFingerprint]:
        """The file's pieces in order (``piece_bytes``: the size to cut at); returns the stored
        file's fingerprint."""

    def piece_batches(self, work: PieceWork) -> Iterator[Batch]:
        """One piece's raw batches; ``InputChangedError`` when its bytes are not the cut ones."""

    def batches(self) -> Generator[Batch, None, InputFingerprint]:
        """Every raw batch of the file in order; returns the stored file's fingerprint."""

    def parse(self, batch: Batch) -> ParsedLines:
        """Field values and texts of the batch's records, up to the first that breaks a rule."""

    def records(
        self, fields: Sequence[str] | None = None
    ) -> Generator[Records, None, InputFingerprint]:
        """Every record of the file, in batches of up to ``build_batch`` lines (rows); returns
        the stored file's fingerprint. ``fields``: what is wanted beside the declared fields
        (None: every field). A JSONL line is parsed whole either way (``max_line_bytes`` bounds
        it); Parquet reads only those columns, and a field that is no column is absent."""

    def check_unchanged(self, fingerprint: InputFingerprint) -> None:
        """``InputChangedError`` when the stored file differs from when it was read."""


class FileSource:
    """What every source shares: its plan, and the unchanged check of the file as stored."""

    def __init__(self, plan: FilePlan) -> None:
        self.plan = plan

    def check_unchanged(self, fingerprint: InputFingerprint) -> None:
        """``check_unchanged`` for this source's file."""
        check_unchanged(self.plan, fingerprint)


def check_unchanged(plan: FilePlan, fingerprint: InputFingerprint) -> None:
    """Raise ``InputChangedError`` when a file's size or mtime differ from when it was read."""
    try:
        status = os.stat(plan.abs_path)
    except OSError as err:
        raise InputChangedError(
            file=plan.path, change="gone", was=str(fingerprint.bytes), now=str(err)
        ) from err
    if status.st_size != fingerprint.bytes:
        raise InputChangedError(
            file=plan.path,
            change="size",
            was=str(fingerprint.bytes),
            now=str(status.st_size),
        )
    if status.st_mtime_ns != fingerprint.mtime_ns:
        raise InputChangedError(
            file=plan.path,
            change="mtime",
            was=str(fingerprint.mtime_ns),
            now=str(status.st_mtime_ns),
        )
