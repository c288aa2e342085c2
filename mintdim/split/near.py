"""Near-duplicates: a bounded, sketch-based candidate search, then an exact confirmation.

**What is compared.** A sample's significant text (split/text.py: its rendered text without
whitespace and punctuation) and the set of its character 5-grams.

**The rule** (confirmation, exact): of a pair, the *shorter* sample (fewer significant
characters; on a tie, the lower sample id) must have at least ``min_chars`` significant
characters and ``min_distinct`` distinct 5-grams, and at least ``coverage`` of its distinct
5-grams must occur in the other sample. A shorter text contained whole in the other has
coverage 1, so full containment counts (with the same size minimums: a short phrase inside
many texts never merges them). The 5-grams are compared exactly: the pair's characters are
numbered within the pair, and each 5-gram packed into one 64-bit integer (a pair with more
than 4,096 distinct characters, where that does not fit, compares Python sets of substrings).

**The search** (bounded, so not exhaustive). Each sample with at least ``min_chars``
significant characters gets a bottom-``sketch_size`` sketch: the smallest 40-bit hashes of its
distinct 5-grams (splitmix64 over a polynomial of the five code points). Samples with the same
significant text are reviewed once, through the first of them. A hash in two or more sketches
is an anchor; an anchor with more than ``max_postings`` samples is disabled (it says little,
and would cost the square of its postings); a pair sharing at least ``min_shared`` enabled
anchors is a candidate; each sample keeps its best ``max_candidates`` candidates (most shared
anchors first), and a pair is compared when either endpoint keeps it. The report counts what
each cap skipped. Two texts of similar length that pass the rule share most of their
sketches; a short text contained in a much longer one shares few anchors with it (the long
text's smallest hashes come from its other 5-grams) and can be missed.

**Cost.** Sketches are computed for whole batches at once in numpy (one sort of the batch's
5-gram hashes), independent of each other, so workers can compute them. Memory: 8 bytes per
sketch entry (256 bytes per sample at the default 32), the significant text of every sample
reviewed (UTF-8, kept for the confirmation), and 8 bytes per pair sharing an anchor while the
candidates are counted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from mintdim.errors import SplitOptionError
from mintdim.split.text import significant

__all__ = [
    "STATS",
    "NearIndex",
    "NearSettings",
    "Prepared",
    "candidates",
    "coverage",
    "prepare",
    "sketch",
]

_EMPTY = np.uint64((1 << 64) - 1)
"""Fills a sketch row of a sample with fewer distinct 5-grams than the sketch size."""
_HASH_BITS = 40
_OWNER_SHIFT = np.uint64(_HASH_BITS)
_LOW = np.uint64((1 << _HASH_BITS) - 1)
_MULTIPLIERS = tuple(
    np.uint64(m)
    for m in (
        0x9E3779B97F4A7C15,
        0xC2B2AE3D27D4EB4F,
        0x165667B19E3779F9,
        0xD6E8FEB86659FD93,
        0xFF51AFD7ED558CCD,
    )
)


@dataclass(frozen=True, slots=True)
class NearSettings:
    """The near-duplicate rule and the caps of the search (names as ``mintdim group`` has them)."""

    min_chars: int = 200
    min_distinct: int = 100
    coverage: float = 0.9
    sketch_size: int = 32
    min_shared: int = 4
    max_postings: int = 128
    max_candidates: int = 128

    def __post_init__(self) -> None:
        for name in ("min_chars", "min_distinct"):
            _integer(name, getattr(self, name), 0)
        for name in ("sketch_size", "min_shared", "max_postings", "max_candidates"):
            _integer(name, getattr(self, name), 1)
        value = self.coverage
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise SplitOptionError(option="coverage", value=value, rule="fraction")

    def as_dict(self) -> dict[str, object]:
        """The settings as a manifest lists them."""
        return {name: getattr(self, name) for name in self.__slots__}


def _integer(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise SplitOptionError(
            option=name, value=value, rule="positive" if least else "non_negative"
        )


# ---------------------------------------------------------------------------
# Sketches (any process)
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prepared:
    """One batch of texts ready for the index: what each sample brings to the review."""

    eligible: np.ndarray
    """Positions in the batch of the samples with at least ``min_chars`` significant characters."""
    lengths: np.ndarray
    """Their significant characters."""
    digests: list[bytes]
    """BLAKE2b-128 of their significant text (equal texts are reviewed once)."""
    texts: list[bytes]
    """Their significant text, UTF-8."""
    sketches: np.ndarray
    """``[eligible, sketch_size]`` uint64: the smallest 40-bit 5-gram hashes, ascending."""


def prepare(texts: list[str], settings: NearSettings) -> Prepared:
    """Significant texts and sketches of one batch of rendered texts (a pure function)."""
    reduced = [significant(text) for text in texts]
    eligible = [i for i, text in enumerate(reduced) if len(text) >= settings.min_chars]
    kept = [reduced[i] for i in eligible]
    return Prepared(
        eligible=np.array(eligible, dtype=np.int64),
        lengths=np.array([len(text) for text in kept], dtype=np.int64),
        digests=[hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in kept],
        texts=[text.encode("utf-8") for text in kept],
        sketches=sketch(kept, settings.sketch_size),
    )


def _codes(texts: list[str]) -> np.ndarray:
    return np.frombuffer("".join(texts).encode("utf-32-le"), dtype="<u4").astype(np.uint64)


def gram_hashes(codes: np.ndarray) -> np.ndarray:
    """The 64-bit hash of every 5-gram of a code-point array (one per start position)."""
    count = codes.size - 4
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    value = codes[:count] * _MULTIPLIERS[0]
    for offset in range(1, 5):
        value += codes[offset : offset + count] * _MULTIPLIERS[offset]
    # splitmix64's finalizer: every input bit reaches every output bit, so the low hashes
    # are a uniform sample of the 5-grams.
    value ^= value >> np.uint64(30)
    value *= np.uint64(0xBF58476D1CE4E5B9)
    value ^= value >> np.uint64(27)
    value *= np.uint64(0x94D049BB133111EB)
    value ^= value >> np.uint64(31)
    return value


def sketch(texts: list[str], size: int) -> np.ndarray:
    """Each text's bottom-``size`` sketch: the smallest distinct 40-bit hashes of its 5-grams,
    ascending, padded with ``_EMPTY``; all texts in one sort."""
    count = len(texts)
    out = np.full((count, size), _EMPTY, dtype=np.uint64)
    if not count:
        return out
    lengths = np.array([len(text) for text in texts], dtype=np.int64)
    hashes = gram_hashes(_codes(texts))
    starts = np.cumsum(lengths) - lengths
    grams = np.maximum(lengths - 4, 0)
    owner = np.repeat(np.arange(count, dtype=np.uint64), grams)
    offsets = np.arange(owner.size) - np.repeat(np.cumsum(grams) - grams, grams)
    positions = np.repeat(starts, grams) + offsets
    keys = (owner << _OWNER_SHIFT) | (hashes[positions] >> np.uint64(64 - _HASH_BITS))
    keys.sort()
    distinct = keys[np.r_[True, keys[1:] != keys[:-1]]] if keys.size else keys
    owners = (distinct >> _OWNER_SHIFT).astype(np.int64)
    rank = np.arange(distinct.size) - np.searchsorted(owners, owners)
    take = rank < size
    out[owners[take], rank[take]] = distinct[take] & _LOW
    return out


# ---------------------------------------------------------------------------
# The index, the search and the confirmation (the main process)
# ---------------------------------------------------------------------------


STATS = (
    "samples",
    "too_short",
    "reviewed",
    "same_significant_text",
    "anchors",
    "anchors_over_max_postings",
    "postings_skipped",
    "pairs_skipped_by_max_postings",
    "pairs_below_min_shared",
    "pairs_over_max_candidates",
    "candidate_pairs",
    "comparisons",
    "rejected_min_distinct",
    "rejected_coverage",
    "confirmed",
    "confirmed_but_exact_text",
)
"""What the search counts, in the report's order."""


