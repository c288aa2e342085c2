"""``histogram.json``: how many samples each declared unit size received, zero included.

Example: ``{"128": 30291, "192": 82191, "256": 120882, "320": 43121}`` (keys are strings, in
ascending size order).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["FILENAME", "histogram"]

FILENAME = "histogram.json"


def histogram(sizes: Sequence[int], counts: Sequence[int]) -> dict[str, int]:
    """Samples per unit size, every declared (and extended) size present, ascending."""
    pairs = sorted(zip(sizes, counts, strict=True))
    return {str(size): int(count) for size, count in pairs}
