"""``duplicate_index.jsonl``: one line per rendered-text hash shared by two or more samples.

Line form (compact JSON; samples in sample_id order; lines ordered by their first sample_id)::

    {"hash":"<sha256 hex>","count":3,"samples":[{"sample_id":12031,
     "source_file":"./data/alpaca.jsonl","source_line":991}, ...]}

Memory: the tracker keeps each sample's 32-byte digest and its line number (4 bytes; 8 in a
block holding a line past 2**32), as the blocks the batches brought (one growing buffer would
be copied whole each time it outgrows its allocation: twice the digests for a moment), and one
source file name per block. Finding groups sorts a copy of the digests' 8-byte prefixes (8 more
bytes per sample, for a moment). Nothing is read back from the files written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import orjson

__all__ = ["FILENAME", "DuplicateTracker", "group_line", "groups"]

FILENAME = "duplicate_index.jsonl"
_DIGEST = 32
_CHUNK = 1 << 16
"""Prefixes looked up at a time when finding groups: bounds the lookup's scratch memory."""
_MARK_BITS = 20


class DuplicateTracker:
    """Collects digests and source locations in sample_id order and writes the duplicate groups
    at the end."""

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self._lines: list[np.ndarray] = []
        self._sources: list[str] = []

    def add(self, digests: bytes, source: str, lines: np.ndarray) -> None:
        """Record the next samples, in sample_id order: their digests (kept, not copied), their
        source file (its path as the sample index names it) and line numbers (ascending)."""
        self._blocks.append(np.frombuffer(digests, dtype=np.uint8).reshape(-1, _DIGEST))
        narrow = lines.size == 0 or lines[-1] < 1 << 32
        self._lines.append(lines.astype(np.uint32) if narrow else lines)
        self._sources.append(source)

    def groups(self) -> list[list[int]]:
        """Sample ids of each duplicate group, groups ordered by their first sample id."""
        return groups(self._blocks)

    def write(self, directory: Path) -> tuple[int, int]:
        """Write the file; return (duplicate_groups, duplicate_samples)."""
        found = self.groups()
        blocks, rows = self._places([i for ids in found for i in ids])
        places = iter(zip(blocks, rows, strict=True))
        with open(directory / FILENAME, "xb") as handle:
            for ids in found:
                members = [next(places) for _ in ids]
                block, row = members[0]  # every member has this digest
                locations = {
                    sample_id: {
                        "source_file": self._sources[b],
                        "source_line": int(self._lines[b][r]),
                    }
                    for sample_id, (b, r) in zip(ids, members, strict=True)
                }
                digest = self._blocks[block][row].tobytes().hex()
                handle.write(group_line(digest, ids, locations))
        return len(found), sum(len(ids) for ids in found)

    def _places(self, sample_ids: list[int]) -> tuple[list[int], list[int]]:
        """Block and row of each of ``sample_ids``."""
        starts = np.cumsum([0] + [block.shape[0] for block in self._blocks])
        blocks = np.searchsorted(starts, sample_ids, side="right") - 1
        rows = np.asarray(sample_ids, dtype=np.int64) - starts[blocks]
        return blocks.tolist(), rows.tolist()


def group_line(digest_hex: str, ids: list[int], locations: dict[int, dict[str, object]]) -> bytes:
    """A group's whole line; ``locations``: the source_file and source_line of each sample id."""
    samples = [{"sample_id": i, **locations[i]} for i in ids]
    return orjson.dumps({"hash": digest_hex, "count": len(ids), "samples": samples}) + b"\n"


def groups(blocks: Sequence[np.ndarray]) -> list[list[int]]:
    """Sample ids of each group of two or more equal keys, groups ordered by their first id.

    ``blocks``: the keys of consecutive sample ids, one row per sample, every block as wide,
    8 or more bytes (a digest, or a digest in hex).
    """
    views = [_prefixes(block) for block in blocks]
    count = sum(view.size for view in views)
    if count < 2:
        return []
    # Memory beside the keys: one sorted copy of the 8-byte prefixes (no per-sample index
    # array), then the prefixes seen twice or more, looked up chunk by chunk.
    ordered = np.concatenate(views)
    ordered.sort()
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]  # sorted, a prefix seen k times k-1 times
    first = np.ones(repeated.size, dtype=bool)
    first[1:] = repeated[1:] != repeated[:-1]
    shared = repeated[first]
    del ordered, repeated, first
    by_key: dict[bytes, list[int]] = {}
    if shared.size:
        # A bitmap of hashed prefixes (1 MiB) rules out most samples at one look each; only the
        # rest are searched for among the shared prefixes.
        marked = np.zeros(1 << _MARK_BITS, dtype=bool)
        marked[_mark(shared)] = True
        first_id = 0
        for block, view in zip(blocks, views, strict=True):
            for start in range(0, view.size, _CHUNK):
                chunk = view[start : start + _CHUNK]
                maybe = np.flatnonzero(marked[_mark(chunk)])
                found = shared[np.minimum(np.searchsorted(shared, chunk[maybe]), shared.size - 1)]
                rows = maybe[found == chunk[maybe]] + start
                whole = np.ascontiguousarray(block[rows]).view(f"V{block.shape[1]}").ravel()
                for sample_id, key in zip((rows + first_id).tolist(), whole.tolist(), strict=True):
                    by_key.setdefault(key, []).append(sample_id)  # the whole keys decide
            first_id += view.size
    return sorted((ids for ids in by_key.values() if len(ids) > 1), key=lambda ids: ids[0])


def _prefixes(block: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each row of ``block``, as integers (a view, no copy)."""
    return np.ndarray((block.shape[0],), dtype="<u8", buffer=block, strides=(block.shape[1],))


def _mark(prefixes: np.ndarray) -> np.ndarray:
    """A bitmap position for each prefix: its top bits once multiplied by an odd constant, which
    spreads every input bit (hex digits too) over them."""
    return (prefixes * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _MARK_BITS)
