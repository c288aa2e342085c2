"""``overflow_index.jsonl``: one line per sample longer than the largest planned unit, in input
order, written when ``run(on_overflow=...)`` is ``skip``, ``truncate`` or ``extend``.

Line form (compact JSON, keys in this order)::

    {"sample_id":17,"source_file":"./data/alpaca.jsonl","source_line":18,"token_count":913,
     "max_unit_size":512,"action":"extend","new_unit_size":960}

``sample_id`` is null for a skipped sample (it is not in the build). ``token_count`` is the
sample's full count before any truncation; ``max_unit_size`` the largest planned unit.
``new_unit_size`` (extend only) is the unit the sample went to. Under ``abort`` the build stops
at the first such sample, so the file stays empty.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from mintdim.shared import durable

__all__ = ["FILENAME", "OverflowIndexWriter"]

FILENAME = "overflow_index.jsonl"


class OverflowIndexWriter:
    """Appends overflow lines and counts them."""

    def __init__(self, directory: Path) -> None:
        self.file = durable.HashedFile(directory / FILENAME)
        self.count = 0

    def write(
        self,
        sample_id: int | None,
        source_file: str,
        source_line: int,
        token_count: int,
        max_unit_size: int,
        action: str,
        new_unit_size: int | None,
    ) -> None:
        """Write one line."""
        row = {
            "sample_id": sample_id,
            "source_file": source_file,
            "source_line": source_line,
            "token_count": token_count,
            "max_unit_size": max_unit_size,
            "action": action,
        }
        if new_unit_size is not None:
            row["new_unit_size"] = new_unit_size
        self.file.write(orjson.dumps(row) + b"\n")
        self.count += 1

    def close(self) -> None:
        """Flush and close the file."""
        self.file.close()
