"""Lucene 8's ``EnglishAnalyzer`` in Python: the terms pyserini's default analyzer makes of WebShop text.

The chain is Lucene's: ``StandardTokenizer`` (Unicode word boundaries, UAX #29; tokens of at most 255
characters, longer ones cut), ``EnglishPossessiveFilter`` (a trailing ``'s`` goes), ``LowerCaseFilter``,
``StopFilter`` with Lucene's 33 English stop words and ``PorterStemFilter``. Word boundaries come from the
``regex`` package (its WORD flag implements UAX #29); stems from ``porter.py`` (why not PyStemmer: there).

Lucene 8 applies Unicode 9 and Emoji 11 data, ``regex`` a newer Unicode; the comments below say where the
two differ and how that is bridged. ``scripts/compare_webshop_lucene.py`` checks all of this against
Lucene itself.
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

from .porter import stem

# EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)
MAX_TOKEN_LENGTH = 255  # StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH
POSSESSIVE_ENDINGS = tuple(q + s for q in "'\u2019\uff07" for s in "sS")

# ASCII text (nearly all of it): UAX #29 reduces to letters, digits and "_" joined across ":", ".", "'"
# between letters (WB6/7) and ",", ";", ".", "'" between digits (WB11/12); "_" alone is no word.
_ASCII_WORD = re.compile(
    r"_*[a-z0-9][a-z0-9_]*(?:(?:(?<=[a-z])[:.'](?=[a-z])|(?<=[0-9])[,;.'](?=[0-9]))[a-z0-9_]+)*", re.IGNORECASE
)
# Other text: each UAX #29 segment, except that a run of South-East Asian letters (Thai, Lao, Khmer,
# Myanmar) is one token in Lucene where UAX #29 leaves each letter alone.
_SEGMENT = regex.compile(r"(?wV1)\p{LB=SA}[\p{LB=SA}\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}]*|\b\S+?\b")
# A skin-tone modifier is a word break of its own in Unicode 9 unless it follows an emoji it can modify;
# newer Unicode glues it to the preceding character (WB4), so a line break (WB3a) puts the break back.
_LONE_MODIFIER = regex.compile(r"(?<!\p{Emoji_Modifier_Base})\p{Emoji_Modifier}")
# What StandardTokenizer emits: words (letters, digits, Hebrew, Katakana), each Han or Hiragana character,
# South-East Asian runs, and emoji. Its emoji are Emoji 11's Extended_Pictographic, whose symbol ranges
# (listed) are wider than newer data's, plus keycaps and flag pairs; "#", "*" and a lone flag letter are not.
_TOKEN = regex.compile(
    r"[\p{WB=ALetter}\p{WB=Hebrew_Letter}\p{WB=Numeric}\p{WB=Katakana}\p{Script=Han}\p{Script=Hiragana}"
    r"\p{LB=SA}\p{Extended_Pictographic}\p{Emoji_Modifier}[\p{Emoji}--[#*\p{Regional_Indicator}]]"
    r"\u2388\u2600-\u2605\u2607-\u2612\u2614-\u2685\u2690-\u2705\u2708-\u2712\u2763-\u2767"
    r"\U0001F000-\U0001F0FF\U0001F10D-\U0001F10F\U0001F12F-\U0001F149\U0001F16C-\U0001F189"
    r"\U0001F1AD-\U0001F1E5\U0001F249-\U0001F53D\U0001F546-\U0001F64F\U0001F680-\U0001F6FF"
    r"\U0001F774-\U0001F77F\U0001F7D5-\U0001F7FF\U0001F8AE-\U0001F8FF\U0001F947-\U0001FFFD]"
    r"|\p{Regional_Indicator}{2}|[#*]\uFE0F?\u20E3",
    regex.V1,
)


def words(text: str) -> list[str]:
    """What ``StandardTokenizer`` emits for ``text``, before any filter."""
    if text.isascii():
        return _cut(_ASCII_WORD.findall(text))
    text = _LONE_MODIFIER.sub(lambda m: "\n" + m.group(), text)
    return _cut([s for s in _SEGMENT.findall(text) if _TOKEN.search(s)])


def _cut(tokens: list[str]) -> list[str]:
    if max(map(len, tokens), default=0) <= MAX_TOKEN_LENGTH:
        return tokens
    return [t[i : i + MAX_TOKEN_LENGTH] for t in tokens for i in range(0, len(t), MAX_TOKEN_LENGTH)]


@lru_cache(maxsize=1 << 20)
def term(word: str) -> str | None:
    """The indexed term for one word: possessive dropped, lower-cased, stemmed; None for a stop word.

    Lucene lower-cases code point by code point; ``str.lower`` differs from that only for "İ" and a final
    "Σ", and WebShop lower-cases its text with Python before search anyway, as the original does.
    """
    if word.endswith(POSSESSIVE_ENDINGS):
        word = word[:-2]
    word = word.lower()
    return None if word in STOP_WORDS else stem(word)


def analyze(text: str) -> list[str]:
    """The terms Lucene 8's ``EnglishAnalyzer`` makes of ``text``, in order (repeats kept)."""
    return [t for t in map(term, words(text)) if t is not None]
