"""``duplicate_index.jsonl``: one line per rendered-text hash shared by two or more samples.

Line form (compact JSON; samples in sample_id order; lines ordered by their first sample_id)::

    {"hash":"<sha256 hex>","count":3,"samples":[{"sample_id":12031,
     "source_file":"./data/alpaca.jsonl","source_line":991}, ...]}

Memory: the tracker keeps only each sample's 32-byte digest. Finding groups sorts a copy of
their 8-byte prefixes (8 more bytes per sample, for a moment); the source location of the few
duplicated samples is read back from ``sample_index.jsonl`` (line k holds sample k), so no
per-sample location is held in memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from mintdim.pipelines.unit_build.output import sample_index

__all__ = ["FILENAME", "DuplicateTracker", "group_line", "groups"]

FILENAME = "duplicate_index.jsonl"
_DIGEST = 32
_CHUNK = 1 << 16
"""Prefixes looked up at a time when finding groups: bounds the lookup's scratch memory."""
_MARK_BITS = 20


class DuplicateTracker:
    """Collects digests in sample_id order and writes the duplicate groups at the end."""

    def __init__(self) -> None:
        self._digests = bytearray()

    def add(self, digests: bytes) -> None:
        """Record the digests of the next samples, in sample_id order."""
        self._digests += digests

    def groups(self) -> list[list[int]]:
        """Sample ids of each duplicate group, groups ordered by their first sample id."""
        return groups(np.frombuffer(self._digests, dtype=np.uint8).reshape(-1, _DIGEST))

    def write(self, directory: Path) -> tuple[int, int]:
        """Write the file; return (duplicate_groups, duplicate_samples)."""
        found = self.groups()
        locations = _locations(directory / sample_index.FILENAME, {i for g in found for i in g})
        with open(directory / FILENAME, "xb") as handle:
            for ids in found:
                digest = self._digests[ids[0] * _DIGEST : (ids[0] + 1) * _DIGEST].hex()
                handle.write(group_line(digest, ids, locations))
        return len(found), sum(len(ids) for ids in found)


def group_line(digest_hex: str, ids: list[int], locations: dict[int, dict[str, object]]) -> bytes:
    """A group's whole line; ``locations``: the source_file and source_line of each sample id."""
    samples = [{"sample_id": i, **locations[i]} for i in ids]
    return orjson.dumps({"hash": digest_hex, "count": len(ids), "samples": samples}) + b"\n"


def groups(keys: np.ndarray) -> list[list[int]]:
    """Sample ids of each group of two or more equal keys, groups ordered by their first id.

    ``keys``: one row per sample id, 8 or more bytes wide (a digest, or a digest in hex).
    """
    count = keys.shape[0]
    if count < 2:
        return []
    prefixes = np.ndarray((count,), dtype="<u8", buffer=keys, strides=(keys.shape[1],))
    # Memory beside the keys: one sorted copy of the 8-byte prefixes (no per-sample index
    # array), then the prefixes seen twice or more, looked up chunk by chunk.
    ordered = prefixes.copy()
    ordered.sort()
    repeated = ordered[1:] == ordered[:-1]
    shared = np.unique(ordered[1:][repeated])
    del ordered, repeated
    # A bitmap of hashed prefixes (1 MiB) rules out most samples at one look each; only the rest
    # are searched for among the shared prefixes.
    marked = np.zeros(1 << _MARK_BITS, dtype=bool)
    marked[_mark(shared)] = True
    candidates: list[int] = []
    for start in range(0, count if shared.size else 0, _CHUNK):
        chunk = prefixes[start : start + _CHUNK]
        maybe = np.flatnonzero(marked[_mark(chunk)])
        found = shared[np.minimum(np.searchsorted(shared, chunk[maybe]), shared.size - 1)]
        candidates += (maybe[found == chunk[maybe]] + start).tolist()
    by_key: dict[bytes, list[int]] = {}
    whole = np.ascontiguousarray(keys[candidates]).view(f"V{keys.shape[1]}").ravel().tolist()
    for sample_id, key in zip(candidates, whole, strict=True):  # the whole keys decide
        by_key.setdefault(key, []).append(sample_id)
    return sorted((ids for ids in by_key.values() if len(ids) > 1), key=lambda ids: ids[0])


def _mark(prefixes: np.ndarray) -> np.ndarray:
    """A bitmap position for each prefix: its top bits once multiplied by an odd constant, which
    spreads every input bit (hex digits too) over them."""
    return (prefixes * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _MARK_BITS)


def _locations(index_path: Path, wanted: set[int]) -> dict[int, dict[str, object]]:
    """source_file and source_line of the wanted sample ids, read from sample_index.jsonl."""
    found: dict[int, dict[str, object]] = {}
    if not wanted:
        return found
    last = max(wanted)
    with open(index_path, "rb") as handle:
        for sample_id, line in enumerate(handle):
            if sample_id in wanted:
                row = orjson.loads(line)
                found[sample_id] = {
                    "source_file": row["source_file"],
                    "source_line": row["source_line"],
                }
            if sample_id == last:
                break
    return found
