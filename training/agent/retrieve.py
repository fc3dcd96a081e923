"""What an actor's memory arm retrieves: nothing, raw trajectory excerpts, or distilled bank entries.

The bank is a directory (opened read-only: evaluation never changes utility counters) or the URL of an
``expbank serve`` service. ``source`` is the source-observation counterfactual: show each entry's real
source observation (``matched``), none, or another entry's (``random``).

``rooms="other"`` is the wrong-facts counterfactual: entries made in the episode's own room (ALFWorld's scene,
``envs.alfworld.games.room_of``) are never shown, so the policy sees the same format with other rooms' facts.
``source_chars`` and ``guidance_tokens`` cap each rendered item, the same for raw replay and the bank.

A service is asked for ``/stats`` when the memory is opened, so a wrong URL or token fails before a run
starts, and the split check and the fingerprint get the same answers as for a directory. A service that
fails later raises :class:`RetrievalError` (one line); a rollout records it on that episode only.
"""

from __future__ import annotations

import os
import random

from expbank.bank.entry import Entry
from expbank.bank.retrieval import format_experience, search
from expbank.bank.store import Bank, content_hash, is_bank, is_service_url
from expbank.config import MemoryConfig
from expbank.envs.alfworld.games import room_of
from expbank.errors import UserError

KINDS_BY_MODE = {"raw": ("trajectory",), "bank": ("strategy", "warning")}
NO_EXPERIENCE = "<experience>\n(no matching experience)\n</experience>"


def made_in_room(entry: Entry, room: str) -> bool:
    """Whether ``entry`` was made from an episode in ``room`` (ALFWorld's scene: ``games.room_of``)."""
    return any(room_of(task_id) == room for task_id in entry.provenance.task_ids)


class RetrievalError(UserError):
    """The bank service could not be reached or refused a request."""


