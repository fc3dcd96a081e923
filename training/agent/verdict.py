"""``decoding.verdict: head``: the critique's verdict read off the policy's hidden state by a linear head.

SmolLM2's top layers tell a room's own entry from another room's at AUC 0.92 before any training (a probe,
docs/benchmarks.md), yet 50 LoRA steps teach its generated verdict the rate of "does not apply", not which
entry to reject. A verdict head is that probe made part of the policy: a logistic regression on one layer's
hidden state at the position before each item's verdict (after ``<critique>[i]``), fitted by ``expbank sft``
(``sft.verdict_head``) on the training rooms' turns before the take, each shown its room's entry and another
room's, and saved beside the adapter as ``verdict_head.json``; the layer, and whether it reads the policy or
its base model, are chosen by cross-validation that holds out whole training rooms.
At evaluation the policy writes its reply; where an item's written verdict differs from the head's, the reply
is cut before that verdict, the head's words are put in and the policy writes the rest (reason, reconstruction,
action) after them. The head decides only "applies" or "does not apply"; everything else is generated.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from expbank.errors import UserError

FILE = "verdict_head.json"
APPLIES, REJECTS = "applies", "does not apply"
_WRITTEN = re.compile(r"\s*(does not apply|applies)")


@dataclass(frozen=True)
class VerdictHead:
    """``P(applies) = sigmoid(coef · (state - mean) / scale + intercept)`` on hidden state ``layer``, of the
    policy or, with ``base``, of its base model (the adapter switched off for the readout)."""

    layer: int
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    base: bool = False
    cv_balanced_accuracy: float | None = None  # the room-grouped cross-validation that chose layer and states
    threshold: float = 0.0  # the logit from which an item applies (the folds' equal-error point; 0: p ≥ 0.5)

    def applies(self, states: np.ndarray) -> np.ndarray:
        """Whether each row of ``states`` (turns × hidden) is judged to apply (logit ≥ ``threshold``)."""
        logits = ((states - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef) + self.intercept
        return logits >= self.threshold

    def save(self, folder: str | Path) -> Path:
        path = Path(folder) / FILE
        path.write_text(json.dumps(asdict(self)) + "\n")
        return path

    @classmethod
    def load(cls, folder: str | Path) -> VerdictHead:
        path = Path(folder) / FILE
        try:
            head = cls(**json.loads(path.read_text()))
        except (ValueError, TypeError) as err:  # not JSON, or a key missing or unknown
            raise UserError(f"{path}: not a verdict head ({err})") from None
        if not len(head.mean) == len(head.scale) == len(head.coef):
            raise UserError(f"{path}: mean, scale and coef differ in length")
        return head


def verdict_prefix(reply: str, item: int) -> str | None:
    """``reply`` up to and including ``[item]`` in its critique (where the verdict comes next), or None when
    the critique has no such item."""
    start = reply.find("<critique>")
    if start < 0:
        return None
    at = reply.find(f"[{item}]", start)
    end = reply.find("</critique>", start)
    if at < 0 or (0 <= end < at):
        return None
    return reply[: at + len(f"[{item}]")]


def written_verdict(reply: str, prefix: str) -> str | None:
    """The verdict words the reply writes right after ``prefix`` (``APPLIES``, ``REJECTS`` or None)."""
    match = _WRITTEN.match(reply, len(prefix))
    return match[1] if match else None


@dataclass
class Rows:
    """Rows a verdict head fits on: the messages the policy saw, its reply up to an item's verdict, whether the
    target says the item applies, and the room of the episode (cross-validation holds out whole rooms)."""

    conversations: list[list[dict]] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    labels: list[bool] = field(default_factory=list)
    rooms: list[str | None] = field(default_factory=list)

    def add(self, records: list[list[dict]], room: str | None) -> None:
        """One row per critiqued item of each SFT record (messages ending with the target reply)."""
        for record in records:
            reply = record[-1]["content"]
            item = 1
            while (prefix := verdict_prefix(reply, item)) is not None:
                if (words := written_verdict(reply, prefix)) is not None:
                    self.conversations.append(record[:-1])
                    self.prefixes.append(prefix)
                    self.labels.append(words == APPLIES)
                    self.rooms.append(room)
                item += 1

    def subset(self, indices: list[int]) -> Rows:
        return Rows(*([column[i] for i in indices]
                      for column in (self.conversations, self.prefixes, self.labels, self.rooms)))
