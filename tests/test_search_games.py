"""The ALFWorld ``search`` family: disjoint splits, walkthroughs that win on the real engine, loadable as data."""

from __future__ import annotations

from expbank.envs.alfworld.env import ALFWorldEnv
from expbank.envs.alfworld.search_games import SPLIT_SIZES, search_triples, write_search_games


def test_triples_are_split_without_overlap_and_never_target_their_own_place():
    splits = search_triples(seed=0)
    assert {k: len(v) for k, v in splits.items()} == {**SPLIT_SIZES, "train": 125 - sum(SPLIT_SIZES.values())}
    seen = [t for triples in splits.values() for t in triples]
    assert len(set(seen)) == len(seen) == 125
    assert all(place != target for _, place, target in seen)
    assert search_triples(seed=1) != splits


def test_written_games_load_and_the_walkthrough_wins_only_where_the_object_lies(tmp_path):
    triples = {"train": [("Apple", "Shelf", "GarbageCan")], "dev": [("Egg", "CounterTop", "Shelf")],
               "valid_unseen": [("Tomato", "SideTable", "DiningTable")]}
    root = write_search_games(tmp_path / "games", seed=3, train_variants=2, triples=triples)
    assert write_search_games(root, seed=3) == root  # complete folders are reused as they are
    env = ALFWorldEnv("train", data_dir=str(root), max_steps=8)
    assert len(env.task_ids()) == 2
    observation, info = env.reset(options={"task_id": env.task_ids()[0]})
    assert "apple" in info["task"] and "apple 1" not in observation  # where it lies is not shown
    # the object is not where the policy might guess first
    _, _, _, _, info = env.step("go to countertop 1")
    assert "take apple 1 from countertop 1" not in info["admissible_actions"]
    for action in ["go to shelf 1", "take apple 1 from shelf 1", "go to garbagecan 1", "move apple 1 to garbagecan 1"]:
        _, reward, terminated, _, info = env.step(action)
    assert terminated and info["won"]
