"""Summarisers: turn one episode (docs/design.md §3) into experience entries (docs/design.md §4).

* :class:`RuleSummariser` is deterministic and offline. A successful episode yields subgoal-level
  strategies (ALFWorld: find and take the object, transform it with the right appliance, look at it under
  the lamp, place it; WebShop: query phrasing, which result to open, which options to click and when to
  buy); a failed one yields warnings (loops, repeated invalid actions, wrong object or receptacle, buying
  without the options asked for) and, in ALFWorld, the find strategy when it took the object the task
  names (where an object lies is true whatever happened after), or, when it never took that object, where
  it looked without seeing it; optionally (``sightings``) where every other object it saw lay. Every episode
  also yields one bounded ``trajectory`` excerpt for the raw-replay arm.
* :class:`LLMSummariser` asks any :class:`~expbank.chat.ChatBackend` for JSON, validates it, retries,
  caps the entries per episode and drops advice that is not grounded in the episode.

Summarisers never touch the bank: the write gate and dedup run when entries are added.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expbank.bank.entry import Entry, Outcome, Provenance
from expbank.chat import ChatBackend
from expbank.trajectory import Episode

TOKEN = re.compile(r"\w+|[^\w\s]")
SOURCES = {"expert", "random", "teacher", "human"}

# ---------------------------------------------------------------------------------------------- shared


def count_tokens(text: str) -> int:
    """Word-and-punctuation count: a tokenizer-free upper-bound proxy for subword tokens / 1.3."""
    return len(TOKEN.findall(text))


def truncate_tokens(text: str, limit: int) -> str:
    """The first ``limit`` tokens of ``text`` (whole tokens; an ellipsis marks a cut)."""
    matches = list(TOKEN.finditer(text))
    if len(matches) <= limit:
        return text
    return text[: matches[limit - 1].end()] + " …"


def source_of(episode: Episode) -> str:
    return episode.policy if episode.policy in SOURCES else "policy"


def _entry(episode: Episode, kind: str, situation: str, guidance: str, actions: list[str],
           step: int, summariser: str) -> Entry:
    step = min(max(step, 0), max(len(episode.steps) - 1, 0))
    observation = episode.steps[step].observation if episode.steps else ""
    return Entry(
        env=episode.env, task_type=episode.task_type, kind=kind, task=episode.task, task_id=episode.task_id,
        situation=situation, source_observation=observation, guidance=guidance, actions=actions,
        outcome=Outcome(success=episode.success, score=episode.score),
        provenance=Provenance(episodes=[episode.episode_id], task_ids=[episode.task_id], steps=[step],
                              source=source_of(episode), summariser=summariser),
    ).with_content_id()


def trajectory_excerpt(episode: Episode, max_tokens: int = 256, summariser: str = "rule") -> Entry:
    """The raw-replay entry: first and last observation and the action list, within ``max_tokens``.

    Budget: a quarter for the first observation (the situation), an eighth for the last, the rest for
    actions (head and tail kept, the middle elided).
    """
    first = episode.steps[0].observation if episode.steps else ""
    last = episode.steps[-1].observation if episode.steps else ""
    situation = truncate_tokens(first, max_tokens // 4)
    verdict = "succeeded" if episode.success else "failed"
    guidance = (f"Episode {verdict} (score {episode.score:.2f}) after {len(episode.steps)} steps. "
                f"Last observation: {truncate_tokens(last, max_tokens // 8)}")
    budget = max_tokens - count_tokens(situation) - count_tokens(guidance)
    actions = [s.action for s in episode.steps]
    kept = _fit_actions(actions, budget)
    entry = _entry(episode, "trajectory", situation, guidance, kept, 0, summariser)
    entry._raw_sources = {"first observation": first, "last observation": last,
                          "actions": "\n".join(actions)}
    return entry


def _fit_actions(actions: list[str], budget: int) -> list[str]:
    if sum(count_tokens(a) for a in actions) <= budget:
        return actions
    head: list[str] = []
    tail: list[str] = []
    used = count_tokens("…")
    i, j = 0, len(actions) - 1
    while i <= j:
        for side in ("head", "tail"):
            if i > j:
                break
            action = actions[i] if side == "head" else actions[j]
            cost = count_tokens(action)
            if used + cost > budget:
                return head + ["…"] + tail[::-1]
            used += cost
            if side == "head":
                head.append(action)
                i += 1
            else:
                tail.append(action)
                j -= 1
    return head + tail[::-1]


def generic_warnings(episode: Episode, goal: str, summariser: str) -> list[Entry]:
    """Loops and repeated invalid actions (any environment)."""
    warnings = []
    actions = [s.action for s in episode.steps]
    repeats = Counter(a for a in actions if not a.startswith(("look", "inventory")))
    for action, count in repeats.most_common(2):
        if count >= 3:
            step = actions.index(action)
            warnings.append(_entry(
                episode, "warning",
                f"Repeating '{action}' ({count} times) without getting closer to the goal. Task: {goal}",
                f"Do not repeat '{action}' once it has had its effect; go to a place or option not tried yet.",
                [action], step, summariser))
    invalid = [s for s in episode.steps if s.invalid]
    if len(invalid) >= 2:
        examples = list(dict.fromkeys(s.action for s in invalid))[:3]
        warnings.append(_entry(
            episode, "warning",
            f"Actions were rejected as invalid {len(invalid)} times. Task: {goal}",
            "Choose an action from the admissible list, verbatim; invalid actions such as "
            + ", ".join(f"'{a}'" for a in examples) + " waste steps.",
            examples, invalid[0].t, summariser))
    return warnings


# -------------------------------------------------------------------------------------------- ALFWorld

_ALF = re.compile(
    r"^(?P<verb>take|heat|cool|clean|use|move|put|go to|open|close|examine|slice)\s+(?P<rest>.*)$")
_TRANSFORM = {"heat": ("heated", "hot"), "cool": ("cooled", "cold"), "clean": ("cleaned", "clean")}


def bare_name(thing: str) -> str:
    """'apple 1' -> 'apple'."""
    return re.sub(r"\s+\d+$", "", thing.strip())


def taken(action: str) -> tuple[str, str] | None:
    """``(object, place)`` of an ALFWorld take ("take apple 1 from desk 1" -> ("apple 1", "desk 1")), else
    None: a take is a fact of the room, where that object lay."""
    match = _ALF.match(" ".join(action.lower().split()))
    if not match or match["verb"] != "take" or " from " not in match["rest"]:
        return None
    obj, _, place = match["rest"].partition(" from ")
    return obj.strip(), place.strip()


def takes(action: str, what: str) -> bool:
    """Whether ``action`` takes an object named ``what`` ("take apple 1 from desk 1" takes "apple")."""
    return (fact := taken(action)) is not None and bare_name(fact[0]) == what


def first_take(episode: Episode) -> int | None:
    """The index of the step that took the episode's goal object (a take the game accepted), or None."""
    goal = goal_object(episode.task)
    return next((t for t, step in enumerate(episode.steps)
                 if goal is not None and not step.invalid and takes(step.action, goal)), None)