@dataclass(slots=True)
class NearIndex:
    """The samples under review, added batch by batch in sample id order."""

    settings: NearSettings
    stats: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATS, 0))
    _ids: list[int] = field(default_factory=list)
    _lengths: list[np.ndarray] = field(default_factory=list)
    _sketches: list[np.ndarray] = field(default_factory=list)
    _texts: list[bytes] = field(default_factory=list)
    _first: dict[bytes, int] = field(default_factory=dict)
    """Digest of a significant text -> position of the first sample with it."""
    _same: list[tuple[int, int]] = field(default_factory=list)
    """(position of the first sample with a text, sample id of a later one with the same)."""

    def add(self, ids: np.ndarray, prepared: Prepared) -> None:
        """Take one batch's :func:`prepare` result; ``ids``: the batch's sample ids."""
        self._count("samples", int(ids.size))
        self._count("too_short", int(ids.size - prepared.eligible.size))
        chosen = []
        for k, (sample_id, digest) in enumerate(
            zip(ids[prepared.eligible].tolist(), prepared.digests, strict=True)
        ):
            first = self._first.get(digest)
            if first is not None:
                self._same.append((first, sample_id))
                continue
            self._first[digest] = len(self._ids)
            self._ids.append(sample_id)
            self._texts.append(prepared.texts[k])
            chosen.append(k)
        self._lengths.append(prepared.lengths[chosen])
        self._sketches.append(prepared.sketches[chosen])

    def _count(self, key: str, value: int) -> None:
        self.stats[key] += value

    def edges(self) -> Iterator[tuple[int, int, dict[str, object]]]:
        """Every confirmed near-duplicate pair (a < b) with its evidence, in (a, b) order."""
        settings = self.settings
        ids = np.array(self._ids, dtype=np.int64)
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)
        size = settings.sketch_size
        sketches = np.concatenate(self._sketches) if self._sketches else np.zeros((0, size))
        self.stats["reviewed"] = int(ids.size)
        self.stats["same_significant_text"] = len(self._same)
        lo, hi, shared = candidates(sketches.astype(np.uint64), settings, self.stats)
        found: list[tuple[int, int, dict[str, object]]] = []
        for first, later in self._same:
            distinct, _ = coverage(self._text(first), self._text(first))
            if distinct >= settings.min_distinct:
                evidence = _evidence(ids[first], distinct, distinct, True)
                evidence["same_significant_text"] = True
                found.append((int(ids[first]), later, evidence))
            else:
                self._count("rejected_min_distinct", 1)
        for a, b, anchors in zip(lo.tolist(), hi.tolist(), shared.tolist(), strict=True):
            edge = self._confirm(a, b, ids, lengths, anchors)
            if edge is not None:
                found.append(edge)
        self.stats["confirmed"] = len(found)
        found.sort(key=lambda edge: (edge[0], edge[1]))
        yield from found

    def _text(self, position: int) -> str:
        return self._texts[position].decode("utf-8")

    def _confirm(
        self, a: int, b: int, ids: np.ndarray, lengths: np.ndarray, anchors: int
    ) -> tuple[int, int, dict[str, object]] | None:
        settings = self.settings
        self._count("comparisons", 1)
        short, other = (a, b) if lengths[a] <= lengths[b] else (b, a)  # a < b: ties keep a
        short_text, other_text = self._text(short), self._text(other)
        distinct, common = coverage(short_text, other_text)
        if distinct < settings.min_distinct:
            self._count("rejected_min_distinct", 1)
            return None
        if common / distinct < settings.coverage:
            self._count("rejected_coverage", 1)
            return None
        evidence = _evidence(ids[short], distinct, common, short_text in other_text)
        evidence["shared_anchors"] = anchors
        return int(ids[a]), int(ids[b]), evidence


