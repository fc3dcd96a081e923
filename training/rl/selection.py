"""Model selection during GRPO (docs/design.md §8): a periodic greedy evaluation on ``select.split`` (``dev``).

The evaluation is ``expbank eval``'s own code (``training/evaluation/evaluate.py``) run on the policy in memory, with
the run's current bank snapshot, into ``RUN/selection/step-N/`` (a complete eval run directory: episodes,
summary, report). Its success rate (and WebShop score) goes into ``metrics.jsonl`` as ``dev_success`` and
``dev_score``; ``checkpoints/best.json`` names the checkpoint that scored best. Selection never looks at a
reported split: ``Config`` refuses a ``select.split`` listed in ``report.splits``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from expbank.config import Config, PanelConfig
from expbank.training.actors.backends import HFBackend
from expbank.training.evaluation.evaluate import evaluate, open_memory
from expbank.training.runs import write_json


def due(config: Config, step: int) -> bool:
    """Evaluate every ``select.every`` steps and at the last step (never when ``select.every`` is 0)."""
    every = config.select.every
    return bool(every) and (step % every == 0 or step == config.train.steps)


def metric_of(config: Config) -> tuple[str, str]:
    """(name in best.json, key in metrics.jsonl): WebShop selects on score, ALFWorld on success."""
    return ("score", "dev_score") if config.env.name == "webshop" else ("success_rate", "dev_success")


def dev_config(config: Config, run_dir: Path, step: int, bank: Path | None) -> Config:
    """The eval config of one selection point: the training arm on a fixed greedy panel of the dev split."""
    updates: dict[str, Any] = {
        "env": config.env.model_copy(update={"split": config.select.split}),
        "panel": PanelConfig(limit=config.select.tasks, seeds=[config.run.seed]),
        "decoding": config.decoding.model_copy(update={"temperature": 0.0}),
        "run": config.run.model_copy(update={"dir": str(run_dir / "selection" / f"step-{step:05d}")}),
    }
    if bank is not None:
        updates["memory"] = config.memory.model_copy(update={"bank": str(bank)})
    return config.model_copy(update=updates)


def check(config: Config, bank: Path | None) -> None:
    """Fail before training when the selection evaluation would refuse the bank (entries from its split)."""
    open_memory(dev_config(config, Path("."), 0, bank))


def evaluate_dev(config: Config, policy: Any, run_dir: Path, step: int, bank: Path | None) -> dict[str, float]:
    """Greedy evaluation of the policy in memory; returns ``dev_success`` and ``dev_score`` in [0, 1].

    The torch RNG is forked so that evaluating leaves training's random stream as it was.
    """
    backend = HFBackend.wrap(policy.model, policy.tokenizer, policy.name)
    with torch.random.fork_rng(devices=[]):
        summary = evaluate(dev_config(config, run_dir, step, bank), progress=False, backend=backend)
    arm = summary["arms"][config.arm_name()]
    success = arm["success"] / 100
    return {"dev_success": success, "dev_score": success if arm["score"] is None else arm["score"] / 100}


def write_best(config: Config, run_dir: Path) -> dict[str, Any] | None:
    """``checkpoints/best.json`` from the dev results in ``metrics.jsonl`` (the earliest step of the best value).

    Derived from the metrics each time, so a run killed between its checkpoint and this file repairs it on
    resume.
    """
    name, key = metric_of(config)
    path = run_dir / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    scored = [row for row in rows if row.get(key) is not None]
    if not scored:
        return None
    top = max(scored, key=lambda row: (row[key], -row["step"]))
    best = {"step": top["step"], "split": config.select.split, "metric": name, "value": top[key]}
    write_json(run_dir / "checkpoints" / "best.json", best)
    return best


def forget_after(run_dir: Path, step: int) -> None:
    """Drop selection evaluations of steps after ``step`` (a resumed run replays those steps)."""
    for path in sorted((run_dir / "selection").glob("step-*")):
        if int(path.name.removeprefix("step-")) > step:
            shutil.rmtree(path)


def prune_checkpoints(run_dir: Path, keep: int | None, best_step: int | None) -> list[Path]:
    """Delete all but the newest ``keep`` checkpoints, never the best one; returns what was deleted."""
    if keep is None:
        return []
    found = sorted((run_dir / "checkpoints").glob("step-[0-9][0-9][0-9][0-9][0-9]"))
    old = [path for path in found[:-keep] if best_step is None or path.name != f"step-{best_step:05d}"]
    for path in old:
        shutil.rmtree(path)
    return old
