"""Leakage-free train / validation / test splits of a finished build: ``group`` (frozen groups of
related samples: declared keys, exact text, near-duplicates, manual joins) and ``split``
(whole groups allocated by seed and strata, records copied into three verified builds) and
``open_split`` (train and validation for training, the test set locked away)."""

from mintdim.split.group import GroupResult, group
from mintdim.split.open import Split, open_split
from mintdim.split.threeway import SplitResult, split

__all__ = ["GroupResult", "Split", "SplitResult", "group", "open_split", "split"]
