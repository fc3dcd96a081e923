"""The original WebShop purchase reward (``web_agent_site/engine/goal.py::get_reward`` at HEAD 64fa2a5).

total = (attributes matched + options matched + price ok) / (#attributes + #options + 1) x r_type, and
success means total == 1. Fuzzy matching reproduces ``thefuzz.fuzz.token_set_ratio`` (its ``force_ascii``,
default processing, rounding to an int) with rapidfuzz. Title nouns come from spaCy's POS tagger when an English
model is installed, otherwise from the documented fallback: alphabetic tokens that are not stop words.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from rapidfuzz import fuzz, utils

FUZZY_THRESHOLD = 85
NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")
SPACY_MODELS = ("en_core_web_sm", "en_core_web_md", "en_core_web_lg", "en_core_web_trf")
# web_agent_site/engine/normalize.py: the first base colour found as a substring replaces the value.
COLOR_SET = tuple(
    """
    alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze brown burgundy
    camel camo caramel champagne charcoal cheetah chestnut chocolate christmas coffee cognac copper coral
    cranberry cream crystal dark denim eggplant elephant espresso fuchsia gold granite grape graphite grass
    gray green grey heather indigo ivory ivy khaki lavender lemon leopard light lilac lime magenta maroon
    mauve merlot midnight mint mocha multicolor mushroom mustard natural navy nude olive orange peach
    pewter pink plum purple rainbow red rose royal rust sand sapphire seashell silver skull slate steel
    stone stonewash sunflower tan taupe teal tiger turquoise violet walnut wheat white wine yellow
    """.split()
)


_LATIN1 = dict.fromkeys(range(128, 256))  # thefuzz's `force_ascii` drops exactly these code points


def fuzzy_ratio(a: Any, b: Any) -> int:
    """``thefuzz.fuzz.token_set_ratio(a, b)``: ``str()``, drop U+0080-U+00FF, default processing, round."""
    a, b = (str(x).translate(_LATIN1) for x in (a, b))
    return round(fuzz.token_set_ratio(a, b, processor=utils.default_process))


def normalize_color(value: Any) -> Any:
    """Replace ``value`` by the first base colour it contains (``in``, so tuples match whole elements)."""
    for color in COLOR_SET:
        if color in value:
            return color
    return value


@cache
def noun_source() -> str:
    """``"spacy:<model>"`` when an English spaCy model is installed, else ``"fallback"`` (no import of spaCy)."""
    return next((f"spacy:{m}" for m in SPACY_MODELS if importlib.util.find_spec(m) is not None), "fallback")


@cache
def _noun_tagger() -> Callable[[str], list[str]]:
    """Imported on the first purchase: spaCy (through thinc) takes seconds to import."""
    import spacy

    source = noun_source()
    if source == "fallback":
        blank = spacy.blank("en")
        return lambda text: [t.text.lower() for t in blank(text) if t.is_alpha and not t.is_stop]
    nlp = spacy.load(source.removeprefix("spacy:"), exclude=["parser", "ner", "lemmatizer"])
    return lambda text: [t.text.lower() for t in nlp(text) if t.pos_ in NOUN_TAGS]


@lru_cache(maxsize=65536)
def nouns(text: str) -> tuple[str, ...]:
    return tuple(_noun_tagger()(text))


def type_reward(product: dict[str, Any], goal: dict[str, Any]) -> dict[str, Any]:
    """r_type: 1, or 0.5 when query, category and title all disagree; 0.1 / 0 for weak / no title overlap."""
    query_match = product["query"] == goal["query"]
    product_path = {x.strip() for x in product["product_category"].split("›")}
    goal_path = {x.strip() for x in goal["product_category"].split("›")}
    category_match = len(product_path & goal_path) >= 2
    wanted = nouns(goal["name"])  # the original divides by the number of goal nouns, repeats included
    title_score = len(set(nouns(product["name"])) & set(wanted)) / len(wanted) if wanted else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {
        "r_type": r_type,
        "query_match": query_match,
        "category_match": category_match,
        "title_score": title_score,
    }


def attribute_matches(product: dict[str, Any], goal: dict[str, Any]) -> int:
    """Goal attributes found fuzzily in the product's attributes, else verbatim in its title/features/description."""
    texts = (
        product["Title"].lower(),
        " ".join(product["BulletPoints"]).lower(),
        product["Description"].lower(),
    )
    matched = 0
    for wanted in goal["attributes"]:
        if any(fuzzy_ratio(have, wanted) > FUZZY_THRESHOLD for have in product["Attributes"]):
            matched += 1
        elif any(wanted in text for text in texts):
            matched += 1
    return matched


def option_matches(purchased: list[str], goal_options: list[Any]) -> int:
    """Goal options (colour-normalised) matched by some purchased option value."""
    purchased = [normalize_color(o) for o in purchased]
    return sum(
        any(fuzzy_ratio(have, normalize_color(wanted)) > FUZZY_THRESHOLD for have in purchased)
        for wanted in goal_options
    )


def goal_option_list(goal: dict[str, Any]) -> list[Any]:
    """Goal options as the original passes them: a list, or for synthetic goals the dict's (name, value) items."""
    options = goal["goal_options"]
    return list(options.items() if isinstance(options, dict) else options)


def get_reward(
    product: dict[str, Any], goal: dict[str, Any], price: float, options: dict[str, str]
) -> tuple[float, dict[str, Any]]:
    """The purchase reward and its parts (the original's ``verbose`` info plus the noun source)."""
    type_info = type_reward(product, goal)
    goal_options = goal_option_list(goal)  # synthetic goals: (name, value) tuples, an upstream quirk kept
    n_attr = attribute_matches(product, goal)
    n_opt = option_matches(list(options.values()), goal_options)
    r_price = price <= goal["price_upper"]
    denominator = len(goal["attributes"]) + len(goal_options) + 1
    total = (n_attr + n_opt + r_price) / denominator * type_info["r_type"]
    info = {
        **type_info,
        "r_att": n_attr / len(goal["attributes"]),
        "w_att": len(goal["attributes"]) / denominator,
        "r_price": r_price,
        "w_price": 1 / denominator,
        "nouns": noun_source(),
    }
    if goal_options:
        info["r_option"] = n_opt / len(goal_options)
        info["w_option"] = len(goal_options) / denominator
    return total, info
