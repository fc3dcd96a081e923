"""WebShop search as pyserini's Lucene search: the English analyzer, the one-byte length norm, ties by asin.

Expected terms are what Lucene 8's EnglishAnalyzer documents (UAX #29 words, possessive filter, 33 stop
words, the Porter reference stemmer); scripts/compare_webshop_lucene.py checks the whole engine against
Lucene itself.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from expbank import envs
from expbank.envs.webshop.analysis import STOP_WORDS, analyze
from expbank.envs.webshop.porter import stem
from expbank.envs.webshop.search import LENGTH_TABLE, SearchEngine, norm_bytes


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("women's 40.00 x-large e.g. shoes, running", ["women", "40.00", "x", "larg", "e.g", "shoe", "run"]),
        ("u.s.a. 3.5oz a_b 1,000 10:30 wi-fi ratio:1",
         ["u.s.a", "3.5oz", "a_b", "1,000", "10", "30", "wi", "fi", "ratio", "1"]),
        ("apology possibly us gas", ["apolog", "possibl", "us", "ga"]),  # Porter's own code, not Snowball's
        ("The MEN’S Watch", ["men", "watch"]),
        ("café ★★ 中文 naïve™ ❤️ 👍🏽 🇺🇸 #️⃣", ["café", "★", "★", "中", "文", "naïv", "™", "❤️", "👍🏽", "🇺🇸", "#️⃣"]),
        ("ไทยภาษา สวัสดี", ["ไทยภาษา", "สวัสดี"]),  # a Thai run is one word
        (" ".join(sorted(STOP_WORDS)) + " 's - & ?", ["s"]),
    ],
)
def test_analyzer_is_lucenes_english_analyzer(text, terms):
    assert analyze(text) == terms


@pytest.mark.parametrize(
    ("word", "expected"),
    [  # Porter (1980)'s examples, then the reference implementation's departures from the paper
        ("caresses", "caress"), ("ponies", "poni"), ("ties", "ti"), ("cats", "cat"), ("feed", "feed"),
        ("agreed", "agre"), ("plastered", "plaster"), ("motoring", "motor"), ("sing", "sing"),
        ("conflated", "conflat"), ("troubled", "troubl"), ("sized", "size"), ("hopping", "hop"),
        ("falling", "fall"), ("filing", "file"), ("happy", "happi"), ("sky", "sky"),
        ("generalizations", "gener"), ("oscillators", "oscil"),
        ("incredibly", "incred"), ("archaeology", "archaeolog"), ("us", "us"), ("is", "is"),
    ],
)
def test_porter_stems_as_lucene(word, expected):
    assert stem(word) == expected


def test_long_words_are_cut_at_255_characters():
    assert [len(t) for t in analyze("x" * 600 + " end")] == [255, 255, 90, 3]


def test_stop_word_and_unknown_queries_find_nothing():
    env = envs.make("webshop", split="test")
    env.reset(options={"task_id": "0"})
    for query in ("the and of", "qqzx vlorpt", "-- & ?"):
        obs, *_, info = env.step(f"search[{query}]")
        assert obs.endswith("Page 1 (Total results: 0) [SEP] Next >"), query
        assert info["admissible_actions"] == ["click[back to search]", "click[next >]"]
    obs, *_ = env.step("search[designed for the bundled catalog]")
    assert "(Total results: 50)" in obs


def test_length_norm_is_one_byte_and_ties_go_to_the_smaller_asin():
    """Lengths 40 and 41 share a norm byte, so those documents tie and the smaller asin comes first (with
    exact lengths the shorter document would win); 42 has its own byte and ranks last."""

    def product(asin, length):
        words = ["alpha"] + [f"filler{asin[-1]}x{i}" for i in range(length - 1)]
        return {"asin": asin, "Title": " ".join(words), "Description": "", "BulletPoints": [], "options": {}}

    products = [product("B000000003", 42), product("B000000002", 40), product("B000000001", 41)]
    engine = SearchEngine(products)
    assert engine.bm25("alpha") == ["B000000001", "B000000002", "B000000003"]
    scores = engine.scores("alpha")
    assert scores[1] == scores[2] > scores[0] > 0


def test_norm_bytes_keep_four_significant_bits():
    lengths = np.arange(200_000)
    decoded = LENGTH_TABLE[norm_bytes(lengths)]
    assert (decoded[:40] == lengths[:40]).all()  # exact below 40
    assert (np.diff(decoded) >= 0).all() and (decoded <= lengths).all()
    assert ((lengths - decoded)[24:] <= (lengths[24:] - 24) / 8).all()
    assert len(np.unique(norm_bytes(lengths))) <= 256


def test_repeated_query_words_weigh_more():
    products = [
        {"asin": "B00000000A", "Title": "red lamp", "Description": "", "BulletPoints": [], "options": {}},
        {"asin": "B00000000B", "Title": "blue lamp", "Description": "", "BulletPoints": [], "options": {}},
        {"asin": "B00000000C", "Title": "green chair", "Description": "", "BulletPoints": [], "options": {}},
    ]
    engine = SearchEngine(products)
    assert engine.bm25("red blue") == ["B00000000A", "B00000000B"]  # a tie, by asin
    assert engine.bm25("red blue blue") == ["B00000000B", "B00000000A"]


def test_prefix_queries():
    engine = envs.make("webshop", split="test").engine
    rng = random.Random(0)
    products = engine.products
    query = products[0]["query"]
    assert engine.top_n(["<q>", *query.split()], rng) == [p["asin"] for p in products if p["query"] == query]
    category = products[0]["category"]
    assert engine.top_n(["<c>", category], rng) == [p["asin"] for p in products if p["category"] == category]
    attribute = products[0]["Attributes"][0]
    found = engine.top_n(["<a>", *attribute.split()], rng)
    assert found == [p["asin"] for p in products if attribute in p["Attributes"]]
    drawn = engine.top_n(["<r>"], rng)
    assert len(set(drawn)) == min(50, len(products))
