"""A build searched for the benchmark runs: its samples as id blocks, each searched with a
``Table`` on a pool of threads (numpy releases the GIL in the hashing), the hits gathered in
input order whatever the number of threads.

``--match tokens`` reads the stored tokens of every sample from the shards (template literals
and special tokens included: what the model sees), each shard checked against the manifest and
searched as stored, its rows PAD included (a run never reaches past a row's tokens);
``--match words`` re-reads every sample's source record through the source interface, renders
it, checks it against the index's hash (split/samples.py ``read_records``) and numbers its
normalised words.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from mintdim.decontaminate.ngrams import Table
from mintdim.decontaminate.words import WordNumbers, WordSpans
from mintdim.split.samples import BuildSamples, read_records
from mintdim.split.write import BuildFiles, shard_records

__all__ = ["KEPT_TEXTS", "Block", "Hits", "scan", "token_blocks", "word_blocks"]

KEPT_TEXTS = 10_000
"""Rendered texts kept for the report's examples (``--match words``): those of the first samples
with a hit, in sample order, a bound on memory; the examples are chosen among them."""
_BLOCK_TOKENS = 1 << 18
"""Ids hashed at a time: the temporaries (~10 arrays of 8 bytes an id, 2 MiB each) are reused
by the allocator instead of mapped and faulted in afresh (12 against 24 ns an id at 4M)."""


@dataclass(frozen=True, slots=True)
class Block:
    """Consecutive samples' ids: back to back, or each at its own start (a shard's rows)."""

    sample_ids: np.ndarray
    counts: np.ndarray | None
    ids: np.ndarray | None
    """Unsigned or int64 (words)."""
    starts: np.ndarray | None = None
    """Where each sample's ids start in ``ids``, ascending (None: back to back); what lies
    between one sample's last id and the next one's start (PAD) is in no sample."""
    texts: list[str] | None = None
    """The samples' rendered texts (``--match words``), for the report's examples."""
    words: WordSpans | None = None
    """Where each word lies (``--match words``): runs are confirmed on the words' bytes."""
    numbers: WordNumbers | None = None
    """A words block not numbered yet (``counts`` and ``ids`` None): what numbers it."""

    def numbered(self) -> Block:
        """The block with its ids (a words block is numbered on the search's thread)."""
        if self.numbers is None or self.texts is None:
            return self
        flat, counts, spans = self.numbers.number(self.texts)
        return Block(self.sample_ids, counts, flat, texts=self.texts, words=spans)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Where each sample's ids start and end in ``ids``."""
        if self.starts is None:
            ends = np.cumsum(self.counts)
            return ends - self.counts, ends
        return self.starts, self.starts + self.counts


@dataclass(frozen=True, slots=True)
class Hits:
    """Every confirmed run found: the sample, where in it, the run's length and gram number
    (in ``Table.runs[length]``), sorted by sample, position, length."""

    sample: np.ndarray
    position: np.ndarray
    length: np.ndarray
    gram: np.ndarray


def token_blocks(samples: BuildSamples | BuildFiles) -> Iterator[Block]:
    """The stored tokens of every sample, shard by shard, in blocks of whole rows of about
    :data:`_BLOCK_TOKENS` ids: views of the shard's rows as stored, PAD included (hashing the
    PAD slots costs less than copying the tokens out of the rows: 11% of the slots of a
    bucketed build)."""
    for shard in shard_records(samples):
        ids, counts, records = shard.sample_ids, shard.token_counts, shard.records
        rows = max(1, _BLOCK_TOKENS // shard.unit_size)
        starts = np.arange(rows, dtype=np.int64) * shard.unit_size
        for first in range(0, ids.size, rows):
            # In the stored dtype: hashing converts once, and comparing with int64 runs is exact.
            chosen = slice(first, first + rows)
            block = records[chosen].reshape(-1)
            yield Block(ids[chosen], counts[chosen], block, starts[: ids[chosen].size])


def word_blocks(samples: BuildSamples, vocabulary: dict[str, int]) -> Iterator[Block]:
    """Every sample's normalised words as numbers (``vocabulary``'s, 0 for a word no benchmark
    has), with its rendered text and its words' spans, in input order."""
    numbers = WordNumbers(vocabulary)
    for batch in read_records(samples, [], batch=8192):
        # Numbered on the search's thread: its numpy half runs beside the next batch's reading.
        yield Block(batch.ids.astype(np.int64), None, None, texts=batch.texts, numbers=numbers)


def _search(table: Table, block: Block) -> Hits:
    """The block's hits."""
    block = block.numbered()
    if not block.ids.size:
        return _hits([])
    starts, ends = block.bounds()
    parts = []
    prefix = table.hasher.prefix(block.ids)
    for length, positions, grams in table.find(block.ids, starts, ends, prefix):
        if block.words is not None:  # found on exact numbers; the words compared byte for byte too
            runs = table.runs[length].grams
            same = [
                block.words.same(at, runs[gram])
                for at, gram in zip(positions.tolist(), grams.tolist(), strict=True)
            ]
            positions, grams = positions[same], grams[same]
        owner = np.searchsorted(ends, positions, side="right")
        parts.append(
            (
                block.sample_ids[owner],
                positions - starts[owner],
                np.full(positions.size, length, dtype=np.int64),
                grams.astype(np.int64),
            )
        )
    return _hits(parts)


def _hits(parts: list[tuple[np.ndarray, ...]]) -> Hits:
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Hits(empty, empty, empty, empty)
    sample, position, length, gram = (np.concatenate([p[k] for p in parts]) for k in range(4))
    order = np.lexsort((gram, length, position, sample))
    return Hits(sample[order], position[order], length[order], gram[order])


def scan(
    table: Table, blocks: Iterable[Block], workers: int, *, texts: dict[int, str] | None = None
) -> Hits:
    """Search every block on ``workers`` threads (at most two blocks each in flight, so the
    memory stays bounded); the hits in sample order. ``texts``: where to keep the rendered text
    of the first :data:`KEPT_TEXTS` samples with a hit, in sample order (words blocks)."""
    found: list[tuple[np.ndarray, ...]] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        flight: deque[tuple[Future, Block]] = deque()
        for block in blocks:
            flight.append((pool.submit(_search, table, block), block))
            while len(flight) >= 2 * workers:
                _take(*flight.popleft(), found, texts)
        while flight:
            _take(*flight.popleft(), found, texts)
    return _hits(found)


def _take(
    future: Future,
    block: Block,
    found: list[tuple[np.ndarray, ...]],
    texts: dict[int, str] | None,
) -> None:
    hits = future.result()
    if not hits.sample.size:
        return
    found.append((hits.sample, hits.position, hits.length, hits.gram))
    if texts is not None and block.texts is not None:
        hit = np.unique(hits.sample)[: max(0, KEPT_TEXTS - len(texts))]
        rows = np.searchsorted(block.sample_ids, hit)  # a words block's ids are ascending
        for sample_id, row in zip(hit.tolist(), rows.tolist(), strict=True):
            texts[sample_id] = block.texts[row]
