"""ALFWorld on the real engine with the bundled games (docs/design.md §2)."""

from __future__ import annotations

import gymnasium
import pytest

from expbank import envs
from expbank.envs.alfworld.authoring import TASK_TYPES
from expbank.envs.alfworld.env import strip_banner
from expbank.envs.alfworld.scenes import BUNDLED_GAMES
from expbank.envs.alfworld.vocabulary import translate_vocabulary
from expbank.envs.errors import EnvDataError

MINIMUM_GAMES = {"train": 24, "dev": 6, "valid_seen": 12, "valid_unseen": 12}


@pytest.mark.parametrize("split", list(MINIMUM_GAMES))
def test_bundled_splits_hold_every_task_type(split):
    task_ids = envs.task_ids("alfworld", split)
    assert len(task_ids) >= MINIMUM_GAMES[split]
    assert task_ids == sorted(task_ids), "split order must be fixed"
    assert {task_id.split("-")[0] for task_id in task_ids} == set(TASK_TYPES)


def test_bundled_scenes_are_rich_and_unseen_scenes_are_new():
    for split, games in BUNDLED_GAMES.items():
        for scene, task in games:
            assert len(scene.receptacles) >= 8, f"{split} scene {scene.number}: too few receptacles"
            assert any(r.endswith("*") for r in scene.receptacles), f"scene {scene.number} has no closed receptacle"
            target = task.obj
            distractors = [cls for cls in scene.objects if cls not in (target, task.toggle)]
            assert len(distractors) >= 5, f"scene {scene.number} lacks distractor objects"
    train_layouts = {scene.layout() for scene, _ in BUNDLED_GAMES["train"]}
    train_pairs = {(task.obj, task.recep or task.toggle) for _, task in BUNDLED_GAMES["train"]}
    for scene, task in BUNDLED_GAMES["valid_unseen"]:
        assert scene.layout() not in train_layouts
        assert (task.obj, task.recep or task.toggle) not in train_pairs


def test_expert_wins_every_valid_seen_and_dev_game():
    for split in ("dev", "valid_seen"):
        env = envs.make("alfworld", split=split)
        for task_id in env.task_ids():
            _, info = env.reset(options={"task_id": task_id})
            terminated = truncated = False
            while not (terminated or truncated):
                _, reward, terminated, truncated, info = env.step(env.expert_action())
            assert info["won"] and info["score"] == 1.0 and reward == 1.0, task_id
        env.close()


def _planner_copies() -> set[str]:
    """The copies of fast-downward's library this process has mapped (each new engine maps its own)."""
    with open("/proc/self/maps") as maps:
        return {line.split(None, 5)[-1].strip() for line in maps if "libdownward" in line}


def test_one_engine_plays_every_game_and_leaves_no_state_behind():
    """Each new TextWorld engine maps its own 34 MB planner copy, on disk until the process exits: an engine
    per game filled the disk in one GRPO run. One env plays every game on one engine, and a game played after
    the others starts as it does in a fresh env."""
    before = _planner_copies()
    env = envs.make("alfworld", split="valid_unseen")
    first = env.task_ids()[0]
    fresh = env.reset(options={"task_id": first})
    for task_id in env.task_ids()[1:]:
        env.reset(options={"task_id": task_id})
        env.step(env.expert_action())
    assert env.reset(options={"task_id": first}) == fresh
    assert len(_planner_copies() - before) <= 1
    env.close()


@pytest.mark.parametrize("split", list(BUNDLED_GAMES))
def test_no_bundled_game_is_won_before_any_move(split):
    """A game whose goal holds at reset (the lettuce already on the countertop) measures nothing."""
    env = envs.make("alfworld", split=split)
    for task_id in env.task_ids():
        env.reset(options={"task_id": task_id})
        _, _, terminated, _, info = env.step("look")
        assert not terminated and not info["won"], f"{split}/{task_id} is won before any move"
    env.close()


