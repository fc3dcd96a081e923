"""Load a WebShop catalog from files in the official schema, the way the original engine loads them.

The original (``web_agent_site/engine/engine.py::load_products``) reads ``items_shuffle*.json`` (products),
``items_ins_v2*.json`` (attributes and synthetic instructions) and ``items_human_ins.json`` (human goals),
skips records without a 10-character asin and duplicates, lower-cases option values and parses prices. This
module does the same, but turns a malformed file or record into an ``EnvDataError`` naming both.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import EnvDataError

Product = dict[str, Any]

CATALOG_FILES = {
    "small": ("items_shuffle_1000.json", "items_ins_v2_1000.json"),
    "full": ("items_shuffle.json", "items_ins_v2.json"),
}
HUMAN_GOALS_FILE = "items_human_ins.json"
PRICE_SEED = 233  # the original draws range prices from the unseeded global RNG; we fix a seed instead
BUNDLED_DIR = Path(__file__).resolve().parent.parent / "data" / "webshop"
GET_DATA_HINT = (
    "get the official files with WebShop's setup.sh (-d small or -d all) and pass their folder as data_dir"
)


@dataclass(frozen=True)
class Catalog:
    """Products keyed by asin, the price each one is sold at, and where they came from."""

    products: list[Product]
    by_asin: dict[str, Product]
    prices: dict[str, float]
    data_dir: Path
    bundled: bool
    items_file: str
    file_hashes: dict[str, str]


def _read_json(path: Path, hashes: dict[str, str]) -> Any:
    """Parse ``path`` and record a short content hash of it (for the run fingerprint)."""
    if not path.is_file():
        raise EnvDataError(f"{path}: file not found; {GET_DATA_HINT}")
    data = path.read_bytes()
    hashes[path.name] = hashlib.sha256(data).hexdigest()[:16]
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EnvDataError(f"{path}: not valid JSON ({exc})") from None


def _parse_pricing(raw: Any) -> tuple[list[float], str]:
    """``"$10.99"`` -> ``[10.99]``; ``"$35.00 - $59.99"`` -> ``[35.0, 59.99]``; missing -> ``[100.0]``."""
    if not raw:
        return [100.0], "$100.0"
    pricing = [float(Decimal(re.sub(r"[^\d.]", "", piece))) for piece in str(raw).split("$")[1:]]
    if not pricing:
        raise ValueError(f"no '$' amount in pricing {raw!r}")
    if len(pricing) == 1:
        return pricing, f"${pricing[0]}"
    return pricing[:2], f"${pricing[0]} to ${pricing[1]}"


def _parse_options(raw: Any) -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    for name, contents in (raw or {}).items():
        if contents is None:
            continue
        options[name.lower()] = [c["value"].strip().replace("/", " | ").lower() for c in contents]
    return options


def _product(record: dict[str, Any], attrs: dict[str, Any], human: dict[str, Any] | None) -> Product:
    asin = record["asin"]
    bullets = record.get("small_description") or []
    pricing, price_tag = _parse_pricing(record.get("pricing"))
    entry = attrs.get(asin) or {}
    product: Product = {
        "asin": asin,
        "name": record["name"],
        "Title": record["name"],
        "Description": record.get("full_description") or "",
        "BulletPoints": bullets if isinstance(bullets, list) else [bullets],
        "pricing": pricing,
        "Price": price_tag,
        "options": _parse_options(record.get("customization_options")),
        "Attributes": entry.get("attributes") or ["DUMMY_ATTR"],
        "category": record["category"],
        "query": record["query"].lower().strip(),
        "product_category": record["product_category"],
        "MainImage": (record.get("images") or [None])[0],
        "Rating": "N.A.",
    }
    if human is not None:
        if asin in human:
            product["instructions"] = human[asin]
    else:
        product["instruction_text"] = entry.get("instruction")
        product["instruction_attributes"] = entry.get("instruction_attributes")
    return product


@lru_cache(maxsize=4)
def load_catalog(data_dir: str | None, catalog: str = "small", human_goals: bool = True) -> Catalog:
    """Load products (bundled catalog when ``data_dir`` is None); cached per process."""
    if catalog not in CATALOG_FILES:
        raise ValueError(f"catalog must be one of {sorted(CATALOG_FILES)}, got {catalog!r}")
    root = Path(data_dir).expanduser() if data_dir is not None else BUNDLED_DIR
    items_path, attrs_path = (root / name for name in CATALOG_FILES[catalog if data_dir else "small"])
    human_path = root / HUMAN_GOALS_FILE
    hashes: dict[str, str] = {}
    records = _read_json(items_path, hashes)
    attrs = _read_json(attrs_path, hashes)
    human = _read_json(human_path, hashes) if human_goals else None
    if not isinstance(records, list):
        raise EnvDataError(f"{items_path}: expected a JSON list of products")
    for path, value in ((attrs_path, attrs), (human_path, human)):
        if value is not None and not isinstance(value, dict):
            raise EnvDataError(f"{path}: expected a JSON object keyed by asin")

    products: list[Product] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        asin = record.get("asin") if isinstance(record, dict) else None
        if not isinstance(asin, str) or len(asin) != 10 or asin in seen:
            continue
        try:
            products.append(_product(record, attrs, human))
        except (KeyError, TypeError, AttributeError, ValueError, InvalidOperation) as exc:
            raise EnvDataError(f"{items_path}: record {index} (asin {asin}) is malformed: {exc!r}") from None
        seen.add(asin)
    if not products:
        raise EnvDataError(f"{items_path}: no product with a 10-character asin")

    rng = random.Random(PRICE_SEED)
    prices = {
        p["asin"]: p["pricing"][0] if len(p["pricing"]) == 1 else rng.uniform(*p["pricing"]) for p in products
    }
    return Catalog(
        products=products,
        by_asin={p["asin"]: p for p in products},
        prices=prices,
        data_dir=root,
        bundled=data_dir is None,
        items_file=items_path.name,
        file_hashes=hashes,
    )