def find_situation(episode: Episode, goal: str, what: str) -> str:
    """The situation of a find of ``what`` (a find strategy, a not-found warning, a sighting): phrased like the
    episode's first observation of the room with ``goal``, so a fresh episode of that room ranks it first."""
    room = episode.steps[0].observation.split("Your task is to:")[0].strip()
    return f"{room} Your task is to: {goal} Holding nothing; first find and take the {what}."


@dataclass
class _AlfState:
    holding: str | None = None
    done: list[str] = field(default_factory=list)
    placed: int = 0


def alfworld_strategies(episode: Episode, summariser: str = "rule") -> list[Entry]:
    """One strategy per subgoal of a successful ALFWorld episode; the span runs from the last subgoal."""
    goal = episode.task
    state = _AlfState()
    entries: list[Entry] = []
    start = 0
    for t, step in enumerate(episode.steps):
        if step.invalid:
            continue
        match = _ALF.match(step.action.strip())
        if not match:
            continue
        verb, rest = match["verb"], match["rest"]
        span = [s.action for s in episode.steps[start:t + 1] if not s.invalid]
        made = None
        if verb == "take":
            obj, _, where = rest.partition(" from ")
            what = bare_name(obj)
            if state.placed:
                situation = f"Task: {goal} One {what} is placed; holding nothing; find and take a second {what}."
            else:  # phrased like a first observation: this is the entry a fresh episode should find
                situation = find_situation(episode, goal, what)
            made = (situation,
                    f"Find the {what}: check the receptacles where a {what} is likely, opening closed ones "
                    f"(here it was in/on {where}), then {step.action}.")
            state.holding, state.done = what, []
        elif verb in _TRANSFORM and state.holding:
            obj, _, tool = rest.partition(" with ")
            participle, adjective = _TRANSFORM[verb]
            made = (f"Task: {goal} Holding the {bare_name(obj)}; it must be {participle} ({adjective}) "
                    f"before it is placed.",
                    f"Take the {bare_name(obj)} to the {bare_name(tool)} and {verb} it there: {step.action}.")
            state.done.append(participle)
        elif verb == "use":
            made = (f"Task: {goal} Holding the {state.holding or 'object'}; it must be looked at "
                    f"under a light.",
                    f"Carry the {state.holding or 'object'} to the {bare_name(rest)} and turn it on: {step.action}.")
        elif verb in ("move", "put") and state.holding:
            obj, dest = re.split(r"\s+(?:to|in/on|in|on)\s+", rest, maxsplit=1) if re.search(
                r"\s(?:to|in/on|in|on)\s", rest) else (rest, "")
            done = f", already {' and '.join(state.done)}" if state.done else ""
            made = (f"Task: {goal} Holding the {bare_name(obj)}{done}; it must be put in/on the {bare_name(dest)}.",
                    f"Go to {dest} (open it if closed) and place the {bare_name(obj)}: {step.action}.")
            state.holding, state.done = None, []
            state.placed += 1
        if made:
            entries.append(_entry(episode, "strategy", made[0], made[1], span, start, summariser))
            start = t + 1
    return entries


