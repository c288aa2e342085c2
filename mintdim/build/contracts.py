"""The resolved, validated build plan: frozen values that runtime code trusts without re-checking.

``validate.py`` turns the user's declarations (``config.py``) into these objects; nothing else
creates them. They are picklable, because worker processes receive the plan.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from mintdim.shared.types import EncodeMode, Engine, OverflowPolicy, TokenizerKind

__all__ = [
    "AutoUnits",
    "BuildPlan",
    "BuildResult",
    "FilePlan",
    "LongSample",
    "OutputPlan",
    "OutputResult",
    "ParityGuard",
    "RunOptions",
    "ScanResult",
    "Template",
    "TokenizerInfo",
    "TokenizerSpec",
    "UnitPlan",
    "largest_allowed",
    "record_kind",
    "token_dtype_for",
]

UINT16_MAX_VOCAB = 65535
UINT32_MAX_VOCAB = 2**32 - 1


def token_dtype_for(vocab_size: int) -> str | None:
    """The shard dtype name for a vocabulary, or None when no supported dtype holds it."""
    if vocab_size <= UINT16_MAX_VOCAB:
        return "uint16"
    if vocab_size <= UINT32_MAX_VOCAB:
        return "uint32"
    return None


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: ``literals[0] {placeholders[0]} literals[1] ... literals[-1]``."""

    source: str
    """The template string exactly as declared."""
    literals: tuple[str, ...]
    """Unescaped literal text around the placeholders; always one more than ``placeholders``."""
    placeholders: tuple[str, ...]
    """Placeholder names in order of appearance (a name may repeat)."""

    def segments(self) -> tuple[tuple[str, str], ...]:
        """The rendered text's pieces in order as ``(kind, value)``: ``("literal", text)`` or
        ``("field", name)``; empty literals are left out, because they can never hold a token."""
        pieces: list[tuple[str, str]] = []
        for literal, name in zip(self.literals, (*self.placeholders, None), strict=True):
            if literal:
                pieces.append(("literal", literal))
            if name is not None:
                pieces.append(("field", name))
        return tuple(pieces)

    def render(self, sample: Mapping[str, object]) -> str:
        """Substitute the sample's values; pure substitution, nothing injected.

        A value that is not a ``str`` raises TypeError and a missing key KeyError, so a JSONL
        reader can try this first and inspect the sample only when it fails.
        """
        return self.renderer()(sample)

    def renderer(self) -> Callable[[Mapping[str, object]], str]:
        """``render`` as a plain function, for loops that call it once per sample."""
        return _renderer(self)

    def value_functions(
        self, fields: tuple[str, ...]
    ) -> tuple[Callable[[Mapping[str, object]], tuple], Callable[[tuple], str]]:
        """``(get, join)``: ``get(sample)`` is the tuple of the sample's ``fields`` values and
        ``join(values)`` the rendered text, so ``join(get(s)) == render(s)``. Same failures as
        ``render``: KeyError for a missing field, TypeError (from join) for a non-``str``."""
        return _value_functions(self, fields)


_CHAINED_PLACEHOLDERS = 64
"""Up to this many placeholders the renderer is one ``+`` chain, above it one ``join``: the
compiler nests a ``+`` chain one level per term, and about 1,500 placeholders would exceed the
recursion limit, while a ``join`` over a tuple display has no depth at all."""


@functools.cache
def _renderer(template: Template) -> Callable[[Mapping[str, object]], str]:
    # One generated expression, lit0 + s["a"] + lit1 + ...: measured 0.95 us per Alpaca sample
    # against 1.5 us for a join over a parts list. Every piece of the source is repr() of one of
    # the template's own strings, so nothing from data is ever evaluated.
    terms = [repr(template.literals[0])]
    for name, literal in zip(template.placeholders, template.literals[1:], strict=True):
        terms += [f"s[{name!r}]", repr(literal)]
    if len(template.placeholders) <= _CHAINED_PLACEHOLDERS:
        return eval("lambda s: " + " + ".join(terms))
    # str.join raises TypeError for a value that is not a str, exactly like + does.
    return eval("lambda s: ''.join((" + ", ".join(terms) + ",))")


