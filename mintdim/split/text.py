"""How grouping compares texts and values: normalized keys, alias rules, whitespace-free text
and the significant characters near-duplicates are measured on.

- A key value is compared normalized: Unicode NFKC, case-folded, whitespace runs collapsed to
  one space and stripped. A value that is not a string is its compact JSON (``12``, ``true``);
  a missing, null or empty value links nothing.
- An alias rule ``REGEX=>REPLACEMENT`` (Python ``re`` syntax, ``\\1`` for a group) rewrites a
  normalized value; the rules apply in the order given, and the result is normalized again.
- Exact text is the rendered text with every whitespace character removed (``str.isspace``).
- Significant text is the rendered text with whitespace and Unicode punctuation (categories
  ``P*``) removed: its character 5-grams are what near-duplicates share.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from mintdim.errors import AliasRuleError

__all__ = [
    "AliasRule",
    "warm",
    "canonical",
    "exact_digest",
    "normalize",
    "parse_alias_rules",
    "significant",
    "value_text",
]

_ARROW = "=>"


def value_text(value: object) -> str | None:
    """A record's value as the text a key compares; None for missing, null or empty."""
    if value is None or isinstance(value, str) and not value:
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, int | float | bool | list | dict):  # the MISSING marker
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace runs collapsed to one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True, slots=True)
class AliasRule:
    """One ``REGEX=>REPLACEMENT`` rule, compiled."""

    text: str
    pattern: re.Pattern[str]
    replacement: str

    def apply(self, value: str) -> str:
        """``value`` rewritten by this rule."""
        return self.pattern.sub(self.replacement, value)


def parse_alias_rules(rules: Sequence[str]) -> tuple[AliasRule, ...]:
    """Compile the rules; ``AliasRuleError`` for the first that is malformed."""
    if isinstance(rules, str):
        rules = [rules]
    parsed = []
    for position, rule in enumerate(rules):
        if not isinstance(rule, str) or _ARROW not in rule:
            raise AliasRuleError(rule=str(rule), position=position, problem="form")
        expression, _, replacement = rule.partition(_ARROW)
        if not expression:
            raise AliasRuleError(rule=rule, position=position, problem="empty")
        try:
            pattern = re.compile(expression)
        except re.error as err:
            raise AliasRuleError(
                rule=rule, position=position, problem="regex", detail=str(err)
            ) from None
        try:
            pattern.sub(replacement, "")  # re checks the replacement's groups even without a match
        except (re.error, IndexError) as err:
            raise AliasRuleError(
                rule=rule, position=position, problem="replacement", detail=str(err)
            ) from None
        parsed.append(AliasRule(rule, pattern, replacement))
    return tuple(parsed)


def canonical(value: str, rules: Sequence[AliasRule]) -> str:
    """A normalized value after every alias rule, normalized again."""
    for rule in rules:
        value = rule.apply(value)
    return normalize(value)


@functools.cache
def _tables() -> tuple[dict[int, None], dict[int, None]]:
    """``str.translate`` tables deleting whitespace, and whitespace and punctuation: built
    once, in one pass over the Unicode database of this Python."""
    spaces: dict[int, None] = {}
    significant_only: dict[int, None] = {}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if char.isspace():
            spaces[code] = significant_only[code] = None
        elif unicodedata.category(char).startswith("P"):
            significant_only[code] = None
    return spaces, significant_only


def warm() -> None:
    """Build the translate tables now (about a second): before worker processes fork, so they
    inherit them instead of building their own."""
    _tables()


def exact_digest(text: str) -> bytes:
    """SHA-256 of the text with every whitespace character removed."""
    return hashlib.sha256(text.translate(_tables()[0]).encode("utf-8")).digest()


def significant(text: str) -> str:
    """The text without whitespace and punctuation."""
    return text.translate(_tables()[1])
