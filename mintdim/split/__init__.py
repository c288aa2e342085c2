"""Leakage-free train / validation / test splits of a finished build: ``group`` (frozen groups of
related samples: declared keys, exact text, near-duplicates, manual joins) and the modules each
step is made of."""

from mintdim.split.group import GroupResult, group

__all__ = ["GroupResult", "group"]
