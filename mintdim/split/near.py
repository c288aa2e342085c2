"""Near-duplicates: a bounded, sketch-based candidate search, then an exact confirmation.

**What is compared.** A sample's significant text (split/text.py: its rendered text without
whitespace and punctuation) and the set of its character 5-grams.

**The rule** (confirmation, exact): of a pair, the *shorter* sample (fewer significant
characters; on a tie, the lower sample id) must have at least ``min_chars`` significant
characters and ``min_distinct`` distinct 5-grams, and at least ``coverage`` of its distinct
5-grams must occur in the other sample. A shorter text contained whole in the other has
coverage 1, so full containment counts (with the same size minimums: a short phrase inside
many texts never merges them). The 5-grams are compared exactly, as sets of the substrings
themselves.

**The search** (bounded, so not exhaustive): MinHash with LSH bands. Each sample with at least
``min_chars`` significant characters gets a ``sketch_size``-value MinHash signature by
one-permutation hashing: each 5-gram's 64-bit hash (splitmix64 over a polynomial of its five
code points) falls in one of ``sketch_size`` bins, and each bin keeps its smallest hash (an
empty bin borrows its right neighbour's, densified). Consecutive ``band_rows`` values form a
band; a band's key is a hash of them, and samples with equal keys in a band share a bucket.
Two samples whose 5-gram sets have Jaccard similarity J share a given band with probability
J ** band_rows: at the defaults (40 values, bands of 5) a pair with J = 0.82 (coverage 0.9
between texts of equal length) shares one of the 8 bands with probability 0.97 (J = 0.9:
0.999), a pair with J = 0.3 with 0.02. On 100,000 generated samples (benchmarks/split.py) it
found 98.5% of the injected pairs meeting the rule, with a few unrelated candidates per
hundred related; bands of 4 found 98.8% with twice the candidates. A common 5-gram alone
never puts two samples in one bucket: a whole band must agree. Samples with the same significant text are reviewed once, through the first of
them. A pair sharing at least ``min_shared`` buckets is a candidate. A bucket holding more than
``max_postings`` samples is compared as a star (its first sample with each other one), not
pair by pair; each sample keeps its best ``max_candidates`` candidates (most shared buckets
first), and a pair is compared when either sample keeps it. The report counts what each cap
skipped. A short text contained in a much longer one has a low J, so it is likely missed.

**Cost.** Signatures are computed for whole batches at once in numpy (one sort of the batch's
5-gram hashes), independent of each other, so workers can compute them. Memory: 8 bytes per
band key (64 bytes per sample at the defaults), the significant text of every sample reviewed
(UTF-8, kept for the confirmation), and 16 bytes per (sample, bucket) entry and per candidate
pair while the candidates are counted.
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
    "band_keys",
    "candidates",
    "coverage",
    "prepare",
]

_EMPTY = np.uint64((1 << 64) - 1)
"""A bin no 5-gram fell in (before densification)."""
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
_MAX_SKETCH = 256


@dataclass(frozen=True, slots=True)
class NearSettings:
    """The near-duplicate rule and the caps of the search (names as ``mintdim group`` has them)."""

    min_chars: int = 200
    min_distinct: int = 100
    coverage: float = 0.9
    sketch_size: int = 40
    band_rows: int = 5
    min_shared: int = 1
    max_postings: int = 128
    max_candidates: int = 128

    def __post_init__(self) -> None:
        for name in ("min_chars", "min_distinct"):
            _integer(name, getattr(self, name), 0)
        for name in ("sketch_size", "band_rows", "min_shared", "max_postings", "max_candidates"):
            _integer(name, getattr(self, name), 1)
        if self.sketch_size > _MAX_SKETCH:
            raise SplitOptionError(option="sketch_size", value=self.sketch_size, rule="sketch")
        if self.sketch_size % self.band_rows:
            raise SplitOptionError(option="band_rows", value=self.band_rows, rule="band_rows")
        value = self.coverage
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise SplitOptionError(option="coverage", value=value, rule="fraction")

    @property
    def bands(self) -> int:
        """Bands of a signature."""
        return self.sketch_size // self.band_rows

    def as_dict(self) -> dict[str, object]:
        """The settings as a manifest lists them."""
        return {name: getattr(self, name) for name in self.__slots__}


def _integer(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise SplitOptionError(
            option=name, value=value, rule="positive" if least else "non_negative"
        )


# ---------------------------------------------------------------------------
# Signatures (any process)
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
    keys: np.ndarray
    """``[eligible, bands]`` uint64: each band's key."""


def prepare(texts: list[str], settings: NearSettings) -> Prepared:
    """Significant texts and band keys of one batch of rendered texts (a pure function)."""
    reduced = [significant(text) for text in texts]
    eligible = [i for i, text in enumerate(reduced) if len(text) >= settings.min_chars]
    kept = [reduced[i] for i in eligible]
    return Prepared(
        eligible=np.array(eligible, dtype=np.int64),
        lengths=np.array([len(text) for text in kept], dtype=np.int64),
        digests=[hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in kept],
        texts=[text.encode("utf-8") for text in kept],
        keys=band_keys(kept, settings),
    )


