"""The five-stage policy grammar (docs/design.md §5): which tagged blocks an answer holds, parsing, format score.

Each step the policy answers with tagged blocks::

    <observe>…</observe> [<retrieve>query</retrieve>] [<critique>…</critique> <reconstruct>…</reconstruct>]
    <action>one admissible action</action>

Which blocks are expected depends on the memory mode (``none`` has only observe and action), the retrieval
mode (``agentic`` adds ``retrieve``, generated before the experience block is inserted) and ``reconstruct``
(off drops critique and reconstruct). Everything here is plain string work so tests, SFT data building and
GRPO share exactly one definition. The prompts that ask for these blocks are in ``conversation.py``; how an
answer becomes an environment action is in ``act.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from expbank.config import MemoryConfig

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
    system: str = "full"  # full | none: the system message (rules, grammar, example) or no system message

    @classmethod
    def of(cls, memory: MemoryConfig, system: str = "full") -> ProtocolSpec:
        """The spec a run's ``memory`` section and ``prompt.system`` ask for."""
        return cls(memory.mode, memory.retrieval, memory.reconstruct, system)

    def __post_init__(self) -> None:
        if self.memory not in ("none", "raw", "bank"):
            raise ValueError(f"memory must be none, raw or bank, not {self.memory!r}")
        if self.retrieval not in ("fixed", "agentic"):
            raise ValueError(f"retrieval must be fixed or agentic, not {self.retrieval!r}")
        if self.system not in ("full", "none"):
            raise ValueError(f"system must be full or none, not {self.system!r}")

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


def format_score(turns_ok: list[bool]) -> float:
    """The fraction of an episode's policy turns that parse under the grammar (0 for no turns)."""
    return sum(turns_ok) / len(turns_ok) if turns_ok else 0.0
