"""The two rules every declaration shares: one entry for all files or one per file, and counts
that are positive integers. Each check raises the caller's own named error."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from mintdim.errors import MintDimError
from mintdim.options import is_int

__all__ = ["is_positive_int", "per_file"]

T = TypeVar("T")


def per_file(
    entries: Sequence[T], file_count: int, arity_error: Callable[..., MintDimError]
) -> list[T]:
    """Each input file's entry: one entry is shared by every file, N entries map to N files.

    Any other length raises ``arity_error(file_count=..., got=...)``.
    """
    if len(entries) not in (1, file_count):
        raise arity_error(file_count=file_count, got=len(entries))
    return [entries[0]] * file_count if len(entries) == 1 else list(entries)


def is_positive_int(value: object) -> bool:
    """An integer of at least 1, Python's or numpy's (sizes computed with numpy are counts too);
    ``True`` is an int subclass, but not a count. Callers keep ``int(value)``: plans and
    manifests hold Python ints."""
    return is_int(value) and value > 0
