"""The text-environment protocol shared by every expbank environment (docs/design.md §2).

A concrete environment implements three hooks (``list_task_ids``, ``_load`` and ``_apply``) and an
expert; this base class owns what must behave identically everywhere: task selection, step counting,
invalid-action bookkeeping, truncation at ``max_steps`` and the keys of ``info``.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium
from gymnasium import spaces

# Observations carry arbitrary product and game text; a wide charset keeps `spaces.Text` usable.
TEXT_CHARSET = frozenset(string.printable + "".join(chr(c) for c in range(0xA0, 0x2FFF)))


class UnknownTaskError(KeyError):
    """A ``task_id`` that is not in the environment's split."""


@dataclass
class Transition:
    """What the engine reports for one action (before the base class adds step bookkeeping)."""

    observation: str
    admissible_actions: list[str]
    reward: float = 0.0
    done: bool = False
    won: bool = False
    score: float = 0.0
    invalid: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskSpec:
    """The fixed description of one task: its id, goal text and type."""

    task_id: str
    task: str
    task_type: str


class TextEnv(gymnasium.Env):
    """A ``gymnasium.Env`` with text observations and text actions.

    ``reset(options={"task_id": ...})`` always restores the same initial state; without a task id the
    next task in split order is played. ``step`` never raises on a bad action: it returns the engine's
    feedback with ``info["invalid"] = True``, leaves the state unchanged and consumes a step.
    """

    name: ClassVar[str]
    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, split: str, data_dir: str | None = None, max_steps: int = 50):
        super().__init__()
        self.split = split
        self.data_dir = data_dir
        self.max_steps = max_steps
        self.observation_space = spaces.Text(max_length=1 << 20, min_length=0, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(max_length=4096, min_length=0, charset=TEXT_CHARSET)
        self._order: list[str] = []
        self._cursor = 0
        self._spec: TaskSpec | None = None
        self._steps = 0
        self._last: Transition | None = None
        self._done = False

    # --- hooks for concrete environments ---------------------------------------------------------
    @classmethod
    def list_task_ids(cls, split: str, data_dir: str | None = None, **options: Any) -> list[str]:
        raise NotImplementedError

    def _load(self, task_id: str) -> tuple[TaskSpec, Transition]:
        """Start ``task_id`` from its initial state."""
        raise NotImplementedError

    def _apply(self, action: str) -> Transition:
        """Apply one action to the running task."""
        raise NotImplementedError

    def expert_action(self) -> str | None:
        """The expert's next action in the current state (None when it has nothing to say)."""
        raise NotImplementedError

    def random_action(self, rng: random.Random) -> str:
        """The random policy's action: uniform over the admissible actions (environments may refine it)."""
        return rng.choice(self._last.admissible_actions) if self._last and self._last.admissible_actions else "look"

    def env_fingerprint(self) -> dict[str, Any]:
        """What a run directory records about this environment's data and engine."""
        return {"env": self.name, "split": self.split}

    # --- gymnasium API ------------------------------------------------------------------------------
    def task_ids(self) -> list[str]:
        if not self._order:
            self._order = self.list_task_ids(self.split, self.data_dir)
        return self._order

    @property
    def spec_task(self) -> TaskSpec:
        if self._spec is None:
            raise RuntimeError("call reset() before step()")
        return self._spec

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        task_id = (options or {}).get("task_id")
        if task_id is None:
            order = self.task_ids()
            task_id = order[self._cursor % len(order)]
            self._cursor += 1
        self._spec, first = self._load(str(task_id))
        self._steps = 0
        self._done = False
        self._last = first
        return first.observation, self._info(first)

    def step(self, action: str):
        if self._done:
            raise RuntimeError("episode is over; call reset()")
        transition = self._apply(str(action))
        self._steps += 1
        self._last = transition
        terminated = transition.done
        truncated = not terminated and self._steps >= self.max_steps
        self._done = terminated or truncated
        return transition.observation, transition.reward, terminated, truncated, self._info(transition)

    def _info(self, transition: Transition) -> dict[str, Any]:
        spec = self.spec_task
        return {
            "task_id": spec.task_id,
            "task": spec.task,
            "task_type": spec.task_type,
            "admissible_actions": list(transition.admissible_actions),
            "won": transition.won,
            "score": float(transition.score),
            "step": self._steps,
            "invalid": transition.invalid,
            **transition.extra,
        }
