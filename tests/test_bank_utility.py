"""Utility, per-episode credit and pruning against hand-computed values (acceptance 2)."""

from __future__ import annotations

import logging

import pytest
from bank_data import alf_transform, episode, web_success

from expbank.bank.curation import credit, credit_episode, prune, retire_disproved
from expbank.bank.entry import Entry, Outcome, Stats
from expbank.bank.store import Bank, BankError
from expbank.bank.summarise import RuleSummariser, not_found
from expbank.bank.utility import pessimistic_utility, plan_prune, recent_utility, utility


def test_utility_values():
    assert utility(0, 0) == 0.5
    assert utility(0, 3) == pytest.approx(0.2)
    assert utility(1, 3) == pytest.approx(0.4)
    assert utility(1, 8) == pytest.approx(0.2)
    assert utility(9, 10) == pytest.approx(10 / 12)


def test_pessimistic_utility_closed_forms():
    # Beta(2,1): x^2 = 0.1; Beta(1,2): 1-(1-x)^2 = 0.1; Beta(3,1): x^3 = 0.1; Beta(1,3): 1-(1-x)^3 = 0.1
    assert pessimistic_utility(1, 1) == pytest.approx(0.1 ** 0.5)
    assert pessimistic_utility(0, 1) == pytest.approx(1 - 0.9 ** 0.5)
    assert pessimistic_utility(2, 2) == pytest.approx(0.1 ** (1 / 3))
    assert pessimistic_utility(0, 2) == pytest.approx(1 - 0.9 ** (1 / 3))
    # Beta(2,3): CDF 6x^2 - 8x^3 + 3x^4 = 0.1 at x = 0.14256...
    x = pessimistic_utility(1, 3)
    assert 6 * x**2 - 8 * x**3 + 3 * x**4 == pytest.approx(0.1)


def _e(name: str, uses: int, successes: int, created: str, pinned: bool = False) -> Entry:
    return Entry(id=name, env="alfworld", task_type="t", kind="strategy", task="x", task_id="x",
                 situation=name, guidance=name, outcome=Outcome(success=True, score=1.0),
                 stats=Stats(uses=uses, successes=successes, utility=utility(successes, uses)),
                 pinned=pinned, created=created)


ENTRIES = [
    _e("A", 3, 0, "2026-01-01"),   # utility 0.2 < 0.3 after 3 uses: low-utility removal
    _e("B", 3, 1, "2026-01-01"),   # utility 0.4: kept by the threshold; p10 of Beta(2,3) = 0.1426
    _e("C", 8, 1, "2026-01-01"),   # utility 0.2: removed
    _e("P", 5, 0, "2026-01-01", pinned=True),  # utility 1/7 but pinned: never removed
    _e("D", 1, 1, "2026-01-05"),   # p10 0.3162, newer than J
    _e("E", 1, 0, "2026-01-01"),   # p10 0.0513 (only 1 use: not low-utility-pruned)
    _e("F", 2, 2, "2026-01-01"),   # p10 0.4642
    _e("G", 2, 0, "2026-01-01"),   # p10 0.0345
    _e("H", 0, 0, "2026-01-02"),   # never used, older
    _e("I", 0, 0, "2026-01-03"),   # never used, newer
    _e("J", 1, 1, "2026-01-04"),   # p10 0.3162, ties with D and is older: evicted first
]


def test_prune_threshold_only():
    removals = plan_prune(ENTRIES, min_uses=3, threshold=0.3, capacity=None)
    assert [r.id for r in removals] == ["A", "C"]
    assert "0.200 < 0.3 after 3 uses" in removals[0].reason


def test_prune_capacity_eviction_order():
    removals = plan_prune(ENTRIES, min_uses=3, threshold=0.3, capacity=2)
    assert [r.id for r in removals] == ["A", "C", "G", "E", "B", "J", "D", "F", "H"]
    assert "over capacity 2" in removals[-1].reason and "never used" in removals[-1].reason
    kept = {e.id for e in ENTRIES} - {r.id for r in removals}
    assert kept == {"P", "I"}


def test_prune_pinned_over_capacity_warns(caplog):
    with caplog.at_level(logging.WARNING, logger="expbank.bank.utility"):
        removals = plan_prune(ENTRIES, min_uses=3, threshold=0.3, capacity=0)
    assert "P" not in {r.id for r in removals} and len(removals) == len(ENTRIES) - 1
    assert "pinned entries alone (1) exceed the capacity 0" in caplog.text


