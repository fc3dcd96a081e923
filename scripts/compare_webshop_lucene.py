"""Compare expbank's WebShop search with Lucene 8 itself (EnglishAnalyzer, BM25 k1 0.9 b 0.4, ties by id).

    apt-get install liblucene8-java openjdk-17-jdk-headless     # Lucene 8 jars under /usr/share/java
    python scripts/compare_webshop_lucene.py [--synthetic 10000] [--per-class 200] [--seed 0]

Compiles ``scripts/lucene_search/LuceneSearch.java`` against the Debian jars, indexes the bundled catalog
and a synthetic catalog (English-like text with possessives, prices, sizes, hyphens, symbols, accents and
emoji, and duplicated products so that equal scores occur) in both engines, and runs six query classes on
each: instructions with and without the price clause, 3-6 keywords from a product's text, titles, random
queries (catalog words, unknown words, punctuation) and stop-word queries. Prints, per catalog and class,
the share of queries whose results page 1 (10 asins, in order) is identical, whose top 50 is identical,
and whose top-50 scores are bit-identical floats (and, as "tied", how many of Lucene's top 50 hold two
equal scores, i.e. where the tie order by asin matters); then the share of documents and queries that the
two analyzers turn into identical term lists.
"""

from __future__ import annotations

import argparse
import base64
import glob
import random
import re
import string
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from expbank.envs.webshop.analysis import STOP_WORDS, analyze
from expbank.envs.webshop.catalog import load_catalog
from expbank.envs.webshop.goals import load_goals
from expbank.envs.webshop.search import SearchEngine, document_text

JAVA_SOURCE = Path(__file__).resolve().parent / "lucene_search" / "LuceneSearch.java"
PAGE = 10
PRICE_CLAUSE = re.compile(r", and price lower than [\d.]+ dollars$")
TRICKY = [
    "women's", "men’s", "kid's", "40.00", "1,000", "3.5oz", "12-pack", "2x", "x-large", "wi-fi", "e.g.",
    "u.s.a.", "ratio:1", "a:b", "snake_case", "100%", "$19.99", "&", "/", "-", "®", "™", "©", "★★★★★", "°f",
    "café", "crème", "naïve", "jalapeño", "über", "❤️", "👍🏽", "✔", "中文", "カタカナ", "it's", "don't",
    "o'clock", "rock'n'roll", "24/7", "5'11", "1/2\"", "(new)", "[2-pack]", "#1", "...", "–", "—",
]


def lucene_classpath(build: Path) -> str:
    jars = [
        next(iter(sorted(glob.glob(f"/usr/share/java/lucene-{name}-8*.jar"))), None)
        for name in ("core", "analyzers-common")
    ]
    if None in jars:
        raise SystemExit("Lucene 8 jars not found under /usr/share/java: apt-get install liblucene8-java")
    classpath = ":".join(jars)
    subprocess.run(["javac", "-d", str(build), "-cp", classpath, str(JAVA_SOURCE)], check=True)
    return f"{classpath}:{build}"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def lucene_analyze(classpath: str, texts: list[str]) -> list[list[str]]:
    lines = "".join(b64(t) + "\n" for t in texts).encode()
    out = subprocess.run(["java", "-cp", classpath, "LuceneSearch", "analyze"], input=lines,
                         capture_output=True, check=True).stdout.decode().split("\n")
    return [line.split("\t") if line else [] for line in out[: len(texts)]]


def lucene_search(classpath: str, work: Path, products: list[dict], queries: list[str]) -> list[list[tuple[str, int]]]:
    (work / "docs").write_text("".join(f"{p['asin']}\t{b64(document_text(p))}\n" for p in products))
    (work / "queries").write_text("".join(b64(q) + "\n" for q in queries))
    out = subprocess.run(["java", "-cp", classpath, "LuceneSearch", "search", str(work / "docs"),
                          str(work / "queries"), "50"], capture_output=True, text=True, check=True).stdout
    rows = out.split("\n")[: len(queries)]
    return [[(hit.split(":")[0], int(hit.split(":")[1], 16)) for hit in row.split()] for row in rows]


def synthetic_products(n: int, vocabulary: list[str], rng: random.Random) -> list[dict]:
    """English-like products; every 20th repeats an earlier one's text under a new asin (exact ties)."""
    def text(lo: int, hi: int) -> str:
        words = [rng.choice(TRICKY) if rng.random() < 0.08 else rng.choice(vocabulary) for _ in range(rng.randint(lo, hi))]
        return " ".join(w.capitalize() if rng.random() < 0.2 else w for w in words)

    products: list[dict] = []
    for _ in range(n):
        asin = "B0" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=8))
        if products and rng.random() < 0.05:
            products.append({**rng.choice(products), "asin": asin})
            continue
        options = {}
        if rng.random() < 0.5:
            options["color"] = rng.sample(["navy blue", "black", "heather grey", "white", "rose pink"], 2)
            options["size"] = rng.sample(["small", "medium", "large", "x-large", "3.4 fl oz (pack of 2)"], 2)
        products.append({"asin": asin, "Title": text(3, 20), "Description": text(0, 150),
                         "BulletPoints": [text(2, 12) for _ in range(rng.randint(0, 3))], "options": options})
    return products


