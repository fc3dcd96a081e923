"""What the policy sees each turn, built once for rollouts and SFT records (docs/design.md §5).

The system message states the environment's rules and the answer grammar (the prompt of every stage); the user
message of a step holds the task, the recent history, the observation, the admissible actions and, with fixed
retrieval, the ``<experience>`` block. With agentic retrieval the policy first writes ``<observe>`` and
``<retrieve>``; the experience then arrives in its own user message and the policy writes the remaining blocks.
Rollouts (``rollout.py``) and SFT records (``targets.py``) both build their messages with :func:`step_messages`
and :func:`after_retrieval`, so what SFT trains on is exactly what the policy is shown when it plays.
"""

from __future__ import annotations

from expbank.training.agent.protocol import ProtocolSpec

ENV_INSTRUCTIONS = {
    "alfworld": (
        "You are an agent in a household simulator (ALFWorld). Each turn you see the task, recent history, the "
        "current observation and the admissible actions. Reach the goal in as few steps as possible. Choose "
        "exactly one admissible action per turn and copy it verbatim."
    ),
    "webshop": (
        "You are a shopping agent on a web shop (WebShop). Find and buy the product that best matches the "
        "instruction, with the requested options, within the price limit. Actions are search[<query>] (when a "
        "search bar is shown) and click[<clickable text>]; copy clickables verbatim."
    ),
}
TAG_HELP = {
    "observe": "<observe>what matters in the current state</observe>",
    "retrieve": "<retrieve>a search query for the experience bank</retrieve>",
    "critique": "<critique>which retrieved items apply here and which do not, and why</critique>",
    "reconstruct": "<reconstruct>the useful guidance rewritten for this exact state, or NONE</reconstruct>",
    "action": "<action>one admissible action, verbatim</action>",
}


EXAMPLES = {
    "alfworld": {
        "observe": "I am in the middle of the room; an apple is often on a countertop.",
        "retrieve": "find an apple in a kitchen",
        "critique": "[1] applies: it is about finding food on countertops. [2] is about a lamp: not relevant.",
        "reconstruct": "Check countertop 1 first, then the fridge.",
        "action": "go to countertop 1",
    },
    "webshop": {
        "observe": "I am on the search page; the instruction asks for red running shoes under 50 dollars.",
        "retrieve": "search query wording for shoes with a colour option",
        "critique": "[1] applies: it searched with the product noun and colour. [2] is about tea: not relevant.",
        "reconstruct": "Search with the product noun and colour, then click the matching item.",
        "action": "search[red running shoes]",
    },
}


def system_prompt(env: str, spec: ProtocolSpec) -> str:
    """The system message: the environment's rules, the answer grammar and a one-turn example."""
    lines = [ENV_INSTRUCTIONS[env], "", "Answer with these tagged blocks, in this order:"]
    lines += [TAG_HELP[tag] for tag in spec.tags()]
    lines += ["", "Example answer:", "".join(f"<{t}>{EXAMPLES[env][t]}</{t}>" for t in spec.tags())]
    if spec.uses_memory:
        source = "trajectory excerpts from past episodes" if spec.memory == "raw" else "distilled experience"
        lines += ["", f"An <experience> block may give {source}. It can be wrong or irrelevant: judge it."]
        if spec.agentic:
            lines.append("Write <observe> and <retrieve> first; the experience for your query then follows.")
    return "\n".join(lines)


def step_message(task: str, history: list[tuple[str, str]], observation: str, admissible: list[str],
                 experience: str | None = None) -> str:
    """The user message of one step: task, recent (observation, action) pairs, observation, actions."""
    parts = [f"Task: {task}"]
    if history:
        parts.append("Recent history:")
        parts += [f"> observation: {obs}\n> action: {act}" for obs, act in history]
    parts.append(f"Current observation:\n{observation}")
    parts.append("Admissible actions:\n" + "\n".join(admissible))
    if experience:
        parts.append(experience)
    return "\n\n".join(parts)


def step_messages(env: str, spec: ProtocolSpec, task: str, history: list[tuple[str, str]], observation: str,
                  admissible: list[str], experience: str | None, history_length: int) -> list[dict]:
    """The messages of one step up to the policy's (first) reply.

    ``history`` is every (observation, action) pair so far; the last ``history_length`` are shown. The
    experience block goes into the user message with fixed retrieval and is left out with agentic retrieval
    (it follows the policy's query: :func:`after_retrieval`).
    """
    inline = experience if spec.uses_memory and not spec.agentic else None
    window = history[-history_length:] if history_length else []
    user = {"role": "user", "content": step_message(task, window, observation, admissible, inline)}
    return [user] if spec.system == "none" else [{"role": "system", "content": system_prompt(env, spec)}, user]


def after_retrieval(messages: list[dict], query_reply: str, experience: str) -> list[dict]:
    """Agentic retrieval: the policy's observe/retrieve reply, then the experience its query found."""
    return messages + [{"role": "assistant", "content": query_reply}, {"role": "user", "content": experience}]


def with_reply(messages: list[dict], reply: str) -> list[dict]:
    return messages + [{"role": "assistant", "content": reply}]
