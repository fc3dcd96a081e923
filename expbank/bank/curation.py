"""Curation of a writable bank: per-episode utility credit and pruning (docs/design.md §4).

* Credit is per episode and only to entries actually shown: an entry shown at least once gets
  ``uses += 1`` and ``successes += 1`` if the episode succeeded, however often it was shown, and its
  ``recent`` success rate moves toward the outcome.
* Pruning applies :func:`expbank.bank.utility.plan_prune` and logs every removal.
* :func:`retire_disproved` retires a take fact an episode disproved (it looked where the entry said), and a
  not-found warning it disproved (it found the object where the warning said it was not).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from expbank.bank.entry import Entry, now_iso
from expbank.bank.store import AddReport, Bank, named_things
from expbank.bank.summarise import bare_name, mentions, not_found, said, seen_at, seen_without, taken
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
    return any(said(a) == said(action) for a in actions)


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


def retire_disproved(bank: Bank, episode, entries: Iterable[Entry], report: AddReport) -> list[Removal]:
    """Retire the take facts ``episode`` disproved; ``entries`` are what it was summarised into and
    ``report`` what :meth:`Bank.add` made of them. Returns the removals (event ``disproved``, with reasons).

    A strategy that ends taking object O from place P (an ALFWorld take: where O lay) is disproved when the
    episode acted on it (a step shown it took one of its actions, the ``followed`` test), never took O from
    P, and either

    * **saw P without O**, in the room the entry was written in: an observation at P that lists what is
      there ("On the desk 1, you see a mug 1." / "In it, you see nothing."), in an episode whose first
      observation names the same numbered things as the entry's situation; or
    * **found O elsewhere**: it wrote, for the same situation (:meth:`Bank.same_situation`), a strategy that
      ends taking O from another place.

    Both are direct evidence that the fact stopped being true (a room rearranged), where utility needs
    repeated failures, and where a recency rule that retires fast also retires true entries that an actor
    misapplied in a look-alike room (that episode's first observation names other things). A not-found
    warning (:func:`~expbank.bank.summarise.alfworld_not_found`: O was not at P) the episode was shown is
    retired when, in the warning's room, the episode took O from P or saw O there; once the episode wrote
    a find of O for a situation, that situation's not-found warnings of O are superseded. Other entries,
    and pinned ones, are never retired this way.
    """
    bank.require_writable("retire")
    written = [report.merged.get(entry.id, entry.id) for entry in entries]
    new = {entry.id: fact for entry_id in dict.fromkeys(written)
           if (entry := bank.get(entry_id)) is not None and entry.kind == "strategy" and entry.actions
           and entry.provenance.trust == "trusted" and (fact := taken(entry.actions[-1]))}
    done = {said(step.action) for step in episode.steps}
    acted = dict.fromkeys(entry_id for step in episode.steps for entry_id in step.retrieved
                          if (entry := bank.get(entry_id)) is not None and _acted_on(step.action, entry.actions))
    room = named_things(episode.steps[0].observation) if episode.steps else []
    took = {(bare_name(fact[0]), fact[1]) for action in done if (fact := taken(action))}
    removals = []
    for old_id in acted:
        old = bank.get(old_id)
        fact = taken(old.actions[-1]) if old.kind == "strategy" and old.actions and not old.pinned else None
        if fact is None or said(old.actions[-1]) in done:
            continue
        obj, place = fact
        if room and named_things(old.situation) == room and seen_without(episode, place, obj):
            why = f"episode {episode.episode_id} acted on it and saw {place} without {obj}"
        else:
            why = next((f"episode {episode.episode_id} acted on it and took {obj} from {other}, not {place} "
                        f"(entry {new_id})" for new_id, (taken_obj, other) in new.items()
                        if new_id != old_id and taken_obj == obj and other != place
                        and bank.same_situation(old_id, new_id)), None)
        if why:
            removals.append(Removal(old_id, f"disproved: {why}"))
    for old_id in dict.fromkeys(entry_id for step in episode.steps for entry_id in step.retrieved):
        old = bank.get(old_id)
        absent = not_found(old) if old is not None and not old.pinned else None
        if absent is None or not room or named_things(old.situation) != room:
            continue
        obj, places = absent
        found = next((place for place in places if (obj, place) in took
                      or any(mentions(seen, obj) for seen in seen_at(episode, place))), None)
        if found:
            removals.append(Removal(old_id, f"disproved: episode {episode.episode_id} found {obj} at {found}, "
                                            "where the warning said it was not"))
    for removal in removals:
        log.info("retire %s: %s", removal.id, removal.reason)
    bank.delete([r.id for r in removals], event="disproved", reasons={r.id: r.reason for r in removals})
    return removals + _supersede_not_found(bank, episode, new)


def _supersede_not_found(bank: Bank, episode, new: dict[str, tuple[str, str]]) -> list[Removal]:
    """Delete the not-found warnings of an object in a room the episode just wrote a find of that object for
    (event ``superseded``): where the object lies is now known, and warnings of where it did not, one per failed
    episode, would otherwise fill the block ahead of that find. A room is the numbered things its situation
    names (:func:`~expbank.bank.store.named_things`), so a find written for another task of the room (another
    phrasing of the goal, or a sighting) supersedes too. A full scan of the bank's warnings."""
    found = {(tuple(named_things(entry.situation)), bare_name(fact[0])): fact[1] for entry_id, fact in new.items()
             if (entry := bank.get(entry_id)) is not None}
    if not found:  # most episodes write no find: skip the scan
        return []
    removals = []
    for entry in bank.entries():
        absent = not_found(entry) if not entry.pinned else None
        place = found.get((tuple(named_things(entry.situation)), absent[0])) if absent else None
        if place is not None:
            removals.append(Removal(entry.id, f"superseded: episode {episode.episode_id} found {absent[0]} at "
                                              f"{place} in this room"))
    bank.delete([r.id for r in removals], event="superseded", reasons={r.id: r.reason for r in removals})
    return removals
