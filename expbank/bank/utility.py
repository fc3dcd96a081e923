"""The utility formulas and the pruning plan: pure functions of an entry's counters (docs/design.md §4).

* ``utility = (successes + 1) / (uses + 2)``: a Laplace (Beta(1, 1)) smoothed success rate; 0.5 unused.
* ``recent``: an exponentially weighted success rate, ``r <- (1 - RECENT_RATE) * r + RECENT_RATE * outcome``
  from 0.5. Laplace utility cannot retire an entry that stopped being true in time: after 5 successes it
  needs 14 failures to fall below 0.3, while ``recent`` falls there after 2. Pruning uses it with
  ``by="recent"``.
* Capacity eviction ranks used entries by a pessimistic estimate, the 10th percentile of
  Beta(successes + 1, failures + 1), so an entry with 1/1 is not preferred to one with 90/100.

Applying credit and pruning to a bank is ``expbank.bank.curation``'s job; this module sits below the store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

log = logging.getLogger(__name__)


def utility(successes: int, uses: int) -> float:
    return (successes + 1) / (uses + 2)


RECENT_RATE = 0.5


def recent_utility(previous: float, success: bool, rate: float = RECENT_RATE) -> float:
    """The next ``recent`` value after one more episode."""
    return (1 - rate) * previous + rate * float(success)


def pessimistic_utility(successes: int, uses: int) -> float:
    """10th percentile of Beta(successes + 1, uses - successes + 1)."""
    from scipy.stats import beta

    return float(beta.ppf(0.1, successes + 1, uses - successes + 1))


@dataclass(frozen=True)
class Removal:
    id: str
    reason: str


def plan_prune(entries: Iterable, min_uses: int, threshold: float, capacity: int | None,
               by: str = "laplace") -> list[Removal]:
    """Which entries to remove, in order, and why (pure: the hand-computed tests check this).

    1. Unpinned entries with ``uses >= min_uses`` and utility below ``threshold``: the Laplace utility, or
       with ``by="recent"`` the recency-weighted one.
    2. While over ``capacity``: used unpinned entries by ascending pessimistic utility (ties: older first),
       then never-used unpinned entries oldest first. Pinned entries are never removed.
    """
    entries = list(entries)
    removals: list[Removal] = []
    kept = []
    if by not in ("laplace", "recent"):
        raise ValueError(f"prune by 'laplace' or 'recent', not {by!r}")
    for entry in entries:
        u = entry.stats.recent if by == "recent" else utility(entry.stats.successes, entry.stats.uses)
        if not entry.pinned and entry.stats.uses >= min_uses and u < threshold:
            removals.append(Removal(entry.id, (
                f"low {'recent ' if by == 'recent' else ''}utility {u:.3f} < {threshold} after "
                f"{entry.stats.uses} uses ({entry.stats.successes} successes)")))
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