@functools.cache
def _value_functions(
    template: Template, fields: tuple[str, ...]
) -> tuple[Callable[[Mapping[str, object]], tuple], Callable[[tuple], str]]:
    # Generated like _renderer, from repr() of the template's own strings only.
    get = eval("lambda s: (" + "".join(f"s[{name!r}], " for name in fields) + ")")
    terms = [repr(template.literals[0])]
    for name, literal in zip(template.placeholders, template.literals[1:], strict=True):
        terms += [f"v[{fields.index(name)}]", repr(literal)]
    if len(template.placeholders) <= _CHAINED_PLACEHOLDERS:
        return get, eval("lambda v: " + " + ".join(terms))
    return get, eval("lambda v: ''.join((" + ", ".join(terms) + ",))")


@dataclass(frozen=True, slots=True)
class ParityGuard:
    """What the fast engine's parity guard checks during a build (tokenizer key ``parity``).

    Beyond the parity corpus and the bundled demo texts at validation, the reference library
    re-derives the records on the first ``first_rows`` lines of the first input, then the
    records on lines 1, 1 + ``every``, 1 + 2 × ``every``, ... of every input. Both are chosen
    by line number alone, so the rows checked never depend on batches, workers or pieces.
    """

    first_rows: int = 512
    every: int = 512


@dataclass(frozen=True, slots=True)
class TokenizerSpec:
    """Which tokenizer file to load, with which library, and the opt-in SFT settings."""

    kind: TokenizerKind
    """``sentencepiece`` or ``hf_json``."""
    path: str
    """The path exactly as declared (written into the manifest)."""
    abs_path: str
    """The absolute path resolved from the current directory at validation time."""
    engine: Engine = "reference"
    """The engine that encodes: as declared, or ``reference`` when the fast one cannot run here
    (validation decides, and says why once)."""
    encode: EncodeMode | None = None
    """None: whole-text encoding, no segment spans stored (the spec's default and fastest path).
    ``"whole"``: the same tokens, plus each token's segment from the library's offsets.
    ``"segments"``: each template segment encoded on its own, ids concatenated."""
    append_eos: bool = False
    """Append the library's EOS id to every sample (its own last segment, ``eos``)."""
    pad_fallback: str | None = None
    """Used only when the library has no PAD: ``"eos"``, ``"unk"`` or a token string."""
    unk_fallback: str | None = None
    """Used only when the library has no UNK: ``"eos"``, a token string, or ``"none"``
    (the UNK tier is off)."""
    parity: ParityGuard = ParityGuard()
    """The fast engine's parity guard (unused by the reference engine)."""

    @property
    def spans(self) -> bool:
        """Whether the build stores each sample's segment spans."""
        return self.encode is not None


@dataclass(frozen=True, slots=True)
class TokenizerInfo:
    """Facts read from the loaded tokenizer library object."""

    vocab_size: int
    """Number of ids including added tokens (for tokenizer.json: the largest id + 1 if larger)."""
    unk_id: int | None
    """The id the library uses for unknown pieces; None when ``unk_fallback="none"``."""
    pad_id: int
    """The id written into padding slots."""
    unk_source: str
    """Where ``unk_id`` came from, e.g. ``sp.unk_id()`` or ``model.unk_id``."""
    pad_source: str
    """Where ``pad_id`` came from, e.g. ``sp.pad_id()`` or ``padding.pad_id``."""
    eos_id: int | None
    """The EOS id appended to every sample, or None without ``append_eos``."""
    eos_source: str | None
    """Where ``eos_id`` came from, e.g. ``sp.eos_id()``."""
    token_dtype: str
    """``uint16`` or ``uint32``, chosen from ``vocab_size`` by ``token_dtype_for``."""
    file_sha256: str
    """SHA-256 of the tokenizer file, taken when it was loaded (recorded in the manifest)."""
    engine: Engine = "reference"
    """The engine that encodes (``TokenizerSpec.engine``)."""
    engine_version: str = ""
    """The encoding library and its version, e.g. ``tokenizers 0.23.3`` or ``gigatoken 0.10.0``."""
    engine_fallback: str | None = None
    """Why ``engine="fast"`` was declared but the reference engine runs (a reason code), or None."""
    reference_version: str = ""
    """The reference library and its version (the parity guard's judge with the fast engine)."""
    parity_texts: int = 0
    """Texts the parity guard compared at validation (the parity corpus and the first rows)."""

    @property
    def dtype(self) -> np.dtype:
        """The little-endian numpy dtype of shard slots; shards are little-endian on every machine."""
        return np.dtype(self.token_dtype).newbyteorder("<")


