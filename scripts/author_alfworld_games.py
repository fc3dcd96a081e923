"""Author the bundled ALFWorld games: envs/alfworld/scenes.py -> envs/data/alfworld/<split>/.

Writes each game's initial_state.pddl and traj_data.json, builds a game file from the installed
ALFWorld domain and grammar, plans the walkthrough with ALFWorld's planner, checks that it wins and
stores it in traj_data.json. Run it after editing scenes.py:

    python scripts/author_alfworld_games.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH
from tqdm import tqdm

from expbank.envs.alfworld.authoring import plan_walkthrough, write_game_source
from expbank.envs.alfworld.games import BUNDLED_ROOT, goal_grammar
from expbank.envs.alfworld.scenes import BUNDLED_GAMES


def main() -> None:
    domain, grammar = Path(ALFRED_PDDL_PATH).read_text(), Path(ALFRED_TWL2_PATH).read_text()
    shutil.rmtree(BUNDLED_ROOT, ignore_errors=True)
    games = [(split, i, scene, task) for split, rows in BUNDLED_GAMES.items() for i, (scene, task) in enumerate(rows)]
    with tempfile.TemporaryDirectory() as scratch:
        for split, index, scene, task in tqdm(games, desc="authoring games"):
            trial = f"trial_E{scene.number}_{split[:2]}{index:02d}"
            folder = write_game_source(BUNDLED_ROOT / split, scene, task, trial)
            task_id = folder.relative_to(BUNDLED_ROOT / split).as_posix()
            traj = json.loads((folder / "traj_data.json").read_text())
            game_file = Path(scratch) / f"{split}-{index}.tw-pddl"
            game_file.write_text(json.dumps({
                "pddl_domain": domain, "grammar": goal_grammar(grammar, traj, task_id),
                "pddl_problem": (folder / "initial_state.pddl").read_text(), "solvable": True, "walkthrough": None,
            }))
            write_game_source(BUNDLED_ROOT / split, scene, task, trial, plan_walkthrough(game_file))
    print(f"wrote {len(games)} games under {BUNDLED_ROOT}")


if __name__ == "__main__":
    main()
