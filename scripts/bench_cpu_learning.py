"""Benchmark: does SFT + GRPO with the real SmolLM2-135M improve a held-out panel on a CPU?

Stages (each skipped when its output exists, so an interrupted run continues where it stopped):

1. ``games``   the ALFWorld ``search`` family (``envs/alfworld/search_games.py``) under ``OUT/games``;
2. ``collect`` the planner's walkthroughs of the ``train`` games (``OUT/train-expert.jsonl``);
3. ``sft``     LoRA cold start on them (``OUT/sft/model``);
4. ``start``   greedy evaluation of the SFT adapter on the held-out ``valid_unseen`` games (``OUT/eval-start``);
5. ``grpo``    GRPO on ``train`` from the SFT adapter (``OUT/grpo``, resumable);
6. ``final``   the same evaluation of the last GRPO checkpoint (``OUT/eval-final``);
7. ``compare`` ``expbank compare OUT/eval-start OUT/eval-final``: success and score before and after, with
   the exact McNemar test on the paired episodes; written to ``OUT/compare.md`` and printed.

Why this panel: the walkthrough knows where the goal object lies and the policy does not, so SFT learns a
guess and GRPO can learn to look; the observations are short, which keeps SmolLM2 affordable on 2 cores.
The defaults are sized for about 2 hours on 2 cores from what was measured (docs/benchmarks.md): one GRPO
step of 1 task x 4 episodes with 2 torch threads took 262 s, one greedy evaluation of the 48 held-out games
about 18 minutes. Every stage prints its wall time.

    python scripts/bench_cpu_learning.py --out runs/cpu-learning [--grpo-steps 16] [--panel 48]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from expbank.config import Config, config_from_tree


def run_config(args: argparse.Namespace, out: Path) -> Config:
    """The one config every stage shares (panel, actor, protocol, SFT and GRPO settings)."""
    tree = {
        "env": {"name": "alfworld", "split": "valid_unseen", "max_steps": args.max_steps,
                "data_dir": str(out / "games")},
        "panel": {"limit": args.panel},
        "actor": {"backend": "hf", "model": args.model},
        "memory": {"mode": "none"},
        "prompt": {"history_length": 2},
        "decoding": {"temperature": 0.0, "max_new_tokens": 48},
        "reward": {"outcome_scale": 10.0, "format_weight": 0.1, "invalid_penalty": 0.1},
        "select": {"split": "dev"},
        "report": {"splits": ["valid_unseen"]},
        "run": {"seed": args.seed, "episodes_in_flight": 4},
        "sft": {"trajectories": [str(out / "train-expert.jsonl")], "split": "train", "epochs": args.sft_epochs,
                "learning_rate": 2e-4, "batch_size": 4, "max_length": 1024, "lora": True},
        "train": {"split": "train", "steps": args.grpo_steps, "tasks_per_step": args.tasks_per_step,
                  "group_size": args.group_size, "learning_rate": args.grpo_learning_rate, "beta": 0.01,
                  "lora": {"enabled": True}, "max_length": 1024, "micro_batch_size": 4},
    }
    return config_from_tree(tree, "bench_cpu_learning")


def stage(name: str, done: bool, timings: dict[str, float]):
    """A runner for one stage: skips it when done, else runs it and records its wall time."""
    def run(fn) -> None:
        if done:
            print(f"[{name}] already done")
            return
        began = time.perf_counter()
        fn()
        timings[name] = round(time.perf_counter() - began, 1)
        print(f"[{name}] {timings[name]:.0f} s")
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="run folder (reused to resume)")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--panel", type=int, default=48, help="held-out games evaluated (of 48)")
    parser.add_argument("--max-steps", type=int, default=10, help="step limit per episode")
    parser.add_argument("--sft-epochs", type=float, default=1.0)
    parser.add_argument("--grpo-steps", type=int, default=16)
    parser.add_argument("--tasks-per-step", type=int, default=1)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--grpo-learning-rate", type=float, default=2e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="torch threads (default: every core; on 2 cores a GRPO step took 262 s with 2 threads "
                             "and had not finished after 17 min with 1)")
    args = parser.parse_args()
    os.environ["EXPBANK_TORCH_THREADS"] = str(args.threads)

    from expbank.envs.alfworld.search_games import write_search_games
    from expbank.training.agent.collect import collect
    from expbank.training.evaluation import report
    from expbank.training.evaluation.evaluate import evaluate
    from expbank.training.rl.grpo import latest_checkpoint, train
    from expbank.training.rl.sft import sft
    from expbank.training.runs import prepare_run_dir

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = run_config(args, out)
    timings: dict[str, float] = {}
    sft_dir, grpo_dir = out / "sft", out / "grpo"

    stage("games", (out / "games" / "COMPLETE").exists(), timings)(
        lambda: write_search_games(out / "games", seed=args.seed, progress=True))
    stage("collect", False, timings)(  # resumes by itself: finished episodes are skipped
        lambda: collect("alfworld", "train", "expert", out / "train-expert.jsonl", data_dir=str(out / "games")))

    def run_sft() -> None:
        config.run.dir = str(sft_dir)
        prepare_run_dir(sft_dir, config)
        sft(config, config.sft.trajectories, sft_dir)
    stage("sft", (sft_dir / "model" / "adapter_config.json").exists(), timings)(run_sft)

    def run_eval(adapter: Path, run_dir: Path) -> None:
        config.actor.adapter, config.run.dir = str(adapter), str(run_dir)
        evaluate(config)
    stage("start", (out / "eval-start" / "summary.json").exists(), timings)(
        lambda: run_eval(sft_dir / "model", out / "eval-start"))

    def run_grpo() -> None:
        config.actor.adapter, config.run.dir = str(sft_dir / "model"), str(grpo_dir)
        train(config, resume=True)
    last = latest_checkpoint(grpo_dir) if grpo_dir.exists() else None
    stage("grpo", last is not None and int(last.name.split("-")[-1]) >= args.grpo_steps, timings)(run_grpo)
    stage("final", (out / "eval-final" / "summary.json").exists(), timings)(
        lambda: run_eval(latest_checkpoint(grpo_dir) / "model", out / "eval-final"))

    summary = report.compare_runs(out / "eval-start", out / "eval-final")
    text = report.render_report(summary)
    (out / "compare.md").write_text(text)
    timing_file = out / "timings.json"  # wall seconds per stage, across resumed runs
    recorded = json.loads(timing_file.read_text()) if timing_file.exists() else {}
    timing_file.write_text(json.dumps({**recorded, **timings}, indent=2) + "\n")
    print(text)


if __name__ == "__main__":
    main()
