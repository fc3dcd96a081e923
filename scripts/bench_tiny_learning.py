"""Benchmark: does GRPO beat the SFT checkpoint it started from on held-out games, on a CPU, in minutes?

The check #7 asks for (acceptance 3), with ``tiny-warm`` on the ALFWorld ``search`` family's two-kitchen
panel, on the real engine. The demonstrations come from one kitchen (``HOMES``, split ``valid_seen``): the
expert searches the surfaces in a random order that starts at the food's home half of the time, so the
warmed-up policy learns to search and learns *that kitchen's* homes. GRPO trains in another kitchen
(``MOVED_HOMES``, split ``train``), where every food is kept elsewhere; the held-out panel is 50 other games
of that kitchen (``valid_unseen``: other layouts, never played in training). With a five-step limit, what
GRPO can add is where things are in the new kitchen, learnt from reward alone.

Stages: games → tiny-warm on the demonstrations (the SFT stage) → greedy ``expbank eval`` of it → ``expbank
train`` → greedy eval of the last checkpoint → ``expbank compare`` of the two evaluations (``OUT/compare.md``)
and the one-sided exact McNemar p of the wins gained and lost (``OUT/result.json``). Results so far are in docs/training.md ("Learning on a CPU"); it does not pass yet.

    python scripts/bench_tiny_learning.py --out runs/tiny-learning [--grpo-steps 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import yaml

from expbank.envs.alfworld.search_games import MOVED_HOMES, home_triples, write_search_games
from expbank.training import report, stats
from expbank.training.tiny_warm import WarmRecipe, build_tiny_warm

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
                  "group_size": args.group_size, "learning_rate": args.learning_rate, "lora": False,
                  "micro_batch_size": 16, "max_length": 1024, "checkpoint_every": args.grpo_steps},
        "run": {"seed": args.seed, "episodes_in_flight": 8},
    }
    path.write_text(yaml.safe_dump(tree))
    return path


def expbank(*args: str) -> None:
    subprocess.run(["expbank", *args, "--no-progress"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="a new folder")
    parser.add_argument("--warm-steps", type=int, default=400, help="tiny-warm steps on the demonstrations")
    parser.add_argument("--grpo-steps", type=int, default=10)
    parser.add_argument("--tasks-per-step", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--temperature", type=float, default=0.7, help="GRPO sampling temperature")
    parser.add_argument("--max-steps", type=int, default=5, help="step limit per episode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=False)
    timings: dict[str, float] = {}
    began = time.perf_counter()

    kitchens = {**home_triples({"valid_seen": 10}, GARBAGE_CAN),
                **home_triples({"train": 10, "dev": 1, "valid_unseen": 10}, GARBAGE_CAN, MOVED_HOMES)}
    games = write_search_games(out / "games", seed=args.seed, triples=kitchens, searching=True, home_first=0.5)
    recipe = WarmRecipe(envs=("alfworld",), alfworld_data=str(games), alfworld_split="valid_seen", vocab_size=1024,
                        history_length=1, steps=args.warm_steps, learning_rate=1e-3, induction_steps=250,
                        induction_mix_batch_size=16, seed=args.seed)
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
