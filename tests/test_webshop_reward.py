"""WebShop reward (the original's purchase reward, docs/webshop.md) with hand-computed values, on products loaded from official-schema files."""

from __future__ import annotations

import pytest
from webshop_data import DEODORANT, TEA, write_official_dir

from expbank.envs.webshop.catalog import load_catalog
from expbank.envs.webshop.goals import load_goals
from expbank.envs.webshop.reward import (
    FALLBACK,
    attribute_matches,
    fuzzy_ratio,
    get_reward,
    normalize_color,
    option_matches,
    type_reward,
)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    data_dir = str(write_official_dir(tmp_path_factory.mktemp("webshop")))
    catalog = load_catalog(data_dir, "small", True)
    goals = {goal["asin"]: goal for goal in load_goals(data_dir, "small", "human")}
    return catalog, goals


def test_exact_item_and_options_score_one(shop):
    catalog, goals = shop
    goal = goals[DEODORANT]
    reward, info = get_reward(
        catalog.by_asin[DEODORANT], goal, 10.99, {"color": "navy blue", "size": "2 ounce"}
    )
    assert reward == 1.0
    assert (info["r_type"], info["r_att"], info["r_option"], info["r_price"]) == (1.0, 1.0, 1.0, True)
    assert (info["w_att"], info["w_option"], info["w_price"]) == (0.4, 0.4, 0.2)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, 3 / 5),  # 2 attributes + price, no option clicked
        ({"size": "2 ounce"}, 4 / 5),  # colour missing
        ({"color": "forest green", "size": "2 ounce"}, 4 / 5),  # wrong colour
        (
            {"color": "forest green", "size": "3 ounce | pack of 2"},
            4 / 5,
        ),  # token sets: {2, ounce} is a subset
        ({"color": "dark blue", "size": "2 ounce"}, 1.0),  # "dark blue" normalises to the goal's "blue"
    ],
)
def test_right_item_with_missing_or_wrong_options(shop, options, expected):
    catalog, goals = shop
    reward, _ = get_reward(catalog.by_asin[DEODORANT], goals[DEODORANT], 10.99, options)
    assert reward == pytest.approx(expected, abs=1e-12)


def test_price_just_under_at_and_over_the_limit(shop):
    catalog, goals = shop
    goal = {**goals[DEODORANT], "price_upper": 20.0}
    options = {"color": "navy blue", "size": "2 ounce"}
    product = catalog.by_asin[DEODORANT]
    assert get_reward(product, goal, 19.99, options)[0] == 1.0
    assert get_reward(product, goal, 20.0, options)[0] == 1.0
    reward, info = get_reward(product, goal, 20.01, options)
    assert (reward, info["r_price"]) == (pytest.approx(4 / 5), False)


def test_attribute_matched_only_through_the_description(shop):
    catalog, _ = shop
    product = catalog.by_asin[DEODORANT]
    goal = {"attributes": ["aluminum free"]}
    assert max(fuzzy_ratio(have, "aluminum free") for have in product["Attributes"]) <= 85
    assert attribute_matches(product, goal) == 1
    assert attribute_matches({**product, "Description": "A gentle stick."}, goal) == 0
    assert attribute_matches(product, {"attributes": ["long lasting"]}) == 1  # through the features
    assert attribute_matches(product, {"attributes": ["sensitive skins"]}) == 1  # fuzzy, via Attributes


def test_colour_normalisation():
    assert normalize_color("navy blue") == "blue"  # the first base colour of the list wins
    assert normalize_color("heather grey") == "grey"
    assert normalize_color("2 ounce") == "2 ounce"
    assert option_matches(["navy blue"], ["blue"]) == 1
    assert fuzzy_ratio("dark blue", "light blue") < 85 and option_matches(["dark blue"], ["light blue"]) == 1
    assert fuzzy_ratio("navy blue", "navy") == 100 and option_matches(["navy blue"], ["navy"]) == 0


def test_fuzzy_ratio_has_thefuzz_semantics():
    assert fuzzy_ratio("Navy-Blue, X-Large", "navy blue x large") == 100
    assert fuzzy_ratio("cruelty free", "aluminum free") == 50
    assert fuzzy_ratio("blue", ("color", "navy blue")) == 100  # synthetic goals pass (name, value) tuples
    thefuzz = pytest.importorskip("thefuzz.fuzz")
    pairs = [
        ("Navy-Blue, X-Large", "navy blue x large"),
        ("dark blue", "light blue"),
        ("café latte", "cafe latte"),
        ("women’s boots", "womens boots"),
        ("naïve", "nave"),
        ("3 ounce (pack of 2)", "3 ounce"),
        ("x-large", ("size", "x-large")),
        ("", "x"),
    ]
    for a, b in pairs:
        assert fuzzy_ratio(a, b) == thefuzz.token_set_ratio(a, b), (a, b)


@pytest.mark.parametrize(  # title-noun sets are hand-computed for the fallback noun rule, asked for here
    ("asin", "r_type", "title_score"),
    [
        (TEA, 1.0, 1.0),
        ("B0TEAPOT01", 1.0, 2 / 12),  # query match rescues a weak title
        ("B0KETTLE01", 1.0, 2 / 12),  # category match (2 shared path elements) rescues a weak title
        ("B0GIFTTIN1", 0.5, 2 / 12),  # no query, category or title > 0.2 match
        ("B0CANDLE01", 0.1, 1 / 12),  # title score below 0.1
        ("B0LEMONS01", 0.0, 0.0),  # same category, no shared title noun
        (DEODORANT, 0.0, 0.0),
    ],
)
def test_type_factor_levels(shop, asin, r_type, title_score):
    catalog, goals = shop
    info = type_reward(catalog.by_asin[asin], goals[TEA], FALLBACK)
    assert (info["r_type"], info["title_score"]) == (r_type, pytest.approx(title_score))


def test_type_factor_scales_the_whole_reward(shop):
    catalog, goals = shop
    goal = goals[TEA]  # 1 attribute ("caffeine free"), no options: denominator 2
    reward, info = get_reward(catalog.by_asin["B0GIFTTIN1"], goal, 10.0, {}, FALLBACK)
    assert (reward, info["r_att"]) == (pytest.approx((0 + 0 + 1) / 2 * 0.5), 0.0)
    assert get_reward(catalog.by_asin["B0CANDLE01"], goal, 10.0, {}, FALLBACK)[0] == pytest.approx(0.5 * 0.1)
    assert get_reward(catalog.by_asin["B0LEMONS01"], goal, 10.0, {}, FALLBACK)[0] == 0.0
    assert info["nouns"] == FALLBACK
