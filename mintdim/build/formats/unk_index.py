"""``unk_index.jsonl``: one line per sample whose field values produced UNK tokens, in sample_id order.

Line form (compact JSON)::

    {"sample_id":91822,"hash":"<sha256 hex>","source_file":"./data/alpaca.jsonl",
     "source_line":18291,"unk_count":2,"unk_positions":[17,89]}

Positions are 0-based indexes into the sample's tokens. Template literals never produce UNK here:
that case fails before any data is read (``TemplateTokenizerError``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from mintdim.shared import durable

__all__ = ["FILENAME", "UnkIndexWriter", "unk_line", "unk_parts", "unk_parts_flat"]

FILENAME = "unk_index.jsonl"


def unk_parts(
    digest_hexes: list[str], source: str, lines: list[int], positions: list[list[int]]
) -> list[str]:
    """Per sample with UNK, its line after ``"sample_id":N,`` and before its closing brace:
    everything a worker knows. ``source`` is the source file already as a JSON string;
    ``positions[i]`` (never empty) the UNK positions of sample i."""
    # One orjson call writes every sample's list: they hold ints only, so "],[" separates them.
    listed = orjson.dumps(positions).decode()[2:-2].split("],[") if positions else []
    return _parts(digest_hexes, source, lines, list(map(len, positions)), listed)


def unk_parts_flat(
    digest_hexes: list[str], source: str, lines: list[int], positions: np.ndarray, counts: list[int]
) -> list[str]:
    """:func:`unk_parts` from every sample's positions back to back (``counts[i]`` of them, never
    0, are sample i's), as a batch finds them: no list per sample is made."""
    if not counts:
        return []
    # One orjson call writes every position ("[a,b,...]"). Each number takes its digits and one
    # separator, so a sample's run is cut out of that text by offsets summed in bulk.
    text = orjson.dumps(positions.tolist()).decode()
    after = np.cumsum(_digits(positions) + 1)  # in text[1:], just past each number's separator
    stops = after[np.cumsum(counts) - 1].tolist()
    starts = [1, *(stop + 1 for stop in stops[:-1])]
    listed = [text[start:stop] for start, stop in zip(starts, stops, strict=True)]
    return _parts(digest_hexes, source, lines, counts, listed)


def _parts(
    digest_hexes: list[str], source: str, lines: list[int], counts: list[int], listed: list[str]
) -> list[str]:
    """The parts, each sample's positions already written out (``listed``, no brackets)."""
    return [
        f'"hash":"{digest}","source_file":{source},"source_line":{line},'
        f'"unk_count":{count},"unk_positions":[{text}]'
        for digest, line, count, text in zip(digest_hexes, lines, counts, listed, strict=True)
    ]


def _digits(values: np.ndarray) -> np.ndarray:
    """How many decimal digits each non-negative integer of ``values`` has."""
    digits = np.ones(values.size, dtype=np.int64)
    power, top = 10, int(values.max(initial=0))
    while power <= top:
        digits += values >= power
        power *= 10
    return digits


def unk_line(sample_id: int, part: str) -> str:
    """A sample's whole line: its id around its :func:`unk_parts` entry."""
    return f'{{"sample_id":{sample_id},{part}}}\n'


class UnkIndexWriter:
    """Appends UNK lines: the sample id around the part from :func:`unk_parts`."""

    def __init__(self, directory: Path) -> None:
        self.file = durable.HashedFile(directory / FILENAME)
        self.samples = 0

    def write(self, first_id: int, parts: list[tuple[int, str]]) -> None:
        """Write the UNK lines of a batch whose first sample has id ``first_id``; ``parts`` holds
        (sample position in the batch, its :func:`unk_parts` entry)."""
        self.samples += len(parts)
        self.file.write(
            "".join([unk_line(first_id + offset, part) for offset, part in parts]).encode()
        )

    def close(self) -> None:
        """Flush and close the file."""
        self.file.close()
