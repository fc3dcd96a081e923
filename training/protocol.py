"""The five-stage policy protocol (DESIGN.md §5): one grammar for prompts, parsing, format score and SFT/GRPO rows.

Each step the policy answers with tagged blocks::

    <observe>…</observe> [<retrieve>query</retrieve>] [<critique>…</critique> <reconstruct>…</reconstruct>]
    <action>one admissible action</action>

Which blocks are expected depends on the memory mode (``none`` has only observe and action), the retrieval
mode (``agentic`` adds ``retrieve``, generated before the experience block is inserted) and ``reconstruct``
(off drops critique and reconstruct). Everything here is plain string work so tests, SFT data building and
GRPO share exactly one definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from expbank.envs.alfworld.vocabulary import translate_vocabulary

PROMPT_VERSION = "expbank-protocol-v1"
ACTION_STOP = "</action>"  # generation stops once the action is written
TAGS = ("observe", "retrieve", "critique", "reconstruct", "action")
_BLOCK = re.compile(r"<(observe|retrieve|critique|reconstruct|action)>(.*?)</\1>", re.DOTALL)
_OPEN = re.compile(r"<(observe|retrieve|critique|reconstruct|action)>")


@dataclass(frozen=True)
class ProtocolSpec:
    """What a policy is asked to write: memory mode, retrieval mode and whether it reconstructs."""

    memory: str = "none"  # none | raw | bank
    retrieval: str = "fixed"  # fixed | agentic
    reconstruct: bool = True

    def __post_init__(self) -> None:
        if self.memory not in ("none", "raw", "bank"):
            raise ValueError(f"memory must be none, raw or bank, not {self.memory!r}")
        if self.retrieval not in ("fixed", "agentic"):
            raise ValueError(f"retrieval must be fixed or agentic, not {self.retrieval!r}")

    @property
    def uses_memory(self) -> bool:
        return self.memory != "none"

    @property
    def agentic(self) -> bool:
        return self.uses_memory and self.retrieval == "agentic"

    def tags(self) -> tuple[str, ...]:
        """The blocks a complete answer holds, in order."""
        tags = ["observe"]
        if self.agentic:
            tags.append("retrieve")
        if self.uses_memory and self.reconstruct:
            tags += ["critique", "reconstruct"]
        return (*tags, "action")

    def first_stage_tags(self) -> tuple[str, ...]:
        """With agentic retrieval, what the policy writes before the experience arrives."""
        return ("observe", "retrieve") if self.agentic else self.tags()

    def second_stage_tags(self) -> tuple[str, ...]:
        return tuple(t for t in self.tags() if t not in ("observe", "retrieve"))


@dataclass
class ParsedOutput:
    """Tag contents found in a model answer and every way the answer breaks the grammar."""

    blocks: dict[str, str] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    @property
    def action(self) -> str | None:
        return self.blocks.get("action")

    @property
    def reconstruction(self) -> str | None:
        text = self.blocks.get("reconstruct")
        return None if text is None or text.strip().upper() == "NONE" else text.strip()


def parse_output(text: str, expected: tuple[str, ...]) -> ParsedOutput:
    """Extract each tagged block and list violations (missing, repeated, unexpected, out of order, empty)."""
    parsed = ParsedOutput()
    found = [(m.group(1), m.group(2).strip()) for m in _BLOCK.finditer(text)]
    names = [name for name, _ in found]
    for name, content in found:
        if name in parsed.blocks:
            parsed.violations.append(f"repeated <{name}>")
            continue
        parsed.blocks[name] = content
    if len(_OPEN.findall(text)) > len(found):
        parsed.violations.append("unclosed tag")
        tail = text.rsplit("<action>", 1)
        if "action" not in parsed.blocks and len(tail) == 2 and "</action>" not in tail[1]:
            # a reply cut off (token limit) right after its action still names the action
            parsed.blocks["action"] = tail[1].strip().splitlines()[0].strip() if tail[1].strip() else ""
            names.append("action")
    for name in expected:
        if name not in parsed.blocks:
            parsed.violations.append(f"missing <{name}>")
    for name in parsed.blocks:
        if name not in expected:
            parsed.violations.append(f"unexpected <{name}>")
    order = [n for n in dict.fromkeys(names) if n in expected]
    if order != [n for n in expected if n in order]:
        parsed.violations.append("tags out of order")
    if "action" in parsed.blocks and not parsed.blocks["action"]:
        parsed.violations.append("empty <action>")
    return parsed


def normalise_action(text: str) -> str:
    """Lower case, single spaces, no surrounding quotes, backticks or final full stop."""
    text = text.strip().strip("`'\"").strip()
    text = re.sub(r"\s+", " ", text).lower()
    return text[:-1].rstrip() if text.endswith(".") else text


def match_admissible(candidate: str, admissible: list[str]) -> str | None:
    """``candidate`` as one of ``admissible`` (exact, then normalised, then the other vocabulary), or None.

    WebShop lists the literal ``search[<query>]`` when a search bar is present: any non-empty ``search[...]``
    then matches, keeping the query as written.
    """
    if candidate in admissible:
        return candidate
    normalised = normalise_action(candidate)
    if not normalised:
        return None
    by_norm = {normalise_action(a): a for a in admissible}
    if normalised in by_norm:
        return by_norm[normalised]
    translated = translate_vocabulary(normalised, list(by_norm))
    if translated is not None:
        return by_norm[translated]
    search = re.match(r"^search\[(.+)\]$", candidate.strip(), re.IGNORECASE | re.DOTALL)
    if search and "search[<query>]" in admissible and search[1].strip():
        return f"search[{search[1].strip()}]"
    return None


@dataclass(frozen=True)
class ActionChoice:
    """The action taken for a turn and how it was found."""

    action: str
    how: str  # exact | normalised | untagged | invalid
    format_ok: bool


def choose_action(text: str, parsed: ParsedOutput, admissible: list[str]) -> ActionChoice:
    """Map a model answer to an environment action (DESIGN.md §5).

    Tagged action: exact or normalised match, else it is sent as written and the env marks it invalid.
    No ``<action>`` tag: the last line that matches an admissible action is taken, and the turn counts as a
    format violation rather than an invalid action.
    """
    format_ok = not parsed.violations
    if parsed.action:
        matched = match_admissible(parsed.action, admissible)
        if matched is None:
            return ActionChoice(parsed.action, "invalid", format_ok)
        return ActionChoice(matched, "exact" if matched == parsed.action else "normalised", format_ok)
    for line in reversed([line for line in text.splitlines() if line.strip()]):
        cleaned = re.sub(r"^(?:action|>)\s*:?\s*", "", line.strip(), flags=re.IGNORECASE)
        matched = match_admissible(cleaned, admissible)
        if matched is not None:
            return ActionChoice(matched, "untagged", False)
    return ActionChoice(parsed.action or "", "invalid", False)


def format_score(turns_ok: list[bool]) -> float:
    """The fraction of an episode's policy turns that parse under the grammar (0 for no turns)."""
    return sum(turns_ok) / len(turns_ok) if turns_ok else 0.0


# --- prompts ------------------------------------------------------------------------------------------

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
