"""The act stage: map a model answer to one environment action (docs/design.md §5).

A tagged action is matched exactly, then normalised, then through ALFWorld's other vocabulary (``put X in/on
Y`` vs ``move X to Y``) and WebShop's free search; an answer without an ``<action>`` tag falls back to its last
line that names an admissible action, and the turn then counts as a format violation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from expbank.envs.alfworld.vocabulary import translate_vocabulary
from expbank.training.agent.protocol import ParsedOutput


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
    """Map a model answer to an environment action.

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
