"""One batch, start to end of the expensive part: parse -> render -> hash -> encode -> (parity
guard) -> assign -> pad.

This is the work a worker process does (or the main process, with one worker); a scan does
only parse -> render -> encode and keeps the counts (``BatchCounter``). It returns
everything the writer needs in bulk form, including pre-formatted index fragments, so the main
process only adds sample ids and shard positions. It never raises for bad data: the first failing
sample's error comes back inside the result, so the main process can fail at the same sample,
in input order, whatever worker met it.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass

import numpy as np
import orjson

from mintdim.pipelines.unit_build.contracts import BuildPlan, TokenizerSpec
from mintdim.pipelines.unit_build.output.sample_index import sample_parts
from mintdim.pipelines.unit_build.output.unk_index import unk_part
from mintdim.pipelines.unit_build.source.jsonl import ParsedLines, RawBatch, parse_lines
from mintdim.pipelines.unit_build.tokenizer import Encoder, load_encoder, parity
from mintdim.pipelines.unit_build.tokenizer.fast import FastEncoder
from mintdim.pipelines.unit_build.units.planner import assign_units, first_overflow, padded_rows
from mintdim.shared.errors import (
    MintDimError,
    TokenizerEncodeError,
    TokenizerParityError,
    UnitOverflowError,
)

__all__ = ["BatchCounter", "BatchEncoder", "CountedBatch", "EncodedBatch"]


@dataclass(slots=True)
class EncodedBatch:
    """The encoded samples of one raw batch, in input order."""

    file_index: int
    input_bytes: int
    """Bytes of the input file this batch consumed: its lines and their newlines."""
    blank_lines: int
    token_counts: np.ndarray
    """Exact token count per sample (int64)."""
    unit_indexes: np.ndarray
    """Index into the file's sizes per sample (int64)."""
    digests: bytes
    """SHA-256 of each rendered text's UTF-8 bytes, 32 bytes per sample, back to back."""
    rows: list[np.ndarray]
    """Per unit index, the padded records of this batch's samples in that unit, in order."""
    index_parts: list[str]
    """Per sample, the middle of its sample_index.jsonl line (``sample_index.sample_parts``)."""
    unk_parts: list[tuple[int, str]]
    """(sample position in batch, ``unk_index.unk_part``) for the samples with UNK."""
    unk_tokens: int
    parity_rows: int
    """Rows the parity guard re-encoded with the reference library (0 for the reference engine)."""
    error: MintDimError | None
    """The first failing sample's error; samples before it are still reported."""

    @property
    def sample_count(self) -> int:
        """Number of samples in the batch (blank lines excluded)."""
        return int(self.token_counts.size)


@dataclass(slots=True)
class CountedBatch:
    """A scanned batch: each sample's exact token count and line, nothing padded or hashed."""

    file_index: int
    input_bytes: int
    """Bytes of the input file this batch consumed: its lines and their newlines."""
    token_counts: np.ndarray
    """Exact token count per sample (int64)."""
    line_numbers: list[int]
    """1-based line of each sample in its file."""
    error: MintDimError | None
    """The first bad line's error; samples before it are still counted."""

    @property
    def sample_count(self) -> int:
        """Number of samples counted."""
        return int(self.token_counts.size)


class _Tokenizing:
    """Per-process state: the plan and its loaded tokenizers, loaded once."""

    def __init__(self, plan: BuildPlan, encoders: dict[TokenizerSpec, Encoder] | None = None):
        self.plan = plan
        self._encoders = dict(encoders or {})

    def __getstate__(self) -> dict:
        # Under spawn the worker reloads tokenizers from their files instead of unpickling them.
        return {"plan": self.plan}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["plan"])

    def _encoder(self, spec: TokenizerSpec) -> Encoder:
        if spec not in self._encoders:
            self._encoders[spec] = load_encoder(spec)
        return self._encoders[spec]


class BatchCounter(_Tokenizing):
    """A scan's work per batch: parse -> render -> encode (-> parity guard), exactly as a build
    does, then count."""

    def __call__(self, raw: RawBatch) -> CountedBatch:
        """Count one raw batch (the function workers run)."""
        file = self.plan.files[raw.file_index]
        parsed = parse_lines(raw, file)
        utf8 = [text.encode("utf-8") for text in parsed.texts]
        encoder = self._encoder(file.tokenizer)
        flat, lengths = _encode(encoder, parsed, utf8, file.path)
        # A fast engine is held to the reference library here exactly as in a build.
        _, mismatch = _parity(encoder, raw, parsed, utf8, flat, lengths, file.path)
        lines, error = parsed.line_numbers, parsed.error
        if mismatch is not None:
            keep, error = mismatch
            lengths, lines = lengths[:keep], lines[:keep]
        return CountedBatch(raw.file_index, len(raw.data) + 1, lengths, lines, error)