def _goal_words(goal: str) -> set[str]:
    """The words of an ALFWorld goal, to tell the objects and receptacles it names from others."""
    return set(re.findall(r"[a-z]+", goal.lower()))


def alfworld_find(episode: Episode, summariser: str = "rule") -> list[Entry]:
    """A failed episode's find strategy: where it took the object the task names, when that was its first
    subgoal. A win's first entry says the same; without it an actor that finds the food and then runs out of
    steps teaches the bank nothing about where the food is (docs/benchmarks.md, "Online evaluation")."""
    words = _goal_words(episode.task)
    first = alfworld_strategies(episode, summariser)[:1]
    fact = taken(first[0].actions[-1]) if first else None
    return first if fact and bare_name(fact[0]) in words else []


_GOAL_OBJECT = re.compile(r"^(?:put|find|look at|examine|clean|heat|cool)\s+(?:(?:a|an|some|two|the)\s+)?"
                          r"(?:(?:clean|hot|cool|cold)\s+)?([a-z]+)")
_CONTENTS = re.compile(r"(?:on the ([a-z]+ \d+)|in it), you see (.*)$")
NOT_FOUND = re.compile(r"^The (\w+) was not in/on .+ here when looked at")


def goal_object(goal: str) -> str | None:
    """The object an ALFWorld goal names ("put a clean apple in fridge." -> "apple"), else None."""
    match = _GOAL_OBJECT.match(" ".join(goal.lower().split()))
    return match[1] if match else None


def said(action: str) -> str:
    """An action as compared: lower case, single spaces."""
    return " ".join(action.lower().split())


