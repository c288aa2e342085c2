"""``--match words``' numbering (words.py) against the plain Python reference: each text's
``normal_words`` looked up one by one in the vocabulary ``dict``, for any text (ASCII or not)
and any vocabulary; and ``normal_words`` against the documented rule, character by character."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mintdim.decontaminate.words import WordNumbers, normal_words
from tests.conftest import corpora_file

PIECES = [
    *"aZ09 ",
    "Hello",
    "WORLD",
    "don't",
    "e.g.",
    "$5+3=8^2|~<>`",  # ASCII symbols (S*), kept
    "!\"#%&'()*,-./:;?@[\\]_{}",  # every ASCII punctuation character (P*), removed
    "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f",  # ASCII whitespace, \x1c-\x1f included
    "\x00\x01\x7f",  # control characters that are not whitespace: inside words
    "Tiếng Việt có dấu",  # Vietnamese, precomposed
    "Tie\u0302\u0301ng Vie\u0323\u0302t",  # Vietnamese, combining marks (NFKC composes them)
    "ĐƯỜNG đường",
    "\u0301\u0323",  # combining marks alone
    "ﬁﬂ",  # ligatures (NFKC: fi, fl)
    "ＡＢＣ１２３！？",  # full-width forms (NFKC: ABC123!?, the "!?" then removed)
    "①²Ⅻ㎏",  # compatibility characters
    "K İ ẞ ſ Σ",  # Kelvin sign, dotted I (lower: two code points), sharp s, long s, sigma
    "\u00a0\u3000\u2028\u2029\x85\u2009\u1680",  # Unicode whitespace
    "\u200b\ufeff\u200d",  # zero-width characters: not whitespace, inside words
    "_‿⁀",  # Pc
    "-–—",  # Pd
    "(「【",  # Ps
    ")」】",  # Pe
    "«‘“",  # Pi
    "»’”",  # Pf
    "¿¡،。・‼",  # Po
    "ภาษาไทย",  # Thai: no spaces between words, long words
    "中文字符",
    "العربية",
    "👍🏽 👨\u200d👩\u200d👧",
    "internationalisation",  # longer than 16 bytes
    "abcdefgh",  # 8 bytes: the first load whole
    "abcdefghijklmnop",  # 16 bytes: both loads whole
    "abcdefghijklmnopq",  # 17: past the loads
]
piece_texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
any_texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
texts = st.lists(st.one_of(piece_texts, any_texts), max_size=8)


def documented_words(text: str) -> list[str]:
    """docs/decontamination.md's rule, one character at a time: NFKC, lower case, every
    punctuation character (category P*) removed, split on whitespace."""
    normal = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in normal if not unicodedata.category(c).startswith("P")).split()


def vocabulary_of(words: list[str]) -> dict[str, int]:
    """Numbered from 1 in order of first appearance, as catalogue.py numbers benchmark words."""
    vocabulary: dict[str, int] = {}
    for word in words:
        vocabulary.setdefault(word, len(vocabulary) + 1)
    return vocabulary


def assert_numbered_as_the_reference(vocabulary: dict[str, int], texts: list[str]) -> None:
    numbers, counts, spans = WordNumbers(vocabulary).number(texts)
    words = [normal_words(text) for text in texts]
    assert counts.tolist() == [len(row) for row in words]
    assert numbers.tolist() == [vocabulary.get(w, 0) for row in words for w in row]
    spanned = [spans.data[s:e] for s, e in zip(spans.starts, spans.ends, strict=True)]
    assert spanned == [w.encode() for row in words for w in row]


@settings(max_examples=300, deadline=None)
@given(texts, st.data())
def test_numbers_are_the_plain_lookup(texts: list[str], data: st.DataObject) -> None:
    words = sorted({w for text in texts for w in normal_words(text)})
    chosen = data.draw(st.lists(st.sampled_from(words), unique=True) if words else st.just([]))
    # Words one byte or character shorter or longer than a training word: same loads, or the
    # same first bytes, with another length.
    near = (
        [w[:-1] for w in chosen if len(w) > 1]
        + [w + "a" for w in chosen]
        + [w + "\x00" for w in chosen]
    )
    others = data.draw(st.lists(any_texts, max_size=3))
    extra = [w for text in others for w in normal_words(text)]
    assert_numbered_as_the_reference(vocabulary_of(chosen + near + extra), texts)


@settings(max_examples=300, deadline=None)
@given(st.one_of(piece_texts, any_texts))
def test_normal_words_follow_the_documented_rule(text: str) -> None:
    assert normal_words(text) == documented_words(text)


@pytest.mark.parametrize("code", range(128))
def test_every_ascii_character_is_normalised_by_the_rule(code: int) -> None:
    text = f"Ab{chr(code)}Cd {chr(code)} e{chr(code)}"
    assert normal_words(text) == documented_words(text)


def test_words_differing_in_length_only_or_past_16_bytes() -> None:
    lengths = range(1, 41)
    vocabulary = vocabulary_of(
        [*("a" * n for n in lengths if n % 3), *("\x00" * n for n in (1, 7, 8, 9, 16, 17))]
        + ["abcdefghijklmnop", "abcdefghijklmnopqr", "ệệệệệệ"]  # 18 bytes of Vietnamese
    )
    texts = [
        " ".join("a" * n for n in lengths),
        " ".join("\x00" * n for n in range(1, 20)),
        "abcdefghijklmnop abcdefghijklmnopq abcdefghijklmnopqr abcdefghijklmnopqrs",
        "ệệệệệệ ệệệệệ ệệệệệệệ",
        "",
        "!!! ... ??? --",
        "\x1c\x1d\x1e\x1f",
    ]
    assert_numbered_as_the_reference(vocabulary, texts)


def test_a_large_vocabulary_probes_past_collisions() -> None:
    """Thousands of keys in the table: many share a home slot (and words of 8 or more bytes
    share their first load), so lookups walk the probe chains, hits and misses alike; and more
    words than one lookup takes at a time (words.py ``_WORDS``)."""
    vocabulary = vocabulary_of(
        [f"w{i}" for i in range(0, 6000, 2)]
        + [f"word{i:08d}" for i in range(0, 3000, 3)]
        + [f"{i:024d}" for i in range(0, 300, 7)]
    )
    texts = [" ".join([f"w{i}", f"word{i:08d}", f"{i:024d}"] * 8) for i in range(6000)]
    assert_numbered_as_the_reference(vocabulary, texts)


def test_same_confirms_the_words_byte_for_byte() -> None:
    vocabulary = vocabulary_of(["tiếng", "việt", "có", "dấu", "internationalisation"])
    numbers, _, spans = WordNumbers(vocabulary).number(
        ["x", "Tiếng Việt có dấu, internationalisation!"]
    )
    run = numbers[1:6]
    assert spans.same(1, run)
    assert not spans.same(2, run[:4])  # shifted by a word
    assert not spans.same(1, np.array([run[0], run[2], run[1]]))
    assert not spans.same(0, run[:1])  # "x": no benchmark word


@pytest.mark.corpora
@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("xquad_vi.jsonl", ("context", "question", "answer")),
        ("ud_vietnamese_vtb_sentences.jsonl", ("text",)),
        ("xquad_th.jsonl", ("context", "question", "answer")),
        ("blns.jsonl", ("text",)),
        ("gemoji.jsonl", ("emoji", "description")),
        ("gsm8k_test.jsonl", ("question", "answer")),
    ],
)
def test_real_texts_are_numbered_as_the_reference(name: str, fields: tuple[str, ...]) -> None:
    """The benchmark side from the first half of the rows, the training side all of them."""
    rows = [json.loads(line) for line in corpora_file(f"datasets/{name}").open(encoding="utf-8")]
    values = [row[field] for row in rows for field in fields]
    half = [w for value in values[: len(values) // 2] for w in normal_words(value)]
    for first in range(0, len(values), 1000):
        assert_numbered_as_the_reference(vocabulary_of(half), values[first : first + 1000])
