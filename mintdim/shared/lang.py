"""The language of every line MintDim shows a person, and the one type that holds such a line.

MintDim speaks English and Vietnamese. The language is the one given to :func:`set_language`,
else the environment variable ``MINTDIM_LANG`` (read at every call), else English.

A :class:`Bilingual` holds one line (or block) in both languages with ``str.format`` fields;
errors, warnings, log lines, summaries and marker files all render through it, so no text is
kept in two places and no line exists in one language only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["LANGUAGES", "Bilingual", "check_language", "get_language", "set_language"]

LANGUAGES: tuple[str, ...] = ("en", "vi")
"""Language codes MintDim renders text in."""

_LANG_ENV = "MINTDIM_LANG"
_language: str | None = None


def check_language(language: str) -> str:
    """Return the normalised code of ``language``; an unknown code raises ``ValueError``."""
    code = language.strip().lower() if isinstance(language, str) else language
    if code not in LANGUAGES:
        valid = ", ".join(repr(name) for name in LANGUAGES)
        raise ValueError(f"unknown language {language!r}; valid languages: {valid}")
    return code


def set_language(language: str | None) -> None:
    """Render MintDim's text in ``language`` ("en" or "vi"); ``None`` goes back to the default.

    The default is the environment variable ``MINTDIM_LANG`` when it holds a valid code,
    else English. An unknown code raises ``ValueError`` naming the valid ones.
    """
    global _language
    _language = None if language is None else check_language(language)


def get_language() -> str:
    """Return the language in use: set_language, else MINTDIM_LANG, else "en".

    ``MINTDIM_LANG`` is read at every call. Locale-style values such as ``vi_VN.UTF-8``
    count as their language part; a value naming no supported language means English,
    because showing a message must never fail.
    """
    if _language is not None:
        return _language
    raw = os.environ.get(_LANG_ENV, "").strip().lower()
    code = raw.replace("-", "_").replace(".", "_").split("_", 1)[0]
    return code if code in LANGUAGES else "en"


@dataclass(frozen=True)
class Bilingual:
    """One user-facing text in English and Vietnamese, with ``str.format`` fields."""

    en: str
    vi: str

    def render(self, lang: str | None = None, /, **fields: object) -> str:
        """The text in ``lang`` (default: :func:`get_language`) with ``fields`` filled in.

        A field that is itself ``Bilingual`` is filled in the same language.
        """
        code = get_language() if lang is None else check_language(lang)
        values = {
            name: value.render(code) if isinstance(value, Bilingual) else value
            for name, value in fields.items()
        }
        return (self.en if code == "en" else self.vi).format(**values)

    def both(self, **fields: object) -> str:
        """English, a blank line, then Vietnamese: for files a person of either language reads."""
        return f"{self.render('en', **fields)}\n\n{self.render('vi', **fields)}"
