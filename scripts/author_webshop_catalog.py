"""Write expbank's bundled WebShop catalog (project-authored text, official file schema).

    python scripts/author_webshop_catalog.py [--out envs/data/webshop]

Writes ``items_shuffle_1000.json`` (products), ``items_ins_v2_1000.json`` (attributes and synthetic
instructions) and ``items_human_ins.json`` (human-style goals), in the schema of the official WebShop files,
so the same loader reads bundled and official data. Every product, brand and sentence here is invented;
the output is deterministic. Design: 7 categories x 3 product types x 3 products; products of one type
compete (same query and nouns, different attributes and options); types of one category share the
category path but no title words (distractors); plus a product without a price and one too dear for a
price limit.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "envs" / "data" / "webshop"

# Each brand word is used by exactly one product, so titles of different types never share a word.
BRANDS = """
alderwick brambleton cobbleford dunmere elmsworth fernhollow glenrock hartwell ivybridge juniperra
kestrel larkspire merriweather norhaven oakhurst pellston quillmont rivermoor sableton thistledown
umberlee valewood westerly yarrowby zephyrine ashgrove bellhaven corriebrook dovecote eastholm
foxmere greyfriar hazelby inkwell jessamine kingsreach lindenfield marchbank nettlecombe orchardine
primrosa quarrystone rookwood saltmarsh tamberlin upperdale verbena willowick yewbury zennor
arbordale birchmont calderon driftmoor emberly fallowmere gorsefield heathcote isleworth juneberry
kilbride lowenna mossgrove northcliff oldacre pinecrest
""".split()

# (category, path, [(query, leaf, title words, description-only phrases, attribute pool, options, prices)])
CATEGORIES = [
    (
        "beauty",
        "Beauty & Personal Care › Personal Care",
        [
            (
                "deodorant",
                "Deodorants & Antiperspirants",
                "deodorant stick",
                ["gift ready"],
                ["aluminum free", "sensitive skin", "long lasting", "cruelty free"],
                {
                    "scent": ["lavender", "bright citrus", "cedar", "unscented"],
                    "size": ["2.6 ounce", "3 ounce (pack of 2)"],
                },
                ["$9.99", "$12.50", "$7.25 - $14.00"],
            ),
            (
                "shampoo",
                "Hair Care › Shampoos",
                "clarifying shampoo bottle",
                ["salon quality"],
                ["sulfate free", "color safe", "dry scalp", "paraben free"],
                {"size": ["8 fl oz", "16 fl oz", "32 fl oz"]},
                ["$14.99", "$22.00", "$11.40"],
            ),
            (
                "lip balm",
                "Lip Care › Balms & Moisturizers",
                "tinted lip balm tube",
                ["pocket friendly"],
                ["spf 15", "beeswax", "vegan", "moisturizing"],
                {},
                ["$4.99", "$6.75", "$3.50 - $8.00"],
            ),
        ],
    ),
    (
        "fashion",
        "Clothing, Shoes & Jewelry › Men",
        [
            (
                "running shoes",
                "Shoes › Athletic › Running",
                "trail running shoes",
                ["reflective heel"],
                ["breathable mesh", "non slip", "lightweight", "arch support"],
                {
                    "color": ["navy blue", "heather grey", "black", "neon green"],
                    "size": ["8", "9", "10", "11"],
                },
                ["$59.99", "$45.00 - $79.00", "$88.00"],
            ),
            (
                "t-shirt",
                "Clothing › Shirts › T-Shirts",
                "crewneck cotton tee",
                ["tagless collar"],
                ["machine wash", "relaxed fit", "organic cotton", "short sleeve"],
                {
                    "color": ["white", "olive", "rose pink", "charcoal"],
                    "size": ["small", "medium", "large", "x-large"],
                },
                ["$15.99", "$12.00 - $19.00", "$24.50"],
            ),
            (
                "winter hat",
                "Accessories › Hats & Caps › Skullies & Beanies",
                "knit beanie hat",
                ["fold over cuff"],
                ["fleece lined", "one size fits most", "warm", "acrylic"],
                {"color": ["burgundy", "mustard yellow", "black"]},
                ["$11.99", "$9.50", "$13.75"],
            ),
        ],
    ),
    (
        "grocery",
        "Grocery & Gourmet Food › Beverages",
        [
            (
                "green tea",
                "Tea › Green",
                "matcha green tea bags",
                ["resealable pouch"],
                ["caffeine", "usda organic", "non gmo", "individually wrapped"],
                {},
                ["$8.49", "$10.99", "$6.00 - $12.00"],
            ),
            (
                "coffee beans",
                "Coffee › Whole Bean",
                "dark roast coffee beans",
                ["small batch"],
                ["fair trade", "whole bean", "low acid", "kosher"],
                {"size": ["12 ounce", "2 pound"]},
                ["$13.99", "$17.25 - $31.00", "$21.50"],
            ),
            (
                "sparkling water",
                "Bottled Beverages › Sparkling Water",
                "sparkling mineral water cans",
                ["crisp finish"],
                ["zero calorie", "no sugar added", "bpa free", "gluten free"],
                {"flavor name": ["lime", "wild berry", "black cherry"], "size": ["12 pack", "24 pack"]},
                ["$5.99", "$9.99", "$7.49"],
            ),
        ],
    ),
    (
        "home",
        "Home & Kitchen › Bedding",
        [
            (
                "pillow cover",
                "Decorative Pillows › Throw Pillow Covers",
                "velvet throw pillow cover",
                ["hidden zipper"],
                ["double sided", "soft", "machine washable", "set of 2"],
                {
                    "color": ["dusty rose", "emerald green", "ivory", "navy"],
                    "size": ["18 x 18 inch", "20 x 20 inch"],
                },
                ["$16.99", "$12.99 - $21.99", "$19.49"],
            ),
            (
                "bed sheets",
                "Sheets & Pillowcases › Sheet Sets",
                "percale bed sheet set",
                ["deep pocket"],
                ["100% cotton", "hypoallergenic", "cooling", "wrinkle resistant"],
                {"color": ["white", "sage green", "slate grey"], "size": ["twin", "queen", "king"]},
                ["$49.99", "$39.00 - $69.00", "$58.00"],
            ),
            (
                "weighted blanket",
                "Blankets & Throws › Weighted Blankets",
                "glass bead weighted blanket",
                ["corner ties"],
                ["15 pounds", "breathable", "anxiety relief", "removable cover"],
                {},
                ["$79.99", "$64.50", "$92.00"],
            ),
        ],
    ),
    (
        "electronics",
        "Electronics › Computers & Accessories",
        [
            (
                "usb c cable",
                "Cables › USB Cables",
                "braided usb c charging cable",
                ["gold plated"],
                ["fast charging", "nylon braided", "data transfer", "tangle free"],
                {"color": ["black", "silver", "red"], "size": ["3 ft", "6 ft", "10 ft"]},
                ["$8.99", "$6.99 - $13.99", "$11.25"],
            ),
            (
                "wireless mouse",
                "Computer Accessories › Mice",
                "silent wireless optical mouse",
                ["usb receiver"],
                ["ergonomic", "rechargeable", "bluetooth", "quiet click"],
                {"color": ["matte black", "lavender purple", "white"]},
                ["$18.99", "$24.00", "$14.50 - $22.50"],
            ),
            (
                "laptop stand",
                "Laptop Accessories › Stands",
                "aluminum laptop riser stand",
                ["rubber pads"],
                ["adjustable height", "foldable", "heat dissipation", "portable"],
                {},
                ["$29.99", "$21.75", "$989.00"],
            ),
        ],
    ),
    (
        "sports",
        "Sports & Outdoors › Exercise & Fitness",
        [
            (
                "yoga mat",
                "Yoga › Mats",
                "cushioned yoga mat",
                ["carry strap"],
                ["non slip", "extra thick", "eco friendly", "sweat resistant"],
                {"color": ["teal", "lilac", "black"], "size": ["6 mm", "10 mm"]},
                ["$24.99", "$19.99 - $34.99", "$29.50"],
            ),
            (
                "water bottle",
                "Accessories › Sports Water Bottles",
                "insulated steel water bottle",
                ["wide mouth"],
                ["leak proof", "stainless steel", "keeps cold", "dishwasher safe"],
                {"color": ["ocean blue", "coral", "forest green"], "size": ["20 oz", "32 oz", "40 oz"]},
                ["$21.99", "$26.00", "$17.50 - $29.00"],
            ),
            (
                "resistance bands",
                "Strength Training › Resistance Bands",
                "latex resistance band loops",
                ["door anchor"],
                ["set of 5", "heavy duty", "travel bag", "color coded"],
                {},
                ["$12.99", "$15.49", ""],
            ),
        ],
    ),
    (
        "pets",
        "Pet Supplies › Dogs",
        [
            (
                "dog bed",
                "Beds & Furniture › Beds",
                "orthopedic dog bed",
                ["raised bolster"],
                ["memory foam", "waterproof liner", "washable cover", "large breed"],
                {"color": ["chocolate brown", "grey"], "size": ["medium", "large", "x-large"]},
                ["$44.99", "$36.00 - $62.00", "$55.00"],
            ),
            (
                "dog treats",
                "Treats › Chewy Treats",
                "grain free jerky dog treats",
                ["made in small kitchens"],
                ["chicken flavor", "no artificial preservatives", "high protein", "training treats"],
                {"size": ["6 ounce", "12 ounce"]},
                ["$9.49", "$12.99", "$7.99"],
            ),
            (
                "dog leash",
                "Collars, Harnesses & Leashes › Leashes",
                "reflective rope dog leash",
                ["padded handle"],
                ["heavy duty", "reflective", "6 foot", "climbing rope"],
                {"color": ["orange", "royal blue", "black"]},
                ["$14.99", "$11.50", "$18.25"],
            ),
        ],
    ),
]

TEMPLATES = [
    "i am looking for {a} {noun} that is {attrs}{opts}",
    "i need {attrs} {noun}{opts}",
    "find me {a} {attrs} {noun}{opts}",
]


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _option_text(chosen: dict[str, str]) -> str:
    return (" in " + " and ".join(f"{value} {name}" for name, value in chosen.items())) if chosen else ""


def _goal(noun: str, attrs: list[str], chosen: dict[str, str], variant: int) -> dict:
    template = TEMPLATES[variant % len(TEMPLATES)]
    text = template.format(a=_article(noun), noun=noun, attrs=" and ".join(attrs), opts=_option_text(chosen))
    return {
        "instruction": text,
        "instruction_attributes": attrs,
        "instruction_options": list(chosen.values()),
    }


def build() -> tuple[list[dict], dict, dict]:
    """(products, attributes, human goals) in the official schema."""
    products, attributes, human = [], {}, {}
    brands = iter(BRANDS)
    serial = 0
    for category, path, types in CATEGORIES:
        for query, leaf, noun, desc_only, pool, options, prices in types:
            for k, pricing in enumerate(prices):
                serial += 1
                asin = f"X{serial:03d}EXPB{category[:2].upper()}"[:10].ljust(10, "0")
                brand = next(brands).capitalize()
                attrs = [pool[(k + j) % len(pool)] for j in range(3)]
                title = f"{brand} {noun.title()}, {attrs[0].title()}"
                description = (
                    f"The {brand} {noun} is {attrs[0]} and {attrs[1]}. "
                    f"Designed and written for expbank's bundled catalog; {desc_only[0]} out of the box."
                )
                bullets = [f"{attr.capitalize()} by design" for attr in attrs] + [f"Sold by {brand}"]
                customization = {
                    name.title(): [
                        {"value": v.title() if name == "color" else v, "image": None} for v in values
                    ]
                    for name, values in options.items()
                }
                products.append(
                    {
                        "asin": asin,
                        "name": title,
                        "full_description": description,
                        "small_description": bullets,
                        "pricing": pricing,
                        "images": [f"https://example.invalid/{asin}.jpg"],
                        "product_category": f"{path} › {leaf}",
                        "query": query,
                        "category": category,
                        "customization_options": customization or None,
                    }
                )
                attributes[asin] = {
                    "attributes": attrs,
                    "instruction": f"i need {_article(noun)} {noun} that is {attrs[0]}",
                    "instruction_attributes": [attrs[0]],
                }
                goals = []
                for g in range(2 + serial % 2):
                    picked = [attrs[g % 3]] + ([attrs[(g + 1) % 3]] if g == 1 else [])
                    if g == 2:
                        picked = [attrs[0], desc_only[0]]  # the second attribute is only in the description
                    chosen = {
                        name: values[(k + g + i) % len(values)]
                        for i, (name, values) in enumerate(options.items())
                        if g != 1 or i == 0  # goal 1 asks for the first option group only
                    }
                    goals.append(_goal(noun, picked, chosen, serial + g))
                human[asin] = goals
    return products, attributes, human


def write(out: Path) -> None:
    products, attributes, human = build()
    out.mkdir(parents=True, exist_ok=True)
    for name, data in (
        ("items_shuffle_1000.json", products),
        ("items_ins_v2_1000.json", attributes),
        ("items_human_ins.json", human),
    ):
        (out / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    write(args.out)
    print(f"wrote the bundled WebShop catalog to {args.out}")
