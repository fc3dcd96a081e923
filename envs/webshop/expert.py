"""Scripted shoppers that seed trajectories: an expert that knows the goal and a random shopper.

The expert searches with the instruction (or, if that search misses the goal product, with its title),
pages to the product, picks for each option group the value the reward counts for the goal, and buys.
The random shopper clicks uniformly and, when it searches, uses 1-3 words of the instruction.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from .pages import DONE, ITEM, PRODUCT_WINDOW, RESULTS, SEARCH_ACTION, Shop
from .reward import goal_option_list, option_matches

_PRICE_CLAUSE = re.compile(r",? and price lower than [\d.]+ dollars$")


def expert_query(
    goal: dict[str, Any], product: dict[str, Any], search: Callable[[list[str]], list[str]]
) -> str:
    """The instruction without its price clause, unless that search misses the product: then its title."""
    query = _PRICE_CLAUSE.sub("", goal["instruction_text"]).lower()
    if goal["asin"] in search(query.split(" ")):
        return query
    return product["Title"].lower()


def wanted_options(product: dict[str, Any], goal: dict[str, Any]) -> dict[str, str]:
    """Per option group, the first value that matches the most goal options under the reward's rules."""
    goal_options = goal_option_list(goal)
    chosen = {}
    for name, values in product["options"].items():
        scored = [(option_matches([value], goal_options), value) for value in values]
        best = max((score for score, _ in scored), default=0)
        if best > 0:
            chosen[name] = next(value for score, value in scored if score == best)
    return chosen


def expert_action(shop: Shop, goal: dict[str, Any]) -> str | None:
    page, target = shop.page, goal["asin"]
    if page.kind == DONE:
        return None
    if page.kind == ITEM and page.asin == target:
        for name, value in wanted_options(shop.product, goal).items():
            if page.options.get(name) != value:
                return f"click[{value}]"
        return "click[buy now]"
    if page.asin is not None:  # another product's item page, or any sub-page: step back
        return "click[< prev]"
    if page.kind == RESULTS and target in page.results:
        wanted_page = page.results.index(target) // PRODUCT_WINDOW + 1
        if wanted_page == page.number:
            return f"click[{target.lower()}]"
        return "click[next >]" if wanted_page > page.number else "click[< prev]"
    return f"search[{expert_query(goal, shop.products[target], shop.search_fn)}]"


def random_action(admissible: list[str], instruction: str, rng: random.Random) -> str:
    """A uniform choice among the admissible actions; a search uses 1-3 words of the instruction."""
    action = rng.choice(admissible) if admissible else SEARCH_ACTION
    if action != SEARCH_ACTION:
        return action
    words = re.findall(r"[\w'-]+", instruction.lower())
    picked = sorted(rng.sample(range(len(words)), k=min(len(words), rng.randint(1, 3))))
    return f"search[{' '.join(words[i] for i in picked)}]"