def _codes(texts: list[str]) -> np.ndarray:
    return np.frombuffer("".join(texts).encode("utf-32-le"), dtype="<u4").astype(np.uint64)


def _mix(value: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, in place: every input bit reaches every output bit."""
    value ^= value >> np.uint64(30)
    value *= np.uint64(0xBF58476D1CE4E5B9)
    value ^= value >> np.uint64(27)
    value *= np.uint64(0x94D049BB133111EB)
    value ^= value >> np.uint64(31)
    return value


def gram_hashes(codes: np.ndarray) -> np.ndarray:
    """The 64-bit hash of every 5-gram of a code-point array (one per start position)."""
    count = codes.size - 4
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    value = codes[:count] * _MULTIPLIERS[0]
    for offset in range(1, 5):
        value += codes[offset : offset + count] * _MULTIPLIERS[offset]
    return _mix(value)


def signatures(texts: list[str], size: int) -> np.ndarray:
    """Each text's one-permutation MinHash signature, ``[texts, size]`` uint64, densified;
    a text without 5-grams has every value ``_EMPTY``. All texts in one sort."""
    count = len(texts)
    out = np.full((count, size), _EMPTY, dtype=np.uint64)
    lengths = np.array([len(text) for text in texts], dtype=np.int64)
    grams = np.maximum(lengths - 4, 0)
    if not grams.sum():
        return out
    hashes = gram_hashes(_codes(texts))
    starts = np.cumsum(lengths) - lengths
    owner = np.repeat(np.arange(count, dtype=np.uint64), grams)
    positions = (
        np.repeat(starts, grams)
        + np.arange(owner.size)
        - np.repeat(np.cumsum(grams) - grams, grams)
    )
    hashes = hashes[positions]
    # One sort key per 5-gram: (sample, bin) above, the hash's low bits below; the first of each
    # (sample, bin) run after sorting is the bin's minimum.
    owner_bits = max(1, int(count - 1).bit_length())
    bin_bits = max(1, int(size - 1).bit_length())
    value_bits = 64 - owner_bits - bin_bits
    bins = ((hashes >> np.uint64(32)) * np.uint64(size)) >> np.uint64(32)
    keys = (owner << np.uint64(bin_bits) | bins) << np.uint64(value_bits)
    keys |= hashes & np.uint64((1 << value_bits) - 1)
    keys.sort()
    group = keys >> np.uint64(value_bits)
    first = np.r_[True, group[1:] != group[:-1]]
    group = group[first]
    owners = (group >> np.uint64(bin_bits)).astype(np.int64)
    slots = (group & np.uint64((1 << bin_bits) - 1)).astype(np.int64)
    out[owners, slots] = keys[first] & np.uint64((1 << value_bits) - 1)
    return _densified(out)


def _densified(signature: np.ndarray) -> np.ndarray:
    """Empty bins take the value of the nearest filled bin to their right (circularly), mixed
    with the distance, so two texts agree in a borrowed bin only when their sources agree."""
    filled = signature != _EMPTY
    if filled.all():
        return signature
    result = signature.copy()
    size = signature.shape[1]
    for distance in range(1, size):
        empty = result == _EMPTY
        if not empty.any():
            break
        source = np.roll(signature, -distance, axis=1)
        take = empty & np.roll(filled, -distance, axis=1)
        result[take] = _mix(source[take] ^ np.uint64(distance * 0x9E3779B1))
    return result


def band_keys(texts: list[str], settings: NearSettings) -> np.ndarray:
    """Each text's band keys, ``[texts, bands]`` uint64 (a band's values and its position,
    hashed)."""
    rows = settings.band_rows
    values = signatures(texts, settings.sketch_size).reshape(len(texts), settings.bands, rows)
    keys = np.broadcast_to(
        np.arange(1, settings.bands + 1, dtype=np.uint64) * _MULTIPLIERS[4],
        (len(texts), settings.bands),
    ).copy()
    for row in range(rows):
        keys = _mix(keys ^ values[:, :, row])
    return keys


# ---------------------------------------------------------------------------
# The index, the search and the confirmation (the main process)
# ---------------------------------------------------------------------------


STATS = (
    "samples",
    "too_short",
    "reviewed",
    "same_significant_text",
    "buckets",
    "buckets_over_max_postings",
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
    _keys: list[np.ndarray] = field(default_factory=list)
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
        self._keys.append(prepared.keys[chosen])

    def _count(self, key: str, value: int) -> None:
        self.stats[key] += value

    def edges(self) -> Iterator[tuple[int, int, dict[str, object]]]:
        """Every confirmed near-duplicate pair (a < b) with its evidence, in (a, b) order."""
        settings = self.settings
        ids = np.array(self._ids, dtype=np.int64)
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)
        bands = settings.bands
        keys = np.concatenate(self._keys) if self._keys else np.zeros((0, bands), np.uint64)
        self.stats["reviewed"] = int(ids.size)
        self.stats["same_significant_text"] = len(self._same)
        lo, hi, shared = candidates(keys, settings, self.stats)
        found: list[tuple[int, int, dict[str, object]]] = []
        for first, later in self._same:
            distinct, _ = coverage(self._text(first), self._text(first))
            if distinct >= settings.min_distinct and distinct:
                evidence = _evidence(ids[first], distinct, distinct, True)
                evidence["same_significant_text"] = True
                found.append((int(ids[first]), later, evidence))
            else:
                self._count("rejected_min_distinct", 1)
        for a, b, buckets in zip(lo.tolist(), hi.tolist(), shared.tolist(), strict=True):
            edge = self._confirm(a, b, ids, lengths, buckets)
            if edge is not None:
                found.append(edge)
        self.stats["confirmed"] = len(found)
        found.sort(key=lambda edge: (edge[0], edge[1]))
        yield from found

    def _text(self, position: int) -> str:
        return self._texts[position].decode("utf-8")

    def _confirm(
        self, a: int, b: int, ids: np.ndarray, lengths: np.ndarray, buckets: int
    ) -> tuple[int, int, dict[str, object]] | None:
        settings = self.settings
        self._count("comparisons", 1)
        short, other = (a, b) if lengths[a] <= lengths[b] else (b, a)  # a < b: ties keep a
        short_text, other_text = self._text(short), self._text(other)
        distinct, common = coverage(short_text, other_text)
        if distinct < settings.min_distinct or not distinct:
            self._count("rejected_min_distinct", 1)
            return None
        if common / distinct < settings.coverage:
            self._count("rejected_coverage", 1)
            return None
        evidence = _evidence(ids[short], distinct, common, short_text in other_text)
        evidence["shared_buckets"] = buckets
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
    keys: np.ndarray, settings: NearSettings, stats: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (positions lo < hi) to compare and the buckets each shares, in (lo, hi) order;
    counts what the caps skipped into ``stats``. ``keys``: ``[samples, bands]`` band keys."""
    count = keys.shape[0]
    flat = keys.reshape(-1)
    owner = np.repeat(np.arange(count, dtype=np.int64), keys.shape[1] if keys.ndim == 2 else 0)
    order = np.argsort(flat, kind="stable")  # stable: owners stay ascending within a bucket
    flat, owner = flat[order], owner[order]
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]] if flat.size else flat[:0] != 0)
    sizes = np.diff(np.r_[starts, flat.size]).astype(np.int64)
    over = sizes > settings.max_postings
    shared = (sizes >= 2) & ~over
    stats["buckets"] = int((sizes >= 2).sum())
    stats["buckets_over_max_postings"] = int(over.sum())
    stats["pairs_skipped_by_max_postings"] = int(
        (sizes[over] * (sizes[over] - 1) // 2 - (sizes[over] - 1)).sum()
    )
    lo, hi = _pairs_within(owner, starts[shared], sizes[shared])
    # An over-cap bucket: its first sample with each other one (its members are alike, and
    # groups are transitive), not the square of its size.
    star_lo = np.repeat(owner[starts[over]], sizes[over] - 1)
    star_hi = owner[np.repeat(starts[over], sizes[over] - 1) + _within(sizes[over] - 1) + 1]
    pairs = np.concatenate([lo, star_lo]) * max(count, 1) + np.concatenate([hi, star_hi])
    unique, found = np.unique(pairs, return_counts=True) if pairs.size else (pairs, pairs)
    enough = found >= settings.min_shared
    stats["pairs_below_min_shared"] = int((~enough).sum())
    unique, found = unique[enough], found[enough]
    lo, hi = np.divmod(unique, max(count, 1))
    kept = _best_per_sample(lo, hi, found, settings.max_candidates)
    stats["pairs_over_max_candidates"] = int((~kept).sum())
    stats["candidate_pairs"] = int(kept.sum())
    return lo[kept], hi[kept], found[kept]


def _within(sizes: np.ndarray) -> np.ndarray:
    """0 .. size-1 for each size, concatenated."""
    return np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)


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
    """Whether each pair is among the ``cap`` best (most shared buckets, then lowest partner)
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
    """(distinct 5-grams of ``short``, how many of them occur in ``other``), exactly: sets of
    the substrings themselves (measured faster than packing them into integers with numpy for
    texts of a few hundred characters, and no hash can collide)."""
    grams = _grams(short)
    return len(grams), len(grams & _grams(other))


def _grams(text: str) -> set[str]:
    return {text[i : i + 5] for i in range(len(text) - 4)}
