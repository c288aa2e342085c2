"""``--match words``' normalisation (words.py) against the documented rule, character by
character, for any text (ASCII or not)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mintdim.decontaminate.words import normal_words

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


def documented_words(text: str) -> list[str]:
    """docs/decontamination.md's rule, one character at a time: NFKC, lower case, every
    punctuation character (category P*) removed, split on whitespace."""
    normal = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in normal if not unicodedata.category(c).startswith("P")).split()


@settings(max_examples=300, deadline=None)
@given(st.one_of(piece_texts, any_texts))
def test_normal_words_follow_the_documented_rule(text: str) -> None:
    assert normal_words(text) == documented_words(text)


@pytest.mark.parametrize("code", range(128))
def test_every_ascii_character_is_normalised_by_the_rule(code: int) -> None:
    text = f"Ab{chr(code)}Cd {chr(code)} e{chr(code)}"
    assert normal_words(text) == documented_words(text)
