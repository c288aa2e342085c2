"""The independent pass over a decontamination: ``verification.json``, and what ``mintdim verify
DIR`` runs again.

It trusts none of the finder's bookkeeping. It searches every sample of the input build again
(tokens: its shards; words: its records read again through the source interface) with a hash
of another base, so a hashing slip is not shared, every candidate confirmed on the ids, and
applies the rule again; it takes the removed samples from ``contamination.jsonl`` and the
retained ones from the clean build's own ``sample_index.jsonl`` (``source_sample_id``):

- ``coverage``: retained plus removed is every input sample exactly once (the clean build's
  samples in input order);
- ``removed_contaminated``: every removed sample holds at least ``min_matches`` checked runs of
  one item;
- ``retained_clean``: no retained sample does;
- ``retained_tokens``: each retained record, read from the clean build's own shards and unit
  index, is byte for byte the input sample's record (every slot, PAD included) with the same
  token count, in the same unit (the input's shards as the clean copy read them and checked
  their digests in the run; read and checked here by ``mintdim verify DIR``).

The last two together say that the clean build's shards hold no checked run: what the search
found clean is what they hold. (Searching the clean shards a second time would prove the same at
the cost of another pass over every id; comparing the records costs a read of each.) The pass
over the input build needs nothing the finder writes, so the decontamination runs it in a forked
child beside the finder and the clean copy (``shared/beside.py``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import sample_index
from mintdim.decontaminate.catalogue import Catalogue
from mintdim.decontaminate.findings import pairs
from mintdim.decontaminate.ngrams import VERIFIER_BASE, Hasher, Table
from mintdim.decontaminate.records import differing
from mintdim.decontaminate.scan import scan, token_blocks, word_blocks
from mintdim.read.reader import open_build
from mintdim.shared.lang import Bilingual
from mintdim.split.samples import BuildSamples
from mintdim.split.write import BuildFiles

__all__ = [
    "CLEAN",
    "CONTAMINATION",
    "FILENAME",
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


def _among(ids: np.ndarray, count: int) -> np.ndarray:
    """Per sample id below ``count``, whether ``ids`` holds it (ids out of range left out)."""
    marks = np.zeros(count, dtype=bool)
    marks[ids[(ids >= 0) & (ids < count)]] = True
    return marks


def input_pass(
    samples: BuildSamples, cat: Catalogue, match: str, min_matches: int, workers: int
) -> np.ndarray:
    """The input samples the rule finds contaminated, searched with the pass's own hash base."""
    table = Table(cat.runs, Hasher.of(VERIFIER_BASE))
    blocks = token_blocks(samples) if match == "tokens" else word_blocks(samples, cat.vocabulary)
    return pairs(scan(table, blocks, workers), cat, min_matches).samples()


def verify(
    root: Path,
    samples: BuildSamples,
    cat: Catalogue,
    match: str,
    min_matches: int,
    workers: int,
    found: np.ndarray | None = None,
    kept: dict[str, bytes] | None = None,
) -> dict[str, object]:
    """Run every check over the directory ``root`` as it is now (see the module docstring);
    ``found``: what ``input_pass`` returned, when it ran already; ``kept``: the input build's
    shards as read and checked already in this process (by the clean copy)."""
    clean = root / CLEAN
    if found is None:
        found = input_pass(samples, cat, match, min_matches, workers)
    removed = _removed(root)
    everyone = np.arange(samples.count)
    inside = (removed >= 0) & (removed < samples.count)
    if clean.is_dir():
        # The clean records are compared while the index's source ids are still being read.
        copy = BuildFiles(clean, str(clean), open_build(clean).manifest)
        with ThreadPoolExecutor(1) as pool:
            source = pool.submit(sample_index.source_ids, clean / sample_index.FILENAME)
            differ = differing(samples, copy, source, kept)
        retained = source.result()
        listed = np.concatenate([retained, removed])
        fits = (listed >= 0) & (listed < samples.count)
        seen = np.bincount(listed[fits], minlength=samples.count)
        wrong = np.union1d(everyone[seen != 1], listed[~fits])
        if retained.size > 1:
            wrong = np.union1d(wrong, retained[1:][np.diff(retained) <= 0])
    else:
        retained = everyone[~_among(removed, samples.count)]
        wrong = removed[~inside]
    # (Marks by sample id, not set operations: those sort a million ids, 0.3 s each.)
    checks = [
        _check("coverage", wrong, retained=int(retained.size), removed=int(removed.size)),
        _check("removed_contaminated", np.setdiff1d(removed, found), samples=int(removed.size)),
        _check(
            "retained_clean",
            found[_among(retained, samples.count)[found]],
            samples=int(retained.size),
        ),
    ]
    if clean.is_dir():
        checks.append(_check("retained_tokens", differ, samples=int(retained.size)))
    return {"ok": all(c["ok"] for c in checks), "checks": checks}
