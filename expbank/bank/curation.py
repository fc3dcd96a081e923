"""Curation of a writable bank: per-episode utility credit and pruning (docs/design.md §4).

* Credit is per episode and only to entries actually shown: an entry shown at least once gets
  ``uses += 1`` and ``successes += 1`` if the episode succeeded, however often it was shown, and its
  ``recent`` success rate moves toward the outcome.
* Pruning applies :func:`expbank.bank.utility.plan_prune` and logs every removal.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from expbank.bank.entry import now_iso
from expbank.bank.store import Bank
from expbank.bank.utility import Removal, plan_prune, recent_utility

log = logging.getLogger(__name__)


def credit(bank: Bank, entry_ids: Iterable[str], success: bool) -> int:
    """Credit one finished episode to the distinct entries it was shown; returns how many were credited.

    Only counters change: no vector or index is touched. Unknown ids (pruned meanwhile) and entries that are
    not trusted (a caller may name any id) are skipped.
    """
    bank.require_writable("credit")
    when = now_iso()
    found = 0
    for entry_id in dict.fromkeys(entry_ids):
        entry = bank.get(entry_id)
        if entry is None or entry.provenance.trust != "trusted":
            continue
        stats = entry.stats
        bank.set_stats(entry_id, uses=stats.uses + 1, successes=stats.successes + int(success), last_used=when,
                       recent=recent_utility(stats.recent, success))
        found += 1
    return found


CREDIT_RULES = ("shown", "followed")


def credit_episode(bank: Bank, episode, rule: str = "shown") -> int:
    """Credit an ``Episode`` (docs/design.md §3) with its outcome: ``shown``, every entry of its steps'
    ``retrieved``; ``followed``, only entries shown at a step whose action is one of the entry's actions.

    ``followed`` is for actors whose replies say nothing of what they used (a frozen actor behind an API):
    with retrieval at every step an episode is shown many entries, and crediting them all makes an entry that
    was only passed by share the outcome of one that was acted on.
    """
    if rule not in CREDIT_RULES:
        raise ValueError(f"credit rule must be one of {CREDIT_RULES}, not {rule!r}")
    if rule == "shown":
        used = [entry_id for step in episode.steps for entry_id in step.retrieved]
    else:
        used = [entry_id for step in episode.steps for entry_id in step.retrieved
                if (entry := bank.get(entry_id)) is not None and _acted_on(step.action, entry.actions)]
    return credit(bank, used, episode.success)


def _acted_on(action: str, actions: Iterable[str]) -> bool:
    said = " ".join(action.lower().split())
    return any(" ".join(a.lower().split()) == said for a in actions)


def credit_once(bank: Bank, episode, rule: str = "shown") -> int | None:
    """:func:`credit_episode`, at most once per episode id (the bank records the ids it credited); None for
    a repeat. What online evaluation and the MCP server's ``record_episode`` use."""
    if episode.episode_id in bank.credited:
        return None
    found = credit_episode(bank, episode, rule)
    bank.mark_credited(episode.episode_id)
    return found


def prune(bank: Bank, min_uses: int = 3, threshold: float = 0.3,
          capacity: int | None = None, by: str = "laplace") -> list[Removal]:
    """Apply :func:`plan_prune` to ``bank`` and log every removal (logger and the bank's own log)."""
    bank.require_writable("prune")
    removals = plan_prune(bank.entries(include_quarantined=True), min_uses, threshold, capacity, by)
    for removal in removals:
        log.info("prune %s: %s", removal.id, removal.reason)
    bank.delete([r.id for r in removals], event="prune", reasons={r.id: r.reason for r in removals})
    return removals
