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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import orjson

from mintdim.build.contracts import BuildPlan, FilePlan, TokenizerSpec, record_kind
from mintdim.build.formats import spans
from mintdim.build.formats.sample_index import sample_parts
from mintdim.build.formats.unk_index import unk_parts_flat
from mintdim.build.segments import append_eos, stops_by_segments, stops_from_starts
from mintdim.build.source import Batch, ParsedLines, Source, open_source
from mintdim.build.tokenizer import Encoder, load_encoder, parity
from mintdim.build.tokenizer.fast import FastEncoder
from mintdim.build.units.planner import (
    assign_units,
    first_overflow,
    padded_rows,
    selected_tokens,
)
from mintdim.errors import (
    MintDimError,
    TokenizerEncodeError,
    TokenizerParityError,
    UnitOverflowError,
)

__all__ = [
    "EXTEND",
    "BatchCounter",
    "BatchEncoder",
    "CountedBatch",
    "EncodedBatch",
    "Overflow",
]


EXTEND = -1
"""Unit index of a sample waiting for an extended unit (``on_overflow="extend"``): the main
process picks or creates that unit, in input order, so the result never depends on batching."""


@dataclass(frozen=True, slots=True)
class Overflow:
    """One sample longer than the largest planned unit, and what the policy did with it."""

    position: int | None
    """Its position among the batch's kept samples; None when it was skipped."""
    line: int
    token_count: int
    """Its full token count, before any truncation."""
    action: str


