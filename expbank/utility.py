"""Utility, per-episode credit and pruning (issue 4; fixes memharness.md §8 flaws 6 and 19).

* ``utility = (successes + 1) / (uses + 2)``: a Laplace (Beta(1, 1)) smoothed success rate; 0.5 unused.
* Credit is per episode and only to entries actually shown: an entry shown at least once gets
  ``uses += 1`` and ``successes += 1`` if the episode succeeded, however often it was shown.
* Capacity eviction ranks used entries by a pessimistic estimate, the 10th percentile of
  Beta(successes + 1, failures + 1), so an entry with 1/1 is not preferred to one with 90/100.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from expbank.entry import now_iso

if TYPE_CHECKING:
    from expbank.store import Bank

log = logging.getLogger(__name__)


def utility(successes: int, uses: int) -> float:
    return (successes + 1) / (uses + 2)


def pessimistic_utility(successes: int, uses: int) -> float:
    """10th percentile of Beta(successes + 1, uses - successes + 1)."""
    from scipy.stats import beta

    return float(beta.ppf(0.1, successes + 1, uses - successes + 1))


def credit(bank: Bank, entry_ids: Iterable[str], success: bool) -> int:
    """Credit one finished episode to the distinct entries it was shown; returns how many were found.

    Only counters change: no vector or index is touched. Unknown ids (pruned meanwhile) are skipped.
    """
    bank.require_writable("credit")
    when = now_iso()
    found = 0
    for entry_id in dict.fromkeys(entry_ids):
        entry = bank.get(entry_id)
        if entry is None:
            continue
        stats = entry.stats
        uses = stats.uses + 1
        successes = stats.successes + int(success)
        bank.set_stats(entry_id, uses=uses, successes=successes, last_used=when)
        found += 1
    return found


def credit_episode(bank: Bank, episode) -> int:
    """Credit an ``Episode`` (DESIGN.md §3) to the union of the entry ids of its steps' ``retrieved``."""
    shown = [entry_id for step in episode.steps for entry_id in step.retrieved]
    return credit(bank, shown, episode.success)


@dataclass(frozen=True)
class Removal:
    id: str
    reason: str


def plan_prune(entries: Iterable, min_uses: int, threshold: float, capacity: int | None) -> list[Removal]:
    """Which entries to remove, in order, and why (pure: the hand-computed tests check this).

    1. Unpinned entries with ``uses >= min_uses`` and utility below ``threshold``.
    2. While over ``capacity``: used unpinned entries by ascending pessimistic utility (ties: older first),
       then never-used unpinned entries oldest first. Pinned entries are never removed.
    """
    entries = list(entries)
    removals: list[Removal] = []
    kept = []
    for entry in entries:
        u = utility(entry.stats.successes, entry.stats.uses)
        if not entry.pinned and entry.stats.uses >= min_uses and u < threshold:
            removals.append(Removal(entry.id, (
                f"low utility {u:.3f} < {threshold} after {entry.stats.uses} uses "
                f"({entry.stats.successes} successes)")))
        else:
            kept.append(entry)
    if capacity is None or len(kept) <= capacity:
        return removals
    pinned = sum(entry.pinned for entry in kept)
    if pinned > capacity:
        log.warning("pinned entries alone (%d) exceed the capacity %d; they are kept", pinned, capacity)
    used = sorted(
        (e for e in kept if not e.pinned and e.stats.uses > 0),
        key=lambda e: (pessimistic_utility(e.stats.successes, e.stats.uses), e.created),
    )
    unused = sorted((e for e in kept if not e.pinned and e.stats.uses == 0), key=lambda e: e.created)
    excess = len(kept) - capacity
    for entry in (used + unused)[:excess]:
        if entry.stats.uses:
            p10 = pessimistic_utility(entry.stats.successes, entry.stats.uses)
            reason = f"over capacity {capacity}: used entry with Beta p10 {p10:.3f}"
        else:
            reason = f"over capacity {capacity}: never used, created {entry.created}"
        removals.append(Removal(entry.id, reason))
    return removals


def prune(bank: Bank, min_uses: int = 3, threshold: float = 0.3,
          capacity: int | None = None) -> list[Removal]:
    """Apply :func:`plan_prune` to ``bank`` and log every removal (logger and the bank's own log)."""
    bank.require_writable("prune")
    removals = plan_prune(bank.entries(include_quarantined=True), min_uses, threshold, capacity)
    for removal in removals:
        log.info("prune %s: %s", removal.id, removal.reason)
    bank.delete([r.id for r in removals], event="prune", reasons={r.id: r.reason for r in removals})
    return removals
