"""Retrieval (docs/design.md §4) and the ``<experience>`` block (docs/design.md §5).

Scores are cosine similarities: with ``task`` and ``observation`` the mean of cos(task, entry.task) and
cos(observation, entry.situation); a free-text ``query`` is matched against situations. A lexical term is
added: ``lexical_weight`` × the Jaccard overlap of the word bigrams of the observation (or query) and the
entry's situation. Dense embeddings blur lists of named things: two ALFWorld rooms whose receptacle lists
differ by one drawer sit at cosine ~0.98, and only the exact words ("drawer 2") tell them apart. Candidates come
from each key's faiss index (over-fetched, doubled until enough pass the filters), so tombstones,
quarantined entries, other kinds and excluded tasks never crowd out results.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from expbank.bank.entry import KINDS, Entry
from expbank.bank.keys import task_key_text
from expbank.bank.render import render_item
from expbank.bank.store import Bank
from expbank.errors import UserError

Key = Literal["both", "task", "situation"]
#: The bank arm's kinds. Raw replay asks for ``("trajectory",)`` explicitly, so the arms never mix.
DEFAULT_KINDS: tuple[str, ...] = ("strategy", "warning")
LEXICAL_WEIGHT = 0.5  # chosen on the households family's train split (recall of the own room's entry at k=2)
_WORD = re.compile(r"\w+")


def bigrams(text: str) -> set[tuple[str, str]]:
    words = _WORD.findall(text.lower())
    return set(zip(words, words[1:], strict=False))


def lexical_overlap(query: set[tuple[str, str]], text: str) -> float:
    """Jaccard overlap of word bigrams (0 when either side has none)."""
    other = bigrams(text)
    union = len(query | other)
    return len(query & other) / union if union else 0.0


@dataclass(frozen=True)
class Hit:
    entry: Entry
    score: float        # the ranking score: similarity + λ · utility
    similarity: float

    def as_dict(self) -> dict:
        return {**self.entry.model_dump(), "score": round(self.score, 6), "similarity": round(self.similarity, 6)}


def search(bank: Bank, query: str | None = None, task: str | None = None, observation: str | None = None,
           k: int = 3, key: Key = "both", kinds: Iterable[str] | None = None,
           exclude_task_ids: Collection[str] = (), utility_weight: float | None = None,
           env: str | None = None, sources: Collection[str] | None = None,
           successes_only: bool = False, keep: Callable[[Entry], bool] | None = None,
           lexical_weight: float = LEXICAL_WEIGHT) -> list[Hit]:
    """Top-``k`` trusted entries; see the module docstring for the score. ``keep``: a further filter (the
    agent's room counterfactual uses it)."""
    kinds = tuple(kinds) if kinds else DEFAULT_KINDS
    bad = [kind for kind in kinds if kind not in KINDS]
    if bad:
        raise UserError(f"unknown kind(s) {bad}; choose from {list(KINDS)}")
    if key not in ("both", "task", "situation"):
        raise UserError(f"unknown key '{key}'; choose both, task or situation")
    vectors = _query_vectors(bank, query, task, observation, key)
    if not vectors or len(bank) == 0 or k <= 0:
        return []
    weight = bank.settings.utility_weight if utility_weight is None else utility_weight
    excluded = set(exclude_task_ids)

    def allowed(entry: Entry | None) -> bool:
        return (entry is not None and entry.provenance.trust == "trusted" and entry.kind in kinds
                and (env is None or entry.env == env)
                and (sources is None or entry.provenance.source in sources)
                and (not successes_only or entry.outcome.success)
                and not excluded.intersection(entry.provenance.task_ids)
                and (keep is None or keep(entry)))

    fetch = max(4 * k, 32)
    while True:
        rows: dict[int, None] = {}
        for name, vector in vectors.items():
            _, found = bank.search_key(name, vector[None, :], fetch)
            rows.update(dict.fromkeys(int(r) for r in found[0] if r >= 0))
        candidates = [r for r in rows if allowed(bank.entry_at(r))]
        exhausted = fetch >= bank.num_rows
        if len(candidates) >= k + 8 or exhausted:
            break
        fetch *= 4
    if not candidates:
        return []
    similarity = np.zeros(len(candidates), dtype=np.float32)
    for name, vector in vectors.items():
        similarity += bank.vectors(name, candidates) @ vector
    similarity /= len(vectors)
    situation_text = query if query is not None else observation
    words = bigrams(situation_text) if lexical_weight and situation_text and key != "task" else None
    hits = []
    for row, sim in zip(candidates, similarity, strict=True):
        entry = bank.entry_at(row)
        if words is not None:
            sim += lexical_weight * lexical_overlap(words, entry.situation)
        sim = float(sim)
        hits.append(Hit(entry, sim + weight * entry.stats.utility, sim))
    hits.sort(key=lambda h: (-h.score, h.entry.id))
    return hits[:k]


def _query_vectors(bank: Bank, query: str | None, task: str | None, observation: str | None,
                   key: Key) -> dict[str, np.ndarray]:
    """Query vectors by index key: ``query`` → situation; ``task`` → task; ``observation`` → situation."""
    if query is not None and (task is not None or observation is not None):
        raise UserError("pass either a query or a task (with an optional observation), not both")
    if query is not None:
        texts = {"situation": query} if key != "task" else {"task": query}
    elif task is not None:
        texts = {"task": task}
        if observation is not None and key != "task":
            texts["situation"] = observation
        if key == "situation":
            texts = {"situation": observation if observation is not None else task}
    else:
        raise UserError("pass a query, or a task (with an optional observation)")
    if "task" in texts:
        texts["task"] = task_key_text(texts["task"])
    names = list(texts)
    encoded = bank.embedder.encode_each([texts[name] for name in names])
    return dict(zip(names, encoded, strict=True))


def format_experience(entries: Iterable[Entry], source_chars: int = 200, max_tokens: int = 256) -> str:
    """The ``<experience>`` block of docs/design.md §5 (bank and raw-replay arms alike).

    Each item is :func:`~expbank.bank.render.render_item`, the text the write gate scanned: the source
    observation quoted as data, guidance (with its actions) capped at ``max_tokens``, the same cap for both arms.
    """
    lines = ["<experience>"]
    lines += [render_item(i, entry, source_chars, max_tokens) for i, entry in enumerate(entries, start=1)]
    lines.append("</experience>")
    return "\n".join(lines)
