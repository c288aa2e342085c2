"""From hits to findings: which training samples each item contaminates (the sample side), and
how much of each item value the build covers (the benchmark side).

- A sample is contaminated by an item when it holds at least ``min_matches`` distinct content
  runs of the item's values. ``ngrams_shared`` counts them; ``longest_shared_run`` is the longest
  stretch of the sample covered by consecutive hits of the item (positions one apart), in ids.
- A value's ``coverage`` is the share of its checked ids that lie inside a run found anywhere
  in the build; an item is contaminated when any value reaches ``item_coverage``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mintdim.decontaminate.catalogue import Catalogue
from mintdim.decontaminate.ngrams import inside_runs
from mintdim.decontaminate.scan import Hits

__all__ = ["Pairs", "coverage", "pairs"]


@dataclass(frozen=True, slots=True)
class Pairs:
    """Each (sample, item) contamination, sorted by sample then item."""

    sample: np.ndarray
    item: np.ndarray
    ngrams_shared: np.ndarray
    longest: np.ndarray
    longest_start: np.ndarray
    """Where in the sample the longest shared run starts."""

    def samples(self) -> np.ndarray:
        """The contaminated samples, ascending."""
        return np.unique(self.sample)


def _owned(hits: Hits, cat: Catalogue) -> tuple[np.ndarray, ...]:
    """Each hit once per item value that holds its run: sample, position, length, gram, item."""
    parts = []
    for r in cat.runs:
        chosen = hits.length == r.length
        grams = hits.gram[chosen]
        many = r.owner_start[grams + 1] - r.owner_start[grams]
        first = np.repeat(r.owner_start[grams], many)
        step = np.arange(first.size) - np.repeat(np.cumsum(many) - many, many)
        parts.append(
            (
                np.repeat(hits.sample[chosen], many),
                np.repeat(hits.position[chosen], many),
                np.full(first.size, r.length, dtype=np.int64),
                np.repeat(grams, many),
                cat.value_item[r.owner_value[first + step]],
            )
        )
    if not parts:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(5))
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(5))


def pairs(hits: Hits, cat: Catalogue, min_matches: int) -> Pairs:
    """The contaminated (sample, item) pairs."""
    sample, position, length, gram, item = _owned(hits, cat)
    if not sample.size:
        empty = np.zeros(0, dtype=np.int64)
        return Pairs(empty, empty, empty, empty, empty)
    # Distinct runs of each (sample, item): a run held by two values of an item counts once.
    runs = np.unique(np.stack([sample, item, length, gram]), axis=1)
    keys, shared = np.unique(runs[:2], axis=1, return_counts=True)
    # Longest stretch: hits of one (sample, item) at consecutive positions form one stretch.
    spots = np.unique(np.stack([sample, item, position, position + length]), axis=1)
    s, i, start, end = spots
    new = np.r_[True, (s[1:] != s[:-1]) | (i[1:] != i[:-1]) | (start[1:] != start[:-1] + 1)]
    cuts = np.flatnonzero(new)
    stretch_end = np.maximum.reduceat(end, cuts)
    stretch = stretch_end - start[cuts]
    pair_of = np.searchsorted(_key(keys[0], keys[1]), _key(s[cuts], i[cuts]))
    order = np.lexsort((start[cuts], -stretch, pair_of))  # per pair: longest, then first
    first = order[np.r_[True, pair_of[order][1:] != pair_of[order][:-1]]]
    keep = shared >= min_matches
    return Pairs(
        sample=keys[0][keep],
        item=keys[1][keep],
        ngrams_shared=shared[keep],
        longest=stretch[first][keep],
        longest_start=start[cuts][first][keep],
    )


def _key(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(sample, item) as one number that sorts like the pair (each below 2**31)."""
    return a.astype(np.int64) * (1 << 31) + b


def coverage(hits: Hits, cat: Catalogue) -> np.ndarray:
    """Each value's coverage (NaN for a value with no checked id)."""
    begins, lengths = [], []
    for r in cat.runs:
        found = np.unique(hits.gram[hits.length == r.length])
        many = r.owner_start[found + 1] - r.owner_start[found]
        first = np.repeat(r.owner_start[found], many)
        owners = first + np.arange(first.size) - np.repeat(np.cumsum(many) - many, many)
        begins.append(cat.value_start[r.owner_value[owners]] + r.owner_offset[owners])
        lengths.append(r.length)
    inside = inside_runs(cat.ids.size, begins, lengths)
    value_of = np.repeat(np.arange(cat.value_start.size - 1), np.diff(cat.value_start))
    values = cat.value_start.size - 1
    checked = np.bincount(value_of, weights=cat.checked, minlength=values)
    hit = np.bincount(value_of, weights=inside & cat.checked, minlength=values)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(checked > 0, hit / np.maximum(checked, 1), np.nan)
