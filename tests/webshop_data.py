"""A tiny WebShop data directory in the official schema, written by the tests themselves.

Titles are chosen so the title-noun sets are known under the fallback noun rule (alphabetic tokens that
are not stop words): the tea goal's name has 12 such words, so 1 shared word scores 1/12 (< 0.1), 2 score
2/12 (between 0.1 and 0.2) and 3 score 3/12 (> 0.2).
"""

from __future__ import annotations

import json
from pathlib import Path

TEA_PATH = "Grocery & Gourmet Food › Beverages › Tea"
DEODORANT = "B0DEODOR01"
TEA = "B0GREENT01"


def product(asin, name, query, path, pricing="$10.00", options=None, description="", bullets=None):
    return {
        "asin": asin,
        "name": name,
        "full_description": description,
        "small_description": bullets if bullets is not None else [f"About {name}"],
        "pricing": pricing,
        "images": [f"https://example.invalid/{asin}.jpg"],
        "product_category": path,
        "query": query,
        "category": path.split(" › ")[0].split()[0].lower(),
        "customization_options": options,
    }


def values(*names):
    return [{"value": name, "image": None} for name in names]


PRODUCTS = [
    product(
        DEODORANT,
        "Meadow Deodorant Stick",
        "deodorant",
        "Beauty & Personal Care › Personal Care › Deodorants",
        pricing="$10.99",
        options={
            "Color": values("Navy Blue", "Forest Green", "Dark Blue"),
            "Size": values("2 Ounce", "3 Ounce/Pack of 2"),
            "Style": None,
        },
        description="A gentle stick, aluminum free and kind to skin.",
        bullets=["Long lasting scent", "Made for travel"],
    ),
    product(
        TEA,
        "Orchard Valley Green Tea Bags Sampler Gift Tin Assorted Herbal Blends Collection",
        "green tea",
        TEA_PATH,
        pricing="$35.00 - $59.99",
    ),
    product("B0GIFTTIN1", "Gift Tin", "storage tin", "Home & Kitchen › Storage › Tins"),
    product("B0CANDLE01", "Valley Candle", "candle", "Home & Kitchen › Decor › Candles"),
    product("B0LEMONS01", "Sparkling Lemon Soda", "soda", "Grocery & Gourmet Food › Beverages › Soda"),
    product("B0KETTLE01", "Herbal Blends Kettle", "kettle", "Grocery & Gourmet Food › Beverages › Kettles"),
    product("B0TEAPOT01", "Herbal Blends Teapot", "green tea", "Home & Kitchen › Kitchen › Teapots"),
    product(
        "B0PRICEY01", "Grand Piano Bench", "bench", "Home & Kitchen › Furniture › Benches", pricing="$985.00"
    ),
    product("B0NOPRICE1", "Plain Notebook", "notebook", "Office Products › Paper › Notebooks", pricing=None),
    product("nan", "Skipped: asin is nan", "skip", "Skip › Skip"),
    product("B0123456789", "Skipped: asin too long", "skip", "Skip › Skip"),
    product(DEODORANT, "Skipped: duplicate asin", "skip", "Skip › Skip"),
]

ATTRIBUTES = {
    DEODORANT: {
        "attributes": ["sensitive skin", "cruelty free"],
        "instruction": "i need a deodorant stick",
        "instruction_attributes": ["sensitive skin"],
    },
    TEA: {
        "attributes": ["caffeine free"],
        "instruction": "i want green tea bags",
        "instruction_attributes": ["caffeine free"],
    },
}

HUMAN_GOALS = {
    DEODORANT: [
        {
            "instruction": "i need a blue 2 ounce deodorant stick for sensitive skin that is aluminum free.",
            "instruction_attributes": ["sensitive skin", "aluminum free"],
            "instruction_options": ["blue", "2 ounce"],
        },
        {"instruction": "skipped: no attributes", "instruction_attributes": [], "instruction_options": []},
    ],
    TEA: [
        {
            "instruction": "i want caffeine free green tea bags",
            "instruction_attributes": ["caffeine free"],
            "instruction_options": [],
        }
    ],
    "B0PRICEY01": [
        {"instruction": "a piano bench", "instruction_attributes": ["bench"], "instruction_options": []}
    ],
    "B0NOPRICE1": [
        {"instruction": "a notebook", "instruction_attributes": ["plain"], "instruction_options": []}
    ],
}


def write_official_dir(root: Path, products=None, catalog: str = "small") -> Path:
    """Write the three official files into ``root`` (``catalog="full"`` uses the full-catalog file names)."""
    suffix = "_1000" if catalog == "small" else ""
    root.mkdir(parents=True, exist_ok=True)
    files = {
        f"items_shuffle{suffix}.json": PRODUCTS if products is None else products,
        f"items_ins_v2{suffix}.json": ATTRIBUTES,
        "items_human_ins.json": HUMAN_GOALS,
    }
    for name, data in files.items():
        (root / name).write_text(json.dumps(data), encoding="utf-8")
    return root
