"""Experience entries (docs/design.md §4): the unit the bank stores, dedups, scores and retrieves.

The id is a content hash, so the same advice distilled twice from the same episode gets the same id and
re-building a bank from the same trajectories is idempotent.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from expbank.bank.utility import utility

Kind = Literal["strategy", "warning", "trajectory"]
KINDS: tuple[str, ...] = ("strategy", "warning", "trajectory")
Trust = Literal["trusted", "quarantined"]
Source = Literal["expert", "random", "policy", "teacher", "human"]

_SPACE = re.compile(r"\s+")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Outcome(_Model):
    success: bool
    score: float = Field(ge=0.0, le=1.0)


class Redaction(_Model):
    """A span the write gate removed: which field, why, and a hash of the removed text (not the text)."""

    field: str
    reason: str
    sha256: str


class Provenance(_Model):
    episodes: list[str] = Field(default_factory=list)
    task_ids: list[str] = Field(default_factory=list)
    steps: list[int] = Field(default_factory=list)
    source: Source = "policy"
    summariser: str = "rule"
    trust: Trust = "trusted"
    trust_reason: str | None = None
    redactions: list[Redaction] = Field(default_factory=list)


class Stats(_Model):
    uses: int = Field(0, ge=0)
    successes: int = Field(0, ge=0)
    utility: float = 0.5
    recent: float = 0.5  # success rate weighted to recent episodes (utility.recent_utility); 0.5 unused
    last_used: str | None = None


class Entry(_Model):
    id: str = ""
    env: str
    task_type: str
    kind: Kind
    task: str
    task_id: str
    situation: str
    source_observation: str = ""
    guidance: str
    actions: list[str] = Field(default_factory=list)
    outcome: Outcome
    provenance: Provenance = Field(default_factory=Provenance)
    stats: Stats = Field(default_factory=Stats)
    pinned: bool = False
    created: str = Field(default_factory=lambda: now_iso())
    #: Full texts an excerpt was cut from (not stored): the write gate scans them too, so a truncation
    #: cannot smuggle half an injected instruction past it.
    _raw_sources: dict[str, str] = PrivateAttr(default_factory=dict)

    def with_content_id(self) -> Entry:
        """A copy whose ``id`` is the content hash of its current text (call after any text edit)."""
        return self.model_copy(update={"id": content_id(self)})

    def shown_texts(self) -> dict[str, str]:
        """Every text field an actor can be shown, by field name (what the write gate scans)."""
        texts = {
            "task": self.task,
            "situation": self.situation,
            "source_observation": self.source_observation,
            "guidance": self.guidance,
        }
        for i, action in enumerate(self.actions):
            texts[f"actions[{i}]"] = action
        return texts


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def normalise(text: str) -> str:
    """Lower case, collapsed whitespace: cosmetic differences do not make a new id."""
    return _SPACE.sub(" ", text).strip().lower()


def content_id(entry: Entry) -> str:
    """sha256 of the normalised env, task_type, kind, situation, guidance, actions and source observation
    (docs/design.md §4): every text an actor is shown, so entries that show different text never share an id."""
    payload = [
        normalise(entry.env),
        normalise(entry.task_type),
        entry.kind,
        normalise(entry.situation),
        normalise(entry.guidance),
        [normalise(a) for a in entry.actions],
    ]
    if entry.source_observation:  # absent from the payload when empty, so such ids stay as they were
        payload.append(normalise(entry.source_observation))
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


def merge_into(target: Entry, other: Entry) -> Entry:
    """``target`` with ``other``'s provenance united in and its stats summed (docs/design.md §4 dedup).

    The text of ``target`` is kept (first writer wins), so ids stay stable while banks grow.
    """
    prov = target.provenance
    oprov = other.provenance
    merged_prov = prov.model_copy(update={
        "episodes": _union(prov.episodes, oprov.episodes),
        "task_ids": _union(prov.task_ids, oprov.task_ids),
        "steps": sorted(set(prov.steps) | set(oprov.steps)),
        "redactions": prov.redactions + [r for r in oprov.redactions if r not in prov.redactions],
    })
    uses = target.stats.uses + other.stats.uses
    successes = target.stats.successes + other.stats.successes
    last = max((t for t in (target.stats.last_used, other.stats.last_used) if t), default=None)
    stats = Stats(uses=uses, successes=successes, utility=utility(successes, uses), last_used=last)
    return target.model_copy(update={
        "provenance": merged_prov,
        "stats": stats,
        "pinned": target.pinned or other.pinned,
        "created": min(target.created, other.created),
    })


def _union(first: list[str], second: list[str]) -> list[str]:
    seen = dict.fromkeys(first)
    seen.update(dict.fromkeys(second))
    return list(seen)
