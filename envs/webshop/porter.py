"""The Porter stemmer of Martin Porter's own implementation, which Lucene's ``PorterStemFilter`` ports.

Porter (1980), "An algorithm for suffix stripping", plus the three departures of Porter's reference code:
words of one or two letters are left alone, step 2 rewrites "bli" (not only "abli") to "ble", and step 2
also rewrites "logi" to "log". PyStemmer and Snowball implement the paper instead (90 of 48,928 English
words stem differently: "apology", "possibly", "us"). NLTK has this variant (``MARTIN_EXTENSIONS``), but
importing nltk takes seconds where scikit-learn and pandas are installed, in every worker; so the
algorithm is written out here, and scripts/compare_webshop_lucene.py checks it against Lucene.

Letters other than a, e, i, o, u (and y after a vowel) count as consonants, as in Lucene.
"""

from __future__ import annotations

# Suffix rules by the stem's second-to-last (steps 2 and 4) or last (step 3) letter; the first suffix that
# matches decides, whether or not its condition holds.
_STEP2 = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
_STEP3 = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
_STEP4 = {
    "a": ("al",), "c": ("ance", "ence"), "e": ("er",), "i": ("ic",), "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"), "o": ("ion", "ou"), "s": ("ism",), "t": ("ate", "iti"),
    "u": ("ous",), "v": ("ive",), "z": ("ize",),
}


def _consonant(word: str, i: int) -> bool:
    if word[i] in "aeiou":
        return False
    return word[i] != "y" or i == 0 or not _consonant(word, i - 1)


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: how many vowel-to-consonant changes ``stem`` has."""
    kinds = "".join("c" if _consonant(stem, i) else "v" for i in range(len(stem)))
    return kinds.count("vc")


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (as in "hop", not "snow")."""
    i = len(word) - 1
    return (
        i >= 2 and _consonant(word, i) and not _consonant(word, i - 1) and _consonant(word, i - 2)
        and word[i] not in "wxy"
    )


def _step1(word: str) -> str:
    """Plurals, -ed and -ing (1a, 1b), then a final y after a vowel in the stem becomes i (1c)."""
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and word[-2] != "s":
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        suffix = next((s for s in ("ed", "ing") if word.endswith(s)), None)
        if suffix and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                word += "e"
            elif _double_consonant(word):
                word = word if word[-1] in "lsz" else word[:-1]
            elif _measure(word) == 1 and _cvc(word):
                word += "e"
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _replace(word: str, rules: tuple[tuple[str, str], ...]) -> str:
    """Steps 2 and 3: the first matching suffix is replaced if what precedes it has m > 0."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > 0 else word
    return word


def _step4(word: str) -> str:
    """Drop a suffix where what precedes it has m > 1 (-ion only after s or t)."""
    for suffix in _STEP4.get(word[-2], ()):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and (suffix != "ion" or stem.endswith(("s", "t"))):
            return stem if _measure(stem) > 1 else word
    return word


def _step5(word: str) -> str:
    """A final e goes where m > 1 (or m == 1 and not cvc); a final ll becomes l where m > 1."""
    m = _measure(word)
    if word.endswith("e") and (m > 1 or (m == 1 and not _cvc(word[:-1]))):
        word = word[:-1]
    if word.endswith("l") and _double_consonant(word) and m > 1:
        word = word[:-1]
    return word


def stem(word: str) -> str:
    """The Porter stem of a lower-case word."""
    if len(word) <= 2:
        return word
    word = _step1(word)
    if len(word) > 1:
        word = _replace(word, _STEP2.get(word[-2], ()))
    word = _replace(word, _STEP3.get(word[-1], ()))
    if len(word) > 1:
        word = _step4(word)
    return _step5(word)