class BatchEncoder(_Tokenizing):
    """A build's work per batch: parse -> render -> hash -> encode -> assign -> pad."""

    def __init__(self, plan: BuildPlan, encoders: dict[TokenizerSpec, Encoder] | None = None):
        super().__init__(plan, encoders)
        self._file_json = [orjson.dumps(f.path).decode() for f in plan.files]

    def __call__(self, raw: RawBatch) -> EncodedBatch:
        """Encode one raw batch (the function workers run)."""
        file = self.plan.files[raw.file_index]
        output = self.plan.outputs[file.output_index]
        encoder = self._encoder(file.tokenizer)
        parsed = parse_lines(raw, file)
        utf8 = [text.encode("utf-8") for text in parsed.texts]
        flat, lengths = _encode(encoder, parsed, utf8, file.path)
        checked, mismatch = _parity(encoder, raw, parsed, utf8, flat, lengths, file.path)
        sizes = np.asarray(file.sizes, dtype=np.int64)
        units = assign_units(lengths, sizes)
        error = parsed.error
        keep = first_overflow(units, sizes.size)
        if keep is not None:  # the overflowing sample comes before any later bad line
            error = UnitOverflowError(
                file=file.path,
                line=parsed.line_numbers[keep],
                token_count=int(lengths[keep]),
                max_unit_size=int(sizes[-1]),
            )
        if mismatch is not None and (keep is None or mismatch[0] < keep):
            keep, error = mismatch
        if keep is not None:
            utf8, lengths, units = utf8[:keep], lengths[:keep], units[:keep]
            flat = flat[: int(lengths.sum())]
        lines = parsed.line_numbers[: len(utf8)]
        digests = b"".join([hashlib.sha256(data).digest() for data in utf8])
        # One hex conversion for the batch, sliced per sample, is ten times cheaper than n calls.
        hex_all = digests.hex()
        hexes = [hex_all[i : i + 64] for i in range(0, len(hex_all), 64)]
        source = self._file_json[raw.file_index]
        index_parts = sample_parts(hexes, lengths.tolist(), sizes[units].tolist(), source, lines)
        unk_parts, unk_tokens = _unk_parts(flat, lengths, output.info.unk_id, hexes, lines, source)
        rows = [
            padded_rows(flat, lengths, units == u, size, output.info.pad_id, output.info.dtype)
            for u, size in enumerate(file.sizes)
        ]
        return EncodedBatch(
            file_index=raw.file_index,
            input_bytes=len(raw.data) + 1,
            blank_lines=parsed.blank_lines,
            token_counts=lengths,
            unit_indexes=units,
            digests=digests,
            rows=rows,
            index_parts=index_parts,
            unk_parts=unk_parts,
            unk_tokens=unk_tokens,
            parity_rows=checked,
            error=error,
        )


def _encode(
    encoder: Encoder, parsed: ParsedLines, utf8: list[bytes], file: str
) -> tuple[np.ndarray, np.ndarray]:
    try:
        return encoder.encode_batch(parsed.texts, utf8)
    except Exception as err:  # the libraries raise bare exceptions; name the sample instead
        for text, line in zip(parsed.texts, parsed.line_numbers, strict=True):
            try:
                encoder.encode(text)
            except Exception as single:
                raise TokenizerEncodeError(
                    file=file, line=line, path=encoder.spec.path, detail=str(single)
                ) from single
        raise TokenizerEncodeError(
            file=file, line=parsed.line_numbers[0], path=encoder.spec.path, detail=str(err)
        ) from err


def _parity(
    encoder: Encoder,
    raw: RawBatch,
    parsed: ParsedLines,
    utf8: list[bytes],
    flat: np.ndarray,
    lengths: np.ndarray,
    file: str,
) -> tuple[int, tuple[int, TokenizerParityError] | None]:
    """The parity guard during the build (tokenizer/parity.py): ``(rows checked, (position of
    the first row whose ids differ, its error) or None)``."""
    if not isinstance(encoder, FastEncoder):
        return 0, None
    rows = parity.build_rows(len(utf8), first_batch=raw.first_line == 1).tolist()
    ends = np.cumsum(lengths)
    sampled = (
        np.concatenate([flat[ends[r] - lengths[r] : ends[r]] for r in rows]) if rows else flat[:0],
        lengths[rows],
    )
    error = parity.check(
        encoder,
        [parsed.texts[r] for r in rows],
        [utf8[r] for r in rows],
        sampled,
        [(file, parsed.line_numbers[r]) for r in rows],
        "build",
    )
    if error is None:
        return len(rows), None
    return len(rows), (parsed.line_numbers.index(error.line), error)


def _unk_parts(
    flat: np.ndarray,
    lengths: np.ndarray,
    unk_id: int,
    hexes: list[str],
    lines: list[int],
    source: str,
) -> tuple[list[tuple[int, str]], int]:
    """unk_index.jsonl fragments for the samples whose tokens include ``unk_id``."""
    hits = np.flatnonzero(flat == unk_id)
    if not hits.size:
        return [], 0
    ends = np.cumsum(lengths)
    samples = np.searchsorted(ends, hits, side="right")
    positions = (hits - (ends - lengths)[samples]).tolist()
    # Python lists from here: slicing them is far cheaper than np.split for many small pieces.
    cuts = [0, *(np.flatnonzero(np.diff(samples)) + 1).tolist(), len(positions)]
    samples = samples.tolist()
    parts = []
    for start, stop in itertools.pairwise(cuts):
        sample = samples[start]
        parts.append(
            (sample, unk_part(hexes[sample], source, lines[sample], positions[start:stop]))
        )
    return parts, len(positions)
