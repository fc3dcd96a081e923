"""`expbank eval` and `expbank ablate` with a real (tiny) model, the real ALFWorld engine and a real bank."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from expbank.config import config_from_tree, load_config
from expbank.errors import UserError
from expbank.trajectory import read_episodes

SMALL = {"env": {"name": "alfworld", "split": "valid_unseen", "max_steps": 2},
         "panel": {"limit": 2, "seeds": [0]}, "actor": {"backend": "hf", "model": "tiny-random"},
         "decoding": {"temperature": 0.0, "max_new_tokens": 16}, "run": {"episodes_in_flight": 2}}


@pytest.fixture(scope="module")
def train_bank(alfworld_trajectories, tmp_path_factory) -> Path:
    bank = tmp_path_factory.mktemp("bank") / "alfworld"
    subprocess.run(["expbank", "bank", "build", str(alfworld_trajectories["expert"]),
                    str(alfworld_trajectories["random"]), "--out", str(bank)], check=True, capture_output=True)
    return bank


def _config(tmp_path: Path, **sections) -> Path:
    tree = json.loads(json.dumps(SMALL))
    for section, values in sections.items():
        tree.setdefault(section, {}).update(values)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def _bank_state(bank: Path) -> list[tuple]:
    from expbank.bank.store import Bank

    opened = Bank.open(bank, writable=False)
    return sorted((e.id, e.stats.uses, e.stats.successes, e.stats.utility) for e in opened.entries(True))


def test_ablate_default_matrix_shows_the_right_memory_and_leaves_utility_alone(train_bank, tmp_path):
    from expbank.bank.store import Bank
    from expbank.training.evaluation.ablate import ablate

    before = _bank_state(train_bank)
    manifest = (train_bank / "manifest.json").read_text()
    config = load_config(_config(tmp_path, memory={"bank": str(train_bank)}, run={"dir": str(tmp_path / "abl")}))
    summary = ablate(config, progress=False)
    assert set(summary["arms"]) == {"none", "raw", "bank", "bank-norecon", "bank-sourcerandom"}
    assert all(arm["n"] == 2 for arm in summary["arms"].values())
    assert {c["b"] for c in summary["comparisons"]} == {"raw", "bank", "bank-norecon", "bank-sourcerandom"}
    bank = Bank.open(train_bank, writable=False)
    kinds = {}
    for arm in summary["arms"]:
        episodes = list(read_episodes(tmp_path / "abl" / "arms" / arm / "episodes.jsonl"))
        shown = [entry_id for e in episodes for s in e.steps for entry_id in s.retrieved]
        kinds[arm] = {bank.get(entry_id).kind for entry_id in shown}
        own_tasks = {e.task_id for e in episodes}
        assert not any(set(bank.get(i).provenance.task_ids) & own_tasks for i in shown)
    assert kinds["none"] == set()
    assert kinds["raw"] == {"trajectory"}
    assert kinds["bank"] and kinds["bank"] <= {"strategy", "warning"}
    assert _bank_state(train_bank) == before and (train_bank / "manifest.json").read_text() == manifest
    report = (tmp_path / "abl" / "report.md").read_text()
    assert "too small" in report and "bank-sourcerandom" in report
    episode = next(read_episodes(tmp_path / "abl" / "arms" / "bank" / "episodes.jsonl"))
    shown = subprocess.run(["expbank", "show", str(tmp_path / "abl"), "--episode", episode.episode_id],
                           capture_output=True, text=True, check=True).stdout
    assert episode.task in shown and "shown " in shown and "situation:" in shown and "outcome: failure" in shown


def test_prompts_carry_the_experience_block_with_source_observations(train_bank):
    from expbank.envs.pool import EnvPool
    from expbank.training.actors.backends import HFBackend
    from expbank.training.agent.protocol import ProtocolSpec
    from expbank.training.agent.retrieve import Memory
    from expbank.training.agent.rollout import RolloutJob, RolloutSettings, rollout

    class Recording(HFBackend):
        def generate(self, messages, **sampling):
            self.seen = getattr(self, "seen", []) + messages
            return super().generate(messages, **sampling)

    backend = Recording("tiny-random")
    from expbank import envs

    task_id = envs.task_ids("alfworld", "valid_unseen")[0]
    seen = {}
    for mode, source in (("none", "matched"), ("bank", "matched"), ("bank", "none"), ("raw", "matched")):
        backend.seen = []
        memory = None if mode == "none" else Memory(mode, str(train_bank), k=2, source=source)
        settings = RolloutSettings(env="alfworld", spec=ProtocolSpec(mode), max_new_tokens=8)
        with EnvPool("alfworld", "valid_unseen", workers=1, max_steps=1) as pool:
            list(rollout(backend, pool, [RolloutJob("e", task_id, 0)], settings, memory))
        seen[(mode, source)] = backend.seen[0][-1]["content"]
    assert "<experience>" not in seen[("none", "matched")]
    bank_prompt = seen[("bank", "matched")]
    assert "<experience>" in bank_prompt and "[2] situation:" in bank_prompt
    sources = [line.split("| source: ")[1].split(" | guidance:")[0] for line in bank_prompt.splitlines()
               if line.startswith("[")]
    assert all(sources), "each shown entry carries its source observation"
    assert "| source:" not in seen[("bank", "none")]  # no source, no field
    assert seen[("bank", "none")].count("] situation:") == 2
    assert "<experience>" in seen[("raw", "matched")]


def test_eval_resumes_after_kill_and_ends_identical(train_bank, tmp_path):
    config = _config(tmp_path, memory={"mode": "bank", "bank": str(train_bank)}, panel={"limit": 4},
                     env={"max_steps": 3}, run={"episodes_in_flight": 2})
    full, killed = tmp_path / "a" / "run", tmp_path / "b" / "run"
    subprocess.run(["expbank", "eval", str(config), f"run.dir={full}", "--no-progress"], check=True,
                   capture_output=True, timeout=600)
    process = subprocess.Popen(["expbank", "eval", str(config), f"run.dir={killed}", "--no-progress"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    episodes = killed / "episodes.jsonl"
    while time.time() < deadline and not (episodes.exists() and episodes.stat().st_size > 0):
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = len((killed / "episodes.jsonl").read_text().splitlines())
    assert 1 <= finished < 4
    kept = (killed / "episodes.jsonl").read_text().splitlines()
    rerun = subprocess.run(["expbank", "eval", str(config), f"run.dir={killed}", "--no-progress"],
                           capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert "success" in rerun.stdout and str(killed) in rerun.stdout
    assert (killed / "episodes.jsonl").read_text() == (full / "episodes.jsonl").read_text()
    assert all(line in (killed / "episodes.jsonl").read_text() for line in kept)  # nothing replayed differently
    for name in ("config.yaml", "fingerprint.json", "summary.json", "report.md", "episode_stats.jsonl"):
        assert (killed / name).exists(), name


def test_eval_refuses_a_bank_made_from_the_evaluated_split(alfworld_trajectories, tmp_path):
    from expbank.training.evaluation.evaluate import evaluate

    bank = tmp_path / "leaky"
    subprocess.run(["expbank", "bank", "build", str(alfworld_trajectories["valid_unseen"]), "--out", str(bank)],
                   check=True, capture_output=True)
    config = load_config(_config(tmp_path, memory={"mode": "bank", "bank": str(bank)},
                                 run={"dir": str(tmp_path / "run")}))
    with pytest.raises(UserError, match="made from alfworld/valid_unseen"):
        evaluate(config, progress=False)


def test_a_run_directory_refuses_a_different_config(tmp_path):
    from expbank.training.evaluation.evaluate import evaluate

    config = load_config(_config(tmp_path, run={"dir": str(tmp_path / "run")}, panel={"limit": 1},
                                 env={"max_steps": 1}))
    evaluate(config, progress=False)
    changed = load_config(_config(tmp_path, run={"dir": str(tmp_path / "run")}, panel={"limit": 1},
                                  env={"max_steps": 2}))
    with pytest.raises(UserError, match="different config .*env.max_steps"):
        evaluate(changed, progress=False)


def test_a_resumed_run_may_find_its_actors_server_on_another_port_but_not_another_model(tmp_path):
    from expbank.training.runs import prepare_run_dir

    def tree(**actor) -> dict:
        return {"env": {"name": "alfworld", "split": "valid_unseen"},
                "actor": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8000/v1", **actor}}

    run = tmp_path / "run"
    prepare_run_dir(run, config_from_tree(tree()))
    assert prepare_run_dir(run, config_from_tree(tree(base_url="http://127.0.0.1:8123/v1"))) == run
    with pytest.raises(UserError, match=r"different config \(actor.model\)"):
        prepare_run_dir(run, config_from_tree(tree(model="other")))


def test_ablation_arms_skip_meaningless_combinations(tmp_path):
    from expbank.training.evaluation.ablate import arm_overrides

    config = load_config(None, ["ablate.grid={memory.mode: [none, bank], memory.reconstruct: [true, false]}"])
    arms, skipped = arm_overrides(config)
    assert arms == [{"memory.mode": "none", "memory.reconstruct": True},
                    {"memory.mode": "bank", "memory.reconstruct": True},
                    {"memory.mode": "bank", "memory.reconstruct": False}]
    assert len(skipped) == 1 and "means nothing with memory.mode=none" in skipped[0]
    with pytest.raises(UserError, match="not both"):
        arm_overrides(load_config(None, ["ablate.grid={memory.k: [1]}", "ablate.arms=[{memory.k: 2}]"]))


def test_eval_and_ablate_show_in_help():
    out = subprocess.run(["expbank", "--help"], capture_output=True, text=True).stdout
    for command in ("eval", "ablate", "report", "compare", "serve-model"):
        assert command in out


def test_the_fingerprint_names_the_weights_that_played(tmp_path):
    """A stage rebuilt on another commit need not be bit-identical; the fingerprint says which weights played."""
    import torch
    from safetensors.torch import save_file

    from expbank.training.runs import fingerprint, weights_digest

    adapter = tmp_path / "sft" / "model"
    adapter.mkdir(parents=True)
    save_file({"lora_A": torch.zeros(4, 2)}, adapter / "adapter_model.safetensors")
    (adapter / "adapter_config.json").write_text("{}")
    config = load_config(_config(tmp_path, actor={"model": "smollm2-135m", "adapter": str(adapter)}))
    recorded = fingerprint(config, {}, None, "v1")["actor_weights"]
    assert recorded["model"] is None  # a package model: its version is under packages
    assert recorded["adapter"] == weights_digest(adapter) and len(recorded["adapter"]) == 64

    copy = tmp_path / "copy" / "model"
    shutil.copytree(adapter, copy)
    assert weights_digest(copy) == recorded["adapter"]  # the bytes decide, not where they lie
    save_file({"lora_A": torch.zeros(4, 2).index_fill_(0, torch.tensor([3]), 1e-3)}, copy / "adapter_model.safetensors")
    assert weights_digest(copy) != recorded["adapter"]
    assert weights_digest(tmp_path / "missing") is None and weights_digest(None) is None
