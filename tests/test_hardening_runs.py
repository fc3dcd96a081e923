"""Runs against outages and bad input: errored episodes replayed on resume, the split check over HTTP, one-line
errors that write nothing, torn last lines skipped with a warning (real ALFWorld, real HTTP on loopback)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from bank_data import alf_place, alf_transform
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from loopback import free_port, serving

from expbank import envs
from expbank.bank.service import create_app
from expbank.bank.store import Bank
from expbank.bank.summarise import RuleSummariser
from expbank.cli import main
from expbank.config import load_config
from expbank.errors import UserError
from expbank.trajectory import make_episode_id, read_episodes, write_episodes

SMALL = {"env": {"name": "alfworld", "split": "valid_unseen", "max_steps": 2}, "panel": {"limit": 2, "seeds": [0]},
         "decoding": {"temperature": 0.0, "max_new_tokens": 16}, "run": {"episodes_in_flight": 1}}


def _config(tmp_path: Path, **sections) -> Path:
    tree = json.loads(json.dumps(SMALL))
    for section, values in sections.items():
        tree.setdefault(section, {}).update(values)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def _one_line_error(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


class ChatServer:
    """An OpenAI-compatible endpoint that refuses every request while ``broken`` (HTTP 400: not retried)."""

    def __init__(self) -> None:
        self.broken = True
        self.requests = 0

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat() -> JSONResponse:
            self.requests += 1
            if self.broken:
                return JSONResponse({"error": {"message": "model is loading"}}, status_code=400)
            return JSONResponse({"id": "x", "object": "chat.completion", "created": 0, "model": "scripted",
                                 "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                     "role": "assistant", "content": "<observe>a room</observe><action>look"}}],
                                 "usage": {"prompt_tokens": 5, "completion_tokens": 3}})

        return app


def test_errored_episodes_are_replayed_on_resume_unless_kept(tmp_path, capsys):
    from expbank.training.evaluation.evaluate import evaluate

    run = tmp_path / "run"
    server = ChatServer()
    with serving(server.app()) as url:
        config = _config(tmp_path, actor={"backend": "openai", "model": "scripted", "base_url": f"{url}/v1"},
                         run={"dir": str(run), "episodes_in_flight": 1})
        # a mistyped bank fails in one line before the run directory exists, so it cannot block the fix
        err = _one_line_error(capsys, ["eval", str(config), "memory.mode=bank", "memory.bank=/no/such/bank"])
        assert "memory.bank: /no/such/bank is not a bank directory" in err and not run.exists()

        first = evaluate(load_config(config), progress=False)
        episodes = list(read_episodes(run / "episodes.jsonl"))
        assert first["arms"]["none"]["errors"] == 2 and all("model is loading" in e.error for e in episodes)

        served = server.requests
        server.broken = False
        kept = evaluate(load_config(config, ["run.replay_errors=false"]), progress=False)
        assert server.requests == served and kept["arms"]["none"]["errors"] == 2  # kept: nothing replayed

        again = evaluate(load_config(config), progress=False)
    assert server.requests > served and again["arms"]["none"]["errors"] == 0
    replayed = list(read_episodes(run / "episodes.jsonl"))
    assert [e.episode_id for e in replayed] == [e.episode_id for e in episodes]  # replaced, not duplicated
    assert all(e.error is None and e.num_steps == 2 for e in replayed)
    stats = [json.loads(line) for line in (run / "episode_stats.jsonl").read_text().splitlines()]
    assert [s["episode_id"] for s in stats] == [e.episode_id for e in episodes]


@pytest.fixture(scope="module")
def leaky_bank(tmp_path_factory, embedder) -> Path:
    """A bank made from a valid_unseen episode (and a train one)."""
    path = tmp_path_factory.mktemp("leaky") / "bank"
    bank = Bank.create(path, embedder=embedder)
    leaked = alf_place().model_copy(update={"episode_id": "alfworld-valid_unseen-p0-expert-none-s0",
                                            "split": "valid_unseen"})
    for episode in (leaked, alf_transform("heat")):
        bank.add(RuleSummariser().summarise(episode))
    bank.save()
    return path


@contextlib.contextmanager
def _served(path: Path, token: str = "s3cret"):
    with serving(create_app(Bank.open(path, writable=False), token=token)) as url:
        yield url


def test_a_served_bank_gets_the_split_check_and_token_errors_are_one_line(leaky_bank, tmp_path, capsys,
                                                                           monkeypatch):
    from expbank.training.evaluation.evaluate import open_memory

    run = tmp_path / "run"
    with _served(leaky_bank) as url:
        config = _config(tmp_path, memory={"mode": "bank", "bank": url}, run={"dir": str(run)})
        monkeypatch.setenv("EXPBANK_TOKEN", "s3cret")
        with pytest.raises(UserError, match="holds entries made from alfworld/valid_unseen"):
            open_memory(load_config(config))
        memory = open_memory(load_config(config, ["env.split=dev"]))
        assert memory.manifest_hash() == Bank.open(leaky_bank).content_hash is not None
        err = _one_line_error(capsys, ["eval", str(config)])
        assert "made from alfworld/valid_unseen" in err and not run.exists()

        monkeypatch.setenv("EXPBANK_TOKEN", "wrong")
        err = _one_line_error(capsys, ["eval", str(config), "env.split=dev"])
        assert "/stats: HTTP 401, the service wants a token: put it in $EXPBANK_TOKEN (the one set is refused)" in err
        monkeypatch.delenv("EXPBANK_TOKEN")
        err = _one_line_error(capsys, ["eval", str(config), "env.split=dev"])
        assert "HTTP 401" in err and "refused" not in err and not run.exists()
    dead = f"http://127.0.0.1:{free_port()}"
    err = _one_line_error(capsys, ["eval", str(config), f"memory.bank={dead}", "env.split=dev"])
    assert f"memory.bank service {dead}/stats: ConnectError" in err and not run.exists()


def test_a_retrieval_failure_mid_run_is_one_line(leaky_bank, monkeypatch):
    from expbank.training.agent.retrieve import Memory, RetrievalError

    monkeypatch.setenv("EXPBANK_TOKEN", "s3cret")
    with _served(leaky_bank) as url:
        memory = Memory("bank", url, k=2)
        assert memory.retrieve(task="put some mug on cabinet.", observation="You are in the middle of a room.")
    with pytest.raises(RetrievalError, match=f"memory.bank service {url}/retrieve: ConnectError") as failure:
        memory.retrieve(task="put some mug on cabinet.")
    assert "\n" not in str(failure.value)


def test_a_retrieval_outage_errors_only_its_episodes_and_a_resume_replays_them(leaky_bank, tmp_path, monkeypatch):
    from expbank.training.evaluation.evaluate import evaluate

    outage = {"on": True}
    app = create_app(Bank.open(leaky_bank, writable=False), token="s3cret")

    @app.middleware("http")
    async def unavailable(request, call_next):
        if outage["on"] and request.url.path == "/retrieve":
            return JSONResponse({"detail": "restarting"}, status_code=503)
        return await call_next(request)

    monkeypatch.setenv("EXPBANK_TOKEN", "s3cret")
    chat = ChatServer()
    chat.broken = False
    run = tmp_path / "run"
    with serving(app) as bank_url, serving(chat.app()) as chat_url:
        config = _config(tmp_path, env={"split": "dev"}, memory={"mode": "bank", "bank": bank_url},
                         actor={"backend": "openai", "model": "scripted", "base_url": f"{chat_url}/v1"},
                         run={"dir": str(run), "episodes_in_flight": 2})
        first = evaluate(load_config(config), progress=False)  # the run ends; it does not stop at the outage
        episodes = list(read_episodes(run / "episodes.jsonl"))
        assert first["arms"]["bank"]["errors"] == 2 and chat.requests == 0
        assert all(e.error.startswith(f"retrieval error: memory.bank service {bank_url}/retrieve: HTTP 503")
                   and "\n" not in e.error for e in episodes)
        outage["on"] = False
        again = evaluate(load_config(config), progress=False)
    assert again["arms"]["bank"]["errors"] == 0 and chat.requests > 0
    replayed = list(read_episodes(run / "episodes.jsonl"))
    assert [e.episode_id for e in replayed] == [e.episode_id for e in episodes]
    assert all(e.error is None and e.steps[0].retrieved for e in replayed)


def _digest(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bank_build_skips_a_torn_last_line_and_refuses_bad_input(tmp_path, capsys, caplog):
    good = tmp_path / "good.jsonl"
    write_episodes(good, [alf_transform("heat"), alf_place()])
    torn = tmp_path / "torn.jsonl"
    torn.write_text(good.read_text() + alf_transform("cool", task_id="c").model_dump_json()[:80])  # a killed write
    bank = tmp_path / "bank"
    built = subprocess.run(["expbank", "bank", "build", str(torn), "--out", str(bank)], capture_output=True,
                           text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    assert f"warning: {torn}:3: skipped a torn last line (an interrupted write)" in built.stderr
    assert "2 new episodes" in built.stdout
    before = _digest(bank)

    middle = tmp_path / "middle.jsonl"
    lines = good.read_text().splitlines()
    middle.write_text(lines[0][:80] + "\n" + lines[1] + "\n")  # a bad line that is not the last: an error
    err = _one_line_error(capsys, ["bank", "build", str(middle), "--out", str(bank)])
    assert f"{middle}:1: invalid trajectory record" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    err = _one_line_error(capsys, ["bank", "build", str(good), str(empty), "--out", str(bank)])
    assert f"{empty}: no episodes in the file" in err
    assert _digest(bank) == before  # nothing written
    err = _one_line_error(capsys, ["bank", "build", str(empty), "--out", str(tmp_path / "new")])
    assert "no episodes" in err and not (tmp_path / "new").exists()

    with caplog.at_level(logging.WARNING, logger="expbank.trajectory"):
        assert len(list(read_episodes(torn))) == 2
    assert [r.getMessage() for r in caplog.records] == [
        f"warning: {torn}:3: skipped a torn last line (an interrupted write)"]


def _record(task_id: str, **changes) -> dict:
    steps = [{"t": 0, "observation": "You are in the middle of a room.", "admissible_actions": ["look"],
              "output": None, "action": "look", "reward": 0.0, "invalid": False, "retrieved": [],
              "reconstruction": None}]
    record = {"episode_id": make_episode_id("alfworld", "dev", task_id, "expert", "none", 0), "run_id": "collect",
              "arm": "none", "env": "alfworld", "split": "dev", "task_id": task_id, "task_type": "pick_and_place_simple",
              "task": "put a mug in cabinet.", "policy": "expert", "seed": 0, "steps": steps, "success": False,
              "score": 0.0, "num_steps": 1, "num_invalid": 0, "error": None}
    return {**record, **changes}


def test_collect_resume_refuses_bad_records_and_replays_errored_ones(tmp_path, capsys):
    task_id = envs.task_ids("alfworld", "dev")[0]
    out = tmp_path / "t.jsonl"
    command = ["collect", "--env", "alfworld", "--split", "dev", "--policy", "expert", "--episodes", "1",
               "--out", str(out)]
    missing = {k: v for k, v in _record(task_id).items() if k != "success"}
    for text, where in ((json.dumps(missing) + "\n", f"{out}:1: invalid trajectory record at 'success'"),
                        ("{not json\n" + json.dumps(_record(task_id)) + "\n", f"{out}:1: invalid trajectory record")):
        out.write_text(text)
        assert where in _one_line_error(capsys, command)
        assert out.read_text() == text  # nothing written or lost

    crashed = _record(task_id, error="worker crashed (exit code -9)", steps=[], num_steps=0)
    out.write_text(json.dumps(crashed) + "\n")
    capsys.readouterr()
    assert main([*command, "--keep-errors"]) == 0
    assert "0 episodes played" in capsys.readouterr().out and json.loads(out.read_text()) == crashed
    assert main(command) == 0
    assert "1 episodes played" in capsys.readouterr().out
    [episode] = read_episodes(out)  # replaced, not appended
    assert episode.error is None and episode.success and episode.episode_id == crashed["episode_id"]


def test_torch_threads_follow_the_environment_then_the_caller_then_the_cores(monkeypatch):
    """One rule for every model we run on a CPU (``expbank serve`` defaults to one thread)."""
    import torch

    from expbank.torch_threads import set_torch_threads

    threads = torch.get_num_threads()
    try:
        for value, expected in ((None, 1), ("2", 2), ("1", 1)):
            if value is None:
                monkeypatch.delenv("EXPBANK_TORCH_THREADS", raising=False)
            else:
                monkeypatch.setenv("EXPBANK_TORCH_THREADS", value)
            set_torch_threads(default=1)  # as expbank serve calls it
            assert torch.get_num_threads() == expected
        monkeypatch.delenv("EXPBANK_TORCH_THREADS")
        assert set_torch_threads() == torch.get_num_threads() == (os.cpu_count() or 1)
        monkeypatch.setenv("EXPBANK_TORCH_THREADS", "lots")
        with pytest.raises(UserError, match="EXPBANK_TORCH_THREADS='lots'"):
            set_torch_threads()
    finally:
        torch.set_num_threads(threads)