def seen_at(episode: Episode, place: str) -> list[str]:
    """What the observations right after going to or opening ``place`` list there, lower case, in order
    ("On the desk 1, you see a mug 1." -> "a mug 1."; "In it, you see nothing." -> "nothing."). A closed
    receptacle lists nothing, so it is not a sighting."""
    sightings = []
    for step, after in zip(episode.steps, episode.steps[1:], strict=False):
        if said(step.action) not in (f"go to {place}", f"open {place}"):
            continue
        seen = _CONTENTS.search(" ".join(after.observation.lower().split()))
        if seen and seen[1] in (None, place) and place in after.observation.lower():
            sightings.append(seen[2])
    return sightings


def mentions(text: str, obj: str) -> bool:
    """Whether ``text`` names ``obj`` ("apple" or "apple 1") as a word ("pineapple 1" is not an apple)."""
    return re.search(rf"\b{re.escape(obj)}\b", text) is not None


def seen_without(episode: Episode, place: str, obj: str) -> bool:
    """Whether ``episode`` saw ``place`` without ``obj`` among what lay there."""
    return any(not mentions(seen, obj) for seen in seen_at(episode, place))


def alfworld_not_found(episode: Episode, summariser: str = "rule") -> list[Entry]:
    """A failed episode that never took the object its task names (a refused take is no take): a warning of
    where it looked and did not see it, for the situation a find strategy of that room is written for (so the
    two rank alike).

    Without it a room whose object moved is relearnt only by luck: an actor shown no entry of this room, or
    one that stopped being true, looks in the same places episode after episode (docs/benchmarks.md, "Stale
    memory"). :func:`expbank.bank.curation.retire_disproved` retires it once an episode finds the object at
    one of those places."""
    what = goal_object(episode.task)
    if what is None or not episode.steps or any(not step.invalid and takes(step.action, what)
                                                for step in episode.steps):
        return []
    actions = [said(step.action) for step in episode.steps]
    visited = [action[len("go to "):] for action in actions if action.startswith("go to ")]
    places = [place for place in dict.fromkeys(visited) if seen_without(episode, place, what)]
    if not places:
        return []
    first = actions.index(f"go to {places[0]}")
    return [_entry(episode, "warning", find_situation(episode, episode.task, what),
                   f"The {what} was not in/on {', '.join(places)} here when looked at: look elsewhere first.",
                   [f"go to {place}" for place in places], first, summariser)]


_ARTICLE = re.compile(r"^(?:a|an|some|the)\s+")


def listed(seen: str) -> list[str]:
    """The objects of a :func:`seen_at` listing ("a egg 1, a mug 2, and a pen 1." -> ["egg 1", "mug 2",
    "pen 1"]; "nothing." -> [])."""
    items = re.split(r",\s*(?:and\s+)?|\s+and\s+", seen.strip().rstrip("."))
    return [name for item in items if (name := _ARTICLE.sub("", item.strip())) and name != "nothing"]


def _with_object(goal: str, what: str) -> str:
    """The goal with its object replaced ("put some tomato on garbagecan." -> "put some egg on garbagecan."):
    a sighting's situation reads like the first observation of a task that needs ``what``."""
    own = goal_object(goal)
    return re.sub(rf"\b{re.escape(own)}\b", what, goal, count=1) if own else goal


