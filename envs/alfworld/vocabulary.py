"""ALFWorld's two placement vocabularies: ``put X in/on Y`` (data before 0.4) and ``move X to Y`` (0.4+).

Kept free of engine imports so the policy protocol can match actions with the same rule the env uses.
"""

from __future__ import annotations

import re

_PUT = re.compile(r"^put (?P<obj>.+?) (?:in/on|in|on) (?P<recep>.+)$")
_MOVE = re.compile(r"^move (?P<obj>.+?) to (?P<recep>.+)$")


def translate_vocabulary(action: str, admissible: list[str]) -> str | None:
    """Map any placement wording (``put X in/on/in/on Y``, ``move X to Y``) onto the form ``admissible`` holds."""
    match = _PUT.match(action) or _MOVE.match(action)
    if match is None:
        return None
    obj, recep = match["obj"], match["recep"]
    candidates = [f"move {obj} to {recep}"] + [f"put {obj} {prep} {recep}" for prep in ("in/on", "in", "on")]
    return next((c for c in candidates if c in admissible), None)
