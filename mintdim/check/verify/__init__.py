"""What "intact" means for a finished build, checked from its own files: ``mintdim verify DIR``.

The checks read the build through the names, formats and digests its writers use:

- ``manifest.json`` is sealed (its own SHA-256), complete, of a known format version, in the
  exact bytes MintDim writes;
- every listed shard exists with the listed size and SHA-256, is a whole number of records,
  is named and filled as the writer rolls shards, and nothing unlisted lies beside them;
- every record's slots after its ``token_count`` hold PAD, and no token id is outside the
  vocabulary;
- ``sample_index.jsonl`` has contiguous ids, and each sample's unit, shard and row are where
  the writer puts the next sample of its unit;
- ``stats.json`` and ``histogram.json`` equal the totals of the index, ``duplicate_index.jsonl``
  the groups of equal hashes in it, ``unk_index.jsonl`` the UNK ids found in the shards;
- every index and summary file has the size and SHA-256 the manifest lists, so one changed
  byte anywhere is found.

Every failure is collected (not only the first), each with the file it concerns, in English and
Vietnamese (check/report.py). Each check is a module of this package; ``order.py`` declares the
order they run in (``STEPS``) and which of them run beside the main thread, and holds
:func:`verify_build`, the one place that runs them. ``deep`` re-derives every record from the
inputs (check/deep_verify.py).
"""

from __future__ import annotations

from mintdim.check.report import Failure, VerifyReport
from mintdim.check.verify.order import STEPS, verify_build

__all__ = ["STEPS", "Failure", "VerifyReport", "verify_build"]
