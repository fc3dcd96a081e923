"""Online evaluation on the real ALFWorld engine: the run's own bank learns from the stream, later waves use
what earlier ones found, the source bank is never written, and a rerun gives the same episodes.

The actor is the scripted retrieval follower (``training/actors/follower.py``) behind an OpenAI-compatible
server on loopback: it walks to where an experience item says the food was taken from, else it looks at the
room's receptacles in an order the request's seed picks (so each occurrence of a task looks elsewhere first).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from expbank.bank.build import build
from expbank.bank.store import Bank
from expbank.bank.summarise import make_summariser
from expbank.config import load_config
from expbank.envs.alfworld.households import STEP_LIMIT, Recipe, stream_task_ids, write_households
from expbank.training.actors.follower import Follower, follow, remembered_places
from expbank.trajectory import read_episodes

RECIPE = Recipe(seed=3, train_households=3, held_out_households=4, foods=4, dev_games=2, stream_rounds=3,
                moved_rounds=1)
PAIRS = RECIPE.held_out_households * RECIPE.foods
WAVE = 4  # episodes per wave (run.episodes_in_flight)


def test_the_follower_remembers_places_only_once_the_block_takes_its_food():
    block = ("<experience>\n[1] situation: x | guidance: Find the egg. Actions: go to drawer 1; take egg 1 from "
             "drawer 1 | outcome: success | from task: y\n[2] situation: x | guidance: Find the apple. Actions: go "
             "to shelf 2; take apple 1 from shelf 2 | outcome: success | from task: y\n</experience>")
    assert remembered_places(f"Task: put a apple in garbagecan.\n{block}", "apple") == ["drawer 1", "shelf 2"]
    assert remembered_places(f"Task: put a bread in garbagecan.\n{block}", "bread") == []
    assert remembered_places("Task: put a apple in garbagecan.", "apple") == []


def test_the_follower_skips_places_a_warning_of_its_own_room_rules_out():
    """A not-found warning written in this room rules its places out, before a look-alike room's take and
    before unexplored places; a look-alike room's warning rules out nothing."""
    room = "You are in the middle of a room. Looking quickly around you, you see a desk 1, a drawer 1, and a shelf 1."
    lookalike = room.replace("a drawer 1,", "a drawer 2, a drawer 1,")
    take = ("[1] situation: {r} Your task is to: put a apple in garbagecan. | guidance: Find the apple. Actions: go "
            "to desk 1; take apple 1 from desk 1 | outcome: success | from task: y")
    warning = ("[2] situation: {r} Your task is to: put a apple in garbagecan. Holding nothing; first find and take "
               "the apple. | source: \"{r}\" | guidance: The apple was not in/on desk 1, drawer 1 here when looked "
               "at: look elsewhere first. Failed actions: go to desk 1; go to drawer 1 | outcome: failure | from task: y")
    admissible = "\n".join(["go to desk 1", "go to drawer 1", "go to garbagecan 1", "go to shelf 1", "look"])

    def step(*items: str) -> str:
        block = "\n".join(["<experience>", *items, "</experience>"])
        return (f"Task: put a apple in garbagecan.\n\nCurrent observation:\n{room}\n\nYour task is to: put a apple "
                f"in garbagecan.\n\nAdmissible actions:\n{admissible}\n\n{block}")

    assert follow(step(take.format(r=lookalike)), seed=0) == "go to desk 1"
    assert follow(step(take.format(r=lookalike), warning.format(r=room)), seed=0) == "go to shelf 1"
    assert follow(step(warning.format(r=room)), seed=0) == "go to shelf 1"
    assert follow(step(take.format(r=lookalike), warning.format(r=lookalike)), seed=0) == "go to desk 1"
    been = step(take.format(r=lookalike)).replace("\n\nCurrent observation:", "\n> action: go to desk 1\n\nCurrent "
                                                                                 "observation:")
    assert follow(been, seed=0) == "go to drawer 1"  # not back to desk 1: the first place it has not been to


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> Path:
    return write_households(tmp_path_factory.mktemp("households") / "games", RECIPE)


def _config(tmp_path: Path, games: Path, url: str, run: Path, split: str = "stream", train: dict | None = None,
            rounds: int | None = None, **memory) -> Path:
    tree = {"env": {"name": "alfworld", "split": split, "data_dir": str(games), "max_steps": STEP_LIMIT},
            "panel": {"task_ids": stream_task_ids(RECIPE, split)[:rounds and rounds * PAIRS], "seeds": [0]},
            "actor": {"backend": "openai", "model": "follower", "base_url": f"{url}/v1"},
            "memory": {"mode": "bank", "k": 2, "online": True, "online_order": "panel", "bank": "empty",
                       **memory},
            "prompt": {"history_length": 3}, "run": {"dir": str(run), "episodes_in_flight": WAVE},
            "train": train or {}}
    path = tmp_path / f"{run.name}.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def _rows(run: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "run_id"}
            for line in (run / "episodes.jsonl").read_text().splitlines()]


