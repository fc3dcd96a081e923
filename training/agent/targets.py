"""What SFT teaches each stage to write: template targets for observe, retrieve, critique and reconstruct.

For every step of an expert episode a record holds exactly what the policy sees during rollouts (built by
``conversation.py``: system prompt, task, windowed history, observation, admissible actions and, with memory,
the experience retrieved with the episode's own task excluded) and a target answer written from templates:

- observe: a short statement of the state (:func:`observe_note`);
- retrieve: the task type and the observation's first sentence (agentic retrieval);
- critique: for each item shown, whether it applies and why;
- reconstruct: what the first applicable item says for this step, or ``NONE``;
- action: the expert's action.

What "applies" means depends on the environment. In ALFWorld an item applies when it records where the goal
object was found *in this room* (an entry made in the same ALFRED scene whose actions take that object):
"[1] applies: this room", reconstructed as the item's own action "take egg 1 from drawer 1" (verbatim, so the
policy copies it rather than rephrasing it). A not-found warning of this room about the goal object applies
too, as where the object is not: "[1] applies: not at sidetable 1", reconstructed "egg: not at sidetable 1".
Any other item does not ("another room", or "not where the egg is" for a same-room entry about another
object): where things are kept is the fact an ALFWorld episode can carry to the next, and it holds only in its
room. In WebShop an item applies when it is about the same kind
of task; its guidance's first sentence is reconstructed.
"""

from __future__ import annotations

import re

from expbank.bank.entry import Entry
from expbank.bank.summarise import not_found
from expbank.envs.alfworld.games import task_parts
from expbank.training.agent import conversation
from expbank.training.agent.protocol import ProtocolSpec
from expbank.training.agent.retrieve import NO_EXPERIENCE, Memory, made_in_room
from expbank.trajectory import Episode


def _first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence[:limit]


_PAGE_CHROME = {"webshop", "instruction:", "back to search", "< prev", "next >", "search"}


def observe_note(observation: str, task: str, limit: int = 80) -> str:
    """A short statement of the state: ALFWorld's first sentence, or WebShop's page content without the
    instruction and navigation it repeats on every page (short notes keep generation cheap)."""
    if "[SEP]" not in observation:
        return _first_sentence(observation, limit)
    segments = [s.strip() for s in observation.split("[SEP]")]
    content = [s for s in segments if s and s.lower() not in _PAGE_CHROME and s != task]
    if not content:
        return "search page"
    return "; ".join(content[:2])[:limit]


def target_blocks(spec: ProtocolSpec, task: str, observation: str, task_type: str, action: str,
                  entries: list[Entry], env: str = "webshop", task_id: str = "") -> dict[str, str]:
    """Template answers for each tag of ``spec`` (offline; a teacher model can replace them later)."""
    blocks = {"observe": observe_note(observation, task),
              "retrieve": f"{task_type.replace('_', ' ')}: {_first_sentence(observation, 80)}",
              "action": action}
    judge = _alfworld_verdict if env == "alfworld" else _task_type_verdict
    verdicts = [judge(entry, task_type, task_id, action) for entry in entries]
    blocks["critique"] = " ".join(f"[{i}] {verdict}" for i, (verdict, _) in enumerate(verdicts, 1)) \
        or "No experience was shown."
    applied = next((reconstruction for _, reconstruction in verdicts if reconstruction), None)
    blocks["reconstruct"] = applied or "NONE"
    return blocks


_VERDICT = re.compile(r"\[(\d+)\]\s*(does not apply|applies)")


def rejects_every_item(critique: str, shown: int) -> bool:
    """Whether a written ``<critique>`` says "does not apply" of each of the ``shown`` items, in this module's
    verdict words (a reply that rejects every item in its critique declines the memory, whatever it
    reconstructs)."""
    verdicts = {int(i): verdict for i, verdict in _VERDICT.findall(critique)}
    return shown > 0 and all(verdicts.get(i) == "does not apply" for i in range(1, shown + 1))


_TAKE = re.compile(r"^take (?P<obj>.+?) \d+ from (?P<place>.+)$")


def taking(entry: Entry, obj: str) -> str | None:
    """The action of ``entry`` that took ``obj`` ("take egg 1 from drawer 1"), or None."""
    for action in entry.actions:
        action = " ".join(action.lower().split())
        match = _TAKE.match(action)
        if match and match["obj"] == obj:
            return action
    return None


def _alfworld_verdict(entry: Entry, task_type: str, task_id: str, action: str) -> tuple[str, str | None]:
    """(critique, reconstruction or None) for one item in ALFWorld: does it say where the goal object is here?"""
    parts = task_parts(task_id)
    if parts is None:
        return "does not apply: no room to compare", None
    if not made_in_room(entry, parts["room"]):
        return "does not apply: another room", None
    obj = parts["object"].lower()
    missed = not_found(entry)
    if missed is not None and missed[0] == obj:
        places = ", ".join(missed[1])
        return f"applies: not at {places}", f"{obj}: not at {places}"
    took = taking(entry, obj)
    if took is None:
        return f"does not apply: not where the {obj} is", None
    return "applies: this room", took


def _task_type_verdict(entry: Entry, task_type: str, task_id: str, action: str) -> tuple[str, str | None]:
    if entry.task_type != task_type:
        return f"does not apply: it is about {entry.task}", None
    return "applies: same kind of task", f"{_first_sentence(entry.guidance, 200)} Here that means: {action}."


def _render(blocks: dict[str, str], tags: tuple[str, ...]) -> str:
    return "".join(f"<{tag}>{blocks[tag]}</{tag}>" for tag in tags)


def records_from_episode(episode: Episode, spec: ProtocolSpec, memory: Memory | None,
                         history_length: int, shown: list[Entry] | None = None) -> list[list[dict]]:
    """One conversation per step of a successful expert episode, built as the rollout builds its turns; with
    ``shown``, every step's block holds those entries instead of what ``memory`` retrieves."""
    records = []
    history: list[tuple[str, str]] = []
    for step in episode.steps:
        entries = list(shown or [])
        if memory is not None and shown is None:
            observation = memory.query_observation(step.observation, episode.steps[0].observation)
            entries = memory.retrieve(task=episode.task, observation=observation, task_id=episode.task_id,
                                      env=episode.env)
        experience = (memory.block(entries) if memory else NO_EXPERIENCE) if spec.uses_memory else None
        blocks = target_blocks(spec, episode.task, step.observation, episode.task_type, step.action, entries,
                               episode.env, episode.task_id)
        messages = conversation.step_messages(episode.env, spec, episode.task, history, step.observation,
                                              step.admissible_actions, experience, history_length)
        if spec.agentic:
            messages = conversation.after_retrieval(messages, _render(blocks, spec.first_stage_tags()), experience)
            messages = conversation.with_reply(messages, _render(blocks, spec.second_stage_tags()))
        else:
            messages = conversation.with_reply(messages, _render(blocks, spec.tags()))
        records.append(messages)
        history.append((step.observation, step.action))
    return records
