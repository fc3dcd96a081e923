"""What SFT teaches each stage to write: template targets for observe, retrieve, critique and reconstruct.

For every step of an expert episode a record holds exactly what the policy sees during rollouts (built by
``conversation.py``: system prompt, task, windowed history, observation, admissible actions and, with memory,
the experience retrieved with the episode's own task excluded) and a target answer written from templates:

- observe: a short statement of the state (:func:`observe_note`);
- retrieve: the task type and the observation's first sentence (agentic retrieval);
- critique: for each item shown, whether it applies (same kind of task) and why;
- reconstruct: the first applicable item's guidance rewritten for this step, or ``NONE``;
- action: the expert's action.
"""

from __future__ import annotations

import re

from expbank.bank.entry import Entry
from expbank.training.agent import conversation
from expbank.training.agent.protocol import ProtocolSpec
from expbank.training.agent.retrieve import Memory
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
                  entries: list[Entry]) -> dict[str, str]:
    """Template answers for each tag of ``spec`` (offline; a teacher model can replace them later)."""
    blocks = {"observe": observe_note(observation, task),
              "retrieve": f"{task_type.replace('_', ' ')}: {_first_sentence(observation, 80)}",
              "action": action}
    applicable = [i for i, e in enumerate(entries, 1) if e.task_type == task_type]
    notes = []
    for i, entry in enumerate(entries, 1):
        verdict = "applies: same kind of task" if i in applicable else f"does not apply: it is about {entry.task}"
        notes.append(f"[{i}] {verdict}")
    blocks["critique"] = " ".join(notes) if notes else "No experience was shown."
    if applicable:
        entry = entries[applicable[0] - 1]
        blocks["reconstruct"] = f"{_first_sentence(entry.guidance, 200)} Here that means: {action}."
    else:
        blocks["reconstruct"] = "NONE"
    return blocks


def _render(blocks: dict[str, str], tags: tuple[str, ...]) -> str:
    return "".join(f"<{tag}>{blocks[tag]}</{tag}>" for tag in tags)


def records_from_episode(episode: Episode, spec: ProtocolSpec, memory: Memory | None,
                         history_length: int) -> list[list[dict]]:
    """One conversation per step of a successful expert episode, built as the rollout builds its turns."""
    records = []
    history: list[tuple[str, str]] = []
    for step in episode.steps:
        entries = []
        if memory is not None:
            entries = memory.retrieve(task=episode.task, observation=step.observation,
                                      exclude_task_ids=(episode.task_id,))
        experience = conversation.experience_block(entries) if spec.uses_memory else None
        blocks = target_blocks(spec, episode.task, step.observation, episode.task_type, step.action, entries)
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
