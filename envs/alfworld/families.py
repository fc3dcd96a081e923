"""Writing a game family the project authors (``search``, ``households``) in ALFWorld's official data layout.

A family is a list of :class:`FamilyGame` rows: split, trial name, scene, task and the walkthrough the author
knows wins. :func:`write_family` turns them into ``<root>/<split>/<task>/<trial>/`` folders with
``initial_state.pddl``, ``traj_data.json`` and ``game.tw-pddl``, so the family loads through ``data_dir``
like ``alfworld-download``'s folder.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from expbank.envs.alfworld.authoring import (
    Scene,
    Task,
    check_walkthrough,
    plan_walkthrough,
    traj_data,
    write_game_source,
)
from expbank.envs.alfworld.games import goal_grammar


@dataclass(frozen=True)
class FamilyGame:
    split: str
    trial: str
    scene: Scene
    task: Task
    walkthrough: list[str]


def write_family(root: Path, games: list[FamilyGame], meta: dict, progress: bool = False,
                 desc: str = "games") -> Path:
    """Write ``games`` under ``root``; ``meta`` goes into ``root/COMPLETE`` (with the game count).

    The first game's walkthrough is played on the engine: it settles the command vocabulary (every later one is
    built the same way; playing each would cost ~2 s a game, and ``expbank collect`` plays them anyway). In
    another vocabulary every walkthrough comes from the planner instead.

    Writing happens in a staging folder renamed at the end, so an interrupted run leaves no half-written data
    behind; an existing complete folder is returned as it is.
    """
    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH
    from tqdm import tqdm

    root = Path(root)
    if (root / "COMPLETE").exists():
        return root
    domain, grammar = Path(ALFRED_PDDL_PATH).read_text(), Path(ALFRED_TWL2_PATH).read_text()
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent))
    planner: bool | None = None
    for game in tqdm(games, desc=desc, disable=not progress):
        split_dir = staging / game.split
        folder = write_game_source(split_dir, game.scene, game.task, game.trial, game.walkthrough)
        task_id = folder.relative_to(split_dir).as_posix()
        record = {"pddl_domain": domain,
                  "grammar": goal_grammar(grammar, traj_data(game.scene, game.task, game.trial), task_id),
                  "pddl_problem": (folder / "initial_state.pddl").read_text(), "solvable": True,
                  "walkthrough": game.walkthrough}
        (folder / "game.tw-pddl").write_text(json.dumps(record))
        if planner is None:  # the first game settles which command vocabulary the installed ALFWorld speaks
            try:
                check_walkthrough(folder / "game.tw-pddl", game.walkthrough)
                planner = False
            except RuntimeError:
                planner = True
        if planner:  # another ALFWorld command vocabulary: ask the planner, then store its plan
            record["walkthrough"] = plan_walkthrough(folder / "game.tw-pddl")
            write_game_source(split_dir, game.scene, game.task, game.trial, record["walkthrough"])
            (folder / "game.tw-pddl").write_text(json.dumps(record))
    (staging / "COMPLETE").write_text(json.dumps({**meta, "games": len(games)}) + "\n")
    if root.exists():
        shutil.rmtree(root)
    staging.rename(root)
    return root
