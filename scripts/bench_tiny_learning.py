"""Benchmark: does GRPO beat the SFT checkpoint it started from on held-out games, on a CPU, in minutes?

The check #7 asks for (acceptance 3), with ``tiny-warm`` on the ALFWorld ``search`` family, on the real
engine, in two kitchens. The demonstrations (split ``valid_seen``) come from a kitchen where the food may lie
on any surface: the expert looks at the surfaces in a random order until it finds the food, then takes it to
the garbage can, so the warmed-up policy learns to search and to copy the food's and surface's names, but no
place to look first. GRPO trains in another kitchen (split ``train``) that keeps every food on the shelf; the
held-out panel is 50 other games of that kitchen (``valid_unseen``: other layouts and distractors, never
played in training). With a five-step limit (one wrong look at most), what GRPO can add is where this kitchen
keeps its food, learnt from reward alone. ``--demo-kitchen homes --home-first 0.5 --new-kitchen moved`` is
session 5's harder variant (each food on its own surface, then every food moved elsewhere).

Stages: games → tiny-warm on the demonstrations (the SFT stage) → greedy ``expbank eval`` of it → ``expbank
train`` → greedy eval of the last checkpoint → ``expbank compare`` of the two evaluations (``OUT/compare.md``)
and the one-sided exact McNemar p of the wins gained and lost (``OUT/result.json``). The warm-up saves the
mean of its last 100 steps' weights (``--average-last``). Measured results per seed are in docs/training.md
("Learning on a CPU"); ``tests/test_grpo_learning.py`` runs it at seed 0.

    python scripts/bench_tiny_learning.py --out runs/tiny-learning [--seed 0] [--grpo-steps 8]
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from expbank.envs.alfworld.search_games import (
    GOAL_OBJECTS,
    MOVED_HOMES,
    SURFACES,
    home_triples,
    write_search_games,
)
from expbank.training.actors.tiny_warm import WarmRecipe, build_tiny_warm
from expbank.training.evaluation import report, stats

GARBAGE_CAN = ("GarbageCan",)


def write_config(path: Path, args: argparse.Namespace, games: Path, model: Path, temperature: float) -> Path:
    tree = {
        "env": {"name": "alfworld", "split": "valid_unseen", "max_steps": args.max_steps, "data_dir": str(games)},
        "panel": {"seeds": [0]},
        "actor": {"backend": "hf", "model": str(model)},
        "memory": {"mode": "none"},
        "prompt": {"history_length": 1},
        "decoding": {"temperature": temperature, "max_new_tokens": 48},
        "reward": {"outcome_scale": 10.0, "format_weight": 0.1, "invalid_penalty": 0.1},
        "select": {"split": "dev"},
        "report": {"splits": ["valid_unseen"]},
        "train": {"split": "train", "steps": args.grpo_steps, "tasks_per_step": args.tasks_per_step,
                  "group_size": args.group_size, "learning_rate": args.learning_rate, "lora": {"enabled": False},
                  "micro_batch_size": 16, "max_length": 1024,
                  "checkpoint": {"every": args.checkpoint_every or args.grpo_steps},
                  "balance_turns": args.balance_turns},
        "run": {"seed": args.seed, "episodes_in_flight": 8},
    }
    path.write_text(yaml.safe_dump(tree))
    return path


def expbank(*args: str) -> None:
    subprocess.run(["expbank", *args, "--no-progress"], check=True)


def main() -> None:
    # a SIGTERM ends the run as Ctrl-C does: subprocess.run kills the stage it waits on (each stage resumes),
    # so a killed benchmark leaves no training process holding the cores
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="a new folder")
    parser.add_argument("--warm-steps", type=int, default=400, help="tiny-warm steps on the demonstrations")
    parser.add_argument("--grpo-steps", type=int, default=8)
    parser.add_argument("--tasks-per-step", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--temperature", type=float, default=0.7, help="GRPO sampling temperature")
    parser.add_argument("--max-steps", type=int, default=5, help="step limit per episode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--new-kitchen", default="Shelf", choices=("moved", *SURFACES),
                        help="where the GRPO kitchen keeps the food: 'moved' (MOVED_HOMES) or all on one surface")
    parser.add_argument("--demo-kitchen", default="anywhere", choices=("anywhere", "homes"),
                        help="where the demonstrations' food lies: on any surface, or on its home (HOMES)")
    parser.add_argument("--home-first", type=float, default=0.0,
                        help="how often a demonstration looks where the food is first")
    parser.add_argument("--balance-turns", action=argparse.BooleanOptionalAction, default=True,
                        help="train.balance_turns: weight each episode once, not each turn")
    parser.add_argument("--average-last", type=int, default=100,
                        help="warm-up: save the mean of the last N steps' weights (0: the last step's)")
    parser.add_argument("--checkpoint-every", type=int, default=0, help="0: only the last step")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=False)
    timings: dict[str, float] = {}
    began = time.perf_counter()

    new_homes = MOVED_HOMES if args.new_kitchen == "moved" else dict.fromkeys(GOAL_OBJECTS, args.new_kitchen)
    if args.demo_kitchen == "anywhere":  # every food on every surface, twice
        demos = {"valid_seen": [(food, surface, target) for food in GOAL_OBJECTS for surface in SURFACES
                                for target in GARBAGE_CAN] * 2}
    else:
        demos = home_triples({"valid_seen": 10}, GARBAGE_CAN)
    kitchens = {**demos, **home_triples({"train": 10, "dev": 1, "valid_unseen": 10}, GARBAGE_CAN, new_homes)}
    games = write_search_games(out / "games", seed=args.seed, triples=kitchens, searching=True,
                               home_first=args.home_first)
    recipe = WarmRecipe(envs=("alfworld",), alfworld_data=str(games), alfworld_split="valid_seen", vocab_size=1024,
                        history_length=1, steps=args.warm_steps, learning_rate=1e-3, induction_steps=250,
                        induction_mix_batch_size=16, average_last=args.average_last, seed=args.seed)
    start = build_tiny_warm(recipe, out=out / "sft", progress=True)
    timings["games + warm-up"] = time.perf_counter() - began

    greedy = write_config(out / "eval.yaml", args, games, start, temperature=0.0)
    for name, command in [
        ("start eval", ["eval", str(greedy), f"run.dir={out / 'eval-start'}"]),
        ("grpo", ["train", str(write_config(out / "grpo.yaml", args, games, start, args.temperature)),
                  f"run.dir={out / 'grpo'}"]),
        ("final eval", ["eval", str(greedy), f"run.dir={out / 'eval-final'}",
                        f"actor.model={out / 'grpo' / 'checkpoints' / f'step-{args.grpo_steps:05d}' / 'model'}"]),
    ]:
        stage_began = time.perf_counter()
        expbank(*command)
        timings[name] = time.perf_counter() - stage_began

    summary = report.compare_runs(out / "eval-start", out / "eval-final")  # pairs the episodes, same panel
    (out / "compare.md").write_text(report.render_report(summary))
    comparison = summary["comparisons"][0]
    flips = comparison["flips"]
    result = {"held_out": comparison["n_pairs"], "wins_before": flips["both"] + flips["a_only"],
              "wins_after": flips["both"] + flips["b_only"], "gained": flips["b_only"], "lost": flips["a_only"],
              "one_sided_mcnemar_p": stats.mcnemar_exact_p(flips["a_only"], flips["b_only"], alternative="greater"),
              "seconds": {k: round(v, 1) for k, v in timings.items()}}
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
