"""``sample_index.jsonl``: one line per sample, in sample_id order, pointing at its shard record.

Line form (compact JSON, keys in this order)::

    {"sample_id":0,"hash":"<sha256 hex>","token_count":143,"unit_size":192,
     "source_file":"./data/alpaca.jsonl","source_line":1,"empty_fields":["input"],
     "shard_path":"unit_192/shard_000000.bin","shard_row":0}

``empty_fields`` lists, in declared order, the fields whose value was the empty string.

``shard_row`` is the 0-based record number inside the shard file, so the tokens are
``shard[shard_row * unit_size : shard_row * unit_size + token_count]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import numpy as np
import orjson

__all__ = ["FILENAME", "SampleIndexWriter", "middle"]

FILENAME = "sample_index.jsonl"


def middle(
    digest: str, token_count: int, unit_size: int, source: str, line: int, empty: list[str]
) -> str:
    """A line between ``"sample_id":N,`` and the shard number; ``source`` is already JSON."""
    empty_json = orjson.dumps(empty).decode() if empty else "[]"
    return (
        f'"hash":"{digest}","token_count":{token_count},"unit_size":{unit_size},'
        f'"source_file":{source},"source_line":{line},"empty_fields":{empty_json},'
        f'"shard_path":"unit_{unit_size}/shard_'
    )


class SampleIndexWriter:
    """Appends sample lines; the batch supplies pre-formatted middles, this adds ids and places."""

    def __init__(self, directory: Path) -> None:
        self._handle: TextIO = open(directory / FILENAME, "x", encoding="utf-8", newline="\n")  # noqa: SIM115

    def write(
        self, first_id: int, parts: list[str], shard_numbers: np.ndarray, shard_rows: np.ndarray
    ) -> None:
        """Write one line per sample of a batch whose first sample has id ``first_id``."""
        numbers = shard_numbers.tolist()
        # A batch touches few shards: format each number once, not once per sample.
        names = {number: f"{number:06d}" for number in set(numbers)}
        self._handle.write(
            "".join(
                [
                    f'{{"sample_id":{sample_id},{part}{names[shard]}.bin","shard_row":{row}}}\n'
                    for sample_id, part, shard, row in zip(
                        range(first_id, first_id + len(parts)),
                        parts,
                        numbers,
                        shard_rows.tolist(),
                        strict=True,
                    )
                ]
            )
        )

    def close(self) -> None:
        """Flush and close the file."""
        self._handle.close()