@dataclass(frozen=True, slots=True)
class FilePlan:
    """Everything needed to read, render, encode and route one input file."""

    index: int
    """Position of the file in ``source.files``."""
    path: str
    """The path exactly as declared."""
    abs_path: str
    """Absolute path resolved from the current directory."""
    fields: tuple[str, ...]
    """Declared JSONL keys read from each sample."""
    template: Template
    """The parsed template for this file."""
    tokenizer: TokenizerSpec
    """The tokenizer this file is encoded with."""
    sizes: tuple[int, ...]
    """Unit sizes, strictly ascending (empty in a scan's plan)."""
    build_batch: int
    """Raw lines per tokenizer batch; changes speed, never output."""
    max_line_bytes: int
    """The longest line read: a longer one is ``LineTooLongError``."""
    output_index: int | None
    """Index into ``BuildPlan.outputs`` of the directory this file writes to (None in a scan)."""
    parity_first: tuple[tuple[int, bytes], ...] | None = None
    """With the fast engine, in the first file it reads: ``(line, parity.row_digests entry)`` of
    each sample on its first ``parity.first_rows`` lines, as the reference library encoded it at
    validation. None in every other file."""
    format: str = "jsonl"
    """How the file is stored, which names the source that reads it (``source.open_source``)."""


def record_kind(file: FilePlan) -> str:
    """What a file's records are numbered by in messages: ``parquet`` rows, or ``jsonl`` lines
    (``errors.base.KINDS``; compressed JSONL counts lines of the decompressed stream)."""
    return "parquet" if file.format == "parquet" else "jsonl"


@dataclass(frozen=True, slots=True)
class OutputPlan:
    """One output directory and the settings every file writing into it shares."""

    path: str
    """The directory exactly as first declared."""
    abs_path: str
    """Absolute path resolved from the current directory."""
    tokenizer: TokenizerSpec
    """The tokenizer shared by every file writing here."""
    info: TokenizerInfo
    """Special ids, vocabulary size and dtype of that tokenizer."""
    sizes: tuple[int, ...]
    """Unit sizes shared by every file writing here."""
    samples_per_shard: int
    """Records per shard file before a new shard starts."""
    file_indexes: tuple[int, ...]
    """Indexes of the files writing here, in input order."""
    span_width: int = 0
    """Segments per span record (the most any file here has); 0 when no spans are stored."""
    align: int = 1
    """Every unit size is a multiple of this; ``on_overflow="extend"`` rounds up to it."""
    planned: dict | None = None
    """For ``sizes="auto"``: how the sizes were chosen and the padding predicted (the manifest's
    ``units.planned``)."""
    pack: bool = False
    """Several whole samples per row of each unit (``units/packing.py``), not one per record."""


@dataclass(frozen=True, slots=True)
class AutoUnits:
    """``units(sizes="auto", ...)``: how to plan the sizes once a scan has counted the samples."""

    count: int | None
    """At most this many sizes (None: ``unit_cost`` chooses)."""
    align: int
    """Every size a multiple of this."""
    max_size: int | None
    """No size above this; longer samples overflow."""
    cost: str
    """``tokens`` or ``attention`` (see ``units/optimal.py``)."""
    unit_cost: float | None
    """The price of one more unit, in cost units, when ``count`` is None."""


@dataclass(frozen=True, slots=True)
class BuildPlan:
    """The whole validated job."""

    files: tuple[FilePlan, ...]
    """Input files in declaration order."""
    outputs: tuple[OutputPlan, ...]
    """Distinct output directories in order of first declaration (none in a scan's plan)."""
    auto: AutoUnits | None = None
    """Set for ``sizes="auto"``: every ``sizes`` here is empty until the scan planned them."""
    on_overflow: OverflowPolicy = "abort"
    """What a sample longer than the largest unit does: abort, skip, truncate or extend."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How ``run()`` does the work; none of it changes a byte of the output."""

    workers: int | None
    """Encoding processes (local: always a count, every core here unless ``run()`` was given
    one) or actors (Ray; None: every CPU of the cluster)."""
    executor: str = "local"
    """``local`` (processes on this machine) or ``ray`` (actors on a Ray cluster)."""
    ray_address: str | None = None
    """``ray.init(address=...)``: None starts or joins as Ray decides, ``auto``, ``ray://...``."""
    resume: bool = False
    """Continue an unfinished build in the output directories, reusing its intact fragments."""
    piece_bytes: int | None = None
    """Input bytes per piece (pieces.py); None: from the input's size, or the resumed build's."""
    resumable: bool = True
    """Stage each piece's fragment (resume possible; disk: about 2x the output at the peak), or
    stream batches straight from the workers to the output (local only; disk: 1x, no resume)."""


