"""Product search as the original's: Lucene 8 BM25 over the text its indexing script writes per product.

The original (pyserini 0.17, ``search_engine/convert_product_file_format.py``) indexes, per product,
``lower(title + " " + description + " " + bullets[0] + " " + "name: v1, v2, and name2: ...")`` with the
English analyzer (``analysis.py``) and BM25 (k1 0.9, b 0.4). A query is a bag of words (one clause per
distinct term, boosted by its count); the top 50 hits are sorted by score, then by asin.

The scores here are the float32 numbers Lucene 8 computes: a document's length is stored in one byte
(``SmallFloat.intToByte4``: exact below 40, then 4 significant bits), and a term scores
``w - w / (1 + freq * inv)`` with ``w = boost * idf`` and ``inv = 1 / (k1 (1 - b + b len / avgdl))``,
summed over terms in double precision and rounded to float. bm25s keeps exact lengths and its own
arithmetic, so the many equal and nearly equal scores of short product texts would order differently;
hence this small numpy index instead of bm25s.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import regex

from .analysis import analyze

SEARCH_RETURN_N = 50
K1, B = 0.9, 0.4  # pyserini's defaults; Lucene holds them as float32
INDEX_VERSION = 2  # bump when the document text, the analysis or the scoring change
DONE_MARKER = "complete.json"
_INDEX_ARRAYS = ("indptr", "docs", "saturation", "idf", "asin_rank")


def _length_table() -> np.ndarray:
    """Document length each of the 256 norm bytes stands for (``SmallFloat.byte4ToInt``), as float32."""
    lengths = list(range(24))
    for code in range(256 - 24):
        mantissa, shift = code & 0x07, (code >> 3) - 1
        lengths.append(24 + (mantissa if shift < 0 else (mantissa | 0x08) << shift))
    return np.array(lengths, dtype=np.float32)


LENGTH_TABLE = _length_table()


def norm_bytes(lengths: np.ndarray) -> np.ndarray:
    """``SmallFloat.intToByte4`` of each length: the largest byte whose length does not exceed it."""
    return np.searchsorted(LENGTH_TABLE, lengths, side="right") - 1


def cache_root() -> Path:
    """``$EXPBANK_CACHE``, else ``~/.cache/expbank``: where what is built from a catalog is kept."""
    return Path(os.environ.get("EXPBANK_CACHE") or Path.home() / ".cache" / "expbank")


def index_cache_dir(items_hash: str) -> Path:
    """Where the index of a product file with content hash ``items_hash`` is kept under ``$EXPBANK_CACHE``
    (keyed by the regex version too: its Unicode tables decide word boundaries)."""
    return cache_root() / "webshop-lucene" / f"{items_hash}-v{INDEX_VERSION}-regex{regex.__version__}"


def document_text(product: dict[str, Any]) -> str:
    """The ``contents`` field the original indexes for one product."""
    option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product["options"].items())
    first_bullet = product["BulletPoints"][0] if product["BulletPoints"] else ""
    return " ".join([product["Title"], product["Description"], first_bullet, option_text]).lower()


class SearchEngine:
    """Top-50 BM25 search plus the original's ``<r>``/``<a>``/``<c>``/``<q>`` query prefixes."""

    def __init__(self, products: list[dict[str, Any]], cache_dir: Path | None = None):
        """Index ``products``; with ``cache_dir``, reuse the index saved there (or save it there)."""
        self.products = products
        if cache_dir is not None and (cache_dir / DONE_MARKER).is_file():
            arrays = np.load(cache_dir / "index.npz")
            self.indptr, self.docs, self.saturation, self.idf, self.asin_rank = (
                arrays[name] for name in _INDEX_ARRAYS
            )
            terms = json.loads((cache_dir / "terms.json").read_text())
        else:
            terms = self._build([document_text(p) for p in products])
            if cache_dir is not None:
                self._save(cache_dir, terms)
        self.terms = {term: row for row, term in enumerate(terms)}

    def _build(self, texts: list[str]) -> list[str]:
        """Postings per term (doc ids, ``1 + freq * inv``), idf per term; returns the terms in row order."""
        vocabulary: dict[str, int] = {}
        rows, docs, freqs = array("i"), array("i"), array("i")
        lengths = np.zeros(len(texts), dtype=np.int64)
        for doc, text in enumerate(texts):
            counts = Counter(analyze(text))
            lengths[doc] = sum(counts.values())
            rows.extend([vocabulary.setdefault(term, len(vocabulary)) for term in counts])
            docs.extend([doc] * len(counts))
            freqs.extend(counts.values())
        rows_np = np.frombuffer(rows, dtype=np.int32)
        order = np.argsort(rows_np, kind="stable")  # by term, doc ids ascending within a term
        doc_freq = np.bincount(rows_np, minlength=len(vocabulary))
        doc_count = np.count_nonzero(lengths)  # Lucene's docCount: documents with at least one term
        avgdl = np.float32(lengths.sum() / doc_count) if doc_count else np.float32(1)
        k1, b = np.float32(K1), np.float32(B)
        inverse = np.float32(1) / (k1 * ((np.float32(1) - b) + b * LENGTH_TABLE / avgdl))
        self.docs = np.frombuffer(docs, dtype=np.int32)[order]
        freq = np.frombuffer(freqs, dtype=np.int32)[order].astype(np.float32)
        self.saturation = np.float32(1) + freq * inverse[norm_bytes(lengths)][self.docs]
        self.indptr = np.concatenate([[0], np.cumsum(doc_freq)])
        self.idf = np.log(1 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5)).astype(np.float32)
        asins = [p["asin"] for p in self.products]
        self.asin_rank = np.argsort(np.argsort(np.array(asins), kind="stable")).astype(np.int32)
        return list(vocabulary)

    def _save(self, cache_dir: Path, terms: list[str]) -> None:
        """Write the index next to ``cache_dir`` and rename it into place, so readers never see half of it."""
        staging = cache_dir.with_name(f"{cache_dir.name}.tmp{os.getpid()}")
        staging.mkdir(parents=True, exist_ok=True)
        np.savez(staging / "index.npz", **{name: getattr(self, name) for name in _INDEX_ARRAYS})
        (staging / "terms.json").write_text(json.dumps(terms))
        (staging / DONE_MARKER).write_text(json.dumps({"products": len(self.products)}))
        try:
            staging.rename(cache_dir)
        except OSError:  # another process saved it first
            shutil.rmtree(staging, ignore_errors=True)

    def scores(self, text: str) -> np.ndarray:
        """Lucene's float32 score of every product for the query ``text`` (0 where no term matches)."""
        total = np.zeros(len(self.products))
        for term, count in Counter(analyze(text)).items():
            row = self.terms.get(term)
            if row is None:
                continue
            lo, hi = self.indptr[row], self.indptr[row + 1]
            weight = np.float32(count) * self.idf[row]
            total[self.docs[lo:hi]] += weight - weight / self.saturation[lo:hi]
        return total.astype(np.float32)

    def bm25(self, text: str, k: int = SEARCH_RETURN_N) -> list[str]:
        """Asins of the top ``k`` products that match at least one query term, by score and then asin."""
        scores = self.scores(text)
        hits = np.flatnonzero(scores)
        if len(hits) > k:
            cutoff = np.partition(scores[hits], len(hits) - k)[len(hits) - k]
            hits = hits[scores[hits] >= cutoff]
        order = hits[np.lexsort((self.asin_rank[hits], -scores[hits]))][:k]
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
