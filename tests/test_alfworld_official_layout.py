"""Games expbank has never seen, laid out like `alfworld-download`'s output and processed by ALFWorld's
own `alfworld-generate`, load through `data_dir=` and `$ALFWORLD_DATA` and are won by the expert."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from expbank import envs
from expbank.envs.alfworld.authoring import Scene, Task, write_game_source
from expbank.envs.alfworld.scenes import BUNDLED_GAMES
from expbank.trajectory import read_episodes

GARAGE = Scene(
    971,
    ("Shelf", "Shelf", "Shelf", "Shelf", "Cabinet*", "Cabinet*", "Drawer*", "GarbageCan", "Desk", "Fridge*",
     "Microwave*", "SinkBasin"),
    {"Box": (0,), "Candle": (1,), "KeyChain": (6,), "Mug": (4,), "Cup": (9,), "Apple": (10,), "Cloth": (2,),
     "Statue": (3,), "DeskLamp": (8,), "Book": (5,), "Pen": (8,)},
)
PANTRY = Scene(
    972,
    ("CounterTop", "Shelf", "Shelf", "Cabinet*", "Cabinet*", "Cabinet*", "Drawer*", "Drawer*", "Fridge*",
     "GarbageCan"),
    {"Bread": (1,), "Potato": (2, 9), "Egg": (8,), "WineBottle": (2,), "Bowl": (4,), "Spatula": (6,),
     "SaltShaker": (0,), "Kettle": (5,)},
)
NEW_GAMES = {
    "train": [(GARAGE, Task("pick_and_place_simple", "Candle", "Drawer")),
              # a one-object task: the generator's own expert failed pick_two_obj here once in CI (flaky)
              (PANTRY, Task("pick_and_place_simple", "SaltShaker", "Shelf"))],
    "valid_seen": [(GARAGE, Task("look_at_obj_in_light", "Book", toggle="DeskLamp")),
                   (GARAGE, Task("pick_clean_then_place_in_recep", "Cloth", "Desk"))],
    "valid_unseen": [(GARAGE, Task("pick_heat_then_place_in_recep", "Mug", "Shelf")),
                     (PANTRY, Task("pick_cool_then_place_in_recep", "Bread", "CounterTop")),
                     # ALFWorld's loader skips these folders; so must we.
                     (PANTRY, Task("pick_and_place_simple", "Egg", "Sliced"))],
}
MOVE_TEMPLATE = 'template :: "move {o} to {r}"'


@pytest.fixture(scope="module")
def alfworld_download_dir(tmp_path_factory) -> Path:
    """$ALFWORLD_DATA with logic/ and json_2.1.1/<split>/<task>/<trial>/, game files by alfworld-generate."""
    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

    root = tmp_path_factory.mktemp("alfworld_data")
    (root / "logic").mkdir()
    shutil.copy(ALFRED_PDDL_PATH, root / "logic")
    shutil.copy(ALFRED_TWL2_PATH, root / "logic")
    for split, games in NEW_GAMES.items():
        for index, (scene, task) in enumerate(games):
            write_game_source(root / "json_2.1.1" / split, scene, task, f"trial_T{scene.number}{index}")
    generate = Path(sys.executable).with_name("alfworld-generate")
    data_path = str(root / "json_2.1.1")
    subprocess.run([str(generate), "--data_path", data_path, "--end", "100000"], input="y\n", text=True,
                   check=True, capture_output=True, env={**os.environ, "ALFWORLD_DATA": str(root)}, timeout=600)
    return root


def _games(root: Path) -> list[Path]:
    return sorted(root.rglob("game.tw-pddl"))


def test_layout_is_what_alfworld_generate_produces(alfworld_download_dir):
    games = _games(alfworld_download_dir)
    assert len(games) == 6  # the "Sliced" folder is skipped by alfworld-generate too
    for game_file in games:
        game = json.loads(game_file.read_text())
        assert game["solvable"] and game["walkthrough"], game_file
        assert len(game_file.relative_to(alfworld_download_dir).parts) == 5


def test_new_scenes_differ_from_bundled_ones():
    bundled = {scene.layout() for games in BUNDLED_GAMES.values() for scene, _ in games}
    assert not {scene.layout() for games in NEW_GAMES.values() for scene, _ in games} & bundled


@pytest.mark.parametrize("via", ["data_dir", "ALFWORLD_DATA"])
def test_expert_wins_every_game_of_a_user_data_folder(alfworld_download_dir, via, monkeypatch):
    data_dir = str(alfworld_download_dir) if via == "data_dir" else None
    if via == "ALFWORLD_DATA":
        monkeypatch.setenv("ALFWORLD_DATA", str(alfworld_download_dir))
    played = 0
    for split in ("valid_seen", "valid_unseen"):
        env = envs.make("alfworld", split=split, data_dir=data_dir)
        assert env.env_fingerprint()["data"] == str(alfworld_download_dir)
        assert all("Sliced" not in task_id for task_id in env.task_ids())
        for task_id in env.task_ids():
            _, info = env.reset(options={"task_id": task_id})
            assert info["task_type"] == task_id.split("-")[0]
            done = False
            while not done:
                _, _, terminated, truncated, info = env.step(env.expert_action())
                done = terminated or truncated
            assert info["won"], task_id
            played += 1
        env.close()
    assert played == 4


def test_dev_is_a_fixed_slice_of_train_when_the_data_has_no_dev_folder(alfworld_download_dir):
    train = envs.task_ids("alfworld", "train", data_dir=str(alfworld_download_dir))
    dev = envs.task_ids("alfworld", "dev", data_dir=str(alfworld_download_dir))
    assert len(dev) == 1 and len(train) == 1 and not set(dev) & set(train)


def test_old_put_vocabulary_game_files(alfworld_download_dir, tmp_path):
    """Data from before ALFWorld 0.4 admits `put X in/on Y`; `move X to Y` is mapped onto it."""
    old_root = tmp_path / "old"
    shutil.copytree(alfworld_download_dir / "json_2.1.1" / "valid_unseen", old_root / "json_2.1.1" / "valid_unseen")
    for game_file in _games(old_root):
        game = json.loads(game_file.read_text())
        assert MOVE_TEMPLATE in game["grammar"]
        game["grammar"] = game["grammar"].replace(MOVE_TEMPLATE, 'template :: "put {o} in/on {r}"')
        game_file.write_text(json.dumps(game))
    env = envs.make("alfworld", split="valid_unseen", data_dir=str(old_root))
    assert env.env_fingerprint()["command_vocabulary"].startswith("put")
    for task_id in env.task_ids():
        _, info = env.reset(options={"task_id": task_id})
        done = False
        while not done:
            action = env.expert_action()  # the stored walkthrough speaks the new `move` vocabulary
            _, _, terminated, truncated, info = env.step(action)
            assert not info["invalid"], action
            done = terminated or truncated
        assert info["won"]
        assert any(a.startswith("put ") for a in env._last.admissible_actions) or info["won"]
    env.close()


def test_collect_from_a_user_data_folder(alfworld_download_dir, tmp_path):
    out = tmp_path / "t.jsonl"
    subprocess.run(["expbank", "collect", "--env", "alfworld", "--split", "valid_unseen", "--data",
                    str(alfworld_download_dir), "--policy", "expert", "--out", str(out)], check=True,
                   capture_output=True, timeout=300)
    episodes = list(read_episodes(out))
    assert len(episodes) == 2 and all(e.success and e.score == 1.0 for e in episodes)
