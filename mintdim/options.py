"""How a public function checks its options: one rule per kind of value, the same everywhere.

``run()``, ``scan()``, ``loader()``, ``plan_units()`` and ``open_build()`` take options from
Python, YAML and command lines alike, where ``"no"`` or ``"0"`` stand for False in a person's
mind but are true in Python's. So nothing is coerced: a bool option takes a bool (``numpy.bool_``
too), an integer option an integer (numpy integers too; ``True`` is not a count), a number
option a finite int or float, and a path a ``str`` or ``os.PathLike``. Each value comes back as
the plain Python value it stands for, so a numpy scalar never reaches a manifest or a state
dict. A broken rule raises the calling function's own named error, built by ``error(option,
value, rule)``: ``rule`` is ``"bool"`` or a code of :data:`INT_RULES`, and the error modules
hold one text for each (``mintdim.errors.base._OPTION_RULES``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["INT_RULES", "OptionCheck", "is_int", "is_number", "is_path"]

INT_RULES: dict[str, tuple[int | None, int | None]] = {
    "int64": (-(2**63), 2**63 - 1),
    "positive_int": (1, None),
    "non_negative_int": (0, None),
}
"""The integer rules: each code's least and greatest value (None: no bound)."""


def is_int(value: object) -> bool:
    """An integer: a Python or numpy integer, but not a bool (``True`` counts nothing)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """A finite real number: an integer by :func:`is_int`, or a Python or numpy float."""
    return is_int(value) or (isinstance(value, float | np.floating) and math.isfinite(value))


def is_path(value: object) -> bool:
    """Something a file can be opened by: a ``str`` or an ``os.PathLike`` (not bytes)."""
    return isinstance(value, str | os.PathLike)


@dataclass(frozen=True)
class OptionCheck:
    """The checks of one function's options; ``error(option, value, rule)`` is its named error."""

    error: Callable[[str, object, str], Exception]

    def flag(self, option: str, value: object, *, optional: bool = False) -> bool | None:
        """``value`` as a bool (None passes when ``optional``); else rule ``"bool"``."""
        if optional and value is None:
            return None
        if not isinstance(value, bool | np.bool_):
            raise self.error(option, value, "bool")
        return bool(value)

    def integer(
        self, option: str, value: object, rule: str, *, optional: bool = False
    ) -> int | None:
        """``value`` as an int within the bounds of ``rule`` (a code of :data:`INT_RULES`);
        None passes when ``optional``."""
        if optional and value is None:
            return None
        least, most = INT_RULES[rule]
        number = int(value) if is_int(value) else None
        if number is None or not (
            (least is None or number >= least) and (most is None or number <= most)
        ):
            raise self.error(option, value, rule)
        return number
