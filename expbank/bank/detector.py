"""The write gate's learned detector: is a window of text an instruction aimed at the actor?

One logistic regression per head scores each window (a sentence, or two adjacent ones) from the bank's own
MiniLM sentence vector (paraphrases, styles no rule names) next to hashed character n-grams (other languages,
which MiniLM reads poorly, and broken spellings). There are two heads: ``obs`` for observation text, where
even advice is foreign, and ``any`` for text the summariser wrote, where advice is normal.

The weights are fitted by ``scripts/gate_corpus.py`` and shipped as ``data/gate_detector.npz`` with the
sha256 of the corpus they were fitted on; scoring is deterministic. Embeddings are cached per process, so
the many windows that repeat across entries (room descriptions, page chrome) are embedded once.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from expbank.bank.embed import DEFAULT_EMBEDDER, get_embedder
from expbank.bank.injection import sentences

WEIGHTS = Path(__file__).resolve().parent / "data" / "gate_detector.npz"
HEADS = ("obs", "any")
N_FEATURES = 2**18
NGRAMS = (2, 5)
CACHE_LIMIT = 200_000
HARD = 0.25  # a fitted negative scoring above this weighs more in the next round
# The operating point. Fitted negatives end below HARD, but unseen product copy scores higher than fitted
# text: at 0.5 and 0.7 imperative copy and some non-English titles were flagged, at 0.8 far fewer.
THRESHOLD = 0.8


Window = tuple[str, ...]  # one sentence, or two adjacent ones


def windows(pieces: Sequence[str]) -> list[Window]:
    """Every sentence of the pieces, in order, and every pair of adjacent sentences (across pieces too):
    an instruction split over two sentences, fields or steps is scored whole."""
    units = [s for piece in pieces for s in sentences(piece)]
    return list(dict.fromkeys([(u,) for u in units] + list(zip(units, units[1:], strict=False))))


@functools.lru_cache(maxsize=1)
def _hasher():
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(analyzer="char_wb", ngram_range=NGRAMS, n_features=N_FEATURES,
                             alternate_sign=False, norm="l2", lowercase=True)


def ngram_features(texts: Sequence[str]):
    """Sparse L2-normalised hashed character n-gram counts (no fitted vocabulary: nothing to ship)."""
    return _hasher().transform(list(texts))


_cache: dict[str, np.ndarray] = {}


def embed(windows_: Sequence[Window]) -> np.ndarray:
    """MiniLM vector of each window: its sentences' vectors summed and renormalised (a pair costs no extra
    encoding), with one batched call for the sentences not cached yet."""
    missing = list(dict.fromkeys(s for w in windows_ for s in w if s not in _cache))
    if missing:
        if len(_cache) + len(missing) > CACHE_LIMIT:
            _cache.clear()
        _cache.update(zip(missing, get_embedder(DEFAULT_EMBEDDER).encode(missing), strict=True))
    if not windows_:
        return np.zeros((0, get_embedder(DEFAULT_EMBEDDER).dim), dtype=np.float32)
    vectors = np.stack([np.sum([_cache[s] for s in w], axis=0) for w in windows_])
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-9)


@dataclass(frozen=True)
class Detector:
    """Fitted weights, one row per head in :data:`HEADS` order: a logistic regression over the window's
    MiniLM vector (scaled by ``alpha``) next to its hashed n-grams (only features seen in the fit kept)."""

    emb_w: np.ndarray       # (heads, 384)
    ng_idx: np.ndarray      # (nnz,) hashed n-gram features with a weight
    ng_w: np.ndarray        # (heads, nnz)
    bias: np.ndarray        # (heads,)
    threshold: np.ndarray   # (heads,) probability from which a window is flagged
    alpha: float
    corpus_sha256: str

    def probabilities(self, windows_: Sequence[Window]) -> np.ndarray:
        """(len(windows_), heads) probabilities that a window is an instruction aimed at the actor."""
        if not windows_:
            return np.zeros((0, len(HEADS)))
        grams = ngram_features([" ".join(w) for w in windows_])[:, self.ng_idx]
        logits = self.alpha * embed(windows_) @ self.emb_w.T + np.asarray(grams @ self.ng_w.T) + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -40, 40)))

    def shares(self, windows_: Sequence[Window], head: str) -> np.ndarray:
        """Each window's probability for ``head`` as a share of its threshold (>= 1 means flagged)."""
        h = HEADS.index(head)
        return self.probabilities(windows_)[:, h] / self.threshold[h]

    def flags(self, windows_: Sequence[Window], head: str) -> np.ndarray:
        """Which windows the ``head`` (``obs`` or ``any``) flags."""
        return self.shares(windows_, head) >= 1.0

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, emb_w=self.emb_w.astype(np.float32), ng_idx=self.ng_idx,
                            ng_w=self.ng_w.astype(np.float32), bias=self.bias, threshold=self.threshold,
                            alpha=np.array(self.alpha), corpus_sha256=np.array(self.corpus_sha256),
                            embedder=np.array(DEFAULT_EMBEDDER))
        return path


