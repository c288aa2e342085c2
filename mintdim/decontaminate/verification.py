"""The independent pass over a decontamination: ``verification.json``, and what ``mintdim verify
DIR`` runs again.

It trusts none of the finder's bookkeeping. It takes the removed samples from
``contamination.jsonl`` and the retained ones from the clean build's own ``sample_index.jsonl``
(``source_sample_id``), searches the input build's shards and the clean build's shards again
with a hash of another base (so a hashing slip is not shared), every candidate confirmed on the
ids, and applies the rule again:

- ``coverage``: retained plus removed is every input sample exactly once (the clean build's
  samples in input order);
- ``removed_contaminated``: every removed sample holds at least ``min_matches`` checked runs of
  one item;
- ``retained_clean``: no retained sample does (tokens: searched in the clean build's own
  shards; words: in each retained sample's record read again through the source interface, the
  clean build's inputs being the input build's; with ``--report-only``, in the input build);
- ``retained_tokens``: each retained record's tokens equal the input sample's (a 64-bit hash of
  the whole ids and their count, compared sample by sample).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import sample_index
from mintdim.decontaminate.catalogue import Catalogue
from mintdim.decontaminate.findings import pairs
from mintdim.decontaminate.ngrams import VERIFIER_BASE, Hasher, Table
from mintdim.decontaminate.scan import scan, token_blocks, word_blocks
from mintdim.read.reader import open_build
from mintdim.shared.lang import Bilingual
from mintdim.split.samples import BuildSamples
from mintdim.split.write import BuildFiles

__all__ = [
    "CLEAN",
    "CONTAMINATION",
    "FILENAME",
    "InputPass",
    "describe",
    "failed_lines",
    "input_pass",
    "verify",
]

FILENAME = "verification.json"
CONTAMINATION = "contamination.jsonl"
CLEAN = "clean"
_EXAMPLES = 5

_CHECKS = {
    "coverage": Bilingual(
        "retained plus removed is every input sample exactly once",
        "mẫu giữ lại cộng mẫu bị loại bằng đúng mọi mẫu đầu vào, mỗi mẫu một lần",
    ),
    "removed_contaminated": Bilingual(
        "every removed sample holds checked n-grams of a benchmark item",
        "mọi mẫu bị loại đều chứa n-gram đã kiểm của một mục benchmark",
    ),
    "retained_clean": Bilingual(
        "no retained sample holds checked n-grams of a benchmark item",
        "không mẫu giữ lại nào chứa n-gram đã kiểm của một mục benchmark",
    ),
    "retained_tokens": Bilingual(
        "each retained record's tokens equal the input sample's",
        "token của mỗi bản ghi giữ lại bằng token của mẫu đầu vào",
    ),
}
_FAILED = Bilingual(
    "{check}: {failures} failures (samples {examples})", "{check}: {failures} lỗi (mẫu {examples})"
)


def _check(name: str, failing: np.ndarray, **counts: int) -> dict[str, object]:
    return {
        "check": name,
        "ok": not failing.size,
        **counts,
        "failures": int(failing.size),
        "examples": failing[:_EXAMPLES].tolist(),
    }


def failed_lines(result: dict, lang: str) -> list[str]:
    """Each failed check as a line in ``lang``."""
    return [
        _FAILED.render(lang, check=c["check"], failures=c["failures"], examples=c["examples"])
        for c in result["checks"]
        if not c["ok"]
    ]


def describe(name: str, lang: str | None = None) -> str:
    """What a check states."""
    return _CHECKS[name].render(lang)


def _removed(root: Path) -> np.ndarray:
    data = (root / CONTAMINATION).read_bytes()
    ids = [orjson.loads(line)["sample_id"] for line in data.splitlines()]
    return np.unique(np.asarray(ids, dtype=np.int64))


_SOURCE_ID = re.compile(rb'"source_sample_id":(-?\d+)')


def _source_ids(clean: Path) -> np.ndarray:
    """Each clean sample's ``source_sample_id``, from its index line (the key is the writer's
    last: one search a line, where parsing a million lines as JSON costs seconds)."""
    data = (clean / sample_index.FILENAME).read_bytes()
    found = _SOURCE_ID.findall(data)
    if len(found) != data.count(b"\n"):
        raise ValueError(f"{sample_index.FILENAME}: a line without source_sample_id")
    return np.array(found, dtype=np.int64)


@dataclass(frozen=True, slots=True, eq=False)
class InputPass:
    """The input build's part of the pass (it needs no clean build, so it may run while the
    clean build is written)."""

    removed: np.ndarray
    """contamination.jsonl's samples."""
    found: np.ndarray
    """The samples searched that the rule finds contaminated."""
    digests: np.ndarray | None
    """Each input sample's digest of its stored ids (with a clean build to compare)."""
    table: Table
    """The pass's table (its own hash base), for the clean build's search."""