def alfworld_sightings(episode: Episode, summariser: str = "rule") -> list[Entry]:
    """Where each object the episode saw lay, written as the find strategy of a task that needs it (but the
    task's own object once taken: its find strategy says it): a look at a place is a fact of the room whatever
    the task was, so an episode that misses its own object still teaches where the others are.

    The situation is phrased like the first observation of this room with the episode's goal made to need
    the object (a find strategy's situation is the real one), so a later task that needs it ranks it alike and
    ahead of other objects' finds; the actions are the way to it (open it when it was closed) and the
    take, so ``retire_disproved`` treats it as a take fact. Off by default (``train.bank.sightings``): a real
    ALFWorld episode sees tens of objects, each an entry."""
    if not episode.steps:
        return []
    took = {bare_name(fact[0]) for step in episode.steps if not step.invalid and (fact := taken(step.action))}
    written = took & {goal_object(episode.task)}  # the find strategy of the task's own object says it
    actions = [said(step.action) for step in episode.steps]
    entries: list[Entry] = []
    for place in dict.fromkeys(a[len("go to "):] for a in actions if a.startswith("go to ")):
        for obj in dict.fromkeys(obj for seen in seen_at(episode, place) for obj in listed(seen)):
            what = bare_name(obj)
            if what in written:
                continue
            written.add(what)  # the first place an object was seen is the one written
            way = [f"go to {place}"] + ([f"open {place}"] if f"open {place}" in actions else [])
            entries.append(_entry(
                episode, "strategy", find_situation(episode, _with_object(episode.task, what), what),
                f"Find the {what}: check the receptacles where a {what} is likely, opening closed ones "
                f"(here it was in/on {place}), then take {obj} from {place}.",
                way + [f"take {obj} from {place}"], actions.index(f"go to {place}"), summariser))
    return entries


def not_found(entry: Entry) -> tuple[str, list[str]] | None:
    """``(object, places)`` of an :func:`alfworld_not_found` warning, else None."""
    match = NOT_FOUND.match(entry.guidance) if entry.kind == "warning" else None
    return (match[1], [said(action)[len("go to "):] for action in entry.actions]) if match else None


def alfworld_warnings(episode: Episode, summariser: str = "rule") -> list[Entry]:
    goal = episode.task
    words = _goal_words(goal)
    warnings = generic_warnings(episode, goal, summariser)
    for step in episode.steps:
        match = _ALF.match(step.action.strip())
        if step.invalid or not match:
            continue
        if match["verb"] == "take":
            obj = bare_name(match["rest"].partition(" from ")[0])
            if obj not in words:
                warnings.append(_entry(
                    episode, "warning", f"About to pick up a {obj}, which the task does not ask for. Task: {goal}",
                    f"Take only the object named in the task; a {obj} is the wrong object here.",
                    [step.action], step.t, summariser))
                break
    for step in episode.steps:
        match = _ALF.match(step.action.strip())
        if step.invalid or not match or match["verb"] not in ("move", "put"):
            continue
        dest = bare_name(re.split(r"\s+(?:to|in/on|in|on)\s+", match["rest"], maxsplit=1)[-1])
        if dest not in words:
            warnings.append(_entry(
                episode, "warning", f"Holding an object next to a {dest}, which is not the goal receptacle. "
                                    f"Task: {goal}",
                f"Place the object only in/on the receptacle the task names; the {dest} is the wrong one.",
                [step.action], step.t, summariser))
            break
    return warnings


# --------------------------------------------------------------------------------------------- WebShop

_CLICK = re.compile(r"^click\[(?P<x>.*)\]$", re.IGNORECASE)
_SEARCH = re.compile(r"^search\[(?P<q>.*)\]$", re.IGNORECASE)
_ASIN = re.compile(r"^[a-z0-9]{10}$", re.IGNORECASE)
_CHROME = {"back to search", "next >", "< prev", "description", "features", "reviews", "attributes",
           "buy now", "search", "item-< prev", "prev", "next"}


def _result_title(observation: str, asin: str) -> str | None:
    parts = [p.strip() for p in observation.split("[SEP]")]
    for i, part in enumerate(parts[:-1]):
        if part.lower() == asin.lower():
            return parts[i + 1]
    return None


