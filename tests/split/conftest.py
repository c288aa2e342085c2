"""Builds made with the real API from the bundled demo data, with related samples added: exact
copies (whitespace changed), near copies (a word changed), containments, far variants,
punctuation-only variants, and work titles that are equal after normalization or aliasing.

Everything the tests compare against is computed here independently of ``mintdim.split``:
significant text, 5-gram coverage by brute force over Python sets, key normalization, and the
groups by a union-find of their own.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import unicodedata
from collections.abc import Iterable
from pathlib import Path

import orjson
import pytest

from mintdim import pipeline
from mintdim.runner.demo import DEMO_DIR

MODEL = DEMO_DIR / "demo_unigram.model"
ALIAS_RULES = (r"\s*(卷\d+|第[一二三四五六七八九十]+巻)$=>",)
TITLES = ("The Tale of Genji", "the  tale of GENJI", "ＴＨＥ ＴＡＬＥ ＯＦ ＧＥＮＪＩ")


def demo_texts() -> list[str]:
    """The Alpaca demo rows rendered as instruction, input, output."""
    rows = [json.loads(line) for line in (DEMO_DIR / "self_instruct_seed_alpaca.jsonl").open()]
    return [f"{r['instruction']}\n\n{r['input']}\n\n{r['output']}" for r in rows]


def related_rows() -> list[dict]:
    """The demo texts plus related copies, each row ``{"text", "work", "era"}``."""
    texts = demo_texts()
    long = [t for t in texts if len(significant(t)) >= 260]
    rows = [
        {
            "text": t,
            "work": f"work {i % 40}" if i % 7 else "",
            "era": ("heian", "edo", "meiji")[i % 3],
        }
        for i, t in enumerate(texts)
    ]
    for i, t in enumerate(long[:6]):  # exact copies, whitespace changed
        rows.append(
            {"text": "  " + t.replace(" ", "\t ", 3) + "\n", "work": f"copy {i}", "era": "edo"}
        )
    for i, t in enumerate(long[6:16]):  # near copies: one word replaced
        word = max(re.findall(r"[A-Za-z]{5,}", t), key=len)
        rows.append({"text": t.replace(word, "pineapple", 1), "work": f"near {i}", "era": "meiji"})
    for t in long[16:20]:  # containment: the demo text inside a longer one
        rows.append({"text": "Preface to the collection. " + t + " The end.", "era": "heian"})
    for i, t in enumerate(long[20:24]):  # far variants: half the text replaced
        cut = len(t) // 2
        rows.append({"text": t[:cut] + " " + texts[i][: len(t) - cut], "era": "edo"})
    for t in long[24:26]:  # the same significant text: punctuation removed
        rows.append({"text": re.sub(r"[^\w\s]", "", t), "era": "meiji"})
    for i, title in enumerate(TITLES):  # equal after normalization
        rows.append(
            {"text": f"Chapter {i} of a long tale about a prince.", "work": title, "era": "heian"}
        )
    for i, title in enumerate(("Genji 卷3", "genji 第三巻", "Genji")):  # equal after the alias rule
        rows.append({"text": f"Volume text {i} of Genji.", "work": title, "era": "heian"})
    rows.append({"text": "A sample with no work field at all.", "era": "edo"})
    return rows


def write_rows(path: Path, rows: Iterable[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def make_build(folder: Path, rows: list[dict], name: str = "build", **run: object) -> Path:
    """A real build of ``rows`` (``{text}`` template) with the demo SentencePiece model."""
    data = write_rows(folder / f"{name}.jsonl", rows)
    out = folder / name
    (
        pipeline("unit-build")
        .source.jsonl(files=[str(data)], fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece([{"path": str(MODEL)}])
        .units(sizes=[[32, 64, 128, 256, 512]], build_batch=[64])
        .output.dir(str(out), samples_per_shard=[16])
        .run(workers=1, progress=False, on_overflow="extend", **run)
    )
    return out


@pytest.fixture(scope="session")
def related(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The related-rows build (read-only: copy it before changing anything) and its rows."""
    folder = tmp_path_factory.mktemp("related")
    rows = related_rows()
    return make_build(folder, rows), rows


@pytest.fixture
def build_copy(related: tuple[Path, list[dict]], tmp_path: Path) -> Path:
    """A private copy of the related build (its input stays the shared one: read it only)."""
    target = tmp_path / "build"
    shutil.copytree(related[0], target)
    return target


def write_sealed(path: Path, content: dict) -> None:
    content.pop("manifest_sha256", None)
    body = orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n"
    content["manifest_sha256"] = hashlib.sha256(body).hexdigest()
    path.write_bytes(orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n")


# ---------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------


def significant(text: str) -> str:
    return "".join(c for c in text if not (c.isspace() or unicodedata.category(c).startswith("P")))


def grams(text: str) -> set[str]:
    return {text[i : i + 5] for i in range(len(text) - 4)}


def near_pairs(texts: list[str], min_chars=200, min_distinct=100, coverage=0.9) -> dict:
    """Every pair (a, b) meeting the near-duplicate rule, by brute force: {(a, b): coverage}."""
    reduced = [significant(t) for t in texts]
    sets = [grams(t) for t in reduced]
    found = {}
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            short, other = (a, b) if len(reduced[a]) <= len(reduced[b]) else (b, a)
            if len(reduced[short]) < min_chars or len(sets[short]) < min_distinct:
                continue
            share = len(sets[short] & sets[other]) / len(sets[short])
            if share >= coverage:
                found[(a, b)] = share
    return found


def normalize(value: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


class UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[int]:
        """Each element's group id: the smallest element of its group."""
        smallest: dict[int, int] = {}
        for x in range(len(self.parent)):
            root = self.find(x)
            smallest[root] = min(smallest.get(root, x), x)
        return [smallest[self.find(x)] for x in range(len(self.parent))]


def expected_groups(rows: list[dict], keys=(), rules=(), near=True) -> list[int]:
    """Each row's group id by the issue's rules, computed here from the rows alone."""
    found = UnionFind(len(rows))
    texts = [r["text"] for r in rows]
    by_text: dict[str, int] = {}
    for i, t in enumerate(texts):
        found.union(by_text.setdefault("".join(c for c in t if not c.isspace()), i), i)
    if near:
        for a, b in near_pairs(texts):
            found.union(a, b)
    for key in keys:
        by_value: dict[tuple[str, str], int] = {}
        for i, row in enumerate(rows):
            value = row.get(key)
            if not isinstance(value, str) or not normalize(value):
                continue
            value = normalize(value)
            found.union(by_value.setdefault(("plain", value), i), i)
            for rule in rules:
                pattern, _, replacement = rule.partition("=>")
                value = normalize(re.sub(pattern, replacement, value))
            if value and rules:
                found.union(by_value.setdefault(("alias", value), i), i)
    return found.groups()