def input_pass(
    root: Path,
    samples: BuildSamples,
    cat: Catalogue,
    match: str,
    min_matches: int,
    workers: int,
    clean: bool,
) -> InputPass:
    """Search the input build again (with a clean build to check: tokens, only the removed
    samples, the retained ones being searched in the clean build; every sample's digest)."""
    table = Table(cat.runs, Hasher.of(VERIFIER_BASE))
    removed = _removed(root)
    digests = np.zeros(samples.count, dtype=np.uint64) if clean else None
    only = None
    if clean:
        only = np.zeros(samples.count, dtype=bool)
        only[removed[(removed >= 0) & (removed < samples.count)]] = True
    if match == "tokens":
        hits = scan(table, token_blocks(samples), workers, digests=digests, only=only)
    else:
        # Words: every sample's record read again (a retained sample's record is its clean
        # copy's: the clean build declares the same inputs).
        hits = scan(table, word_blocks(samples, cat.vocabulary), workers)
        if digests is not None:
            nothing = np.zeros(samples.count, dtype=bool)
            scan(table, token_blocks(samples), workers, digests=digests, only=nothing)
    return InputPass(removed, pairs(hits, cat, min_matches).samples(), digests, table)


def verify(
    root: Path,
    samples: BuildSamples,
    cat: Catalogue,
    match: str,
    min_matches: int,
    workers: int,
    inputs: InputPass | None = None,
) -> dict[str, object]:
    """Run every check over the directory ``root`` as it is now (see the module docstring);
    ``inputs``: the input build's part, when it ran already."""
    clean = root / CLEAN
    if inputs is None:
        inputs = input_pass(root, samples, cat, match, min_matches, workers, clean.is_dir())
    removed, found = inputs.removed, inputs.found
    everyone = np.arange(samples.count)
    inside = (removed >= 0) & (removed < samples.count)
    if clean.is_dir():
        retained = _source_ids(clean)
        listed = np.concatenate([retained, removed])
        fits = (listed >= 0) & (listed < samples.count)
        seen = np.bincount(listed[fits], minlength=samples.count)
        wrong = np.union1d(everyone[seen != 1], listed[~fits])
        if retained.size > 1:
            wrong = np.union1d(wrong, retained[1:][np.diff(retained) <= 0])
    else:
        retained = np.setdiff1d(everyone, removed[inside])
        wrong = removed[~inside]
    checks = [_check("coverage", wrong, retained=int(retained.size), removed=int(removed.size))]
    checks.append(
        _check("removed_contaminated", np.setdiff1d(removed, found), samples=int(removed.size))
    )
    if not clean.is_dir() or inputs.digests is None:
        checks.append(
            _check("retained_clean", np.intersect1d(found, retained), samples=int(retained.size))
        )
        return {"ok": all(c["ok"] for c in checks), "checks": checks}
    table = inputs.table
    fine = bool(((retained >= 0) & (retained < samples.count)).all())
    content = open_build(clean).manifest
    files = BuildFiles(clean, str(clean), content)
    kept = np.zeros(retained.size, dtype=np.uint64)
    if match == "tokens":
        hits = scan(table, token_blocks(files), workers, digests=kept)
        dirty = retained[pairs(hits, cat, min_matches).samples()] if fine else retained
    else:
        scan(table, token_blocks(files), workers, digests=kept, only=np.zeros(kept.size, bool))
        dirty = np.intersect1d(found, retained)
    differ = retained[kept != inputs.digests[retained]] if fine else retained
    checks.append(_check("retained_clean", dirty, samples=int(retained.size)))
    checks.append(_check("retained_tokens", differ, samples=int(retained.size)))
    return {"ok": all(c["ok"] for c in checks), "checks": checks}
