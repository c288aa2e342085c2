"""Figures as a person reads them in MintDim's lines and tables."""

from __future__ import annotations

__all__ = ["human_bytes"]


def human_bytes(count: int) -> str:
    """``"999 B"``, ``"1.5 KiB"``, ``"241.8 MiB"``: binary units, one decimal above bytes.

    A non-empty size never reads as zero: below 1 KiB it is whole bytes, and each larger unit
    starts at 1.0.
    """
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if round(value, 1) < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover
