"""Summarisers: rule strategies / warnings / excerpts, and the LLM summariser on recorded replies."""

from __future__ import annotations

from bank_data import alf_failure, alf_place, alf_transform, episode, web_failure, web_success

from expbank.bank.summarise import (
    LLMSummariser,
    RuleSummariser,
    alfworld_sightings,
    count_tokens,
    goal_object,
    is_grounded,
    not_found,
    parse_llm_reply,
    trajectory_excerpt,
)
from expbank.chat import ChatBackend


def test_alfworld_success_gives_subgoal_strategies():
    entries = RuleSummariser().summarise(alf_transform("heat"))
    kinds = [e.kind for e in entries]
    assert kinds == ["strategy", "strategy", "strategy", "trajectory"]
    find, heat, place, _ = entries
    assert find.actions == ["go to countertop 1", "take apple 1 from countertop 1"]
    assert "first find and take the apple" in find.situation
    assert heat.actions[-1] == "heat apple 1 with microwave 1" and "heated" in heat.situation
    assert "microwave" in heat.guidance
    assert place.actions[-1] == "move apple 1 to diningtable 1" and "already heated" in place.situation
    assert place.source_observation == "You heat the apple 1 using the microwave 1."
    assert heat.provenance.steps == [2] and heat.provenance.source == "expert"
    assert all(e.provenance.episodes == ["alfworld-train-t0-expert-none-s0"] for e in entries)


def test_old_put_syntax_and_two_object_tasks():
    ep = alf_place()
    ep.steps[-1].action = "put mug 1 in/on cabinet 1"
    place = RuleSummariser().summarise(ep)[1]
    assert "put in/on the cabinet" in place.situation


def test_alfworld_failure_gives_warnings():
    entries = RuleSummariser().summarise(alf_failure())
    warnings = [e for e in entries if e.kind == "warning"]
    text = " ".join(e.situation + " " + e.guidance for e in warnings)
    assert "Repeating 'go to cabinet 1' (3 times)" in text          # loop
    assert "rejected as invalid 2 times" in text                       # repeated invalid actions
    assert "a fork is the wrong object" in text                        # wrong object
    assert "the sinkbasin is the wrong one" in text                    # wrong receptacle
    assert not any(e.kind == "strategy" for e in entries)


def test_an_alfworld_failure_that_took_the_named_object_records_where_it_was():
    """Out of steps after the take: where the mug lay is still true, so the find strategy is written (only
    that one: nothing after the take was shown to work)."""
    ep = alf_place()
    ep.steps, ep.success = ep.steps[:3], False
    entries = RuleSummariser().summarise(ep)
    strategies = [e for e in entries if e.kind == "strategy"]
    assert len(strategies) == 1 and strategies[0].actions[-1] == "take mug 1 from countertop 2"
    assert "here it was in/on countertop 2" in strategies[0].guidance and not strategies[0].outcome.success
    ep.task = ep.task.replace("mug", "cup")  # took an object the task does not name: no find entry
    assert not [e for e in RuleSummariser().summarise(ep) if e.kind == "strategy"]


def test_goal_object_reads_every_alfworld_goal_template():
    goals = ["put a mug in cabinet.", "put some apple on desk.", "put a clean apple in fridge.",
             "put a hot apple in fridge.", "put a cool apple in fridge.", "clean some apple and put it in fridge.",
             "heat some apple and put it in fridge.", "cool some apple and put it in fridge.",
             "look at apple under the desklamp.", "examine the apple with the desklamp.", "put two apple in safe.",
             "find two apple and put them in safe."]
    assert [goal_object(goal) for goal in goals] == ["mug"] + ["apple"] * 11
    assert goal_object("buy a red phone case") is None


def test_a_failure_that_never_found_the_object_says_where_it_looked():
    """The not-found warning lists the places seen without the task's object, in the order looked at: not a
    closed one (nothing seen), not one where it lay; none once the episode took the object (a refused take of
    it, where it did not lie, takes nothing)."""
    room = ("You are in the middle of a room. Looking quickly around you, you see a desk 1, a drawer 1, a shelf 1, "
            "and a garbagecan 1.\n\nYour task is to: put a apple in garbagecan.")
    pairs = [(room, "go to drawer 1"), ("You arrive at drawer 1. The drawer 1 is closed.", "open drawer 1"),
             ("You open the drawer 1. The drawer 1 is open. In it, you see nothing.", "go to desk 1"),
             ("You arrive at desk 1. On the desk 1, you see a mug 1, and a pineapple 1.", "go to shelf 1"),
             ("You arrive at shelf 1. The shelf 1 is closed.", "look")]
    failed = episode("alfworld", "pick_and_place_simple", "put a apple in garbagecan.", pairs, False)
    warning = next(e for e in RuleSummariser().summarise(failed) if not_found(e))
    assert not_found(warning) == ("apple", ["drawer 1", "desk 1"])
    assert warning.guidance.startswith("The apple was not in/on drawer 1, desk 1 here")
    assert warning.situation.startswith(room.split("\n")[0]) and "first find and take the apple" in warning.situation
    assert warning.provenance.steps == [0]
    blind = list(pairs)  # a take of the apple where none lay is refused (invalid): it took nothing
    blind[3] = ("You arrive at desk 1. On the desk 1, you see a mug 1, and a pineapple 1.", "take apple 1 from desk 1")
    blind[4] = ("Nothing happens.", "go to shelf 1")
    tried = episode("alfworld", "pick_and_place_simple", "put a apple in garbagecan.", blind, False, invalid=(3,))
    assert not_found(next(e for e in RuleSummariser().summarise(tried) if not_found(e))) == \
        ("apple", ["drawer 1", "desk 1"])
    pairs[3] = ("You arrive at desk 1. On the desk 1, you see a apple 1.", "go to shelf 1")
    seen = episode("alfworld", "pick_and_place_simple", "put a apple in garbagecan.", pairs, False)
    assert not_found(next(e for e in RuleSummariser().summarise(seen) if not_found(e))) == ("apple", ["drawer 1"])
    pairs[4] = ("You arrive at desk 1. On the desk 1, you see a apple 1.", "take apple 1 from desk 1")
    took = episode("alfworld", "pick_and_place_simple", "put a apple in garbagecan.", pairs, False)
    assert not [e for e in RuleSummariser().summarise(took) if not_found(e)]


def test_sightings_write_where_every_object_seen_lay_but_the_tasks_own_once_taken():
    """``sightings``: each object a look listed is a find strategy of a task that needs it, at the first place
    it was seen, with the way there (opening a closed place) and the take; nothing for a closed place or
    "nothing"; not the task's own object once taken (its find strategy says it), but an object taken for no
    reason of the task. Off by default."""
    room = ("You are in the middle of a room. Looking quickly around you, you see a desk 1, a drawer 1, a shelf 1, "
            "and a garbagecan 1.\n\nYour task is to: put a apple in garbagecan.")
    pairs = [(room, "go to drawer 1"), ("You arrive at drawer 1. The drawer 1 is closed.", "open drawer 1"),
             ("You open the drawer 1. The drawer 1 is open. In it, you see a egg 1, and a pen 2.", "go to desk 1"),
             ("You arrive at desk 1. On the desk 1, you see a apple 1, a mug 1, and a pineapple 1.", "take apple 1 from desk 1"),
             ("You pick up the apple 1 from the desk 1.", "go to shelf 1"),
             ("You arrive at shelf 1. On the shelf 1, you see a egg 2, and a mug 3.", "look")]
    failed = episode("alfworld", "pick_and_place_simple", "put a apple in garbagecan.", pairs, False)
    sightings = alfworld_sightings(failed)
    assert [(e.actions, e.provenance.steps) for e in sightings] == [
        (["go to drawer 1", "open drawer 1", "take egg 1 from drawer 1"], [0]),
        (["go to drawer 1", "open drawer 1", "take pen 2 from drawer 1"], [0]),
        (["go to desk 1", "take mug 1 from desk 1"], [2]),
        (["go to desk 1", "take pineapple 1 from desk 1"], [2])]
    egg = sightings[0]
    assert egg.kind == "strategy" and "(here it was in/on drawer 1), then take egg 1 from drawer 1." in egg.guidance
    assert egg.situation == (room.split("\n")[0] + " Your task is to: put a egg in garbagecan. Holding nothing; "
                             "first find and take the egg.")  # the goal made to need the egg
    assert not any(e in RuleSummariser().summarise(failed) for e in sightings), "off by default"
    assert all(e in RuleSummariser(sightings=True).summarise(failed) for e in sightings)
    failed.task = "put a cup in garbagecan."  # the apple was taken for nothing the task names: a sighting
    assert "take apple 1 from desk 1" in [e.actions[-1] for e in alfworld_sightings(failed)]