def test_an_entry_that_stopped_being_true_is_retired_in_time_only_by_recent_utility(new_bank):
    """Five successes, then the world changes: Laplace keeps the entry for 13 more failures, ``recent``
    retires it after 2 (0.5 -> 0.984 after 5 successes -> 0.492 -> 0.246 < 0.3)."""
    bank = new_bank()
    bank.add(RuleSummariser().summarise(alf_transform("heat")))
    stale = next(iter(bank.entries())).id
    for _ in range(5):
        credit(bank, [stale], success=True)
    assert bank.get(stale).stats.recent == pytest.approx(1 - 0.5 ** 6)
    for failures in range(1, 15):
        credit(bank, [stale], success=False)
        entry = bank.get(stale)
        by_laplace = plan_prune([entry], min_uses=3, threshold=0.3, capacity=None)
        by_recent = plan_prune([entry], min_uses=3, threshold=0.3, capacity=None, by="recent")
        assert bool(by_recent) == (failures >= 2), failures
        assert bool(by_laplace) == (failures >= 14), failures
    assert "low recent utility" in by_recent[0].reason
    assert recent_utility(0.5, True) == 0.75 and recent_utility(0.75, False) == 0.375
    saved = Bank.open(bank.save(), writable=False)  # the counters keep it
    assert saved.get(stale).stats.recent == pytest.approx(entry.stats.recent)
    assert [r.id for r in prune(Bank.open(bank.path), by="recent")] == [stale]


def test_credit_is_per_episode_and_only_to_shown_entries(new_bank):
    bank = new_bank()
    episode = alf_transform("heat")
    bank.add(RuleSummariser().summarise(episode))
    a, b, c = [e.id for e in bank.entries()][:3]
    assert credit(bank, [a, a, b, "unknown"], success=True) == 2
    assert (bank.get(a).stats.uses, bank.get(a).stats.successes) == (1, 1)
    assert credit(bank, [a], success=False) == 1
    assert (bank.get(a).stats.uses, bank.get(a).stats.successes, bank.get(a).stats.utility) == (2, 1, 0.5)
    assert bank.get(c).stats.uses == 0
    episode.steps[0].retrieved = [c]
    episode.steps[1].retrieved = [c, b]
    credit_episode(bank, episode)
    assert (bank.get(c).stats.uses, bank.get(c).stats.successes) == (1, 1)
    assert (bank.get(b).stats.uses, bank.get(b).stats.successes) == (2, 2)
    frozen = Bank.open(bank.save(), writable=False)
    with pytest.raises(BankError, match="read-only"):
        credit(frozen, [a], success=True)


def test_followed_credit_goes_only_to_entries_whose_actions_the_episode_took(new_bank):
    """A frozen actor is shown entries at every step; ``followed`` credits those it acted on, not the rest."""
    bank = new_bank()
    episode = alf_transform("heat")
    bank.add(RuleSummariser().summarise(episode) + RuleSummariser().summarise(web_success()))
    entries = list(bank.entries())
    taken = {" ".join(step.action.split()) for step in episode.steps}
    acted = next(e for e in entries if set(e.actions) & taken)
    passed = next(e for e in entries if e.id != acted.id and not set(e.actions) & taken)
    step = next(s for s in episode.steps if s.action in acted.actions)
    step.retrieved = [acted.id, passed.id]
    assert credit_episode(bank, episode, "followed") == 1
    assert (bank.get(acted.id).stats.uses, bank.get(passed.id).stats.uses) == (1, 0)
    assert credit_episode(bank, episode, "shown") == 2
    assert (bank.get(acted.id).stats.uses, bank.get(passed.id).stats.uses) == (2, 1)
    with pytest.raises(ValueError, match="credit rule"):
        credit_episode(bank, episode, "all")


HOUSE = ("You are in the middle of a room. Looking quickly around you, you see a desk 1, a drawer 1, a shelf 2, "
         "a shelf 1, and a garbagecan 1.\n\nYour task is to: {goal}")
LOOKALIKE = HOUSE.replace("a drawer 1,", "a drawer 2, a drawer 1,")