def query_classes(products: list[dict], instructions: list[str], vocabulary: list[str],
                  per_class: int, rng: random.Random) -> dict[str, list[str]]:
    def sample(items: list[str]) -> list[str]:
        return rng.sample(items, min(per_class, len(items)))

    stop = sorted(STOP_WORDS)
    plain = [PRICE_CLAUSE.sub("", i) for i in instructions]
    return {
        "instruction": sample(plain),
        "instruction+price": sample([i for i in instructions if PRICE_CLAUSE.search(i)]),
        "keywords 3-6": [" ".join(rng.sample(re.findall(r"\S+", document_text(p)) * 6, rng.randint(3, 6)))
                         for p in rng.choices(products, k=per_class)],
        "title": [p["Title"].lower() for p in rng.sample(products, min(per_class, len(products)))],
        "random": [" ".join(rng.choice([rng.choice(vocabulary), rng.choice(TRICKY),
                                        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))),
                                        rng.choice(string.punctuation)]) for _ in range(rng.randint(1, 8)))
                   for _ in range(per_class)],
        "stop words": [" ".join(rng.choice(stop + ["'s", "?", "-", "&", "zzqx"]) for _ in range(rng.randint(1, 6)))
                       for _ in range(per_class)],
    }


def compare(name: str, products: list[dict], classes: dict[str, list[str]], classpath: str, work: Path) -> list[int]:
    engine = SearchEngine(products)
    row_of = {p["asin"]: i for i, p in enumerate(products)}
    totals = [0, 0, 0, 0, 0]
    print(f"\n{name} ({len(products)} products)")
    print(f"{'class':<18}{'queries':>8}{'page 1':>9}{'top 50':>9}{'scores':>9}{'tied':>7}")
    for label, queries in classes.items():
        reference = lucene_search(classpath, work, products, queries)
        page = top = bits = tied = 0
        for query, hits in zip(queries, reference, strict=True):
            tied += len({score for _, score in hits}) < len(hits)
            ours = engine.bm25(query)
            lucene = [asin for asin, _ in hits]
            page += ours[:PAGE] == lucene[:PAGE]
            top += ours == lucene
            scores = engine.scores(query).view(np.uint32)
            bits += all(int(scores[row_of[asin]]) == bits_ for asin, bits_ in hits)
        n = len(queries)
        print(f"{label:<18}{n:>8}{page / n:>9.1%}{top / n:>9.1%}{bits / n:>9.1%}{tied:>7}")
        totals = [a + b for a, b in zip(totals, (n, page, top, bits, tied), strict=True)]
    n, page, top, bits, tied = totals
    print(f"{'all':<18}{n:>8}{page / n:>9.1%}{top / n:>9.1%}{bits / n:>9.1%}{tied:>7}")
    texts = [document_text(p) for p in products] + [q for qs in classes.values() for q in qs]
    same = sum(a == b for a, b in zip(map(analyze, texts), lucene_analyze(classpath, texts), strict=True))
    print(f"analyzer: identical terms for {same / len(texts):.2%} of {len(texts)} documents and queries")
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=10000, help="products in the synthetic catalog")
    parser.add_argument("--per-class", type=int, default=200, help="queries per class and catalog")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    catalog = load_catalog(None, "small", True)
    goals = [*load_goals(None, "small", "human"), *load_goals(None, "small", "synthetic")]
    instructions = sorted({g["instruction_text"].lower() for g in goals})
    vocabulary = sorted({w for p in catalog.products for w in re.findall(r"[a-z]+", document_text(p))})
    synthetic = synthetic_products(args.synthetic, vocabulary, rng)
    synthetic_instructions = [
        f"i need {p['Title'].lower()}" + (f", and price lower than {rng.randint(1, 99) * 10}.00 dollars"
                                          if rng.random() < 0.7 else "")
        for p in rng.sample(synthetic, min(4 * args.per_class, len(synthetic)))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        classpath = lucene_classpath(work)
        totals = [
            compare("bundled catalog", catalog.products,
                    query_classes(catalog.products, instructions, vocabulary, args.per_class, rng), classpath, work),
            compare("synthetic catalog", synthetic,
                    query_classes(synthetic, synthetic_instructions, vocabulary, args.per_class, rng), classpath, work),
        ]
    n, page = sum(t[0] for t in totals), sum(t[1] for t in totals)
    print(f"\npage 1 identical for {page}/{n} queries ({page / n:.2%})")


if __name__ == "__main__":
    main()