@dataclass(slots=True)
class EncodedBatch:
    """The encoded samples of one raw batch, in input order."""

    file_index: int
    input_bytes: int
    """The share of the stored input file this batch stands for (``Batch.input_bytes``)."""
    blank_lines: int
    token_counts: np.ndarray
    """Stored token count per sample (int64): after truncation, with EOS."""
    unit_indexes: np.ndarray
    """Index into the file's sizes per sample (int64); ``EXTEND`` for an extended unit."""
    digests: bytes
    """SHA-256 of each rendered text's UTF-8 bytes, 32 bytes per sample, back to back."""
    line_numbers: np.ndarray
    """1-based line of each sample in its file (int64)."""
    rows: list[np.ndarray]
    """Per unit index, the padded records of this batch's samples in that unit, in order; for a
    packed output, their ids back to back (1-D, no PAD)."""
    span_rows: list[np.ndarray] | None
    """Per unit index, the segment-span rows beside ``rows`` (``build/formats/spans.py``), or None."""
    index_parts: list[str | None]
    """Per sample, the middle of its sample_index.jsonl line (``sample_index.sample_parts``);
    None for a sample waiting for an extended unit, whose size is not known yet."""
    unk_parts: list[tuple[int, str]]
    """(sample position in batch, its ``unk_index.unk_parts_flat`` entry) for the samples with
    UNK."""
    unk_tokens: int
    overflows: list[Overflow]
    extend_tokens: list[np.ndarray]
    """Ids of each ``EXTEND`` sample, in order."""
    extend_spans: list[np.ndarray]
    """Span row of each ``EXTEND`` sample, in order (empty without spans)."""
    extend_facts: list[tuple[str, str, int, str]]
    """``(hash, source JSON, line, empty fields JSON)`` of each ``EXTEND`` sample, for its index
    line."""
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
    """The share of the stored input file this batch stands for (``Batch.input_bytes``)."""
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
        self._literal_ids: dict[int, list[np.ndarray]] = {}
        self._first_batch: dict[int, dict[int, bytes]] = {}
        self._sources: dict[int, Source] = {}

    def __getstate__(self) -> dict:
        # Under spawn the worker reloads tokenizers from their files instead of unpickling them.
        return {"plan": self.plan}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["plan"])

    def _encoder(self, spec: TokenizerSpec) -> Encoder:
        if spec not in self._encoders:
            self._encoders[spec] = load_encoder(spec)
        return self._encoders[spec]

    def _parsed(self, raw: Batch, file: FilePlan) -> ParsedLines:
        """The batch parsed by its file's source, opened once per process."""
        if file.index not in self._sources:
            self._sources[file.index] = open_source(file)
        return self._sources[file.index].parse(raw)

    def _tokens(
        self, raw: Batch, file: FilePlan, parsed: ParsedLines, utf8: list[bytes]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, tuple | None]:
        """Every sample's ids, counts and segment stops (None without spans), EOS appended, and
        the parity guard's ``(rows checked, mismatch)``: what a build and a scan both need."""
        encoder = self._encoder(file.tokenizer)
        flat, lengths, stops = self._encode(encoder, file, parsed, utf8)
        # The guard compares whole-text encodings; segments mode encodes with the reference.
        checked, mismatch = (
            _parity(encoder, file, self._verdicts(file), parsed, utf8, flat, lengths)
            if file.tokenizer.encode is None
            else (0, None)
        )
        eos = encoder.eos_id  # set only under append_eos; a scan's plan has no outputs
        if eos is not None:
            flat, lengths = append_eos(flat, lengths, eos)
            if stops is not None:
                stops = np.column_stack([stops, lengths])
        return flat, lengths, stops, checked, mismatch

    def _verdicts(self, file: FilePlan) -> dict[int, bytes]:
        """``file.parity_first`` as a dict by line, made once per process."""
        if file.index not in self._first_batch:
            self._first_batch[file.index] = dict(file.parity_first or ())
        return self._first_batch[file.index]

    def _encode(
        self, encoder: Encoder, file: FilePlan, parsed: ParsedLines, utf8: list[bytes]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Ids, counts and (when spans are stored) segment stops of every sample."""
        mode = file.tokenizer.encode
        with _named_failure(encoder, parsed, file.path):
            if mode is None:
                return (*encoder.encode_batch(parsed.texts, utf8), None)
            if mode == "whole":
                flat, lengths, starts = encoder.encode_batch_starts(parsed.texts, utf8)
                unit = encoder.offset_unit
                return flat, lengths, stops_from_starts(file, parsed.values, lengths, starts, unit)
            # Segments are short texts no parity guard sees: the reference library encodes them.
            reference = getattr(encoder, "reference", encoder)
            return stops_by_segments(
                file, parsed.values, self._literals(reference, file), reference.encode_batch
            )

    def _literals(self, encoder: Encoder, file: FilePlan) -> list[np.ndarray]:
        if file.index not in self._literal_ids:
            texts = [value for kind, value in file.template.segments() if kind == "literal"]
            flat, lengths = encoder.encode_batch(texts, [t.encode("utf-8") for t in texts])
            self._literal_ids[file.index] = np.split(flat, np.cumsum(lengths)[:-1])
        return self._literal_ids[file.index]


class BatchCounter(_Tokenizing):
    """A scan's work per batch: parse -> render -> encode (-> parity guard), exactly as a build
    does, then count."""

    def __call__(self, raw: Batch) -> CountedBatch:
        """Count one raw batch (the function workers run)."""
        file = self.plan.files[raw.file_index]
        parsed = self._parsed(raw, file)
        utf8 = [text.encode("utf-8") for text in parsed.texts]
        # Exactly a build's tokens (EOS, segments mode, the fast engine's parity guard).
        _, lengths, _, _, mismatch = self._tokens(raw, file, parsed, utf8)
        lines, error = parsed.line_numbers, parsed.error
        if mismatch is not None:
            keep, error = mismatch
            lengths, lines = lengths[:keep], lines[:keep]
        return CountedBatch(raw.file_index, raw.input_bytes, lengths, lines, error)


class BatchEncoder(_Tokenizing):
    """A build's work per batch: parse -> render -> hash -> encode -> assign -> pad."""

    def __init__(self, plan: BuildPlan, encoders: dict[TokenizerSpec, Encoder] | None = None):
        super().__init__(plan, encoders)
        self._file_json = [orjson.dumps(f.path).decode() for f in plan.files]

    def __call__(self, raw: Batch) -> EncodedBatch:
        """Encode one raw batch (the function workers run)."""
        file = self.plan.files[raw.file_index]
        output = self.plan.outputs[file.output_index]
        parsed = self._parsed(raw, file)
        utf8 = [text.encode("utf-8") for text in parsed.texts]
        flat, lengths, stops, checked, mismatch = self._tokens(raw, file, parsed, utf8)
        sizes = np.asarray(file.sizes, dtype=np.int64)
        units = assign_units(lengths, sizes)
        keep, kept_lengths, units, overflows, error = _overflow(
            self.plan.on_overflow, file, parsed.line_numbers, lengths, units, sizes
        )
        error = error or parsed.error  # an overflow comes before any later bad line
        if mismatch is not None and keep[mismatch[0] :].any():
            # The fast engine disagreed at this row: the build stops there, nothing after it kept.
            position, error = mismatch
            keep[position:] = False
            stop_line = parsed.line_numbers[position]
            overflows = [o for o in overflows if o.line < stop_line]
        lines, values = parsed.line_numbers, parsed.values
        if not keep.all() or (kept_lengths != lengths).any():
            flat = flat[_token_mask(lengths, keep, kept_lengths)]
            if stops is not None:
                stops = np.minimum(stops[keep], kept_lengths[keep][:, None])
            utf8, lines, values = (
                list(itertools.compress(column, keep.tolist())) for column in (utf8, lines, values)
            )
            units = units[keep]
        lengths = kept_lengths[keep]
        digests = b"".join([hashlib.sha256(data).digest() for data in utf8])
        # One hex conversion for the batch, sliced per sample, is ten times cheaper than n calls.
        hex_all = digests.hex()
        hexes = [hex_all[i : i + 64] for i in range(0, len(hex_all), 64)]
        source = self._file_json[raw.file_index]
        empty = _empty_fields(file.fields, values)
        waiting = np.flatnonzero(units == EXTEND)
        index_parts: list[str | None] = sample_parts(
            hexes, lengths.tolist(), sizes[units].tolist(), source, lines, empty
        )
        for i in waiting.tolist():
            index_parts[i] = None  # its unit is chosen in input order by the main process
        info = output.info
        # The appended EOS is not field text: never count it as UNK (phi-2 with unk_fallback eos),
        # unless truncation cut it off, and the last token is text.
        eos_at = None
        if info.eos_id is not None and info.eos_id == info.unk_id:
            cut = [o.position for o in overflows if o.action == "truncate"]
            eos_at = np.delete(np.cumsum(lengths) - 1, cut)
        unk_parts, unk_tokens = _unk_parts(flat, lengths, info.unk_id, hexes, lines, source, eos_at)
        rows = [
            selected_tokens(flat, lengths, units == u, info.dtype)
            if output.pack
            else padded_rows(flat, lengths, units == u, size, info.pad_id, info.dtype)
            for u, size in enumerate(file.sizes)
        ]
        span_rows = extend_spans = None
        if stops is not None:
            records = spans.records(stops, output.file_indexes.index(file.index), output.span_width)
            span_rows = [records[units == u] for u in range(len(file.sizes))]
            extend_spans = list(records[units == EXTEND])
        starts = np.cumsum(lengths) - lengths
        extend_tokens = [
            flat[starts[i] : starts[i] + lengths[i]] for i in np.flatnonzero(units == EXTEND)
        ]
        return EncodedBatch(
            file_index=raw.file_index,
            input_bytes=raw.input_bytes,
            blank_lines=parsed.blank_lines,
            token_counts=lengths,
            unit_indexes=units,
            digests=digests,
            line_numbers=np.asarray(lines, dtype=np.int64),
            rows=rows,
            span_rows=span_rows,
            index_parts=index_parts,
            unk_parts=unk_parts,
            unk_tokens=unk_tokens,
            overflows=overflows,
            extend_tokens=extend_tokens,
            extend_spans=extend_spans or [],
            extend_facts=[
                (hexes[i], source, lines[i], empty[i]) for i in np.flatnonzero(units == EXTEND)
            ],
            parity_rows=checked,
            error=error,
        )


@contextmanager
def _named_failure(encoder: Encoder, parsed: ParsedLines, file: str) -> Iterator[None]:
    """Turn a library's bare exception into a TokenizerEncodeError naming the failing sample."""
    try:
        yield
    except Exception as err:
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


def _overflow(
    policy: str,
    file: FilePlan,
    line_numbers: list[int],
    lengths: np.ndarray,
    units: np.ndarray,
    sizes: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Overflow], MintDimError | None]:
    """Apply ``on_overflow``: ``(kept samples, their new counts, units, overflows, error)``.

    The counts and units are still per original sample; the caller applies ``keep``.
    """
    over = units >= sizes.size
    keep = np.ones(lengths.size, dtype=bool)
    if not over.any():
        return keep, lengths, units, [], None
    largest = int(sizes[-1])
    lengths, units = lengths.copy(), units.copy()
    if policy == "abort":
        first = first_overflow(units, sizes.size)
        keep[first:] = False
        error = UnitOverflowError(
            file=file.path,
            line=line_numbers[first],
            token_count=int(lengths[first]),
            max_unit_size=largest,
            kind=record_kind(file),
        )
        return keep, lengths, units, [], error
    overflowing = np.flatnonzero(over).tolist()
    full = lengths[over].tolist()
    if policy == "skip":
        keep[over] = False
    elif policy == "truncate":
        lengths[over] = largest
        units[over] = sizes.size - 1
    else:
        units[over] = EXTEND
    positions = np.cumsum(keep) - 1
    overflows = [
        Overflow(
            position=int(positions[i]) if keep[i] else None,
            line=line_numbers[i],
            token_count=count,
            action=policy,
        )
        for i, count in zip(overflowing, full, strict=True)
    ]
    return keep, lengths, units, overflows, None


