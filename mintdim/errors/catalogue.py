"""The error catalogue, docs/error-catalogue.md, rendered from the error classes' own examples.

    python -m mintdim.errors.catalogue > docs/error-catalogue.md    (or: make docs)

Each entry shows the class's description (its docstring's first paragraph), its facts and
every example in English and Vietnamese, exactly as ``err.message(lang)`` renders it. A test
compares the committed file with :func:`render`, so the catalogue cannot drift from the code.
"""

from __future__ import annotations

import inspect
import sys

from mintdim.errors import MintDimError, error_classes

__all__ = ["REGENERATE", "render"]

REGENERATE = "python -m mintdim.errors.catalogue > docs/error-catalogue.md"
"""The command that rewrites the catalogue (``make docs`` runs it)."""

_INTRO = f"""\
# MintDim error catalogue

<!-- Generated from the classes in mintdim/errors/ by `{REGENERATE}` (make docs); do not edit. -->

Every MintDim error derives from `MintDimError` (`mintdim.errors`, also importable from
`mintdim`) and from the builtin exception a caller would catch (`ValueError`, `OSError`, ...).
It carries the facts of the failure as attributes (`err.file`, `err.line`, `err.key`, ...), so
programs never need to parse the text. Each error has an English and a Vietnamese text:
`err.message("en")`, `err.message("vi")`; `str(err)` uses the language set with
`set_language("vi")`, else the environment variable `MINTDIM_LANG` (`en` or `vi`), else English.

A message has the form of the spec's catalogue: `ErrorName:`, one sentence, then blank-line
separated `Header:` sections; sections after the catalogue's own ones add the facts of the
failure and how to fix it. The values below are examples.
"""


def _description(cls: type[MintDimError]) -> str:
    doc = inspect.getdoc(cls) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _entry(number: int, cls: type[MintDimError]) -> str:
    facts = ", ".join(f"`{name}`" for name in inspect.signature(cls).parameters)
    parts = [
        f"### {number}. {cls.__name__}",
        _description(cls),
        f"Facts: {facts}. Builtin bases: {_builtins(cls)}.",
    ]
    for example in cls.examples:
        error = cls(**example)
        parts += [f"```text\n{error.message(lang)}\n```" for lang in ("en", "vi")]
    return "\n\n".join(parts)


def _builtins(cls: type[MintDimError]) -> str:
    bases = [
        base.__name__
        for base in cls.__mro__
        if base.__module__ == "builtins" and base not in (object, BaseException, Exception)
    ]
    return ", ".join(f"`{name}`" for name in bases) or "`Exception`"


def render() -> str:
    """The whole catalogue as Markdown: one entry per error class, in catalogue order."""
    entries = [_entry(number, cls) for number, cls in enumerate(error_classes(), start=1)]
    return "\n\n".join([_INTRO.rstrip("\n"), *entries]) + "\n"


if __name__ == "__main__":
    # UTF-8 whatever the locale: the catalogue is half Vietnamese.
    sys.stdout.buffer.write(render().encode("utf-8"))
