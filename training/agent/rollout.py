"""Multi-turn rollouts of a chat policy over the env pool, generation batched across episodes.

One loop, read top to bottom:

1. keep every pool worker busy with an episode (reset to its task id);
2. for each live episode build the step's messages (``conversation.py``, with retrieved experience);
3. generate all replies in one batched call (agentic retrieval: a first call stops at ``</retrieve>``, the
   query is answered from the bank, and a second call writes critique → action);
4. parse each reply, map it to an action, step all environments at once;
5. finished episodes become results (:class:`RolloutResult`): the trajectory record of docs/design.md §3 (full model
   text, entry ids shown, reconstruction, the tokens, requests and retries the episode's replies cost), the
   episode's turn counters and its conversations.

An environment, backend or retrieval failure ends only the affected episodes, which are recorded with ``error``.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from expbank.bank.entry import Entry
from expbank.chat import UsageCounter
from expbank.envs.pool import EnvPool, WorkerError
from expbank.training.agent import conversation, protocol
from expbank.training.agent.act import choose_action
from expbank.training.agent.retrieve import Memory, RetrievalError
from expbank.training.agent.verdict import APPLIES, REJECTS, VerdictHead, verdict_prefix, written_verdict


@dataclass(frozen=True)
class RolloutJob:
    """One episode to play: its id (docs/design.md §3), task id and seed. ``draw`` tells apart episodes of one task
    and seed that should sample differently (a GRPO group member, ``"it3-g5"``); sampling is seeded from these
    three, never from the id, whose policy part is a path: a model moved to another folder samples the same."""

    episode_id: str
    task_id: str
    seed: int
    draw: str = ""


@dataclass
class RolloutSettings:
    env: str
    spec: protocol.ProtocolSpec
    history_length: int = 3
    temperature: float = 0.0
    max_new_tokens: int = 128
    arm: str = "none"
    run_id: str = "eval"
    split: str = "valid_unseen"
    action: str = "generated"  # decoding.action: generated | scored (the backend scores admissible actions)
    verdict_head: VerdictHead | None = None  # decoding.verdict: head (agent/verdict.py)


@dataclass
class TurnStats:
    """Per-episode turn counters (evaluation writes them to ``episode_stats.jsonl``; GRPO reads the format score)."""

    retrieval_turns: int = 0
    none_reconstructions: int = 0
    reconstruct_turns: int = 0
    format_violations: int = 0
    rescored_actions: int = 0  # decoding.action=scored: turns whose written action was not the one taken
    head_verdicts: int = 0  # decoding.verdict=head: verdicts the head wrote over the policy's own
    turns: int = 0
    format_score: float = 0.0
    source_similarities: list[float] = field(default_factory=list)


@dataclass
class RolloutResult:
    """One finished episode: its trajectory record, its turn counters and, per policy turn, the messages the
    policy saw with its replies (what training rows are built from)."""

    record: dict[str, Any]
    stats: TurnStats
    conversations: list[list[dict]]

    @property
    def episode_id(self) -> str:
        return self.record["episode_id"]


@dataclass
class _Live:
    """An episode in flight in one pool slot."""

    job: RolloutJob
    observation: str
    info: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    history: list[tuple[str, str]] = field(default_factory=list)
    turns_ok: list[bool] = field(default_factory=list)
    conversations: list[list[dict]] = field(default_factory=list)
    stats: TurnStats = field(default_factory=TurnStats)
    usage: UsageCounter = field(default_factory=UsageCounter)
    kept_entries: list[Entry] | None = None  # memory.observation first: the entries every step shows


def _experience(memory: Memory | None, live: _Live, env: str, query: str | None = None) -> tuple[str | None, list[str]]:
    """The ``<experience>`` block for this step and the ids of the entries it shows (entries of ``env`` only)."""
    if memory is None:
        return None, []
    keep = query is None and memory.observation == "first"  # the same query every step: retrieve it once
    entries = live.kept_entries if keep else None
    if entries is None:
        first = live.history[0][0] if live.history else live.observation
        observation = memory.query_observation(live.observation, first)
        entries = memory.retrieve(task=live.info["task"], observation=observation, query=query,
                                  task_id=live.job.task_id, env=env)
        if keep:
            live.kept_entries = entries
    live.stats.source_similarities += memory.source_similarities(live.observation, entries)
    return memory.block(entries), [entry.id for entry in entries]


def _messages(settings: RolloutSettings, live: _Live, experience: str | None) -> list[dict]:
    return conversation.step_messages(settings.env, settings.spec, live.info["task"], live.history,
                                      live.observation, live.info["admissible_actions"], experience,
                                      settings.history_length)


def _generate(backend, conversations: list[list[dict]], settings: RolloutSettings, stop: list[str],
              seed: int, lives: list[_Live], prefixes: list[str] | None = None) -> list[str] | Exception:
    """One batched call (each reply continuing its ``prefixes`` entry, if given); each episode's share of what it
    cost (the backend's ``last_usage``) goes to it."""
    extra = {"prefixes": prefixes} if prefixes is not None else {}
    try:
        replies = backend.generate(conversations, temperature=settings.temperature,
                                   max_new_tokens=settings.max_new_tokens, stop=stop, seed=seed, **extra)
    except Exception as err:  # recorded on every episode of the batch; the run goes on
        return err
    usage = getattr(backend, "last_usage", None) or []
    for live, used in zip(lives, usage if len(usage) == len(lives) else [], strict=False):
        live.usage.prompt_tokens += used.prompt_tokens
        live.usage.completion_tokens += used.completion_tokens
        live.usage.calls += used.calls
        live.usage.retries += used.retries
    return replies


def _head_verdicts(backend, conversations: list[list[dict]], replies: list[str], shown: list[int],
                   lives: list[_Live], settings: RolloutSettings, seed: int) -> list[str] | Exception:
    """``decoding.verdict: head`` (``agent/verdict.py``): item by item, the head reads the policy's state after
    ``[i]`` in its critique; where the reply wrote the other verdict, it is cut there, the head's words are put
    in and the policy writes the rest again (one batched call per item that changed any reply)."""
    head = settings.verdict_head
    replies = list(replies)
    for item in range(1, max(shown, default=0) + 1):
        rows = [(i, prefix) for i, reply in enumerate(replies)
                if item <= shown[i] and (prefix := verdict_prefix(reply, item)) is not None]
        if not rows:
            continue
        try:
            states = backend.hidden_states([conversations[i] for i, _ in rows], [p for _, p in rows], head.layer,
                                           base=head.base)
        except Exception as err:  # recorded on every episode of the batch, like a generation failure
            return err
        redo = []
        for (i, prefix), applies in zip(rows, head.applies(states), strict=True):
            words = APPLIES if applies else REJECTS
            if written_verdict(replies[i], prefix) != words:
                redo.append((i, f"{prefix} {words}"))
                lives[i].stats.head_verdicts += 1
        if not redo:
            continue
        rest = _generate(backend, [conversations[i] for i, _ in redo], settings, [protocol.ACTION_STOP], seed,
                         [lives[i] for i, _ in redo], prefixes=[prefix for _, prefix in redo])
        if isinstance(rest, Exception):
            return rest
        for (i, prefix), text in zip(redo, rest, strict=True):
            replies[i] = prefix + text
    return replies


def _scored(backend, conversations: list[list[dict]], replies: list[str], lives: list[_Live],
            temperature: float) -> list[str]:
    """``decoding.action: scored``: each reply keeps its text up to its first ``<action>`` and takes an admissible
    action by the probability the policy gives it there (docs/design.md §5): the likeliest at temperature 0, else
    one drawn from their softmax at ``temperature``, seeded by the episode and step so reruns draw the same.
    A turn whose written action differs from the one taken is counted. The first ``<action>``, because the
    parser reads the first action block: a broken reply that opens ``<action>`` twice must not have the
    scored action appended after text the environment would then receive."""
    prefixes = [reply.split("<action>", 1)[0] + "<action>" for reply in replies]
    admissible = [live.info["admissible_actions"] for live in lives]
    scores = backend.score_options(conversations, prefixes,
                                   [[action + protocol.ACTION_STOP for action in actions] for actions in admissible])
    texts = []
    for reply, prefix, actions, scored, live in zip(replies, prefixes, admissible, scores, lives, strict=True):
        if temperature > 0:
            top = max(scored)
            draw = random.Random(f"{live.job.task_id}-s{live.job.seed}-{live.job.draw}-t{len(live.steps)}")
            chosen = draw.choices(actions, [math.exp((score - top) / temperature) for score in scored])[0]
        else:
            chosen = actions[max(range(len(scored)), key=scored.__getitem__)]
        live.stats.rescored_actions += choose_action(reply, protocol.parse_output(reply, ()), actions).action != chosen
        texts.append(prefix + chosen + protocol.ACTION_STOP)
    return texts


def _policy_turns(backend, memory: Memory | None, settings: RolloutSettings, lives: dict[int, _Live],
                  turn_seed: int) -> dict[int, tuple[str, list[str], list[dict]] | str]:
    """Per live slot: the full model text, the entry ids shown and the whole conversation of the turn
    (the messages the policy saw plus its replies, which training rows are built from), or an error. A
    retrieval that fails (a bank service down) ends only its own episode, like a backend error."""
    spec = settings.spec
    errors: dict[int, str] = {}

    def experience(slot: int, query: str | None = None) -> tuple[str | None, list[str]] | None:
        try:
            return _experience(memory, lives[slot], settings.env, query)
        except RetrievalError as err:
            errors[slot] = f"retrieval error: {err}"
            return None

    if spec.agentic:
        slots = list(lives)
        first = [_messages(settings, lives[s], None) for s in slots]
        replies = _generate(backend, first, settings, ["</retrieve>"], turn_seed, [lives[s] for s in slots])
        if isinstance(replies, Exception):
            return {s: f"backend error: {replies}" for s in slots}
        kept, conversations, shown = [], [], {}
        for slot, messages, reply in zip(slots, first, replies, strict=True):
            query = protocol.parse_output(reply, spec.first_stage_tags()).blocks.get("retrieve") or None
            if (found := experience(slot, query)) is None:
                continue
            kept.append(slot)
            shown[slot] = (reply, found[1])
            conversations.append(conversation.after_retrieval(messages, reply, found[0]))
        if not kept:
            return errors
        second = _generate(backend, conversations, settings, [protocol.ACTION_STOP], turn_seed + 1,
                           [lives[s] for s in kept])
        if settings.verdict_head is not None and not isinstance(second, Exception):
            second = _head_verdicts(backend, conversations, second, [len(shown[s][1]) for s in kept],
                                    [lives[s] for s in kept], settings, turn_seed + 2)
        if isinstance(second, Exception):
            return errors | {s: f"backend error: {second}" for s in kept}
        if settings.action == "scored":
            second = _scored(backend, conversations, second, [lives[s] for s in kept], settings.temperature)
        return errors | {s: (shown[s][0] + text, shown[s][1], conversation.with_reply(messages, text))
                         for s, text, messages in zip(kept, second, conversations, strict=True)}
    kept, conversations, shown = [], [], {}
    for slot in lives:
        found = experience(slot) if spec.uses_memory else (None, [])
        if found is None:
            continue
        kept.append(slot)
        shown[slot] = found[1]
        conversations.append(_messages(settings, lives[slot], found[0]))
    if not kept:
        return errors
    replies = _generate(backend, conversations, settings, [protocol.ACTION_STOP], turn_seed, [lives[s] for s in kept])
    if settings.verdict_head is not None and not isinstance(replies, Exception):
        replies = _head_verdicts(backend, conversations, replies, [len(shown[s]) for s in kept],
                                 [lives[s] for s in kept], settings, turn_seed + 1)
    if isinstance(replies, Exception):
        return errors | {s: f"backend error: {replies}" for s in kept}
    if settings.action == "scored":
        replies = _scored(backend, conversations, replies, [lives[s] for s in kept], settings.temperature)
    return errors | {s: (text, shown[s], conversation.with_reply(messages, text))
                     for s, text, messages in zip(kept, replies, conversations, strict=True)}


def _result(settings: RolloutSettings, live: _Live, policy: str, error: str | None) -> RolloutResult:
    info = live.info
    won = bool(info.get("won")) and error is None
    record = {
        "episode_id": live.job.episode_id, "run_id": settings.run_id, "arm": settings.arm, "env": settings.env,
        "split": settings.split, "task_id": live.job.task_id, "task_type": info.get("task_type", ""),
        "task": info.get("task", ""), "policy": policy, "seed": live.job.seed, "steps": live.steps,
        "success": won, "score": float(info.get("score", 0.0)) if error is None else 0.0,
        "num_steps": len(live.steps), "num_invalid": sum(s["invalid"] for s in live.steps), "error": error,
        "prompt_tokens": live.usage.prompt_tokens, "completion_tokens": live.usage.completion_tokens,
        "requests": live.usage.calls, "retries": live.usage.retries,
    }
    live.stats.turns = len(live.turns_ok)
    live.stats.format_score = protocol.format_score(live.turns_ok)
    return RolloutResult(record, live.stats, live.conversations)


def rollout(backend, pool: EnvPool, jobs: Iterable[RolloutJob], settings: RolloutSettings,
            memory: Memory | None = None) -> Iterator[RolloutResult]:
    """Play ``jobs`` with ``backend``; yield one :class:`RolloutResult` per episode, in the order they end."""
    pending = list(jobs)[::-1]
    lives: dict[int, _Live] = {}
    turn = 0
    while pending or lives:
        free = [slot for slot in range(pool.size) if slot not in lives][: len(pending)]
        starts = {slot: pending.pop() for slot in free}
        for slot, reply in pool.reset({s: (j.task_id, j.seed) for s, j in starts.items()}).items():
            if isinstance(reply, WorkerError):
                yield _result(settings, _Live(starts[slot], "", {}), backend.name, reply.message)
                continue
            lives[slot] = _Live(starts[slot], *reply)
        if not lives:
            continue
        outputs = _policy_turns(backend, memory, settings, lives, seed_for(lives, turn))
        turn += 1
        actions: dict[int, str] = {}
        for slot, output in outputs.items():
            live = lives[slot]
            if isinstance(output, str):  # backend error: the episode ends with it
                yield _result(settings, live, backend.name, output)
                del lives[slot]
                continue
            text, shown, messages = output
            live.conversations.append(messages)
            parsed = protocol.parse_output(text, settings.spec.tags())
            choice = choose_action(text, parsed, live.info["admissible_actions"])
            live.turns_ok.append(choice.format_ok)
            live.stats.retrieval_turns += bool(shown)
            live.stats.format_violations += not choice.format_ok
            if "reconstruct" in parsed.blocks:
                live.stats.reconstruct_turns += 1
                live.stats.none_reconstructions += parsed.reconstruction is None
            live.steps.append({"t": live.info["step"], "observation": live.observation,
                               "admissible_actions": live.info["admissible_actions"], "output": text,
                               "action": choice.action, "retrieved": shown,
                               "reconstruction": parsed.reconstruction})
            actions[slot] = choice.action
        for slot, reply in pool.step(actions).items():
            live = lives[slot]
            if isinstance(reply, WorkerError):
                live.steps[-1].update(reward=0.0, invalid=False)
                yield _result(settings, live, backend.name, reply.message)
                del lives[slot]
                continue
            observation, reward, terminated, truncated, info = reply
            live.steps[-1].update(reward=float(reward), invalid=bool(info["invalid"]))
            live.history.append((live.observation, actions[slot]))
            live.observation, live.info = observation, info
            if terminated or truncated:
                yield _result(settings, live, backend.name, None)
                del lives[slot]


def seed_for(lives: dict[int, _Live], turn: int) -> int:
    """A sampling seed fixed by the episodes in the batch and the turn, so reruns sample the same."""
    keys = (f"{live.job.task_id}-s{live.job.seed}-{live.job.draw}" for live in lives.values())
    return (sum(zlib.crc32(key.encode()) for key in keys) + 7919 * turn) % (2**31)
