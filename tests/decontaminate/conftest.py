"""A real build of the bundled Alpaca seed tasks with GSM8K test questions planted in some of
them, and the references the tests compare against, computed here without ``mintdim.decontaminate``:
n-gram sets over ids from SentencePiece itself (benchmark side) and over the records as
``open_build`` reads them (training side)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
import sentencepiece

from mintdim import open_build, pipeline
from mintdim.runner.demo import DEMO_DIR

MODEL = DEMO_DIR / "demo_unigram.model"
GSM8K = DEMO_DIR / "gsm8k_test_first300.jsonl"
TEMPLATE = "### Instruction\n{instruction}\n\n### Input\n{input}\n\n### Response\n{output}"
PLANTED = (3, 10, 41, 77, 150)
"""GSM8K items (0-based) whose question is planted verbatim in a training sample."""
VARIANT = 200
"""A GSM8K item planted with its case, spacing and punctuation changed (words mode finds it)."""
ANSWER_ONLY = 120
"""A GSM8K item whose answer (not its question) is planted."""


def alpaca_rows() -> list[dict]:
    return [json.loads(line) for line in (DEMO_DIR / "self_instruct_seed_alpaca.jsonl").open()]


def gsm8k_rows() -> list[dict]:
    return [json.loads(line) for line in GSM8K.open()]


def variant(text: str) -> str:
    """Upper case, doubled spaces, punctuation dropped or changed: the words stay the same."""
    changed = re.sub(r"[.,?!']", lambda m: {".": " ;", ",": "", "?": " !!"}.get(m[0], ""), text)
    return changed.upper().replace(" ", "  ")


def training_rows() -> list[dict]:
    """The 175 Alpaca rows, then planted ones: questions inside Alpaca-style samples."""
    rows = [{k: r[k] for k in ("instruction", "input", "output")} for r in alpaca_rows()]
    gsm = gsm8k_rows()
    for k in PLANTED:
        rows.append(
            {
                "instruction": "Solve the following grade-school math problem.",
                "input": gsm[k]["question"],
                "output": "Let me think step by step.",
            }
        )
    rows.append(
        {
            "instruction": "Solve this.",
            "input": variant(gsm[VARIANT]["question"]),
            "output": "I will try.",
        }
    )
    rows.append(
        {"instruction": "Explain the solution.", "input": "", "output": gsm[ANSWER_ONLY]["answer"]}
    )
    return rows


def make_build(
    folder: Path,
    rows: list[dict],
    model: Path = MODEL,
    name: str = "build",
    template: str = TEMPLATE,
) -> Path:
    data = folder / f"{name}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = folder / name
    (
        pipeline("unit-build")
        .source.jsonl(
            files=[str(data)], fields=[["instruction", "input", "output"]], templates=[template]
        )
        .tokenizer.sentencepiece([{"path": str(model)}])
        .units(sizes=[[64, 128, 256, 512]], build_batch=[64])
        .output.dir(str(out), samples_per_shard=[16])
        .run(workers=1, progress=False, on_overflow="extend")
    )
    return out


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planted build (read-only: copy it before changing anything)."""
    return make_build(tmp_path_factory.mktemp("planted"), training_rows())


@pytest.fixture
def build_copy(planted: Path, tmp_path: Path) -> Path:
    target = tmp_path / "build"
    shutil.copytree(planted, target)
    return target


# ---------------------------------------------------------------------------
# Brute force
# ---------------------------------------------------------------------------


def record_ids(build: Path) -> list[list[int]]:
    """Every sample's stored tokens, as open_build reads them (PAD left out)."""
    opened = open_build(build)
    counts = [row["token_count"] for row in opened.samples()]
    return [opened[i][: counts[i]].tolist() for i in range(len(opened))]


def content_runs(ids: list[int], n: int, min_tokens: int) -> list[tuple[int, ...]]:
    """A value's checked runs: its n-grams, or the whole value when shorter than n."""
    if len(ids) >= n:
        runs = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]
    elif len(ids) >= min_tokens:
        runs = [tuple(ids)]
    else:
        runs = []
    return [r for r in runs if len(set(r)) >= math.ceil(len(r) / 2)]


def windows(ids: list[int], lengths: set[int]) -> set[tuple[int, ...]]:
    return {tuple(ids[i : i + n]) for n in lengths for i in range(len(ids) - n + 1)}


def brute_force(
    samples: list[list[int]],
    values: list[list[list[int]]],
    n: int = 13,
    min_tokens: int = 8,
    min_matches: int = 1,
) -> tuple[dict[tuple[int, int], int], list[list[float | None]]]:
    """(sample, item) -> distinct shared runs, for pairs meeting min_matches; and per item, each
    value's coverage (None when it has no checked id)."""
    item_runs = [[content_runs(v, n, min_tokens) for v in item] for item in values]
    lengths = {len(r) for item in item_runs for runs in item for r in runs}
    seen: set[tuple[int, ...]] = set()
    pairs = {}
    for s, ids in enumerate(samples):
        found = windows(ids, lengths)
        seen |= found
        for k, item in enumerate(item_runs):
            shared = {r for runs in item for r in runs} & found
            if len(shared) >= min_matches:
                pairs[(s, k)] = len(shared)
    coverage = []
    for item, runs_of in zip(values, item_runs, strict=True):
        row = []
        for ids, runs in zip(item, runs_of, strict=True):
            checked, covered = set(), set()
            for i in range(len(ids)):
                for r in runs:
                    if i + len(r) <= len(ids) and tuple(ids[i : i + len(r)]) == r:
                        span = set(range(i, i + len(r)))
                        checked |= span
                        if r in seen:
                            covered |= span
            row.append(len(covered) / len(checked) if checked else None)
        coverage.append(row)
    return pairs, coverage


def encode_values(model: Path, items: list[list[str]]) -> list[list[list[int]]]:
    processor = sentencepiece.SentencePieceProcessor(model_file=str(model))
    return [[processor.encode(text) for text in item] for item in items]