def webshop_strategies(episode: Episode, summariser: str = "rule") -> list[Entry]:
    goal = episode.task
    entries: list[Entry] = []
    query = None
    options: list[tuple[int, str]] = []
    for t, step in enumerate(episode.steps):
        if step.invalid:
            continue
        action = step.action.strip()
        if match := _SEARCH.match(action):
            query = match["q"]
            options = []
            entries.append(_entry(
                episode, "strategy", f"WebShop search page. Instruction: {goal}",
                f"Search with the product type and the key attributes of the instruction, as in: {action}.",
                [action], t, summariser))
        elif (match := _CLICK.match(action)) and _ASIN.match(match["x"]):
            title = _result_title(step.observation, match["x"]) or match["x"]
            entries.append(_entry(
                episode, "strategy", f"WebShop results for '{query or goal}'. Instruction: {goal}",
                f"Open the result whose title and price match the instruction, e.g. '{title[:80]}': {action}.",
                [action], t, summariser))
            options = []
        elif (match := _CLICK.match(action)) and match["x"].strip().lower() not in _CHROME:
            options.append((t, action))
        elif action.lower() == "click[buy now]":
            chosen = [a for _, a in options]
            if chosen:
                guidance = ("Select every option the instruction names before buying ("
                            + ", ".join(chosen) + "), then click[Buy Now].")
            else:
                guidance = "The item matches without options to set: click[Buy Now]."
            first = options[0][0] if options else t
            entries.append(_entry(
                episode, "strategy", f"WebShop product page of a matching item. Instruction: {goal}",
                guidance, chosen + [action], first, summariser))
    return entries


def webshop_warnings(episode: Episode, summariser: str = "rule") -> list[Entry]:
    goal = episode.task
    warnings = generic_warnings(episode, goal, summariser)
    options = 0
    for t, step in enumerate(episode.steps):
        action = step.action.strip()
        match = _CLICK.match(action)
        if _SEARCH.match(action) or (match and _ASIN.match(match["x"])):
            options = 0
        elif match and match["x"].strip().lower() not in _CHROME:
            options += 1
        elif action.lower() == "click[buy now]" and episode.score < 1.0:
            if options == 0 and re.search(r"\b(size|color|colour|pack|count|style|flavor|scent)\b", goal, re.I):
                situation = f"WebShop product page; no options selected yet. Instruction: {goal}"
                guidance = ("Buying without selecting the options the instruction asks for (size, color, ...) "
                            f"lost reward (score {episode.score:.2f}); select them first.")
            else:
                situation = f"WebShop product page of an item that only partly matches. Instruction: {goal}"
                guidance = (f"This purchase scored {episode.score:.2f}: compare the title, price and options "
                            "with every attribute of the instruction before clicking Buy Now.")
            warnings.append(_entry(episode, "warning", situation, guidance, [action], t, summariser))
            break
    return warnings


# ------------------------------------------------------------------------------------------ summarisers


class RuleSummariser:
    name = "rule"

    def __init__(self, excerpt_tokens: int = 256, sightings: bool = False):
        self.excerpt_tokens = excerpt_tokens
        self.sightings = sightings  # ALFWorld: also where each object seen lay (alfworld_sightings)

    def summarise(self, episode: Episode) -> list[Entry]:
        if episode.env == "alfworld":
            entries = alfworld_strategies(episode) if episode.success else \
                alfworld_find(episode) + alfworld_not_found(episode) + alfworld_warnings(episode)
            if self.sightings:
                entries += alfworld_sightings(episode)
        elif episode.env == "webshop":
            entries = webshop_strategies(episode) if episode.success else webshop_warnings(episode)
        else:
            entries = [] if episode.success else generic_warnings(episode, episode.task, self.name)
        return entries + [trajectory_excerpt(episode, self.excerpt_tokens)]


class _LLMItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: Literal["strategy", "warning"]
    situation: str = Field(min_length=3, max_length=600)
    guidance: str = Field(min_length=3, max_length=600)
    actions: list[str] = Field(default_factory=list, max_length=20)
    step: int = Field(0, ge=0)


LLM_SYSTEM = (
    "You are a JSON-only memory extractor for a text-game agent. Return one JSON object and nothing else: "
    '{"entries": [{"kind": "strategy" or "warning", "situation": "<one short sentence: when this applies>", '
    '"guidance": "<one or two sentences: what to do or avoid, naming the objects or actions>", '
    '"actions": ["<actions from the episode>"], "step": <index of the step it comes from>}]}. '
    "Strategies come from what worked, warnings from what failed. Ground every entry in the episode; "
    "an empty list is allowed."
)


