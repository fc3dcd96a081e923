"""Goals as the original builds them (``web_agent_site/engine/goal.py``), shuffled and split.

Human goals come from ``items_human_ins.json`` (entries without attributes skipped); synthetic goals cross
each product's ``items_ins_v2`` instruction with every combination of its option values. Each goal gets a
price limit drawn as the original draws it; the list is then shuffled with ``random.seed(233)`` exactly as
the original does, so goal ``i`` here is goal ``i`` there. Splits are ranges of that order, from a named
scheme (``SPLIT_SCHEMES``).
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from functools import lru_cache
from typing import Any

from ..errors import EnvDataError
from .catalog import HUMAN_GOALS_FILE, Catalog, load_catalog

Goal = dict[str, Any]

PRICE_RANGE = [10.0 * i for i in range(1, 100)]
NO_PRICE_LIMIT = 1000000
LIMIT_SEED = 233  # the original draws limits from the unseeded global RNG; we fix a seed instead
SHUFFLE_SEED = 233  # the original's `random.seed(233); random.shuffle(goals)`
SPLIT_SCHEMES = {
    # The original's IL and RL baselines (baseline_models/env.py): test 0-499, "eval" 500-1499, train 1500+.
    "original": {"test": (0, 500), "dev": (500, 1500), "train": (1500, None)},
    # What expbank used before it offered schemes: its train split holds 500 of the original's eval goals.
    "expbank": {"test": (0, 500), "dev": (500, 1000), "train": (1000, None)},
}
DEFAULT_SPLIT_SCHEME = "original"
BUNDLED_SPLITS = {"test": (0, 50), "dev": (50, 70), "train": (70, None)}  # the bundled catalog, any scheme


def price_limit(price: float, rng: random.Random) -> tuple[float, str]:
    """Sample 2 of the first 4 multiples of $10 above ``price`` and keep the larger (none if < 2 exist)."""
    candidates = [p for p in PRICE_RANGE if p > price][:4]
    if len(candidates) < 2:
        return NO_PRICE_LIMIT, ""
    _, upper = sorted(rng.sample(candidates, 2))
    return upper, f", and price lower than {upper:.2f} dollars"


def _base(product: dict[str, Any]) -> Goal:
    return {key: product[key] for key in ("asin", "category", "query", "name", "product_category")}


def human_goals(catalog: Catalog, rng: random.Random) -> list[Goal]:
    goals = []
    for product in catalog.products:
        for index, entry in enumerate(product.get("instructions", ())):
            try:
                attributes, options = entry["instruction_attributes"], entry["instruction_options"]
                text = entry["instruction"].strip(".")
            except (KeyError, TypeError, AttributeError) as exc:
                raise EnvDataError(
                    f"{catalog.data_dir / HUMAN_GOALS_FILE}: {product['asin']} record {index} is malformed: {exc!r}"
                ) from None
            if not attributes:
                continue
            upper, price_text = price_limit(catalog.prices[product["asin"]], rng)
            goals.append(
                {
                    **_base(product),
                    "instruction_text": text + price_text,
                    "attributes": attributes,
                    "price_upper": upper,
                    "goal_options": options,
                    "weight": 1,
                }
            )
    return goals


def synthetic_goals(catalog: Catalog, rng: random.Random) -> list[Goal]:
    goals = []
    counts: dict[str, int] = defaultdict(int)
    for product in catalog.products:
        if product.get("instruction_text") is None or not product.get("instruction_attributes"):
            continue
        upper, price_text = price_limit(catalog.prices[product["asin"]], rng)
        names = sorted(product["options"])
        for combination in itertools.product(*(product["options"][name] for name in names)):
            goal_options = dict(zip(names, combination, strict=True))
            option_text = ", and ".join(f"{k}: {v}" for k, v in goal_options.items())
            option_text = " with " + option_text if option_text else ""
            goals.append(
                {
                    **_base(product),
                    "instruction_text": f"{product['instruction_text']}{option_text}{price_text}",
                    "attributes": product["instruction_attributes"],
                    "price_upper": upper,
                    "goal_options": goal_options,
                }
            )
            for attribute in product["instruction_attributes"]:
                counts[attribute] += 1
    for goal in goals:
        goal["weight"] = sum(1.0 / counts[a] for a in goal["attributes"]) / len(goal["attributes"])
    return goals


@lru_cache(maxsize=8)
def load_goals(data_dir: str | None, catalog: str = "small", goals: str = "human") -> tuple[Goal, ...]:
    """All goals of a catalog in the original's shuffled order (index = task id)."""
    if goals not in ("human", "synthetic"):
        raise ValueError(f"goals must be 'human' or 'synthetic', got {goals!r}")
    products = load_catalog(data_dir, catalog, human_goals=goals == "human")
    build = human_goals if goals == "human" else synthetic_goals
    built = build(products, random.Random(LIMIT_SEED))
    random.Random(SHUFFLE_SEED).shuffle(built)
    return tuple(built)


def split_indices(n_goals: int, split: str, bundled: bool, scheme: str = DEFAULT_SPLIT_SCHEME) -> range:
    """Goal indices of ``split`` under the split scheme ``scheme`` (the bundled catalog has its own)."""
    if scheme not in SPLIT_SCHEMES:
        raise ValueError(f"unknown WebShop split scheme {scheme!r}; choose one of {sorted(SPLIT_SCHEMES)}")
    bounds = BUNDLED_SPLITS if bundled else SPLIT_SCHEMES[scheme]
    if split not in bounds:
        hint = " (the original's 'eval' split is 'dev' here)" if split == "eval" else ""
        raise ValueError(f"unknown WebShop split {split!r}; choose one of {sorted(bounds)}{hint}")
    start, stop = bounds[split]
    return range(min(start, n_goals), n_goals if stop is None else min(stop, n_goals))
