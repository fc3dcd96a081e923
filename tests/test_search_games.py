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


def test_homes_games_keep_each_food_on_its_home_and_the_expert_searches_until_it_is_found(tmp_path):
    from expbank.envs.alfworld.search_games import HOMES, home_triples
    from expbank.training.agent.collect import collect
    from expbank.trajectory import read_episodes

    triples = home_triples({"train": 2}, targets=("GarbageCan",))
    assert len(triples["train"]) == 10 and all(place == HOMES[obj] for obj, place, _ in triples["train"])
    assert len(home_triples({"train": 1})["train"]) == 25  # every food to each target but its home
    root = write_search_games(tmp_path / "homes", seed=0, searching=True,
                              triples={"train": triples["train"][:4], "dev": triples["train"][4:5]})
    collect("alfworld", "train", "expert", tmp_path / "expert.jsonl", data_dir=str(root), progress=False)
    episodes = list(read_episodes(tmp_path / "expert.jsonl"))
    assert len(episodes) == 4 and all(e.success for e in episodes)  # every searching walkthrough wins
    looks = []
    for episode in episodes:
        food = next(f for f in HOMES if f.lower() in episode.task)
        actions = [step.action for step in episode.steps]
        took = next(i for i, a in enumerate(actions) if a.startswith("take"))
        assert actions[took] == f"take {food.lower()} 1 from {HOMES[food].lower()} 1"
        assert all(a.startswith("go to") for a in actions[:took])  # it looked before taking
        looks.append(took)
    assert max(looks) > 1  # some walkthrough looked at other surfaces first