def _carry(food: str, where: str | None, room: str = HOUSE, task_id: str = "v0", looks: tuple[str, ...] = (),
           success: bool = True, split: str = "visits", seen: dict[int, str] | None = None):
    """An episode that looks in ``looks``, then (``where`` given) takes ``food`` there and, on success, bins
    it; ``seen`` replaces the observations after given steps."""
    goal = f"put a {food} in garbagecan."
    actions = [f"go to {place}" for place in looks]
    if where:
        actions += [f"go to {where}", f"take {food} 1 from {where}"]
        actions += ["go to garbagecan 1", f"move {food} 1 to garbagecan 1"] if success else ["go to garbagecan 1"]
    observations = [room.format(goal=goal)] + [(seen or {}).get(t, f"You see step {t}.") for t in range(len(actions) - 1)]
    return episode("alfworld", "pick_and_place_simple", goal, list(zip(observations, actions, strict=True)), success,
                   task_id=task_id, split=split)


def _find(bank: Bank, take: str) -> Entry:
    return next(e for e in bank.entries() if e.kind == "strategy" and e.actions[-1] == take)


def test_retire_disproved_when_an_episode_found_the_object_elsewhere(new_bank):
    """The room was rearranged: an episode acted on "the apple is on desk 1", found it on shelf 2. Only that
    entry goes, not the bread's (another object), the look-alike room's (another situation), nor a pinned one."""
    bank = new_bank()
    summarise = RuleSummariser().summarise
    for i, (food, where, room) in enumerate([("apple", "desk 1", HOUSE), ("bread", "shelf 1", HOUSE),
                                            ("apple", "desk 1", LOOKALIKE)]):
        bank.add(summarise(_carry(food, where, room, task_id=f"v{i}")))
    stale, bread = _find(bank, "take apple 1 from desk 1"), _find(bank, "take bread 1 from shelf 1")
    lookalike = next(e for e in bank.entries() if e.actions[-1] == "take apple 1 from desk 1" and e.id != stale.id
                     and e.kind == "strategy")
    assert bank.same_situation(stale.id, lookalike.id) is False  # the rooms differ by a drawer
    moved = _carry("apple", "shelf 2", looks=("desk 1", "shelf 1"), success=False, task_id="s0", split="stream")
    moved.steps[0].retrieved = [stale.id, lookalike.id, bread.id]  # went to desk 1: acted on both desk entries
    moved.steps[1].retrieved = [bread.id]  # went to shelf 1: acted on the bread's entry
    written = summarise(moved)
    report = bank.add(written)
    fresh = _find(bank, "take apple 1 from shelf 2")
    assert bank.same_situation(stale.id, fresh.id)
    removals = retire_disproved(bank, moved, written, report)
    assert [r.id for r in removals] == [stale.id]
    assert f"(entry {fresh.id})" in removals[0].reason and "not desk 1" in removals[0].reason
    assert bank.get(stale.id) is None and bank.get(bread.id) and bank.get(lookalike.id)
    assert bank.log()[-1]["event"] == "disproved"

    def write(episode):
        written = summarise(episode)
        return retire_disproved(bank, episode, written, bank.add(written))

    again = _carry("apple", "shelf 2", task_id="s1", split="stream")
    again.steps[0].retrieved = [fresh.id]
    assert write(again) == []  # it took the apple where the entry said
    back = _carry("apple", "desk 1", looks=("shelf 2",), task_id="s2", split="stream")
    back.steps[0].retrieved = [fresh.id]
    bank.update(fresh.id, "pin", pinned=True)
    assert write(back) == []
    assert bank.get(fresh.id) is not None
    bank.update(fresh.id, "unpin", pinned=False)
    back.episode_id += "-again"
    assert [r.id for r in write(back)] == [fresh.id]


def test_retire_disproved_when_an_episode_saw_the_place_without_the_object(new_bank):
    """Seeing the place without the object disproves the entry in its own room only: a look-alike room's
    episode that misapplied it says nothing about it; a place seen with the object, or closed, neither."""
    bank = new_bank()
    summarise = RuleSummariser().summarise
    bank.add(summarise(_carry("apple", "drawer 1", task_id="v0")))
    entry = _find(bank, "take apple 1 from drawer 1")

    def look(room: str, seen: dict[int, str], task_id: str):
        episode = _carry("apple", None, room, looks=("drawer 1", "shelf 1"), success=False, task_id=task_id,
                         split="stream", seen=seen)
        episode.steps[0].retrieved = [entry.id]
        written = summarise(episode)
        return retire_disproved(bank, episode, written, bank.add(written))

    empty = {0: "You arrive at drawer 1. The drawer 1 is closed."}
    assert look(HOUSE, empty, "s0") == []  # closed: nothing seen
    assert look(HOUSE, {0: "You arrive at drawer 1. On the drawer 1, you see a apple 1, and a mug 2."}, "s1") == []
    opened = {0: "You open the drawer 1. The drawer 1 is open. In it, you see a mug 2."}
    assert look(LOOKALIKE, opened, "s2") == []  # another room
    removals = look(HOUSE, opened, "s3")
    assert [r.id for r in removals] == [entry.id] and "saw drawer 1 without apple 1" in removals[0].reason