def _evidence(shorter: int, distinct: int, common: int, contained: bool) -> dict[str, object]:
    return {
        "coverage": round(common / distinct, 6),
        "shared_5grams": common,
        "distinct_5grams": distinct,
        "shorter": int(shorter),
        "contained": contained,
    }


def candidates(
    sketches: np.ndarray, settings: NearSettings, stats: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (positions lo < hi) to compare and their shared anchors, in (lo, hi) order;
    counts what the caps skipped into ``stats``."""
    count, size = sketches.shape if sketches.ndim == 2 else (0, settings.sketch_size)
    flat = sketches.reshape(-1)
    owner = np.repeat(np.arange(count, dtype=np.int64), size)
    filled = flat != _EMPTY
    flat, owner = flat[filled], owner[filled]
    order = np.argsort(flat, kind="stable")  # stable: owners stay ascending within an anchor
    flat, owner = flat[order], owner[order]
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]]) if flat.size else flat[:0]
    postings = np.diff(np.r_[starts, flat.size]).astype(np.int64)
    over = postings > settings.max_postings
    stats["anchors"] = int((postings >= 2).sum())
    stats["anchors_over_max_postings"] = int(over.sum())
    stats["postings_skipped"] = int(postings[over].sum())
    stats["pairs_skipped_by_max_postings"] = int((postings[over] * (postings[over] - 1) // 2).sum())
    keep = (postings >= 2) & ~over
    lo, hi = _pairs_within(owner, starts[keep], postings[keep])
    keys = lo * max(count, 1) + hi
    keys.sort()
    unique, shared = np.unique(keys, return_counts=True) if keys.size else (keys, keys)
    enough = shared >= settings.min_shared
    stats["pairs_below_min_shared"] = int((~enough).sum())
    unique, shared = unique[enough], shared[enough]
    lo, hi = np.divmod(unique, max(count, 1))
    kept = _best_per_sample(lo, hi, shared, settings.max_candidates)
    stats["pairs_over_max_candidates"] = int((~kept).sum())
    stats["candidate_pairs"] = int(kept.sum())
    return lo[kept], hi[kept], shared[kept]


def _pairs_within(
    owner: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of owners (earlier, later) within each run ``owner[start : start + size]``."""
    total = int(sizes.sum())
    if not total:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ends = np.cumsum(sizes)
    members = owner[np.repeat(starts - (ends - sizes), sizes) + np.arange(total)]
    run_end = np.repeat(ends, sizes)
    lows, highs = [], []
    active = np.arange(total)
    distance = 1
    # One step per distance inside a run: work is the number of pairs, not runs x cap.
    while (active := active[active + distance < run_end[active]]).size:
        lows.append(members[active])
        highs.append(members[active + distance])
        distance += 1
    return np.concatenate(lows), np.concatenate(highs)


def _best_per_sample(lo: np.ndarray, hi: np.ndarray, shared: np.ndarray, cap: int) -> np.ndarray:
    """Whether each pair is among the ``cap`` best (most shared anchors, then lowest partner)
    of either of its samples."""
    pairs = lo.size
    if not pairs:
        return np.zeros(0, dtype=bool)
    source = np.concatenate([lo, hi])
    partner = np.concatenate([hi, lo])
    order = np.lexsort((partner, -np.concatenate([shared, shared]), source))
    ranked = source[order]
    rank = np.arange(ranked.size) - np.searchsorted(ranked, ranked)
    kept = np.zeros(pairs, dtype=bool)
    kept[(order % pairs)[rank < cap]] = True
    return kept


def coverage(short: str, other: str) -> tuple[int, int]:
    """(distinct 5-grams of ``short``, how many of them occur in ``other``), exactly."""
    a = np.frombuffer(short.encode("utf-32-le"), dtype="<u4")
    b = np.frombuffer(other.encode("utf-32-le"), dtype="<u4")
    alphabet, numbers = np.unique(np.concatenate([a, b]), return_inverse=True)
    bits = max(1, int(alphabet.size - 1).bit_length())
    if 5 * bits > 64:
        grams = {short[i : i + 5] for i in range(len(short) - 4)}
        found = {other[i : i + 5] for i in range(len(other) - 4)}
        return len(grams), len(grams & found)
    numbers = numbers.astype(np.uint64)
    ga = np.unique(_packed(numbers[: a.size], bits))
    gb = np.unique(_packed(numbers[a.size :], bits))
    return int(ga.size), int(np.isin(ga, gb, assume_unique=True).sum())


def _packed(numbers: np.ndarray, bits: int) -> np.ndarray:
    """Each 5-gram of small character numbers as one integer (``5 * bits <= 64``)."""
    count = numbers.size - 4
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    value = numbers[:count].copy()
    for offset in range(1, 5):
        value <<= np.uint64(bits)
        value |= numbers[offset : offset + count]
    return value
