"""One item of the ``<experience>`` block (docs/design.md §5), as pieces the write gate can scan.

``format_experience`` joins these pieces and the gate scans the same pieces, so what an actor is shown is
exactly what the gate checked. The source observation is shown as quoted data: in double quotes, its own
double quotes turned into single ones, so it cannot close the quote or pose as a field of the line.
"""

from __future__ import annotations

from expbank.bank.entry import Entry
from expbank.bank.summarise import truncate_tokens

LABEL = ""  # the field name of the renderer's own text (labels and separators)
UNCAPPED = 10**9


def quote(text: str) -> str:
    """Observation text as a quoted string on one line."""
    return '"' + text.replace('"', "'") + '"' if text else ""


def item_parts(entry: Entry, source_chars: int = 200, max_tokens: int = 256) -> list[tuple[str, str]]:
    """(field, text) pieces of one experience line in display order; ``LABEL`` marks the renderer's text.

    The quoted source fits in ``source_chars`` characters (0, or an entry without one: no source field);
    guidance with its actions (a warning's as "Failed actions") is capped at ``max_tokens`` tokens. Whitespace
    is joined as shown (a newline inside a field becomes a space).
    """
    source = " ".join(entry.source_observation.split())
    if len(source) + 2 > source_chars:
        source = source[: max(source_chars - 3, 0)].rstrip() + "…" if source_chars > 0 else ""
    guidance = entry.guidance
    if entry.actions:  # a warning's actions are what went wrong: never shown as a list to follow
        guidance += (" Failed actions: " if entry.kind == "warning" else " Actions: ") + "; ".join(entry.actions)
    outcome = "success" if entry.outcome.success else "failure"
    shown_source = [(LABEL, " | source: "), ("source_observation", quote(source))] if source else []
    return [
        (LABEL, "situation: "), ("situation", " ".join(entry.situation.split())), *shown_source,
        (LABEL, " | guidance: "), ("guidance", truncate_tokens(" ".join(guidance.split()), max_tokens)),
        (LABEL, f" | outcome: {outcome} | from task: "), ("task", " ".join(entry.task.split())),
    ]


def render_item(index: int, entry: Entry, source_chars: int = 200, max_tokens: int = 256) -> str:
    """The line ``[index] situation: … | source: "…" | guidance: … | outcome: … | from task: …``."""
    return f"[{index}] " + "".join(text for _, text in item_parts(entry, source_chars, max_tokens))
