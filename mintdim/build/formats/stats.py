"""``stats.json``: token, padding, shard, duplicate and UNK totals of one output directory.

``padding_ratio`` = ``pad_tokens / total_slots``: the share of written slots that hold PAD, the
number this product exists to keep low. Keys, in order: total_samples, total_tokens, token_dtype,
bytes_per_token, duplicate_groups, duplicate_samples, samples_with_unk, unk_tokens,
unit_distribution, blank_lines, total_slots, pad_tokens, padding_ratio, shard_count, shard_bytes,
overflow (``{"policy", "samples", "extended_units"}``: ``run(on_overflow=...)``, how many samples
were longer than the largest planned unit, and the units ``extend`` added).

A packed build (``units(pack=True)``) counts slots over its rows (``rows × unit_size``), so
``padding_ratio`` is the PAD its rows really hold, and adds a last key, ``packing``:
``{"algorithm", "version", "rows", "lower_bound_rows"}``, the last two by unit size, the bound
being ``ceil(tokens / unit_size)``, the fewest rows any packing could use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mintdim.build.formats.histogram import histogram

__all__ = ["FILENAME", "StatsCounter"]

FILENAME = "stats.json"


@dataclass(slots=True)
class StatsCounter:
    """Running totals, updated once per batch."""

    sizes: tuple[int, ...]
    policy: str = "abort"
    samples: int = 0
    tokens: int = 0
    blank_lines: int = 0
    unk_tokens: int = 0
    overflow_samples: int = 0
    extended: list[int] = field(default_factory=list)
    """The sizes among ``sizes`` that ``on_overflow="extend"`` added."""
    unit_counts: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.unit_counts = np.zeros(len(self.sizes), dtype=np.int64)

    def add_unit(self, size: int) -> None:
        """A unit added by ``on_overflow="extend"``; counted after the planned ones."""
        self.sizes = (*self.sizes, size)
        self.extended.append(size)
        self.unit_counts = np.append(self.unit_counts, 0)

    def overflow(self, samples: int) -> None:
        """Count samples longer than the largest planned unit."""
        self.overflow_samples += samples

    def add(
        self, token_counts: np.ndarray, unit_indexes: np.ndarray, blank_lines: int, unk_tokens: int
    ) -> None:
        """Count one batch."""
        self.samples += int(token_counts.size)
        self.tokens += int(token_counts.sum())
        self.blank_lines += blank_lines
        self.unk_tokens += unk_tokens
        self.unit_counts += np.bincount(unit_indexes, minlength=len(self.sizes))

    def as_dict(
        self,
        *,
        token_dtype: str,
        bytes_per_token: int,
        duplicate_groups: int,
        duplicate_samples: int,
        samples_with_unk: int,
        shard_count: int,
        shard_bytes: int,
        packing: dict | None = None,
    ) -> dict[str, object]:
        """The stats.json content; ``packing``: a packed build's (module docstring)."""
        records = self.unit_counts
        if packing is not None:
            rows = packing["rows"]
            records = np.array([rows.get(str(size), 0) for size in self.sizes], dtype=np.int64)
        total_slots = int(np.dot(records, np.asarray(self.sizes, dtype=np.int64)))
        pad_tokens = total_slots - self.tokens
        return {
            "total_samples": self.samples,
            "total_tokens": self.tokens,
            "token_dtype": token_dtype,
            "bytes_per_token": bytes_per_token,
            "duplicate_groups": duplicate_groups,
            "duplicate_samples": duplicate_samples,
            "samples_with_unk": samples_with_unk,
            "unk_tokens": self.unk_tokens,
            "unit_distribution": histogram(self.sizes, self.unit_counts.tolist()),
            "blank_lines": self.blank_lines,
            "total_slots": total_slots,
            "pad_tokens": pad_tokens,
            "padding_ratio": round(pad_tokens / total_slots, 6) if total_slots else 0.0,
            "shard_count": shard_count,
            "shard_bytes": shard_bytes,
            "overflow": {
                "policy": self.policy,
                "samples": self.overflow_samples,
                "extended_units": sorted(self.extended),
            },
            **({"packing": packing} if packing is not None else {}),
        }