@dataclass
class LLMCounters:
    calls: int = 0
    parse_failures: int = 0
    ungrounded: int = 0
    over_cap: int = 0


class LLMSummariser:
    """Entries written by a chat model, validated and grounded; plus the rule trajectory excerpt."""

    def __init__(self, backend: ChatBackend, max_entries: int = 3, retries: int = 2,
                 max_prompt_tokens: int = 3000, excerpt_tokens: int = 256, **sampling):
        self.backend = backend
        self.name = f"llm:{getattr(backend, 'name', 'model')}"
        self.max_entries = max_entries
        self.retries = retries
        self.max_prompt_tokens = max_prompt_tokens
        self.excerpt_tokens = excerpt_tokens
        self.sampling = sampling or {"temperature": 0.6, "max_new_tokens": 1024}
        self.counters = LLMCounters()

    def prompt(self, episode: Episode) -> list[dict]:
        lines = [f"Environment: {episode.env}. Task: {episode.task}",
                 f"Outcome: {'success' if episode.success else 'failure'} (score {episode.score:.2f})"]
        per_step = max(self.max_prompt_tokens // max(len(episode.steps), 1), 24)
        for step in episode.steps:
            flag = " (invalid)" if step.invalid else ""
            lines.append(f"[{step.t}] observation: {truncate_tokens(step.observation, per_step)}\n"
                         f"[{step.t}] action: {step.action}{flag}")
        lines.append(f"Extract at most {self.max_entries} reusable entries as JSON.")
        return [{"role": "system", "content": LLM_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]

    def summarise(self, episode: Episode) -> list[Entry]:
        items: list[_LLMItem] = []
        for _ in range(self.retries + 1):
            self.counters.calls += 1
            reply = self.backend.generate([self.prompt(episode)], **self.sampling)[0]
            parsed = parse_llm_reply(reply)
            if parsed is not None:
                items = parsed
                break
            self.counters.parse_failures += 1
        grounded = [item for item in items if is_grounded(item.guidance, episode)]
        self.counters.ungrounded += len(items) - len(grounded)
        self.counters.over_cap += max(len(grounded) - self.max_entries, 0)
        entries = [_entry(episode, item.kind, item.situation, item.guidance, item.actions, item.step, self.name)
                   for item in grounded[: self.max_entries]]
        return entries + [trajectory_excerpt(episode, self.excerpt_tokens, self.name)]


def parse_llm_reply(reply: str) -> list[_LLMItem] | None:
    """The validated items of a reply, or None when it holds no valid JSON object of the schema."""
    text = re.sub(r"^```(?:json)?|```$", "", reply.strip(), flags=re.MULTILINE).strip()
    candidates = [text]
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if match:
        candidates.append(match.group(0))
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        raw = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(raw, list):
            continue
        items = []
        for item in raw:
            try:
                items.append(_LLMItem.model_validate(item))
            except ValidationError:
                continue
        if items or not raw:
            return items
    return None


_STOP = {"the", "a", "an", "to", "from", "with", "in", "on", "of", "and", "it", "go", "take", "put",
         "move", "open", "close", "use", "click", "search", "then", "is", "at", "for", "now", "buy"}


def is_grounded(guidance: str, episode: Episode) -> bool:
    """True when the guidance names an object, receptacle or option that occurs in the episode's actions."""
    word = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
    vocabulary = set()
    for step in episode.steps:
        vocabulary.update(w for w in word.findall(step.action.lower()) if w not in _STOP and len(w) > 2)
    words = set(word.findall(guidance.lower()))
    return bool(vocabulary & words)


def make_summariser(kind: str = "rule", backend: ChatBackend | None = None, **options) -> RuleSummariser | LLMSummariser:
    if kind == "rule":
        return RuleSummariser(**options)
    if kind == "llm":
        if backend is None:
            raise ValueError("the llm summariser needs a chat backend")
        return LLMSummariser(backend, **options)
    raise ValueError(f"unknown summariser '{kind}' (rule or llm)")
