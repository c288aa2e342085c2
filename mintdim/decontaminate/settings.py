"""``decontaminate()``'s options, checked before any work: the benchmarks to match against and
the matching rules, as a frozen value the run and its manifest share."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from mintdim.errors import DecontaminateOptionError

__all__ = ["MATCHES", "Against", "Settings", "against_option", "decontaminate_settings"]

MATCHES = ("tokens", "words")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SUFFIXES = (".gz", ".zst", ".xz", ".bz2", ".jsonl", ".json", ".parquet", ".pq")
"""Stripped from a benchmark file's name, last first, to give its default name."""


@dataclass(frozen=True, slots=True)
class Against:
    """One benchmark file: where it is, the fields whose values are matched, its name."""

    path: str
    fields: tuple[str, ...]
    name: str


@dataclass(frozen=True, slots=True)
class Settings:
    """Every option of a decontamination (see ``decontaminate()``)."""

    against: tuple[Against, ...]
    ngram: int
    min_matches: int
    min_tokens: int
    item_coverage: float
    match: str
    report_only: bool
    workers: int

    def record(self) -> dict[str, object]:
        """The options as manifest.json and report.json record them (workers left out: the
        output is the same for every count)."""
        found = asdict(self)
        del found["workers"]
        found["against"] = [
            {"path": a.path, "fields": list(a.fields), "name": a.name} for a in self.against
        ]
        return found


def default_name(path: str) -> str:
    """A benchmark's name from its file: the file name without its data suffixes."""
    name = os.path.basename(path)
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def against_option(text: str) -> dict[str, object]:
    """``--against PATH:FIELD[,FIELD...]`` as ``decontaminate()``'s mapping (the last ``:``
    separates the fields, so a path may hold one)."""
    path, separator, fields = text.rpartition(":")
    names = [name.strip() for name in fields.split(",")]
    if not separator or not path or not all(names):
        raise DecontaminateOptionError(option="--against", value=text, rule="against")
    return {"path": path, "fields": names}


def decontaminate_settings(
    against: Sequence[Mapping[str, object]],
    *,
    ngram: object = 13,
    min_matches: object = 1,
    min_tokens: object = 8,
    item_coverage: object = 0.5,
    match: object = "tokens",
    report_only: object = False,
    workers: object = 1,
) -> Settings:
    """The options checked (named errors), before any file is read: the runner checks them
    before it builds too."""
    for name, value in (
        ("ngram", ngram),
        ("min_matches", min_matches),
        ("min_tokens", min_tokens),
        ("workers", workers),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise DecontaminateOptionError(option=name, value=value, rule="positive")
    if isinstance(item_coverage, bool) or not isinstance(item_coverage, int | float):
        raise DecontaminateOptionError(option="item_coverage", value=item_coverage, rule="fraction")
    if not 0 < item_coverage <= 1:
        raise DecontaminateOptionError(option="item_coverage", value=item_coverage, rule="fraction")
    if match not in MATCHES:
        raise DecontaminateOptionError(option="match", value=match, rule="match")
    if not isinstance(report_only, bool):
        raise DecontaminateOptionError(option="report_only", value=report_only, rule="flag")
    if isinstance(against, str | bytes | Mapping) or not against:
        raise DecontaminateOptionError(option="against", value=against, rule="no_against")
    entries = tuple(_against(entry) for entry in against)
    names = [entry.name for entry in entries]
    for name in names:
        if names.count(name) > 1 or not _NAME.match(name):
            raise DecontaminateOptionError(option="against.name", value=name, rule="name")
    return Settings(
        against=entries,
        ngram=int(ngram),
        min_matches=int(min_matches),
        min_tokens=int(min_tokens),
        item_coverage=float(item_coverage),
        match=str(match),
        report_only=report_only,
        workers=int(workers),
    )


def _against(entry: object) -> Against:
    if isinstance(entry, str):
        entry = against_option(entry)
    if not isinstance(entry, Mapping) or set(entry) - {"path", "fields", "name"}:
        raise DecontaminateOptionError(option="against", value=entry, rule="against")
    path, fields = entry.get("path"), entry.get("fields")
    if isinstance(fields, str):
        fields = [fields]
    if (
        not isinstance(path, str | os.PathLike)
        or not os.fspath(path)
        or not isinstance(fields, Sequence)
        or not fields
        or not all(isinstance(f, str) and f for f in fields)
    ):
        raise DecontaminateOptionError(option="against", value=dict(entry), rule="against")
    path = os.fspath(path)
    name = entry.get("name") or default_name(path)
    if not isinstance(name, str):
        raise DecontaminateOptionError(option="against.name", value=name, rule="name")
    return Against(path=path, fields=tuple(fields), name=name)
