"""Online evaluation on the real ALFWorld engine: the run's own bank learns from the stream, later waves use
what earlier ones found, the source bank is never written, and a rerun gives the same episodes.

The actor is a scripted retrieval follower behind an OpenAI-compatible server on loopback: it walks to where an
experience item says the food is, else it looks at the room's receptacles in an order the request's seed
picks (so each occurrence of a task looks elsewhere first).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from loopback import serving

from expbank.bank.store import Bank
from expbank.config import load_config
from expbank.envs.alfworld.households import STEP_LIMIT, Recipe, stream_task_ids, write_households
from expbank.trajectory import read_episodes

RECIPE = Recipe(seed=3, train_households=3, held_out_households=4, foods=4, dev_games=2, stream_rounds=3)
PAIRS = RECIPE.held_out_households * RECIPE.foods
WAVE = 4  # episodes per wave (run.episodes_in_flight)


def follow(user: str, seed: int) -> str:
    """The follower's action for one step's user message; ``seed`` (the request's) picks where it looks first."""
    food = re.search(r"Task: put (?:a|an|some) (\w+)", user).group(1)
    admissible = user.split("Admissible actions:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    history = re.findall(r"> action: (.+)", user)
    experience = user.split("<experience>", 1)[1] if "<experience>" in user else ""
    for action in admissible:
        if action == f"move {food} 1 to garbagecan 1":
            return action
    if history and history[-1].startswith("take "):
        return "go to garbagecan 1"
    for action in admissible:
        if action.startswith((f"take {food} 1 from", "open ")):
            return action
    remembered = re.findall(r"take \w+ 1 from ([\w ]+?\d+)", experience)
    for place in remembered if f"take {food} 1" in experience else []:
        if f"go to {place}" in admissible:
            return f"go to {place}"
    unseen = [a for a in admissible if a.startswith("go to ") and "garbagecan" not in a and a not in history]
    return unseen[seed % len(unseen)] if unseen else admissible[0]


class Follower:
    def __init__(self) -> None:
        self.requests = 0

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> JSONResponse:
            self.requests += 1
            body = await request.json()
            action = follow(body["messages"][-1]["content"], body.get("seed") or 0)
            content = f"<observe>x</observe><critique>NONE</critique><reconstruct>NONE</reconstruct><action>{action}"
            return JSONResponse({"id": "x", "object": "chat.completion", "created": 0, "model": "follower",
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": content}}],
                                 "usage": {"prompt_tokens": 1, "completion_tokens": 1}})

        return app


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> Path:
    return write_households(tmp_path_factory.mktemp("households") / "games", RECIPE)


def _config(tmp_path: Path, games: Path, url: str, run: Path, **memory) -> Path:
    tree = {"env": {"name": "alfworld", "split": "stream", "data_dir": str(games), "max_steps": STEP_LIMIT},
            "panel": {"task_ids": stream_task_ids(RECIPE), "seeds": [0]},
            "actor": {"backend": "openai", "model": "follower", "base_url": f"{url}/v1"},
            "memory": {"mode": "bank", "k": 2, "online": True, "online_order": "panel", "bank": "empty",
                       **memory},
            "prompt": {"history_length": 3}, "run": {"dir": str(run), "episodes_in_flight": WAVE}}
    path = tmp_path / f"{run.name}.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def _rows(run: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "run_id"}
            for line in (run / "episodes.jsonl").read_text().splitlines()]


def test_the_stream_learns_from_its_own_episodes_and_reruns_the_same(games, tmp_path):
    from expbank.training.evaluation.evaluate import evaluate

    follower = Follower()
    with serving(follower.app()) as url:
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
    with serving(follower.app()) as url:
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
