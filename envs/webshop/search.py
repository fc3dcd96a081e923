"""BM25 product search over the document text the original indexes with Lucene.

The original (pyserini 0.17, ``search_engine/convert_product_file_format.py``) indexes, per product,
``lower(title + " " + description + " " + bullets[0] + " " + "name: v1, v2, and name2: ...")`` with
Lucene's BM25 (k1=0.9, b=0.4), Porter stemming and Lucene's 33 English stop words, and returns the top 50
hits. We do the same with bm25s (``method="lucene"``). Rankings are close to, not identical with, Lucene's
(Lucene stores document lengths lossily). Ties are broken by catalog order so results are deterministic.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np

SEARCH_RETURN_N = 50
K1, B = 0.9, 0.4
TOKEN_PATTERN = r"(?u)\b\w+\b"  # Lucene's StandardTokenizer keeps one-character tokens
STEMMER = "porter"  # pyserini's DefaultEnglishAnalyzer uses Lucene's PorterStemFilter
INDEX_VERSION = 1  # bump when the document text, the tokenisation or the BM25 settings change
DONE_MARKER = "complete.json"


def index_cache_dir(items_hash: str) -> Path:
    """Where the index of a product file with content hash ``items_hash`` is kept under ``$EXPBANK_CACHE``."""
    import bm25s

    root = Path(os.environ.get("EXPBANK_CACHE") or Path.home() / ".cache" / "expbank")
    return root / "webshop-bm25" / f"{items_hash}-v{INDEX_VERSION}-bm25s{bm25s.__version__}"


def document_text(product: dict[str, Any]) -> str:
    """The ``contents`` field the original indexes for one product."""
    option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product["options"].items())
    first_bullet = product["BulletPoints"][0] if product["BulletPoints"] else ""
    return " ".join([product["Title"], product["Description"], first_bullet, option_text]).lower()


class SearchEngine:
    """Top-50 BM25 search plus the original's ``<r>``/``<a>``/``<c>``/``<q>`` query prefixes."""

    def __init__(self, products: list[dict[str, Any]], cache_dir: Path | None = None):
        """Index ``products``; with ``cache_dir``, reuse the index saved there (or save it there)."""
        import bm25s
        import Stemmer
        from bm25s.stopwords import STOPWORDS_EN
        from bm25s.tokenization import Tokenizer

        self.products = products
        self._tokenizer = Tokenizer(
            splitter=TOKEN_PATTERN, stopwords=list(STOPWORDS_EN), stemmer=Stemmer.Stemmer(STEMMER)
        )
        if cache_dir is not None and (cache_dir / DONE_MARKER).is_file():
            self._tokenizer.load_vocab(str(cache_dir))
            self._bm25 = bm25s.BM25.load(str(cache_dir), show_progress=False)
            return
        corpus = self._tokenizer.tokenize(
            [document_text(p) for p in products], return_as="ids", show_progress=False
        )
        self._bm25 = bm25s.BM25(k1=K1, b=B, method="lucene")
        self._bm25.index(corpus, show_progress=False)
        if cache_dir is not None:
            self._save(cache_dir)

    def _save(self, cache_dir: Path) -> None:
        """Write the index next to ``cache_dir`` and rename it into place, so readers never see half of it."""
        staging = cache_dir.with_name(f"{cache_dir.name}.tmp{os.getpid()}")
        self._tokenizer.save_vocab(str(staging))
        self._bm25.save(str(staging), show_progress=False)
        (staging / DONE_MARKER).write_text(json.dumps({"products": len(self.products)}))
        try:
            staging.rename(cache_dir)
        except OSError:  # another process saved it first
            shutil.rmtree(staging, ignore_errors=True)

    def bm25(self, text: str, k: int = SEARCH_RETURN_N) -> list[str]:
        """Asins of the top ``k`` products that match at least one query term."""
        ids = self._tokenizer.tokenize([text], update_vocab=False, return_as="ids", show_progress=False)
        scores = self._bm25.get_scores(ids[0])
        k = min(k, len(scores))
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        cutoff = scores[top].min()
        candidates = np.flatnonzero((scores >= cutoff) & (scores > 0))
        order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
        return [self.products[i]["asin"] for i in order]

    def top_n(self, keywords: list[str], rng: random.Random) -> list[str]:
        """What the original's ``get_top_n_product_from_keywords`` returns, as asins."""
        head, rest = keywords[0], " ".join(keywords[1:]).strip()
        if head == "<r>":
            chosen = rng.sample(self.products, k=min(SEARCH_RETURN_N, len(self.products)))
        elif head == "<a>":
            chosen = [p for p in self.products if rest in p["Attributes"]]
        elif head == "<c>":
            chosen = [p for p in self.products if p["category"] == keywords[1].strip()] if rest else []
        elif head == "<q>":
            chosen = [p for p in self.products if p["query"] == rest]
        else:
            return self.bm25(" ".join(keywords))
        return [p["asin"] for p in chosen]