def test_reset_is_deterministic_and_strips_the_banner(alfworld_valid_unseen):
    env = alfworld_valid_unseen
    task_id = env.task_ids()[3]
    first_obs, first_info = env.reset(options={"task_id": task_id})
    env.step(env.expert_action())
    again_obs, again_info = env.reset(options={"task_id": task_id})
    assert (first_obs, first_info) == (again_obs, again_info)
    assert "Welcome to TextWorld" not in first_obs and first_obs.startswith("You are in the middle of a room")
    assert first_info["task"] and f"Your task is to: {first_info['task']}" in first_obs
    assert first_info["task_type"] == task_id.split("-")[0]
    assert first_info["step"] == 0 and first_info["won"] is False and first_info["score"] == 0.0
    assert set(first_info) >= {"task_id", "task", "task_type", "admissible_actions", "won", "score", "step"}


@pytest.mark.parametrize("bad_action", ["fly to the moon", "take apple 9 from fridge 7", ""])
def test_invalid_action_returns_feedback_changes_nothing_and_costs_a_step(alfworld_valid_unseen, bad_action):
    env = alfworld_valid_unseen
    _, info = env.reset(options={"task_id": env.task_ids()[0]})
    good = env.expert_action()
    _, info_after_good = env.reset(options={"task_id": env.task_ids()[0]})
    obs, reward, terminated, truncated, info = env.step(bad_action)
    assert obs == "Nothing happens." and reward == 0.0 and not terminated and not truncated
    assert info["invalid"] is True and info["step"] == 1
    assert info["admissible_actions"] == info_after_good["admissible_actions"]
    # the state is unchanged: the whole walkthrough still wins from here
    assert env.expert_action() == good
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env.step(env.expert_action())
    assert info["won"] and info["step"] > 1


def test_put_vocabulary_maps_onto_move(alfworld_valid_unseen):
    env = alfworld_valid_unseen
    task_id = next(t for t in env.task_ids() if t.startswith("pick_and_place_simple"))
    env.reset(options={"task_id": task_id})
    plan = []
    while (action := env.expert_action()) is not None:
        plan.append(action)
        env.step(action)
    env.reset(options={"task_id": task_id})
    for action in plan:
        old_style = action.replace("move ", "put ", 1).replace(" to ", " in/on ", 1) if action.startswith("move ") else action
        _, _, terminated, _, info = env.step(old_style)
        assert info["invalid"] is False, old_style
    assert terminated and info["won"]
    assert translate_vocabulary("put apple 1 on countertop 1", ["move apple 1 to countertop 1"]) == \
        "move apple 1 to countertop 1"
    assert translate_vocabulary("move apple 1 to countertop 1", ["put apple 1 in/on countertop 1"]) == \
        "put apple 1 in/on countertop 1"
    assert translate_vocabulary("go to fridge 1", ["go to fridge 2"]) is None


def test_step_limit_truncates():
    env = envs.make("alfworld", split="dev", max_steps=3)
    env.reset()
    results = [env.step("look") for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True] and not any(r[2] for r in results)
    with pytest.raises(RuntimeError):
        env.step("look")
    env.close()


def test_gymnasium_make_and_reset_without_task_id_follow_split_order():
    env = gymnasium.make("expbank/ALFWorld-v0", split="dev")
    order = envs.task_ids("alfworld", "dev")
    seen = [env.reset()[1]["task_id"] for _ in range(len(order) + 1)]
    assert seen == order + order[:1]
    env.close()


def test_missing_data_and_unknown_split_give_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(EnvDataError, match="alfworld-download"):
        envs.make("alfworld", split="valid_unseen", data_dir=str(tmp_path / "nowhere"))
    with pytest.raises(EnvDataError, match="alfworld-download"):
        envs.task_ids("alfworld", "valid_unseen", data_dir=str(tmp_path))
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    with pytest.raises(EnvDataError, match="bundled games"):
        envs.task_ids("alfworld", "train")
    with pytest.raises(EnvDataError, match="unknown ALFWorld split"):
        envs.task_ids("alfworld", "test")


def test_strip_banner():
    assert strip_banner("-= Welcome to TextWorld, ALFRED! =-\n\nYou are in a room.\n\nYour task is to: x.") == \
        "You are in a room.\n\nYour task is to: x."
    assert strip_banner("You arrive at fridge 1.") == "You arrive at fridge 1."
