"""Benchmark the WebShop engine: step and search latency, median and p95.

    python scripts/bench_webshop.py [--sizes 1000 100000] [--episodes 50] [--queries 200]

Runs on the bundled catalog and on synthetic catalogs of the given sizes, which it writes in the official
file schema to a temporary folder (random invented words; one human goal per product for the first 500),
with a temporary ``$EXPBANK_CACHE``; also reports how long tagging every title, building the index and
reloading both take. ``step`` is an expert click other than "Buy Now"; ``purchase`` is "Buy Now", whose
type reward looks the titles' nouns up in the table tagged when the catalog was opened;
``purchase_untagged`` is the reward alone of the same purchases, timed afterwards in the same process with
both titles tagged on demand, as every first purchase of a title was before the table; ``search`` is the
engine alone on goal instructions. Targets: step <= 1 ms; search <= 5 ms at ~1k products and <= 50 ms at
100k.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from expbank.envs import make
from expbank.envs.webshop.catalog import CATALOG_FILES, HUMAN_GOALS_FILE, load_catalog
from expbank.envs.webshop.reward import get_reward, noun_source, nouns
from expbank.envs.webshop.search import SearchEngine, index_cache_dir
from expbank.envs.webshop.titles import title_nouns

COLORS = ["navy blue", "black", "heather grey", "white", "forest green", "rose pink"]
SIZES = ["small", "medium", "large", "x-large"]


def write_synthetic_catalog(root: Path, n_products: int, seed: int = 0) -> None:
    """Official-schema files for ``n_products`` random products over a 5,000-word invented vocabulary."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(4, 9))) for _ in range(5000)]
    products, attributes, human = [], {}, {}
    for i in range(n_products):
        asin = f"S{i:09d}"
        title = " ".join(rng.choices(vocab, k=rng.randint(6, 12)))
        attrs = [" ".join(rng.choices(vocab, k=2)) for _ in range(3)]
        options = None
        if i % 2 == 0:
            options = {
                "Color": [{"value": c, "image": None} for c in rng.sample(COLORS, 3)],
                "Size": [{"value": s, "image": None} for s in SIZES],
            }
        lo = round(rng.uniform(5, 200), 2)
        products.append(
            {
                "asin": asin,
                "name": title,
                "full_description": " ".join(rng.choices(vocab, k=rng.randint(30, 60))),
                "small_description": [" ".join(rng.choices(vocab, k=8)) for _ in range(3)],
                "pricing": f"${lo}" if i % 3 else f"${lo} - ${lo + 20}",
                "images": [""],
                "product_category": f"Dept {i % 7} › Aisle {i % 31} › Shelf {i % 97}",
                "query": vocab[i % 500],
                "category": f"dept{i % 7}",
                "customization_options": options,
            }
        )
        attributes[asin] = {"attributes": attrs}
        if i < 500:
            chosen = [options["Color"][0]["value"], "medium"] if options else []
            human[asin] = [
                {
                    "instruction": f"i want {title} that is {attrs[0]}",
                    "instruction_attributes": [attrs[0]],
                    "instruction_options": chosen,
                }
            ]
    items_file, attrs_file = CATALOG_FILES["small"]
    for name, data in ((items_file, products), (attrs_file, attributes), (HUMAN_GOALS_FILE, human)):
        (root / name).write_text(json.dumps(data))


def median_p95(name: str, values: list[float]) -> dict[str, float]:
    return {f"{name}_median": statistics.median(values), f"{name}_p95": statistics.quantiles(values, n=20)[-1]}


def untagged_reward_ms(source: str, product: dict, goal: dict, price: float, options: dict) -> float:
    """What a purchase's reward costs with the goal's and the product's titles tagged on demand."""
    nouns.cache_clear()
    start = time.perf_counter()
    get_reward(product, goal, price, options, source)
    return (time.perf_counter() - start) * 1000


def measure(env, episodes: int, queries: int) -> dict[str, float]:
    """Play expert episodes timing each step; then time their purchases' rewards with the titles untagged,
    and ``queries`` raw searches with goal instructions."""
    step_ms, purchase_ms, search_step_ms, scores, purchases = [], [], [], [], []
    for task_id in env.task_ids()[:episodes]:
        env.reset(options={"task_id": task_id})
        while True:
            action = env.expert_action()
            if action == "click[buy now]":
                page = env.shop.page
                price = env.catalog.prices[page.asin]
                purchases.append((env.shop.product, env.goal, price, dict(page.options)))
            start = time.perf_counter()
            _, _, done, truncated, info = env.step(action)
            elapsed = (time.perf_counter() - start) * 1000
            if action.startswith("search["):
                search_step_ms.append(elapsed)
            else:
                (purchase_ms if action == "click[buy now]" else step_ms).append(elapsed)
            if done or truncated:
                scores.append(info["score"])
                break
    untagged_ms = [untagged_reward_ms(env.nouns, *purchase) for purchase in purchases]
    texts = [goal["instruction_text"] for goal in env.goals[:queries]]
    search_ms = []
    for text in texts:
        start = time.perf_counter()
        env.engine.bm25(text)
        search_ms.append((time.perf_counter() - start) * 1000)
    return {
        "products": len(env.catalog.products),
        **median_p95("step_ms", step_ms),
        **median_p95("purchase_ms", purchase_ms),
        **median_p95("purchase_untagged_ms", untagged_ms),
        "search_step_ms_median": statistics.median(search_step_ms),
        **median_p95("search_ms", search_ms),
        "expert_mean_score": statistics.mean(scores),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 100000])
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    warm_up = make("webshop", split="test")
    measure(warm_up, 2, 20)  # the first untagged reward imports spaCy and loads the pipeline: keep it out
    print(json.dumps({"nouns": warm_up.nouns}))
    rows = [{"catalog": "bundled", **measure(make("webshop", split="train"), args.episodes, args.queries)}]
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            data_dir, os.environ["EXPBANK_CACHE"] = Path(tmp) / "data", str(Path(tmp) / "cache")
            data_dir.mkdir()
            write_synthetic_catalog(data_dir, size)
            start = time.perf_counter()
            catalog = load_catalog(str(data_dir), "small", True)  # cached: the env below reuses it
            tag_start = time.perf_counter()
            title_nouns(catalog, noun_source())  # tag every title and save the table
            tag_s = time.perf_counter() - tag_start
            # goals and index; the table is read back; a machine without a spaCy pipeline times the fallback
            env = make("webshop", split="test", data_dir=str(data_dir), allow_fallback_nouns=True)
            open_s = time.perf_counter() - start
            start = time.perf_counter()
            SearchEngine(catalog.products, index_cache_dir(catalog.file_hashes[catalog.items_file]))
            index_reload_s = time.perf_counter() - start
            start = time.perf_counter()
            title_nouns(catalog, env.nouns)
            nouns_reload_s = time.perf_counter() - start
            row = {
                "catalog": f"synthetic-{size}",
                "open_s": open_s,
                "tag_s": tag_s,
                "index_reload_s": index_reload_s,
                "nouns_reload_s": nouns_reload_s,
            }
            rows.append({**row, **measure(env, args.episodes, args.queries)})
    for row in rows:
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}))


if __name__ == "__main__":
    main()
