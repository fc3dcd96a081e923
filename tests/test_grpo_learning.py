"""Acceptance (#7, 3): on a CPU, GRPO beats the SFT checkpoint it started from on held-out games.

Runs ``scripts/bench_tiny_learning.py`` at its defaults (seed 0) as a user would, on the real ALFWorld
engine: ``tiny-warm`` is warmed up (the SFT stage; the mean of its last 100 steps' weights) on
demonstrations that search for food lying anywhere, GRPO trains 8 steps in a kitchen that keeps every food
on the shelf, and both checkpoints are evaluated greedily on 50 games of that kitchen that GRPO never plays
(other layouts and distractors). What GRPO can add is where this kitchen keeps its food, learnt from reward
alone; the script pairs the two evaluations and takes a one-sided exact McNemar test. Sampling is seeded
from (task, seed, draw), never from paths, so the run is the same in any folder. 434 s on the 2-core VM in
a fresh-clone CI (2026-12-07), the suite's longest test, under its 8-minute limit; docs/training.md has the
figures of this and other seeds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_tiny_learning.py"

pytestmark = pytest.mark.slow


def _task_ids(episodes: Path) -> set[str]:
    return {json.loads(line)["task_id"] for line in episodes.read_text().splitlines() if line.strip()}


def test_grpo_beats_its_sft_start_on_held_out_games(tmp_path):
    out = tmp_path / "learning"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--seed", "0"],
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((out / "result.json").read_text())
    assert result["held_out"] >= 40, result
    assert result["wins_after"] > result["wins_before"], result
    assert result["one_sided_mcnemar_p"] < 0.05, result
    trained = _task_ids(out / "grpo" / "episodes.jsonl")
    held_out = _task_ids(out / "eval-final" / "episodes.jsonl")
    assert trained and held_out == _task_ids(out / "eval-start" / "episodes.jsonl")
    assert not trained & held_out, "GRPO never plays a held-out game"
