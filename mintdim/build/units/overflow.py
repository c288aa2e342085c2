"""Samples longer than the largest unit: tallied as they are found, reported in one error.

A build that meets an overlong sample does not stop there: it counts every other one (see
``runtime._every_overflow``), and ``units=auto`` with a ``max_size`` knows them all from its scan,
so the user learns how many samples overflow, the largest, and where the first ones are, at once.
"""

from __future__ import annotations

import numpy as np

from mintdim.errors import MintDimError, UnitOverflowError
from mintdim.errors.base import format_location

__all__ = ["SHOWN", "OverflowTally"]

SHOWN = 5
"""How many overlong samples the error lists by location (the first ones in input order)."""


class OverflowTally:
    """Overlong samples in input order: their number, the largest, and the first ``SHOWN``."""

    def __init__(self, kind: str = "jsonl") -> None:
        self.kind = kind
        """``parquet`` when the files' records are rows (``errors.base.KINDS``)."""
        self.count = 0
        self.first: list[tuple[str, int, int]] = []
        self.largest: tuple[str, int, int] | None = None

    def add(self, file: str, lines: np.ndarray, token_counts: np.ndarray) -> None:
        """Record the overlong samples of one file (lines and counts, in input order)."""
        if not lines.size:
            return
        self.count += int(lines.size)
        for line, count in zip(
            lines[: SHOWN - len(self.first)].tolist(), token_counts.tolist(), strict=False
        ):
            self.first.append((file, line, count))
        top = int(np.argmax(token_counts))
        if self.largest is None or int(token_counts[top]) > self.largest[2]:
            self.largest = (file, int(lines[top]), int(token_counts[top]))

    def error(self, max_unit_size: int, stopped: MintDimError | None = None) -> UnitOverflowError:
        """The one error for everything tallied (at least one sample); ``stopped``: the error
        at the line where counting had to stop, if it did."""
        file, line, token_count = self.first[0]
        largest_file, largest_line, largest_count = self.largest
        return UnitOverflowError(
            file=file,
            line=line,
            token_count=token_count,
            max_unit_size=max_unit_size,
            count=self.count,
            largest_at=format_location(largest_file, largest_line),
            largest_count=largest_count,
            first_at=[format_location(f, n) for f, n, _ in self.first],
            first_counts=[tokens for _, _, tokens in self.first],
            stopped_at=_stopped_at(stopped),
            kind=self.kind,
        )


def _stopped_at(error: MintDimError | None) -> str:
    if error is None:
        return ""
    file, line = getattr(error, "file", None), getattr(error, "line", None)
    where = format_location(file, line) if file is not None and line is not None else "?"
    return f"{where} ({type(error).__name__})"
