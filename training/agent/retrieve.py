"""What an actor's memory arm retrieves: nothing, raw trajectory excerpts, or distilled bank entries.

The bank is a directory (opened read-only: evaluation never changes utility counters) or the URL of an
``expbank serve`` service. ``source`` is the source-observation counterfactual: show each entry's real
source observation (``matched``), none, or another entry's (``random``).
"""

from __future__ import annotations

import random

from expbank.bank.entry import Entry
from expbank.bank.retrieval import search
from expbank.bank.store import Bank, content_hash, is_bank, is_service_url
from expbank.errors import UserError
from expbank.trajectory import parse_episode_id

KINDS_BY_MODE = {"raw": ("trajectory",), "bank": ("strategy", "warning")}


class Memory:
    """Retrieval for one arm (memory mode ``raw`` or ``bank``), with the source counterfactual applied."""

    def __init__(self, mode: str, bank: str, k: int = 3, source: str = "matched", seed: int = 0,
                 api_key_env: str = "EXPBANK_TOKEN"):
        if mode not in KINDS_BY_MODE:
            raise ValueError(f"memory mode {mode!r} retrieves nothing")
        if source not in ("matched", "none", "random"):
            raise UserError(f"memory.source must be matched, none or random, not {source!r}")
        self.mode, self.k, self.source = mode, k, source
        self.kinds = KINDS_BY_MODE[mode]
        self._rng = random.Random(seed)
        self._remote = is_service_url(bank)
        if self._remote:
            import os

            import httpx

            token = os.environ.get(api_key_env)
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            self._client = httpx.Client(base_url=bank.rstrip("/"), headers=headers, timeout=30)
            self.bank = None
        else:
            if not is_bank(bank):
                raise UserError(f"memory.bank: {bank} is not a bank directory (no manifest.json)")
            self.bank = Bank.open(bank, writable=False)
        self.location = bank
        self._sources: list[str] | None = None

    def manifest_hash(self) -> str | None:
        """The bank's content hash (recorded in run fingerprints)."""
        if self.bank is None:
            return self._client.get("/stats").json().get("content_hash")
        return content_hash(self.location)

    def source_splits(self) -> set[tuple[str, str]]:
        """The (env, split) pairs whose episodes made the bank's entries (local banks only)."""
        if self.bank is None:
            return set()
        pairs = set()
        for entry in self.bank.entries(include_quarantined=True):
            for episode_id in entry.provenance.episodes:
                parts = parse_episode_id(episode_id)
                pairs.add((parts.env, parts.split or "?"))
        return pairs

    def retrieve(self, task: str | None = None, observation: str | None = None, query: str | None = None,
                 exclude_task_ids: tuple[str, ...] = ()) -> list[Entry]:
        """Top-k entries for the step, the episode's own task excluded."""
        if self.bank is not None:
            hits = search(self.bank, query=query, task=None if query else task,
                          observation=None if query else observation, k=self.k, kinds=self.kinds,
                          exclude_task_ids=exclude_task_ids)
            entries = [hit.entry for hit in hits]
        else:
            body = {"k": self.k, "kinds": list(self.kinds), "exclude_task_ids": list(exclude_task_ids)}
            body.update({"query": query} if query else {"task": task, "observation": observation})
            response = self._client.post("/retrieve", json=body)
            response.raise_for_status()
            entries = [Entry.model_validate({k: v for k, v in e.items() if k not in ("score", "similarity")})
                       for e in response.json()["entries"]]
        return [self._with_source(entry) for entry in entries]

    def source_similarities(self, observation: str, entries: list[Entry]) -> list[float]:
        """Cosine of the current observation to each shown entry's source observation (local banks only)."""
        sources = [e.source_observation for e in entries if e.source_observation]
        if self.bank is None or not sources:
            return []
        vectors = self.bank.embedder.encode([observation, *sources])
        return [round(float(v @ vectors[0]), 6) for v in vectors[1:]]

    def _with_source(self, entry: Entry) -> Entry:
        if self.source == "matched":
            return entry
        if self.source == "none":
            return entry.model_copy(update={"source_observation": ""})
        if self._sources is None:
            pool = self.bank.entries() if self.bank is not None else []
            self._sources = sorted({e.source_observation for e in pool if e.source_observation})
        others = [s for s in self._sources if s != entry.source_observation]
        return entry.model_copy(update={"source_observation": self._rng.choice(others) if others else ""})

