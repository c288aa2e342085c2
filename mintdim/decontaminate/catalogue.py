"""The benchmarks as the search sees them: every item's values as ids (encoded alone with the
build's tokenizer, or numbered normalised words), their content runs, and which ids of each
value are checked (lie inside a content run)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mintdim.build.tokenizer import Encoder
from mintdim.decontaminate.benchmarks import Benchmark
from mintdim.decontaminate.ngrams import Runs, value_runs
from mintdim.decontaminate.words import normal_words

__all__ = ["Catalogue", "catalogue"]


@dataclass(frozen=True, slots=True, eq=False)
class Catalogue:
    """Items and values numbered globally: benchmark ``b``'s items are
    ``item_start[b]:item_start[b+1]``, and every value belongs to one item."""

    benchmarks: list[Benchmark]
    item_start: np.ndarray
    value_item: np.ndarray
    value_start: np.ndarray
    """Each value's first id in ``ids`` (one more entry: the end)."""
    ids: np.ndarray
    """Every value's ids back to back (int64)."""
    runs: list[Runs]
    checked: np.ndarray
    """Per id of ``ids``: inside a content run."""
    too_short: np.ndarray
    """Per value: shorter than ``min(ngram, min_tokens)``, not matched."""
    skipped: np.ndarray
    """Per value: runs skipped for carrying no content (fewer than ⌈L/2⌉ distinct ids)."""
    vocabulary: dict[str, int]
    """``--match words``: each benchmark word's number (from 1); empty for tokens."""

    def value_ids(self, value: int) -> np.ndarray:
        return self.ids[self.value_start[value] : self.value_start[value + 1]]

    def run_owners(self, length: int) -> Runs:
        return next(r for r in self.runs if r.length == length)


def catalogue(
    benchmarks: list[Benchmark],
    encoder: Encoder | None,
    ngram: int,
    min_tokens: int,
) -> Catalogue:
    """Number every value's ids (tokens with ``encoder``, else words) and find its runs."""
    texts = [text for b in benchmarks for item in b.values for text in item]
    counts = [len(item) for b in benchmarks for item in b.values]
    vocabulary: dict[str, int] = {}
    if encoder is not None:
        flat, lengths = encoder.encode_batch(texts, [t.encode("utf-8") for t in texts])
        flat = flat.astype(np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
    else:
        numbered = [
            [vocabulary.setdefault(w, len(vocabulary) + 1) for w in normal_words(t)] for t in texts
        ]
        lengths = np.array([len(row) for row in numbered], dtype=np.int64)
        flat = np.array([i for row in numbered for i in row], dtype=np.int64)
    value_start = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = [flat[value_start[v] : value_start[v + 1]] for v in range(len(texts))]
    runs, checked, too_short, skipped = value_runs(values, ngram, min_tokens)
    items = np.array([len(b.values) for b in benchmarks], dtype=np.int64)
    return Catalogue(
        benchmarks=benchmarks,
        item_start=np.concatenate([[0], np.cumsum(items)]).astype(np.int64),
        value_item=np.repeat(np.arange(len(counts)), counts),
        value_start=value_start,
        ids=flat,
        runs=runs,
        checked=checked,
        too_short=too_short,
        skipped=skipped,
        vocabulary=vocabulary,
    )
