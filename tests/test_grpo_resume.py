"""Acceptance: GRPO killed with SIGKILL during step 4 and resumed equals an uninterrupted run, bit for bit."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import torch

CONFIG = "configs/train-cpu-learning.yaml"
SMALL = ["train.steps=6", "train.tasks_per_step=2", "train.group_size=2", "train.drop_zero_variance=false",
         "train.checkpoint.every=1", "env.max_steps=4", "run.episodes_in_flight=1"]


def _train(run_dir: Path, model: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "EXPBANK_TORCH_THREADS": "1"}  # same kernels, same sums in both runs
    return subprocess.Popen(["expbank", "train", CONFIG, *SMALL, f"actor.model={model}", f"run.dir={run_dir}",
                             *extra, "--no-progress"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen) -> None:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err[-3000:]


def _weights(run_dir: Path, step: int) -> dict[str, torch.Tensor]:
    return torch.load(run_dir / "checkpoints" / f"step-{step:05d}" / "trainable.pt")


def test_kill_during_step_4_and_resume_equals_an_uninterrupted_run(tmp_path, tiny_warm):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    _finish(_train(straight, tiny_warm))

    process = _train(killed, tiny_warm)
    checkpoint_3 = killed / "checkpoints" / "step-00003"
    while not checkpoint_3.exists():
        assert process.poll() is None, process.communicate()[1][-3000:]
        time.sleep(0.05)
    time.sleep(1.0)  # well inside step 4 (rollouts of a step take several seconds)
    assert not (killed / "checkpoints" / "step-00004").exists(), "step 4 finished before the kill"
    process.send_signal(signal.SIGKILL)
    process.wait()
    _finish(_train(killed, tiny_warm, "--resume"))

    first, final = _weights(straight, 1), _weights(straight, 6)
    resumed = _weights(killed, 6)
    assert first.keys() == final.keys() == resumed.keys()
    assert any(not torch.equal(first[n], final[n]) for n in final), "training changed nothing: the test is vacuous"
    for name in final:
        assert torch.equal(final[name], resumed[name]), name
    metrics = [line for line in (killed / "metrics.jsonl").read_text().splitlines() if line]
    assert len(metrics) == 6  # the interrupted step was replayed, not logged twice
