"""The report of ``mintdim verify``: each failure (check, file, code, facts) in English and
Vietnamese, collected rather than raised, the first ``SHOWN_PER_CHECK`` of each check listed.
Its codes, checks and facts are declared in check/codes.py, and only those are accepted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mintdim.check.codes import CODES, require
from mintdim.shared.lang import Bilingual

__all__ = ["SHOWN_PER_CHECK", "Failure", "VerifyReport", "apart"]

SHOWN_PER_CHECK = 20
"""Failures of one check listed one by one; the rest are counted."""

_MORE = Bilingual(
    "... and {count} more failures of this check",
    "... và thêm {count} lỗi của bước kiểm tra này",
)


@dataclass(frozen=True, slots=True)
class Failure:
    """One check that does not hold: which check, which file (relative to the build), the facts."""

    check: str
    path: str
    code: str
    facts: dict = field(default_factory=dict)

    def message(self, lang: str | None = None) -> str:
        """``path: what is wrong`` in ``lang`` (default: the current language)."""
        return f"{self.path}: {CODES[self.code].text.render(lang, **self.facts)}"

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The JSON report's form of this failure."""
        return {
            "check": self.check,
            "path": self.path,
            "code": self.code,
            "facts": self.facts,
            "message": self.message(lang),
        }


@dataclass(slots=True)
class VerifyReport:
    """The outcome of verifying one build directory."""

    directory: str
    deep: bool
    failures: list[Failure] = field(default_factory=list)
    hidden: dict[str, int] = field(default_factory=dict)
    """Failures per check beyond the first ``SHOWN_PER_CHECK``, counted but not listed."""
    samples: int = 0
    shards: int = 0
    shard_bytes: int = 0
    skipped: str = ""
    """Why part of the checks could not run (a manifest too damaged to guide them)."""

    @property
    def ok(self) -> bool:
        """True when every check held."""
        return not self.failures

    def add(self, check: str, path: str, code: str, **facts: object) -> None:
        """Record a failure; beyond ``SHOWN_PER_CHECK`` of one check only count it. A code, check
        or facts not declared in check/codes.py raise at once (a programming error)."""
        require(check, code, facts)
        self._add(Failure(check, path, code, facts))

    def absorb(self, other: VerifyReport) -> None:
        """Add the failures another report found (part of the checks, done on another thread)
        as if they had been added here in the first place."""
        for failure in other.failures:
            self._add(failure)
        for check, count in other.hidden.items():
            self.hidden[check] = self.hidden.get(check, 0) + count

    def _add(self, failure: Failure) -> None:
        if sum(f.check == failure.check for f in self.failures) >= SHOWN_PER_CHECK:
            self.hidden[failure.check] = self.hidden.get(failure.check, 0) + 1
            return
        self.failures.append(failure)

    def lines(self, lang: str | None = None) -> list[str]:
        """Every failure as a line, with the counts of those not listed."""
        lines = [failure.message(lang) for failure in self.failures]
        lines += [
            _MORE.render(lang, count=count) + f" ({check})" for check, count in self.hidden.items()
        ]
        return lines

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The ``--json`` report."""
        return {
            "directory": self.directory,
            "ok": self.ok,
            "deep": self.deep,
            "samples": self.samples,
            "shards": self.shards,
            "shard_bytes": self.shard_bytes,
            "failures": [failure.as_dict(lang) for failure in self.failures],
            "unlisted_failures": self.hidden,
            "skipped": self.skipped,
        }


def apart(check: Callable, *args: object) -> VerifyReport:
    """``check(*args, report)`` into a report of its own (any thread), for the caller to take
    in order."""
    part = VerifyReport(directory="", deep=False)
    check(*args, part)
    return part