def test_the_stream_learns_from_its_own_episodes_and_reruns_the_same(games, tmp_path):
    from expbank.training.evaluation.evaluate import evaluate

    follower = Follower()
    with follower.served() as url:
        run = tmp_path / "online"
        summary = evaluate(load_config(_config(tmp_path, games, url, run)), progress=False)
        arm = summary["arms"]["bank-online"]
        episodes = list(read_episodes(run / "episodes.jsonl"))
        assert [e.task_id for e in episodes] == stream_task_ids(RECIPE)  # files in stream order
        rounds = [sum(e.success for e in episodes[i:i + PAIRS]) for i in range(0, len(episodes), PAIRS)]
        assert rounds[0] < rounds[1] <= rounds[2], rounds  # later rounds find the food from the bank
        assert arm["online"]["second_half"]["success"] > arm["online"]["first_half"]["success"]
        assert "## Online arms" in (run / "report.md").read_text() and (run / "plot_stream.png").exists()

        waves = [json.loads(line) for line in (run / "online.jsonl").read_text().splitlines()]
        assert [w["wave"] for w in waves] == list(range(1, -(-len(episodes) // WAVE) + 1))
        bank = Bank.open(run / "bank", writable=False)
        assert waves[-1]["bank_size"] == len(bank) > 0
        made_by = {entry.id: entry for entry in bank.entries()}
        wave_of = {e.episode_id: i // WAVE for i, e in enumerate(episodes)}
        shown_from_earlier = 0
        for episode in episodes:
            for entry_id in {x for step in episode.steps for x in step.retrieved}:
                entry = made_by[entry_id]
                # made from an earlier wave (later episodes may have merged into it since)
                assert min(wave_of[source] for source in entry.provenance.episodes) < wave_of[episode.episode_id]
                shown_from_earlier += 1
        assert shown_from_earlier and not any(s.retrieved for s in episodes[0].steps)
        assert sum(e.stats.uses for e in bank.entries()) > 0  # credit from the environment's outcome

        served, before = follower.requests, bank.content_hash
        evaluate(load_config(_config(tmp_path, games, url, run)), progress=False)  # resumed: nothing left
        assert follower.requests == served and Bank.open(run / "bank", writable=False).content_hash == before

        again = tmp_path / "again"
        evaluate(load_config(_config(tmp_path, games, url, again)), progress=False)
    assert _rows(again) == _rows(run)  # from scratch: the same stream, apart from run_id


def test_sightings_teach_the_stream_where_foods_lie_from_episodes_that_missed_their_own(games, tmp_path):
    """With ``train.bank.sightings`` an episode that looked in the wrong places still writes where the foods it
    passed lay, so the stream finds more pairs than from takes alone (at this recipe 2, 6, 9 of 16 a round
    from takes, 4, 9, 12 with sightings); there are more sighting entries than pairs (every object passed)."""
    from expbank.training.evaluation.evaluate import evaluate

    sightings = {"bank": {"sightings": True, "retire_disproved": True}}
    with Follower().served() as url:
        for name, train in (("takes", None), ("sightings", sightings)):
            evaluate(load_config(_config(tmp_path, games, url, tmp_path / name, train=train, observation="first")),
                     progress=False)
    wins = {name: [sum(e.success for e in list(read_episodes(tmp_path / name / "episodes.jsonl"))[i:i + PAIRS])
                   for i in range(0, RECIPE.stream_rounds * PAIRS, PAIRS)] for name in ("takes", "sightings")}
    assert wins["sightings"][0] >= wins["takes"][0] and sum(wins["sightings"]) > sum(wins["takes"]) + 5, wins
    passed = [e for e in Bank.open(tmp_path / "sightings" / "bank", writable=False).entries()
              if e.kind == "strategy" and e.actions[-1].split()[1] not in e.task]  # a food its task did not name
    assert len(passed) > PAIRS and all(e.actions[-1].startswith("take ") for e in passed)


def test_entries_a_moved_room_disproved_are_retired_and_true_ones_kept(games, tmp_path):
    """The bank the stream learnt, then the rooms rearranged (``moved``) or not (``unmoved``): with
    ``train.bank.retire_disproved`` the follower's visits to the old places retire the stale "find" entries as
    disproved; where nothing moved no find entry is retired, though the follower also misapplies look-alike
    rooms' entries (not-found warnings may go either way, once a find supersedes them)."""
    from expbank.training.evaluation.evaluate import evaluate

    retire = {"bank": {"retire_disproved": True}}
    with Follower().served() as url:
        learnt = tmp_path / "learnt"
        evaluate(load_config(_config(tmp_path, games, url, learnt)), progress=False)
        for split in ("moved", "unmoved"):
            evaluate(load_config(_config(tmp_path, games, url, tmp_path / split, split, retire,
                                         bank=str(learnt / "bank"), online_credit="followed")), progress=False)
    stale = {entry.id: entry for entry in Bank.open(learnt / "bank", writable=False).entries()}

    def retired(split: str) -> list[dict]:
        lines = (tmp_path / split / "online.jsonl").read_text().splitlines()
        return [entry for line in lines for entry in json.loads(line)["retired"]]

    def takes(split: str) -> list[dict]:  # retired find entries; the rest must be not-found warnings
        gone = retired(split)
        warnings = [g for g in gone if g["situation"].endswith("first find and take the " + g["situation"].split()[-1])
                    and all(a.startswith("go to ") for a in g["actions"])]
        assert all(g["reason"].startswith(("superseded: ", "disproved: ")) for g in warnings)
        return [g for g in gone if g not in warnings]

    moved = takes("moved")
    assert moved and all(g["reason"].startswith("disproved: ") and g["id"] in stale for g in moved)
    assert all(stale[g["id"]].actions[-1].startswith("take ") for g in moved)
    assert takes("unmoved") == []


def test_a_source_bank_is_copied_never_written_and_must_not_come_from_the_stream(games, tmp_path, capsys):
    from expbank.cli import main
    from expbank.training.agent.collect import collect
    from expbank.training.evaluation.evaluate import evaluate

    collect("alfworld", "visits", "expert", tmp_path / "visits.jsonl", data_dir=str(games), workers=1,
            max_steps=STEP_LIMIT, progress=False)
    source = tmp_path / "visits-bank"
    assert main(["bank", "build", str(tmp_path / "visits.jsonl"), "--out", str(source)]) == 0
    digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in source.rglob("*") if p.is_file()}
    follower = Follower()
    with follower.served() as url:
        run = tmp_path / "from-visits"
        summary = evaluate(load_config(_config(tmp_path, games, url, run, bank=str(source))), progress=False)
        assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in source.rglob("*") if p.is_file()} \
            == digest
        first_wave = list(read_episodes(run / "episodes.jsonl"))[:WAVE]
        assert all(step.retrieved for e in first_wave for step in e.steps[:1])  # the visits' entries, at once
        assert summary["arms"]["bank-online"]["success"] > 50
        assert len(Bank.open(run / "bank", writable=False)) > len(Bank.open(source, writable=False))

        capsys.readouterr()
        config = _config(tmp_path, games, url, tmp_path / "leaky", bank=str(run / "bank"))
        assert main(["eval", str(config)]) == 1
    assert "holds entries made from alfworld/stream" in capsys.readouterr().err


def test_retrieval_with_the_first_observation_shows_every_step_the_first_steps_block(games, tmp_path):
    """``memory.observation: first`` retrieves with the episode's first observation (the room) at every step,
    so the block of its first step stays; with ``current`` later steps retrieve with an observation of one
    receptacle and are shown other entries."""
    from expbank.training.agent.collect import collect
    from expbank.training.evaluation.evaluate import evaluate

    collect("alfworld", "visits", "expert", tmp_path / "visits.jsonl", data_dir=str(games), workers=1,
            max_steps=STEP_LIMIT, progress=False)
    source = Bank.open_or_create(tmp_path / "visits-bank")
    build(source, [tmp_path / "visits.jsonl"], make_summariser("rule"))
    source.save()
    shown = {}
    with Follower().served() as url:
        for observation in ("first", "current"):
            run = tmp_path / observation
            evaluate(load_config(_config(tmp_path, games, url, run, rounds=1, online=False, bank=str(source.path),
                                         observation=observation)), progress=False)
            episodes = list(read_episodes(run / "episodes.jsonl"))
            assert len(episodes) == PAIRS and all(len(e.steps) > 1 for e in episodes)
            shown[observation] = [[step.retrieved for step in e.steps] for e in episodes]
    assert all(blocks[0] and all(block == blocks[0] for block in blocks) for blocks in shown["first"])
    assert any(any(block != blocks[0] for block in blocks) for blocks in shown["current"])
    assert [blocks[0] for blocks in shown["first"]] == [blocks[0] for blocks in shown["current"]]