def test_webshop_strategies_and_warnings():
    query, choose, buy, excerpt = RuleSummariser().summarise(web_success())
    assert query.actions == ["search[l'eau d'issey 6.76 fl oz]"]
    assert "L'eau D'issey By Issey Miyake" in choose.guidance
    assert buy.actions == ["click[6.76 fl oz (pack of 1)]", "click[buy now]"]
    assert excerpt.kind == "trajectory"
    warning = [e for e in RuleSummariser().summarise(web_failure()) if e.kind == "warning"]
    assert len(warning) == 1 and "without selecting the options" in warning[0].guidance


def test_trajectory_excerpt_is_bounded():
    ep = alf_failure()
    ep.steps = ep.steps * 30  # 210 steps with long observations
    for t, step in enumerate(ep.steps):
        step.t = t
        step.observation = "You arrive at cabinet 1. " * 40
    entry = trajectory_excerpt(ep, max_tokens=120)
    total = count_tokens(entry.situation) + count_tokens(entry.guidance) + sum(count_tokens(a) for a in entry.actions)
    assert total <= 120 + 4
    assert "…" in entry.actions and entry.actions[0] == "go to cabinet 1"
    assert entry.actions[-1] == "move fork 1 to sinkbasin 1"


class Recorded(ChatBackend):
    """Replays recorded model outputs in order (the parser fixtures)."""

    name = "recorded"

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.prompts: list[list[dict]] = []

    def generate(self, messages, **sampling):
        self.prompts.extend(messages)
        return [self.replies.pop(0) for _ in messages]


GOOD = """```json
{"entries": [
  {"kind": "strategy", "situation": "Holding the apple, it must be hot.",
   "guidance": "Heat the apple with microwave 1 before placing it.", "actions": ["heat apple 1 with microwave 1"], "step": 3},
  {"kind": "warning", "situation": "Anywhere.", "guidance": "Be efficient and think carefully.", "step": 0},
  {"kind": "strategy", "situation": "Start.", "guidance": "Look on countertop 1 for the apple first.", "step": 0},
  {"kind": "strategy", "situation": "Done.", "guidance": "Place the apple on diningtable 1.", "step": 5}
]}
```"""


def test_llm_reply_parsing():
    assert parse_llm_reply("I think the answer is yes.") is None
    assert parse_llm_reply('{"entries": []}') == []
    items = parse_llm_reply('Sure! {"entries": [{"kind": "strategy", "situation": "abc", "guidance": "defg"},'
                            ' {"kind": "tip", "situation": "x", "guidance": "y"}]} Hope this helps')
    assert [i.guidance for i in items] == ["defg"]
    assert len(parse_llm_reply(GOOD)) == 4


def test_llm_summariser_retries_grounds_and_caps():
    backend = Recorded(["not json at all", '{"entries": "oops"}', GOOD])
    summariser = LLMSummariser(backend, max_entries=2, retries=2)
    entries = summariser.summarise(alf_transform("heat"))
    assert summariser.counters.calls == 3 and summariser.counters.parse_failures == 2
    assert summariser.counters.ungrounded == 1  # "Be efficient" names nothing from the episode
    assert summariser.counters.over_cap == 1
    assert [e.kind for e in entries] == ["strategy", "strategy", "trajectory"]
    assert entries[0].source_observation == "You arrive at microwave 1. The microwave 1 is closed."
    assert entries[0].provenance.summariser == "llm:recorded"
    assert backend.prompts[0][0]["role"] == "system" and "heat apple 1 with microwave 1" in backend.prompts[0][1]["content"]


def test_llm_summariser_gives_up_after_retries():
    summariser = LLMSummariser(Recorded(["no"] * 3), retries=2)
    entries = summariser.summarise(alf_place())
    assert [e.kind for e in entries] == ["trajectory"] and summariser.counters.parse_failures == 3


def test_grounding():
    ep = web_success()
    assert is_grounded("Pick the 6.76 fl oz size before buying.", ep)
    assert not is_grounded("Always think step by step.", ep)
