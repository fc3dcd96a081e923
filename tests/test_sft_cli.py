"""`expbank sft` as the README shows it: expert trajectories in, a model that `expbank eval` plays out."""

from __future__ import annotations

import json
import subprocess

from expbank.training.agent.collect import collect


def test_sft_command_trains_on_assistant_tokens_and_its_model_evaluates(tmp_path, tiny_warm):
    expert = tmp_path / "ws-expert.jsonl"
    collect("webshop", "train", "expert", expert, episodes=12, progress=False)
    sft_dir = tmp_path / "sft"
    done = subprocess.run(["expbank", "sft", "configs/train-cpu-learning.yaml", f"sft.trajectories=[{expert}]",
                           f"actor.model={tiny_warm}", f"run.dir={sft_dir}", "sft.epochs=1", "--no-progress"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"use it with actor.model={sft_dir / 'model'}" in done.stdout
    assert (sft_dir / "config.yaml").exists() and (sft_dir / "model" / "config.json").exists()

    evaluated = subprocess.run(["expbank", "eval", "configs/train-cpu-learning.yaml", f"actor.model={sft_dir / 'model'}",
                                "panel.limit=2", "env.max_steps=2", "decoding.temperature=0",
                                f"run.dir={tmp_path / 'eval'}", "--no-progress"],
                               capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    episodes = [json.loads(line) for line in (tmp_path / "eval" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2 and all(e["steps"] for e in episodes)


def test_sft_without_trajectories_is_refused_in_one_line(tmp_path):
    done = subprocess.run(["expbank", "sft", "configs/train-cpu-learning.yaml", f"run.dir={tmp_path}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "sft.trajectories" in done.stderr


def test_sft_records_do_not_depend_on_the_order_episodes_were_written(tmp_path):
    """A collection writes episodes as its workers finish; collecting twice must give the same SFT data."""
    from expbank.config import load_config
    from expbank.training.rl.sft import build_records

    expert = tmp_path / "ws-expert.jsonl"
    collect("webshop", "train", "expert", expert, episodes=4, progress=False)
    config = load_config("configs/train-cpu-learning.yaml")
    first, _ = build_records(config, [str(expert)])
    lines = expert.read_text().splitlines()
    expert.write_text("\n".join(reversed(lines)) + "\n")
    assert len(lines) == 4 and first and build_records(config, [str(expert)])[0] == first