class Memory:
    """Retrieval for one arm (memory mode ``raw`` or ``bank``), with the source counterfactual applied."""

    def __init__(self, mode: str, bank: str, k: int = 3, source: str = "matched", seed: int = 0,
                 api_key_env: str = "EXPBANK_TOKEN", rooms: str = "any", source_chars: int = 200,
                 guidance_tokens: int = 256, observation: str = "current"):
        if mode not in KINDS_BY_MODE:
            raise ValueError(f"memory mode {mode!r} retrieves nothing")
        if source not in ("matched", "none", "random"):
            raise UserError(f"memory.source must be matched, none or random, not {source!r}")
        if rooms not in ("any", "other"):
            raise UserError(f"memory.rooms must be any or other, not {rooms!r}")
        if observation not in ("current", "first"):
            raise UserError(f"memory.observation must be current or first, not {observation!r}")
        self.mode, self.k, self.source, self.rooms, self.observation = mode, k, source, rooms, observation
        self.source_chars, self.guidance_tokens = source_chars, guidance_tokens
        self.kinds = KINDS_BY_MODE[mode]
        self._rng = random.Random(seed)
        self.location = bank
        self._api_key_env = api_key_env
        if is_service_url(bank):
            import httpx

            token = os.environ.get(api_key_env)
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            self._client = httpx.Client(base_url=bank.rstrip("/"), headers=headers, timeout=30,
                                        transport=httpx.HTTPTransport(retries=2))  # connection failures only
            self.bank = None
            self._stats = self._call("GET", "/stats")
        else:
            if not is_bank(bank):
                raise UserError(f"memory.bank: {bank} is not a bank directory (no manifest.json)")
            self.bank = Bank.open(bank, writable=False)
        self._sources: list[str] | None = None

    def _call(self, method: str, route: str, body: dict | None = None) -> dict:
        """One request to the service; every failure is a one-line :class:`RetrievalError`."""
        import httpx

        where = f"memory.bank service {self.location}{route}"
        try:
            response = self._client.request(method, route, json=body)
        except httpx.HTTPError as err:
            raise RetrievalError(f"{where}: {type(err).__name__}: {err}") from None
        if response.status_code == 401:
            raise RetrievalError(f"{where}: HTTP 401, the service wants a token: put it in "
                                 f"${self._api_key_env}" + (" (the one set is refused)"
                                                            if os.environ.get(self._api_key_env) else ""))
        if response.status_code != 200:
            raise RetrievalError(f"{where}: HTTP {response.status_code}: {response.text[:200]!r}")
        try:
            return response.json()
        except ValueError:
            raise RetrievalError(f"{where}: not JSON: {response.text[:200]!r}") from None

    @classmethod
    def from_config(cls, memory: MemoryConfig, seed: int, bank: str | None = None) -> Memory:
        """The memory a config's ``memory`` section describes (``bank`` overrides ``memory.bank``)."""
        return cls(memory.mode, bank or memory.bank, k=memory.k, source=memory.source, seed=seed,
                   rooms=memory.rooms, source_chars=memory.source_chars, guidance_tokens=memory.guidance_tokens,
                   observation=memory.observation)

    def manifest_hash(self) -> str | None:
        """The bank's content hash (recorded in run fingerprints)."""
        if self.bank is None:
            return self._stats.get("content_hash")
        return content_hash(self.location)

    def source_splits(self) -> set[tuple[str, str]]:
        """The (env, split) pairs whose episodes made the bank's entries, for a directory or a service."""
        if self.bank is not None:
            return self.bank.source_splits()
        sources = self._stats.get("sources")
        if not isinstance(sources, list):
            raise RetrievalError(f"memory.bank service {self.location}/stats does not report the sources of its "
                                 "entries (an older expbank serve?); serve the bank with this expbank")
        return {(str(env), str(split)) for env, split in sources}

    def query_observation(self, current: str, first: str) -> str:
        """The observation a step retrieves with: its own, or with ``observation="first"`` the episode's first."""
        return first if self.observation == "first" else current

    def retrieve(self, task: str | None = None, observation: str | None = None, query: str | None = None,
                 task_id: str | None = None, env: str | None = None) -> list[Entry]:
        """Top-k entries for a step of task ``task_id`` in environment ``env``: only entries made in that
        environment (one bank may hold both), never entries made from that task, and with ``rooms="other"``
        none made in its room."""
        excluded = (task_id,) if task_id else ()
        room = room_of(task_id) if task_id and self.rooms == "other" else None

        def elsewhere(entry: Entry) -> bool:
            return room is None or not made_in_room(entry, room)

        if self.bank is not None:
            hits = search(self.bank, query=query, task=None if query else task,
                          observation=None if query else observation, k=self.k, kinds=self.kinds,
                          exclude_task_ids=excluded, keep=elsewhere, env=env)
            entries = [hit.entry for hit in hits]
        else:  # a service filters by task id; the room filter runs here, on an over-fetched list
            fetch = self.k if room is None else 8 * self.k
            body = {"k": fetch, "kinds": list(self.kinds), "exclude_task_ids": list(excluded), "env": env}
            body.update({"query": query} if query else {"task": task, "observation": observation})
            entries = [Entry.model_validate({k: v for k, v in e.items() if k not in ("score", "similarity")})
                       for e in self._call("POST", "/retrieve", body)["entries"]]
            entries = [e for e in entries if elsewhere(e)][:self.k]
        return [self._with_source(entry) for entry in entries]

    def block(self, entries: list[Entry]) -> str:
        """The ``<experience>`` block for the entries shown, at this memory's caps (an explicit empty block
        when none matched)."""
        return format_experience(entries, self.source_chars, self.guidance_tokens) if entries else NO_EXPERIENCE

    def source_similarities(self, observation: str, entries: list[Entry]) -> list[float]:
        """Cosine of the current observation to each shown entry's source observation (local banks only)."""
        sources = [e.source_observation for e in entries if e.source_observation]
        if self.bank is None or not sources:
            return []
        vectors = self.bank.embedder.encode_each([observation, *sources])
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