def _token_mask(counts: np.ndarray, keep: np.ndarray, new_counts: np.ndarray) -> np.ndarray:
    """Over the flat ids of samples with ``counts`` tokens: the first ``new_counts`` of each
    kept sample."""
    position = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(keep, counts) & (position < np.repeat(new_counts, counts))


def _empty_fields(fields: tuple[str, ...], values: list[tuple[str, ...]]) -> list[str]:
    """Per sample, its ``empty_fields`` as JSON: the declared fields whose value is empty."""
    cache: dict[tuple[bool, ...], str] = {}

    def listed(sample: tuple[str, ...]) -> str:
        empty = tuple(not value for value in sample)
        if empty not in cache:
            names = [name for name, hit in zip(fields, empty, strict=True) if hit]
            cache[empty] = orjson.dumps(names).decode()
        return cache[empty]

    # Most samples have no empty field: one C-level test each, the names only when needed.
    return ["[]" if "" not in sample else listed(sample) for sample in values]


def _parity(
    encoder: Encoder,
    file: FilePlan,
    verdicts: dict[int, bytes],
    parsed: ParsedLines,
    utf8: list[bytes],
    flat: np.ndarray,
    lengths: np.ndarray,
) -> tuple[int, tuple[int, TokenizerParityError] | None]:
    """The parity guard during the build (tokenizer/parity.py): ``(rows checked, (position of
    the first row whose ids differ, its error) or None)``.

    A first row whose text and ids match what the reference gave at validation
    (``verdicts``) is checked; only the other sampled rows are re-encoded here.
    """
    if not isinstance(encoder, FastEncoder):
        return 0, None
    lines = parsed.line_numbers[: len(utf8)]
    rows = parity.build_rows(lines, file.tokenizer.parity, file.parity_first is not None).tolist()
    done = (
        parity.settled(verdicts, rows, lines, utf8, flat, lengths)
        if verdicts
        else [False] * len(rows)
    )
    again = [row for row, settled in zip(rows, done, strict=True) if not settled]
    if not again:
        return len(rows), None
    ends = np.cumsum(lengths)
    sampled = (
        np.concatenate([flat[ends[r] - lengths[r] : ends[r]] for r in again]),
        lengths[again],
    )
    error = parity.check(
        encoder,
        [parsed.texts[r] for r in again],
        [utf8[r] for r in again],
        sampled,
        [(file.path, lines[r]) for r in again],
        "build",
        record_kind(file),
    )
    if error is None:
        return len(rows), None
    return len(rows), (lines.index(error.line), error)


def _unk_parts(
    flat: np.ndarray,
    lengths: np.ndarray,
    unk_id: int | None,
    hexes: list[str],
    lines: list[int],
    source: str,
    ignore: np.ndarray | None,
) -> tuple[list[tuple[int, str]], int]:
    """unk_index.jsonl fragments for the samples whose tokens include ``unk_id``, apart from
    the flat positions in ``ignore``."""
    if unk_id is None:  # unk_fallback "none": the UNK tier is off
        return [], 0
    hits = np.flatnonzero(flat == unk_id)
    if ignore is not None:
        hits = np.setdiff1d(hits, ignore, assume_unique=True)
    if not hits.size:
        return [], 0
    ends = np.cumsum(lengths)
    samples = np.searchsorted(ends, hits, side="right")
    positions = hits - (ends - lengths)[samples]
    first = np.flatnonzero(np.diff(samples, prepend=-1))  # each sample's first hit
    which = samples[first].tolist()
    counts = np.diff(first, append=positions.size).tolist()
    hexes, lines = [hexes[s] for s in which], [lines[s] for s in which]
    parts = unk_parts_flat(hexes, source, lines, positions, counts)
    return list(zip(which, parts, strict=True)), int(positions.size)