def test_a_not_found_warning_is_retired_when_its_room_shows_the_object_there(new_bank):
    """"The apple was not on desk 1" goes once an episode of its room, shown it, takes the apple from desk 1
    (disproved), or takes it anywhere (superseded: the find says where it is), or, with sightings, another
    task of the room saw it; a look-alike room's episode says nothing of it; pinned stays."""
    bank = new_bank()
    summarise = RuleSummariser().summarise
    without = {0: "You arrive at desk 1. On the desk 1, you see a mug 1.",
               1: "You arrive at shelf 1. On the shelf 1, you see nothing."}

    def warn(task_id: str) -> Entry:
        looked = _carry("apple", None, looks=("desk 1", "shelf 1", "drawer 1"), success=False, task_id=task_id,
                        split="stream", seen=without)
        bank.add(summarise(looked))
        return next(e for e in bank.entries() if not_found(e))

    def write(episode, warning: Entry):
        episode.steps[0].retrieved = [warning.id]
        written = summarise(episode)
        return retire_disproved(bank, episode, written, bank.add(written))

    warning = warn("s0")
    assert not_found(warning) == ("apple", ["desk 1", "shelf 1"])
    assert write(_carry("apple", "desk 1", LOOKALIKE, task_id="s1", split="stream"), warning) == []  # another room
    bank.update(warning.id, "pin", pinned=True)
    assert write(_carry("apple", "desk 1", task_id="s2", split="stream"), warning) == []
    bank.update(warning.id, "unpin", pinned=False)
    removals = write(_carry("apple", "desk 1", task_id="s3", split="stream"), warning)
    assert [r.id for r in removals] == [warning.id] and "found apple at desk 1" in removals[0].reason
    assert bank.get(warning.id) is None and bank.log()[-1]["event"] == "disproved"
    warning = warn("s4")
    removals = write(_carry("apple", "shelf 2", task_id="s5", split="stream"), warning)
    assert [r.id for r in removals] == [warning.id] and removals[0].reason.startswith("superseded")
    assert "apple 1" not in removals[0].reason and "found apple at shelf 2" in removals[0].reason
    assert bank.log()[-1]["event"] == "superseded"
    warning = warn("s6")  # where another task of the room, which passed the apple, saw it
    passed = _carry("mug", "shelf 2", looks=("drawer 1",), task_id="s7", split="stream",
                    seen={0: "You arrive at drawer 1. On the drawer 1, you see a apple 1."})
    written = RuleSummariser().summarise(passed)
    assert retire_disproved(bank, passed, written, bank.add(written)) == [], "without sightings nothing says so"
    written = RuleSummariser(sightings=True).summarise(passed)
    removals = retire_disproved(bank, passed, written, bank.add(written))
    assert [r.id for r in removals] == [warning.id] and "found apple at drawer 1" in removals[0].reason


def test_prune_on_bank_is_logged_with_reasons(new_bank):
    bank = new_bank()
    bank.add(RuleSummariser().summarise(alf_transform("cool")))
    ids = [e.id for e in bank.entries()]
    for _ in range(3):
        credit(bank, [ids[0]], success=False)
    bank.update(ids[1], "pin", pinned=True)
    removals = prune(bank, min_uses=3, threshold=0.3, capacity=2)
    assert removals[0].id == ids[0] and "low utility" in removals[0].reason
    assert len(bank) == 2 and bank.get(ids[1]) is not None
    reopened = Bank.open(bank.save())
    logged = [r for r in reopened.log() if r["event"] == "prune"]
    assert [r["id"] for r in logged] == [r.id for r in removals]
    assert all(r["reason"] for r in logged)
