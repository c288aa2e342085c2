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

from mintdim.pipelines.unit_build.units.shard_writer import shard_path

__all__ = ["FILENAME", "SampleIndexWriter", "sample_parts"]

FILENAME = "sample_index.jsonl"


def sample_parts(
    hexes: list[str],
    token_counts: list[int],
    unit_sizes: list[int],
    source: str,
    lines: list[int],
    empty_fields: list[str],
) -> list[str]:
    """Per sample, the middle of its line (``"hash"`` to ``"empty_fields"``): everything a worker
    knows. ``source`` is the source file and ``empty_fields`` each sample's list, already as
    JSON. The writer adds the rest."""
    return [
        f'"hash":"{h}","token_count":{n},"unit_size":{u},"source_file":{source},'
        f'"source_line":{line},"empty_fields":{e}'
        for h, n, u, line, e in zip(
            hexes, token_counts, unit_sizes, lines, empty_fields, strict=True
        )
    ]


class SampleIndexWriter:
    """Appends sample lines: the sample id, the middle from :func:`sample_parts`, the shard place."""

    def __init__(self, directory: Path) -> None:
        self._handle: TextIO = open(directory / FILENAME, "x", encoding="utf-8", newline="\n")  # noqa: SIM115

    def write(
        self,
        first_id: int,
        parts: list[str],
        unit_sizes: np.ndarray,
        shard_numbers: np.ndarray,
        shard_rows: np.ndarray,
    ) -> None:
        """Write one line per sample of a batch whose first sample has id ``first_id``."""
        # A batch touches few shards: name each once, not once per sample. One int per sample
        # (unit size in the high bits, shard number in the low) keys them as cheaply as possible.
        places = ((unit_sizes.astype(np.int64) << 32) | shard_numbers).tolist()
        paths = {place: shard_path(place >> 32, place & 0xFFFFFFFF) for place in set(places)}
        self._handle.write(
            "".join(
                [
                    f'{{"sample_id":{sample_id},{part},"shard_path":"{paths[place]}",'
                    f'"shard_row":{row}}}\n'
                    for sample_id, part, place, row in zip(
                        range(first_id, first_id + len(parts)),
                        parts,
                        places,
                        shard_rows.tolist(),
                        strict=True,
                    )
                ]
            )
        )

    def close(self) -> None:
        """Flush and close the file."""
        self._handle.close()