@dataclass(frozen=True, eq=False)
class UnitPlan:
    """The optimal unit sizes for a set of token counts, and what they cost.

    ``pad_tokens``, ``total_slots`` and ``padding_ratio`` are exactly what a build with
    ``sizes`` writes for the samples that fit (``stats.json`` reports the same numbers).
    """

    sizes: tuple[int, ...]
    """Ascending unit sizes, each a multiple of ``align``."""
    samples_per_unit: tuple[int, ...]
    """How many samples each size receives (the smallest unit that holds them)."""
    total_tokens: int
    """Tokens of the samples that fit."""
    total_slots: int
    """Slots written: sum over fitting samples of their unit size."""
    pad_tokens: int
    """``total_slots - total_tokens``."""
    padding_ratio: float
    """``pad_tokens / total_slots`` (0.0 when nothing fits)."""
    objective: int
    """The minimised cost: ``total_slots`` for ``cost="tokens"``, sum of ``unit**2`` for attention."""
    count: int | None
    """The requested number of units (None when ``unit_cost`` chose it)."""
    align: int
    max_size: int | None
    cost: str
    unit_cost: float | None
    too_long: np.ndarray = field(repr=False)
    """Positions (into the planned counts) of samples longer than every allowed size."""
    lengths: np.ndarray = field(repr=False)
    """The distinct token counts of every planned sample (too long ones included), ascending."""
    length_samples: np.ndarray = field(repr=False)
    """How many samples have each of ``lengths``: the length histogram pictures are drawn from."""

    @property
    def max_fitting(self) -> int | None:
        """The largest size ``max_size`` and ``align`` allow (None without ``max_size``)."""
        return largest_allowed(self.max_size, self.align)

    def manifest_record(self) -> dict[str, object]:
        """How the sizes were chosen, as the manifest records it."""
        return {
            "method": "exact",
            "count": self.count,
            "unit_cost": self.unit_cost,
            "align": self.align,
            "max_size": self.max_size,
            "cost": self.cost,
            "predicted_total_slots": self.total_slots,
            "predicted_pad_tokens": self.pad_tokens,
            "predicted_padding_ratio": round(self.padding_ratio, 6),
        }


def largest_allowed(max_size: int | None, align: int) -> int | None:
    """The largest multiple of ``align`` up to ``max_size`` (None: no limit)."""
    return None if max_size is None else max_size - max_size % align


@dataclass(frozen=True, slots=True)
class OutputResult:
    """What one finished output directory holds."""

    path: str
    """The directory exactly as declared."""
    stats: dict
    """The content of its stats.json."""
    plan: UnitPlan | None = None
    """For ``sizes="auto"``: the exact plan its sizes came from (with the length histogram)."""


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What ``run()`` returns: one entry per output directory, in declaration order."""

    outputs: tuple[OutputResult, ...]


@dataclass(frozen=True, slots=True)
class LongSample:
    """A sample longer than some size, where it is."""

    file: str
    """The input file exactly as declared."""
    line: int
    """1-based line in that file."""
    token_count: int


@dataclass(frozen=True, slots=True, eq=False)
class ScanResult:
    """What ``scan()`` returns: every sample's exact token count, with where it came from."""

    files: tuple[str, ...]
    """Input files as declared, in order."""
    by_file: tuple[np.ndarray, ...]
    """Per input file, each sample's exact token count (int64) in line order."""
    lines_by_file: tuple[np.ndarray, ...]
    """Per input file, each sample's 1-based line (int64); blank lines hold no sample."""
    bytes_per_token: int
    """Bytes of one shard slot a build with these tokenizers writes (the widest of them)."""

    @property
    def token_counts(self) -> np.ndarray:
        """Every sample's count, in input order across files."""
        return np.concatenate(self.by_file) if self.by_file else np.empty(0, np.int64)

    def longer_than(self, size: int) -> tuple[LongSample, ...]:
        """Every sample with more than ``size`` tokens, in input order."""
        found = []
        for file, counts, lines in zip(self.files, self.by_file, self.lines_by_file, strict=True):
            for position in np.flatnonzero(counts > size).tolist():
                found.append(LongSample(file, int(lines[position]), int(counts[position])))
        return tuple(found)