@functools.lru_cache(maxsize=2)
def load(path: Path = WEIGHTS) -> Detector:
    data = np.load(path)
    return Detector(emb_w=data["emb_w"], ng_idx=data["ng_idx"], ng_w=data["ng_w"], bias=data["bias"],
                    threshold=data["threshold"], alpha=float(data["alpha"]), corpus_sha256=str(data["corpus_sha256"]))


# ------------------------------------------------------------------------------------------------ fitting

def training_windows(rows: list[dict]) -> tuple[list[Window], np.ndarray, list[dict]]:
    """Corpus rows -> (windows, labels, row of each window): the gate scores windows, so the fit does too.

    A positive row's whole text is a window as well (it is one injection); duplicates keep the first row.
    """
    from expbank.bank.injection import plain

    texts: dict[Window, tuple[int, dict]] = {}
    for row in rows:
        text = plain(row["text"])
        pieces = windows([text]) + ([(text,)] if row["label"] and len(text.split()) <= 60 else [])
        for window in pieces:
            texts.setdefault(window, (row["label"], row))
    return list(texts), np.array([v[0] for v in texts.values()]), [v[1] for v in texts.values()]


def fit(rows: list[dict], corpus_sha256: str, out: Path | None = None, alpha: float = 1.0, C: float = 4.0,
        positive_weight: float = 3.0, rounds: int = 3) -> Detector:
    """Fit both heads on corpus ``rows``, reweighting negatives that still score above ``HARD`` for ``rounds``.
    A head's threshold is ``THRESHOLD``, or just above the highest fitted negative if one scores higher."""
    import scipy.sparse as sparse
    from sklearn.linear_model import LogisticRegression

    texts, labels, origin = training_windows(rows)
    vectors, grams = embed(texts), ngram_features([" ".join(w) for w in texts])
    used = np.unique(grams.nonzero()[1])
    features = sparse.hstack([sparse.csr_matrix(alpha * vectors), grams[:, used]]).tocsr()
    dim = vectors.shape[1]
    weights, biases, thresholds = [], [], []
    for head in HEADS:
        keep = np.array([_in_head(row, head) for row in origin])
        x, y = features[keep], labels[keep]
        weight = np.where(y == 1, positive_weight, 1.0)
        for _ in range(rounds):  # negatives the model still scores high weigh more in the next round
            model = LogisticRegression(C=C, max_iter=5000)
            model.fit(x, y, sample_weight=weight)
            scores = model.predict_proba(x)[:, 1]
            weight = np.where((y == 0) & (scores >= HARD), weight * 4, weight)
        negatives = scores[y == 0]
        weights.append(model.coef_[0])
        biases.append(model.intercept_[0])
        thresholds.append(max(THRESHOLD, float(negatives.max()) + 0.01) if len(negatives) else THRESHOLD)
    weights_ = np.stack(weights)
    detector = Detector(emb_w=weights_[:, :dim], ng_idx=used.astype(np.int32), ng_w=weights_[:, dim:],
                        bias=np.array(biases), threshold=np.array(thresholds), alpha=alpha,
                        corpus_sha256=corpus_sha256)
    if out is not None:
        detector.save(out)
    return detector


def _in_head(row: dict, head: str) -> bool:
    """Rows a head is fitted on: ``obs`` leaves out advice negatives, ``any`` leaves out bare commands."""
    return row["head"] == "both" or row["head"] == head or (row["head"] == "any" and row["label"] == 1)
