"""ALFWorld as a text ``gymnasium.Env`` on the real ALFWorld/TextWorld engine (docs/design.md §2)."""

from __future__ import annotations

import json
import re
from typing import Any

from expbank.envs.alfworld.engine import tw_engine
from expbank.envs.alfworld.games import GameRef, game_set_hash, list_games, resolve_root
from expbank.envs.alfworld.vocabulary import translate_vocabulary
from expbank.envs.base import TaskSpec, TextEnv, Transition
from expbank.envs.errors import EnvDataError

_TASK = re.compile(r"Your task is to: (?P<task>.+)")


def strip_banner(text: str) -> str:
    """Drop the "-= Welcome to TextWorld, ALFRED! =-" banner (keep the text after the first blank line)."""
    if text.lstrip().startswith("-="):
        return text.split("\n\n", 1)[-1].strip()
    return text.strip()


class ALFWorldEnv(TextEnv):
    """One ALFWorld game at a time, in split order or by ``task_id``.

    Uses TextWorld's ``PddlEnv`` with ALFWorld's name demangler, exactly as ``alfworld-play-tw`` does.
    Success (``won``) is the only reward: 1.0 on the winning step.
    """

    name = "alfworld"

    def __init__(self, split: str = "train", data_dir: str | None = None, max_steps: int = 50):
        super().__init__(split=split, data_dir=data_dir, max_steps=max_steps)
        self._games = {g.task_id: g for g in list_games(split, data_dir)}
        self._order = list(self._games)
        self._tw = None
        self._loaded_file = None
        self._walkthrough: list[str] = []
        self._valid_history: list[str] = []

    @classmethod
    def list_task_ids(cls, split: str, data_dir: str | None = None, **options: Any) -> list[str]:
        return [g.task_id for g in list_games(split, data_dir)]

    def game(self, task_id: str) -> GameRef:
        try:
            return self._games[task_id]
        except KeyError:
            raise EnvDataError(f"task {task_id!r} is not in ALFWorld split {self.split!r}") from None

    def _start(self, game: GameRef) -> None:
        if self._tw is None:
            self._tw = tw_engine()
        self._tw.load(str(game.game_file))
        self._loaded_file = game.game_file
        self._walkthrough = json.loads(game.game_file.read_text()).get("walkthrough") or []

    def _load(self, task_id: str) -> tuple[TaskSpec, Transition]:
        game = self.game(task_id)
        if self._loaded_file != game.game_file:
            self._start(game)
        state = self._tw.reset()
        observation = strip_banner(state.feedback)
        match = _TASK.search(observation)
        task = match["task"].strip() if match else ""
        self._valid_history = []
        spec = TaskSpec(task_id=task_id, task=task, task_type=game.task_type)
        return spec, Transition(observation=observation, admissible_actions=list(state.admissible_commands))

    def _apply(self, action: str) -> Transition:
        admissible = list(self._last.admissible_actions)
        command = " ".join(action.strip().split())
        if command not in admissible:
            command = translate_vocabulary(command, admissible) or command
        invalid = command not in admissible
        # Inadmissible commands still go to the engine so the agent sees the game's own feedback
        # ("Nothing happens."); the engine leaves the state unchanged for them.
        state, _, done = self._tw.step(command)
        won = bool(state.won)
        if not invalid:
            self._valid_history.append(command)
        return Transition(
            observation=strip_banner(state.feedback),
            admissible_actions=list(state.admissible_commands),
            reward=1.0 if won else 0.0,
            done=bool(done) or won,
            won=won,
            score=1.0 if won else 0.0,
            invalid=invalid,
        )

    def expert_action(self) -> str | None:
        """The next walkthrough action while the episode follows the walkthrough; None once it strays."""
        done = len(self._valid_history)
        if self._valid_history != self._walkthrough[:done] or done >= len(self._walkthrough):
            return None
        return self._walkthrough[done]

    def env_fingerprint(self) -> dict[str, Any]:
        games = list(self._games.values())
        root = resolve_root(self.data_dir)
        grammar = json.loads(games[0].game_file.read_text())["grammar"] if games else ""
        return {
            "env": self.name,
            "split": self.split,
            "data": "bundled" if root is None else str(root),
            "command_vocabulary": "move X to Y (alfworld>=0.4)" if 'template :: "move {o} to {r}"' in grammar
            else "put X in/on Y (alfworld<0.4)",
            "game_set_hash": game_set_hash(games),
            "num_games": len(games),
        }

    def close(self) -> None:
        if self._tw is not None:
            self._tw.close()
            self._tw = None
            self._loaded_file = None
