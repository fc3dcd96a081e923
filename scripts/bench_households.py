"""Benchmark: does a policy taught to use the bank do better in rooms it never trained in, because of the bank?

The households panel (``envs/alfworld/households.py``): a food's place in a held-out household is known only
from the bank, built by the normal pipeline (``expbank collect`` of the ``visits`` split, ``expbank bank build``
with the rule summariser) before any training. Two policies get the same SFT budget on the same training
households: ``sft-none`` without memory, ``sft-bank`` with the retrieved block and critique/reconstruct targets
that say which item is about this room (``agent/targets.py``). Arms, all greedy on the 48 held-out games:

- ``sft-none``, ``sft-bank``; ``sft-bank-other``: the ``sft-bank`` policy shown only other rooms' entries
  (``memory.rooms: other``: the same format, wrong facts);
- ``--small`` adds ``raw`` (the ``sft-bank`` policy shown raw trajectory excerpts), ``bank-sourcerandom``
  (entries shown with another entry's source observation; the compact block shows no source, so this arm
  also shows a field the policy never saw) and ``bank-norecon`` (a policy trained and run without critique
  and reconstruction);
- ``--online`` plays the ``stream`` split (the held-out tasks four times, every (room, food) pair first in
  round 1) with ``sft-bank`` online from an empty bank (``sft-bank-online``: the bank grows from its own
  episodes, wave by wave) and with ``sft-none``; ``OUT/online.md`` says whether the stream's second half beats
  its first (Fisher) and ``sft-none`` on the same tasks (exact McNemar). Both streams are greedy unless
  ``--stream-temperature`` samples them (greedy repeats a pair's first failure, so it never explores);
- ``--grpo`` adds ``grpo-bank`` (GRPO from ``sft-bank``) and ``grpo-none`` (GRPO from ``sft-none``), trained
  on the practice games (16 more rooms, neither SFT's nor held out: ``practice_games``): ``grpo-bank``
  retrieves there from a practice bank built from the practice rooms' visits (it does not grow), and is
  evaluated, like every bank arm, with the panel's bank. ``--grpo grpo-bank`` trains and evaluates that arm
  alone (on two cores each GRPO arm is most of an hour); a later ``--grpo`` on the same folder adds the other.

Every bank arm retrieves from the one bank. ``--small`` uses ``tiny-warm`` policies (~1M parameters, trained
from scratch here) at the quickstart's recipe (docs/training.md, "The quickstart's recipe": one entry shown, no
system message, 600 steps; about 15 minutes a seed on 2 cores); ``--k 2 --system full --sft-steps 1200`` is the
earlier, slower recipe (about 2 hours a seed). The default is SmolLM2-135M-Instruct with LoRA (``expbank sft``,
50 steps of 8 records) at the same k = 1 without a system message: 47 minutes a seed on 2 cores. Stages are
resumable (a finished stage's output is reused); wall times go to ``OUT/timings.json``; ``OUT/compare.md``
holds the paired comparisons, ``OUT/summary.json`` the summary with the no-memory ceiling and the critique
diagnostic, ``OUT/success.png`` a plot of success per arm with 95% CIs.

    python scripts/bench_households.py --seed 0 --out runs/households-s0 --small [--grpo]
    python scripts/bench_households.py --table runs/households-s0 runs/households-s1 ...   # across seeds

GRPO comparisons also give the one-sided exact McNemar p (does the GRPO policy win more often?).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from tqdm import tqdm

from expbank.bank.store import Bank
from expbank.config import load_config
from expbank.envs.alfworld.households import (
    PRACTICE_HOUSEHOLDS,
    STEP_LIMIT,
    Recipe,
    no_memory_ceiling,
    stream_task_ids,
    write_households,
    write_practice,
)
from expbank.training.agent.verdict import FILE as VERDICT_HEAD_FILE
from expbank.training.evaluation import households, report, stats
from expbank.training.rl.sft import fit_policy_verdict_head

COMPARISONS = [("sft-none", "sft-bank"), ("sft-bank-other", "sft-bank")]
SMALL_COMPARISONS = [("raw", "sft-bank"), ("bank-norecon", "sft-bank"), ("bank-sourcerandom", "sft-bank")]
GRPO_COMPARISONS = [("sft-bank", "grpo-bank"), ("sft-none", "grpo-none")]
GRPO_ARMS = ("grpo-bank", "grpo-none")


def expbank(*args: str) -> None:
    subprocess.run(["expbank", *args], check=True)


def expert_episodes(data: Path, split: str, out: Path) -> None:
    """``expbank collect`` of the expert's walkthroughs of ``split`` (2 workers, the family's step limit)."""
    expbank("collect", "--env", "alfworld", "--split", split, "--data", str(data), "--policy", "expert",
            "--workers", "2", "--max-steps", str(STEP_LIMIT), "--out", str(out))


def build_bank(trajectories: Path, folder: Path) -> None:
    """``expbank bank build`` with the rule summariser: the normal pipeline."""
    expbank("bank", "build", str(trajectories), "--out", str(folder))


class Stages:
    """Runs each stage once: a stage whose output exists is skipped; wall times accumulate in timings.json."""

    def __init__(self, out: Path):
        self.out = out
        self.path = out / "timings.json"
        self.timings = json.loads(self.path.read_text()) if self.path.exists() else {}

    def run(self, name: str, output: Path, work: Callable[[], object]) -> Path:
        if not output.exists():
            began = time.perf_counter()
            work()
            self.timings[name] = round(time.perf_counter() - began, 1)
            self.path.write_text(json.dumps(self.timings, indent=2) + "\n")
        return output


def render(args: argparse.Namespace) -> dict:
    return {**households.RENDER, "k": args.k}


RECIPE_OPTIONS = ("seed", "small", "sft_steps", "sft_learning_rate", "model", "train_households", "k", "system",
                  "other_rooms_share", "empty_share", "search_negatives", "warned_share", "action", "observation",
                  "sightings", "sighted_share", "stream_temperature", "critique_mix", "verdict")
# in OUT/grpo/options.json
GRPO_OPTIONS = ("grpo_steps", "grpo_tasks", "grpo_learning_rate", "practice_rooms", "grpo_resample",
                "practice_food_places")
# a folder made before these options existed used these values
LATER_OPTIONS = {"other_rooms_share": 0.0, "empty_share": 0.0, "search_negatives": False, "warned_share": 0.0,
                 "action": "generated", "practice_rooms": PRACTICE_HOUSEHOLDS, "observation": "current",
                 "sightings": False, "sighted_share": 0.0, "stream_temperature": 0.0, "critique_mix": 0, "verdict": "generated",
                 "grpo_resample": 0, "practice_food_places": 0}


def keep_options(out: Path, options: dict) -> None:
    """A run folder holds one recipe: the first run records it in ``options.json``; a rerun with other options
    stops with one line naming them (reusing stages trained at another recipe would mix the two)."""
    path = out / "options.json"
    if not path.exists():
        path.write_text(json.dumps(options, indent=2) + "\n")
        return
    kept = json.loads(path.read_text())
    differ = sorted(key for key in options if kept.get(key, LATER_OPTIONS.get(key)) != options[key])
    if differ:
        raise SystemExit(f"{path}: this folder was run with other options ({', '.join(differ)}); "
                         "use another --out or the same options")


def eval_config(args: argparse.Namespace, games: Path, actor: dict, memory: dict, temperature: float = 0.0,
                train: dict | None = None, verdict: str = "generated") -> dict:
    """An arm's config; an evaluation's (no ``train``) takes its actions as ``--action`` says and its critique's
    verdicts as ``verdict`` does."""
    tree = households.arm_tree(games, actor, memory, args.seed, temperature, train, render=render(args),
                               system=args.system, max_new_tokens=households.TINY_REPLY_TOKENS if args.small
                               else households.LM_REPLY_TOKENS)
    if train is None:
        tree["decoding"] |= {"action": args.action, "verdict": verdict}
    return tree


def write_yaml(path: Path, tree: dict) -> Path:
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


def tiny_policy(args: argparse.Namespace, games: Path, memory: dict, out: Path) -> Path:
    return households.tiny_policy(games, memory, out, args.seed, args.sft_steps, args.sft_learning_rate,
                                  render(args), args.system, other_rooms_share=args.other_rooms_share,
                                  empty_share=args.empty_share, search=args.search_negatives,
                                  warned_share=args.warned_share, sighted_share=args.sighted_share,
                                  critique_mix=args.critique_mix)


def lm_policy(args: argparse.Namespace, games: Path, memory: dict, trajectories: Path, out: Path) -> None:
    """SmolLM2 + LoRA through ``expbank sft``, at most ``--sft-steps`` optimiser steps of 8 records (and, for a
    bank policy with ``--critique-mix N``, N critique rows on average: ``sft.critique_share``)."""
    records = sum(1 for line in trajectories.read_text().splitlines() if line.strip()) * 4.5  # ~steps per game
    share = args.critique_mix / 8 if memory["mode"] != "none" else 0.0
    batch = 8 + round(8 * share)
    tree = eval_config(args, games, {"model": args.model}, memory)
    tree["sft"] = {"trajectories": [str(trajectories)], "split": "train", "batch_size": batch,
                   "learning_rate": args.sft_learning_rate, "critique_share": share,
                   "epochs": min(1.0, args.sft_steps * batch / (records * (1 + share))), "max_length": 1536,
                   "verdict_head": args.verdict == "head" and memory["mode"] != "none"}
    out.parent.mkdir(parents=True, exist_ok=True)
    config = write_yaml(out.parent / f"{out.name}.yaml", tree)
    expbank("sft", str(config), f"run.dir={out}")


def online_summary(none_dir: Path, online_dir: Path, seed: int) -> dict:
    """The online arm's stream halves (Fisher), its wins per round of the stream (both arms, the online arm's
    order), and its second half and whole stream against ``sft-none`` on the same tasks."""
    online_rows = report.load_run(online_dir).arms[0].rows  # in stream order
    by_task = {row.task_id: row for row in report.load_run(none_dir).arms[0].rows}
    none_rows = [by_task[row.task_id] for row in online_rows if row.task_id in by_task]  # in stream order
    second = {row.task_id for row in online_rows[len(online_rows) // 2:]}
    versus = stats.compare_arms([r for r in none_rows if r.task_id in second],
                                [r for r in online_rows if r.task_id in second], "alfworld", seed)
    size = len(online_rows) // Recipe.stream_rounds

    def per_round(rows: list) -> list[int]:
        return [sum(row.success for row in rows[i:i + size]) for i in range(0, size * Recipe.stream_rounds, size)]

    return {"halves": stats.stream_halves(online_rows), "second_half_vs_sft_none": versus,
            "whole_stream_vs_sft_none": stats.compare_arms(none_rows, online_rows, "alfworld", seed),
            "wins_per_round": {"online": per_round(online_rows), "sft-none": per_round(none_rows), "of": size}}


def online_text(online: dict) -> str:
    name = "sft-bank-online"
    halves, rounds = online["halves"], online["wins_per_round"]
    decoding = f"temperature {online['temperature']:g}" if online.get("temperature") else "greedy"
    return (f"{name} (from an empty bank, {decoding}): first half {halves['first_half']['success']:.1f}% "
            f"(n={halves['first_half']['n']}), second half {halves['second_half']['success']:.1f}% "
            f"(n={halves['second_half']['n']}), Fisher p={halves['fisher_p']:.3g}\n"
            f"wins per round (of {rounds['of']}): {name} {rounds['online']}, sft-none {rounds['sft-none']}\n"
            + report.comparison_line({"a": "sft-none", "b": f"{name} (second half)",
                                      **online["second_half_vs_sft_none"]}) + "\n"
            + report.comparison_line({"a": "sft-none", "b": f"{name} (whole stream)",
                                      **online["whole_stream_vs_sft_none"]}) + "\n")


def comparison_text(comparison: dict) -> str:
    """The summary line, with the one-sided p for a GRPO comparison (is the trained policy better?)."""
    line = report.comparison_line(comparison)
    if (comparison["a"], comparison["b"]) in GRPO_COMPARISONS:
        flips = comparison["flips"]
        line += f", one-sided p={stats.mcnemar_exact_p(flips['a_only'], flips['b_only'], 'greater'):.3g}"
    return line


def seed_table(folders: list[Path]) -> str:
    """Markdown: each arm's success per seed with mean ± sd, then each comparison per seed (diff, p)."""
    summaries = {}
    for folder in folders:
        path = folder / "summary.json"
        if not path.exists():
            raise SystemExit(f"{path}: no summary (the run has not finished)")
        summary = json.loads(path.read_text())
        seed = summary["households"]["recipe"]["seed"]
        if seed in summaries:
            raise SystemExit(f"{path}: a second run of seed {seed}")
        summaries[seed] = summary
    seeds = sorted(summaries)
    arms = list(dict.fromkeys(a for s in summaries.values() for a in s["run"]["arm_order"]))

    def spread(values: list[float]) -> str:
        return f"{statistics.mean(values):.1f} ± {statistics.stdev(values):.1f}" if len(values) > 1 else "—"

    head = "| | " + " | ".join(f"seed {seed}" for seed in seeds) + " | mean ± sd |"
    games = sorted({s["run"]["n_tasks"] for s in summaries.values()})
    lines = [f"Success % ({'/'.join(map(str, games))} held-out games per seed):", "", head, "|---" * (len(seeds) + 2) + "|"]
    lines.append("| no-memory ceiling | " + " | ".join(
        f"{100 * summaries[s]['households']['no_memory_ceiling']['rate']:.1f}" for s in seeds) + " | |")
    for arm in arms:
        values = [summaries[s]["arms"][arm]["success"] for s in seeds if arm in summaries[s]["arms"]]
        cells = [f"{summaries[s]['arms'][arm]['success']:.1f}" if arm in summaries[s]["arms"] else "—" for s in seeds]
        lines.append(f"| `{arm}` | " + " | ".join(cells) + f" | {spread(values)} |")
    lines += ["", "Paired comparisons (exact McNemar), per seed:", ""]
    for seed in seeds:
        lines += [f"- seed {seed}: {comparison_text(c)}" for c in summaries[seed]["comparisons"]]
    lines += ["", "Critique (NONE share before the food is taken; own room's entry shown vs other rooms' only):", ""]
    for seed in seeds:
        critique = summaries[seed].get("critique", {})
        own, other = critique.get("sft-bank", {}), critique.get("sft-bank-other", {})
        own = own.get("shown", {}).get("own", own)  # the turns shown the own room's entry (older runs: the arm's)
        if own.get("turns") and other.get("turns"):
            lines.append(f"- seed {seed}: {own['none_share']:.2f} of {own['turns']} turns vs "
                         f"{other['none_share']:.2f} of {other['turns']}")
    return "\n".join(lines) + "\n"


def shown_text(diagnostic: dict) -> str:
    """The critique diagnostic's split by what the turns showed (own room's entry, other rooms' only)."""
    shown = diagnostic.get("shown")
    if not shown or not shown["own"]["turns"] or not shown["other"]["turns"]:
        return ""
    return (f" (own room's entry shown: {shown['own']['none_share']:.2f} of {shown['own']['turns']}; "
            f"only other rooms': {shown['other']['none_share']:.2f} of {shown['other']['turns']})")


def main() -> None:
    # a SIGTERM ends the run as Ctrl-C does: subprocess.run kills the stage it waits on (each stage resumes),
    # so a killed benchmark leaves no training process holding the cores
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="run folder (re-running resumes it)")
    parser.add_argument("--table", nargs="+", type=Path, metavar="DIR",
                        help="print finished runs' figures across seeds (mean ± sd) and exit")
    parser.add_argument("--seed", type=int, default=0, help="households, placements and training seed")
    parser.add_argument("--small", action="store_true", help="tiny-warm policies and the full --small arm set")
    parser.add_argument("--grpo", nargs="*", choices=GRPO_ARMS, help="also train grpo-bank and grpo-none (or only "
                        "those named) and evaluate them; a later run can add the other")
    parser.add_argument("--online", action="store_true",
                        help="also play the stream with sft-bank online from an empty bank, and with sft-none")
    parser.add_argument("--sft-steps", type=int, default=None, help="SFT optimiser steps per policy "
                        "(default: 600 tiny-warm steps with --small, 50 for SmolLM2)")
    parser.add_argument("--sft-learning-rate", type=float, help="default 1e-3 with --small (tiny-warm), else 2e-4 "
                        "(LoRA)")
    parser.add_argument("--grpo-steps", type=int, help="default 64 with --small, else 8")
    parser.add_argument("--grpo-tasks", type=int, help="GRPO tasks per step, 8 samples each (default 4 with "
                        "--small, else 2)")
    parser.add_argument("--grpo-learning-rate", type=float, help="default 5e-5 with --small, else 1e-5")
    parser.add_argument("--grpo-resample", type=int, default=0, help="train.resample_rounds of both GRPO runs: "
                        "rounds of fresh practice tasks a step may add while too few groups differ in reward")
    parser.add_argument("--practice-rooms", type=int, default=PRACTICE_HOUSEHOLDS,
                        help="rooms of GRPO's practice games (practice_games)")
    parser.add_argument("--practice-food-places", type=int, default=0,
                        help="each practice room keeps its foods in only this many receptacles, so a food mostly "
                        "lies beside others (practice_households; 0: each food anywhere)")
    parser.add_argument("--model", default="smollm2-135m", help="the pretrained policy without --small")
    parser.add_argument("--train-households", type=int, default=Recipe.train_households)
    parser.add_argument("--k", type=int, default=1, help="entries shown")
    parser.add_argument("--system", choices=["full", "none"], default="none", help="prompt.system")
    parser.add_argument("--other-rooms-share", type=float, default=0.0, help="--small bank policies: share of "
                        "training episodes shown only other rooms' entries (taught NONE)")
    parser.add_argument("--empty-share", type=float, default=0.0,
                        help="--small bank policies: share of training episodes shown an empty block")
    parser.add_argument("--search-negatives", action="store_true", help="--small: those episodes' records are "
                        "the searching walks of the same tasks (look, miss, look again; the games' 'searches' "
                        "split), and sft-none gets the same share of them")
    parser.add_argument("--warned-share", type=float, default=0.0, help="--small: share of training episodes "
                        "shown the not-found warning of a first attempt that missed, answered by a second attempt "
                        "that looks elsewhere (the games' 'warned' split); sft-none gets the same walks, no block")
    parser.add_argument("--stream-temperature", type=float, default=0.0, help="--online: decoding.temperature "
                        "of both streams (0: greedy, which repeats a pair's first failure; sampling explores)")
    parser.add_argument("--sighted-share", type=float, default=0.0, help="--small bank policies: share of "
                        "training episodes shown, instead of the room's own entry, the sighting of their own walk "
                        "written as a failed episode's (outcome: failure, as an --online bank's finds are)")
    parser.add_argument("--critique-mix", type=int, default=0, help="bank policies: critique rows added to every "
                        "SFT step, so the policy learns to tell rooms apart. --small: training steps shown their "
                        "own room's entry or another room's, half each, loss on the critique alone; SmolLM2: turns "
                        "before the take shown other rooms' entries, loss on critique and reconstruction "
                        "(sft.critique_share N/8, batch 8 + N)")
    parser.add_argument("--observation", choices=["current", "first"], default="current",
                        help="memory.observation of every bank arm, in SFT records and evaluation alike: each "
                        "step retrieves with its own observation, or with the episode's first (the room)")
    parser.add_argument("--action", choices=["generated", "scored"], default="generated",
                        help="every evaluation's decoding.action: scored takes the admissible action the policy "
                        "finds likeliest after its reply (docs/design.md §5); training is unchanged")
    parser.add_argument("--verdict", choices=["generated", "head"], default="generated",
                        help="head fits a verdict head on the sft-bank policy (SmolLM2: sft.verdict_head; --small: "
                        "on the trained tiny-warm folder, from the training rooms' walks) and the arms that play "
                        "that policy evaluate with decoding.verdict: head, a linear readout of its hidden state "
                        "deciding each critique verdict (docs/training.md)")
    parser.add_argument("--sightings", action="store_true", help="--online: the online bank's rule summariser also "
                        "writes where each object an episode saw lay, and the bank retires what episodes disproved "
                        "or superseded (train.bank.sightings, retire_disproved)")
    args = parser.parse_args()
    if args.table:
        print(seed_table(args.table), end="")
        return
    if args.out is None:
        parser.error("--out is required (or --table)")
    if (args.other_rooms_share or args.empty_share or args.search_negatives or args.warned_share
            or args.sighted_share) and not args.small:
        parser.error("--other-rooms-share, --empty-share, --search-negatives, --warned-share and --sighted-share "
                     "train tiny-warm policies: add --small")
    if (args.sightings or args.stream_temperature) and not args.online:
        parser.error("--sightings and --stream-temperature set the --online streams: add --online")
    if args.practice_rooms < 1:
        parser.error(f"--practice-rooms must be at least 1 (got {args.practice_rooms})")
    if args.practice_food_places < 0:
        parser.error(f"--practice-food-places must be 0 or more (got {args.practice_food_places})")
    if args.search_negatives and not (args.other_rooms_share or args.empty_share):
        parser.error("--search-negatives replaces the walks of --other-rooms-share and --empty-share episodes: "
                     "set either")
    args.sft_steps = args.sft_steps or (600 if args.small else 50)
    args.sft_learning_rate = args.sft_learning_rate or (1e-3 if args.small else 2e-4)
    # --small: the best GRPO budget measured at seed 2 (docs/benchmarks.md, "GRPO in practice rooms")
    args.grpo_steps = args.grpo_steps or (64 if args.small else 8)
    args.grpo_tasks = args.grpo_tasks or (4 if args.small else 2)
    args.grpo_learning_rate = args.grpo_learning_rate or (5e-5 if args.small else 1e-5)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    keep_options(out, {key: getattr(args, key) for key in RECIPE_OPTIONS})
    stages = Stages(out)
    recipe = Recipe(seed=args.seed, train_households=args.train_households)
    # games, visits, bank, [train transcripts], policies, arms, [GRPO runs and their arms]
    grpo_arms = [] if args.grpo is None else [arm for arm in GRPO_ARMS if not args.grpo or arm in args.grpo]
    small_head = args.small and args.verdict == "head"  # its training walks and the head's fit
    total = (3 + (0 if args.small else 1) + 2 * small_head + (3 + 6 if args.small else 2 + 3)
             + (3 + 2 * len(grpo_arms)) * bool(grpo_arms) + 2 * args.online)
    bar = tqdm(total=total, desc="households", unit="stage")

    def step(name: str, output: Path, work: Callable[[], object]) -> Path:
        bar.set_postfix_str(name)
        done = stages.run(name, output, work)
        bar.update()
        return done

    games = step("games", out / "games" / "COMPLETE", lambda: write_households(out / "games", recipe)).parent
    visits = step("collect visits", out / "trajectories" / "visits.jsonl",
                  lambda: expert_episodes(games, "visits", out / "trajectories" / "visits.jsonl"))
    train = out / "trajectories" / "train.jsonl"  # tiny-warm collects its own transcripts; its head reads these
    if not args.small or small_head:
        step("collect train", train, lambda: expert_episodes(games, "train", train))
    bank = step("bank", out / "bank" / "manifest.json", lambda: build_bank(visits, out / "bank")).parent
    bank_memory = {"mode": "bank", "bank": str(bank), "observation": args.observation}

    def policy(name: str, memory: dict) -> dict:
        folder = out / "models" / name
        if args.small:
            step(f"sft {name}", folder / "config.json", lambda: tiny_policy(args, games, memory, folder))
            return {"model": folder}
        step(f"sft {name}", folder / "model" / "adapter_config.json",
             lambda: lm_policy(args, games, memory, train, folder))
        return {"model": args.model, "adapter": folder / "model"}

    policies = {"sft-none": policy("sft-none", {"mode": "none"}), "sft-bank": policy("sft-bank", bank_memory)}
    arms = {"sft-none": ("sft-none", {"mode": "none"}), "sft-bank": ("sft-bank", bank_memory),
            "sft-bank-other": ("sft-bank", {**bank_memory, "rooms": "other"})}
    if small_head:  # SmolLM2's head is fitted by expbank sft (lm_policy)
        tree = eval_config(args, games, policies["sft-bank"], bank_memory)
        tree["sft"] = {"trajectories": [str(train)], "split": "train", "verdict_head": True}
        head_config = write_yaml(out / "models" / "sft-bank-head.yaml", tree)
        step("verdict head", out / "models" / "sft-bank" / VERDICT_HEAD_FILE,
             lambda: fit_policy_verdict_head(load_config(head_config), [str(train)]))
    plan = list(COMPARISONS)
    if args.small:
        policies["bank-norecon"] = policy("bank-norecon", {**bank_memory, "reconstruct": False})
        arms |= {"raw": ("sft-bank", {**bank_memory, "mode": "raw"}),
                 "bank-norecon": ("bank-norecon", {**bank_memory, "reconstruct": False}),
                 "bank-sourcerandom": ("sft-bank", {**bank_memory, "source": "random", "source_chars": 200})}
        plan += SMALL_COMPARISONS
    if grpo_arms:  # on the practice games: rooms neither SFT nor the panel uses (see practice_games)
        (out / "grpo").mkdir(exist_ok=True)
        keep_options(out / "grpo", {key: getattr(args, key) for key in GRPO_OPTIONS})
        where = "practice" + (f"-places{args.practice_food_places}" if args.practice_food_places else "")
        visits_path = out / "trajectories" / f"{where}-visits.jsonl"
        practice = step("practice games", out / where / "COMPLETE",
                        lambda: write_practice(out / where, recipe, args.practice_rooms,
                                               food_places=args.practice_food_places)).parent
        practice_visits = step("collect practice visits", visits_path,
                               lambda: expert_episodes(practice, "visits", visits_path))
        practice_bank = step("practice bank", out / f"{where}-bank" / "manifest.json",
                             lambda: build_bank(practice_visits, out / f"{where}-bank")).parent
        starts = {"grpo-bank": ("sft-bank", bank_memory, {**bank_memory, "bank": str(practice_bank)}),
                  "grpo-none": ("sft-none", {"mode": "none"}, {"mode": "none"})}
        for name in grpo_arms:
            start, memory, trained_with = starts[name]
            train_cfg = {"split": "train", "steps": args.grpo_steps, "tasks_per_step": args.grpo_tasks,
                         "group_size": 8, "learning_rate": args.grpo_learning_rate,
                         "resample_rounds": args.grpo_resample,
                         "lora": {"enabled": not args.small}, "micro_batch_size": 8, "max_length": 1536,
                         "checkpoint": {"every": args.grpo_steps},
                         "bank": {"update_every": 0}}  # the arms retrieve from the bank built before training
            config = write_yaml(out / f"{name}.yaml",
                                eval_config(args, practice, policies[start], trained_with, 0.7, train_cfg))
            last = out / "grpo" / name / "checkpoints" / f"step-{args.grpo_steps:05d}" / "model"
            step(f"train {name}", last, lambda c=config, n=name: expbank("train", str(c), f"run.dir={out / 'grpo' / n}"))
            policies[name] = {"model": last} if args.small else {"model": args.model, "adapter": last}
            arms[name] = (name, memory)
        plan += [(a, b) for a, b in GRPO_COMPARISONS if b in grpo_arms]
    (out / "configs").mkdir(exist_ok=True)
    if args.online:
        streams = {"sft-none": (policies["sft-none"], {"mode": "none"}),
                   "sft-bank-online": (policies["sft-bank"], {**bank_memory, "bank": "empty", "online": True,
                                                              "online_order": "panel"})}
        stream = stream_task_ids(recipe)
        for name, (actor, memory) in streams.items():
            tree = eval_config(args, games, actor, memory, args.stream_temperature)
            tree["env"]["split"], tree["panel"]["task_ids"] = "stream", stream
            if memory.get("online"):
                tree["train"] = {"bank": {"sightings": args.sightings, "retire_disproved": args.sightings}}
            config = write_yaml(out / "configs" / f"stream-{name}.yaml", tree)
            step(f"stream {name}", out / "stream" / name / "summary.json",
                 lambda c=config, n=name: expbank("eval", str(c), f"run.dir={out / 'stream' / n}"))
        online = online_summary(out / "stream" / "sft-none", out / "stream" / "sft-bank-online", args.seed)
        online["temperature"] = args.stream_temperature
        (out / "online.json").write_text(json.dumps(online, indent=2) + "\n")
        (out / "online.md").write_text(online_text(online))
    for name, (model, memory) in arms.items():
        verdict = args.verdict if model == "sft-bank" else "generated"  # the head was fitted on sft-bank
        config = write_yaml(out / "configs" / f"{name}.yaml",
                            eval_config(args, games, policies[model], memory, verdict=verdict))
        step(f"eval {name}", out / "arms" / name / "summary.json",
             lambda c=config, n=name: expbank("eval", str(c), f"run.dir={out / 'arms' / n}"))
    bar.close()

    summary = report.join_runs({name: out / "arms" / name for name in arms}, plan)
    summary["households"] = {"recipe": dataclasses.asdict(recipe),
                             "no_memory_ceiling": no_memory_ceiling(recipe), "policy": "tiny-warm" if args.small
                             else args.model, "sft_steps": args.sft_steps, "k": args.k, "system": args.system,
                             "other_rooms_share": args.other_rooms_share, "empty_share": args.empty_share,
                             "search_negatives": args.search_negatives, "warned_share": args.warned_share,
                             "action": args.action, "observation": args.observation, "sightings": args.sightings,
                             "sighted_share": args.sighted_share, "stream_temperature": args.stream_temperature,
                             "critique_mix": args.critique_mix, "verdict": args.verdict,
                             "constructed_panel": True}
    if grpo_arms:  # the GRPO arms also trained in the practice rooms
        summary["households"]["no_memory_ceiling_with_practice"] = no_memory_ceiling(recipe, args.practice_rooms,
                                                                                     args.practice_food_places)
    shown = Bank.open(bank, writable=False)  # every bank arm retrieves from it
    summary["critique"] = {name: households.critique_diagnostic(out / "arms" / name, shown)
                           for name in arms if name != "sft-none"}
    summary["losses"] = {name: households.loss_diagnostic(out / "arms" / name) for name in arms}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = ["# Households panel (a constructed panel: the needed fact lives only in past episodes)", "",
             f"seed {args.seed}, policy {summary['households']['policy']} ({args.sft_steps} SFT steps, k={args.k}, "
             f"system {args.system}, negatives other/empty {args.other_rooms_share}/{args.empty_share}"
             f"{', searching walks' if args.search_negatives else ''}"
             f"{f', warned {args.warned_share}' if args.warned_share else ''}"
             f"{f', sighted {args.sighted_share}' if args.sighted_share else ''}"
             f"{f', critique rows {args.critique_mix} a step' if args.critique_mix else ''}"
             f"{', scored actions' if args.action == 'scored' else ''}"
             f"{', verdicts by a head on the hidden state' if args.verdict == 'head' else ''}"
             f"{', retrieval with the first observation' if args.observation == 'first' else ''}), "
             "no-memory ceiling "
             f"{100 * summary['households']['no_memory_ceiling']['rate']:.1f}%", ""]
    lines += [f"- {name}: {summary['arms'][name]['success']:.1f}% success (n={summary['arms'][name]['n']})"
              for name in arms]
    lines += [""] + [f"- {comparison_text(c)}" for c in summary["comparisons"]]
    lines += ["", ("Critique: share of turns before the goal object is taken whose <reconstruct> is NONE or whose "
               "<critique> rejects every item shown:")]
    lines += [f"- {name}: {d['none_share']:.2f} of {d['turns']} turns{shown_text(d)}"
              for name, d in summary["critique"].items() if d["turns"]]
    lines += ["", "Lost games, by their first take:"]
    lines += [f"- {name}: {d['lost']} lost: " + ", ".join(f"{d[key]} {text}" for key, text in
                                                        households.LOSS_KINDS.items())
              for name, d in summary["losses"].items()]
    (out / "compare.md").write_text("\n".join(lines) + "\n")
    households.plot(summary, out / "success.png")
    print((out / "compare.md").read_text())
    if args.online:
        print((out / "online.md").read_text())


if __name__ == "__main__":
    main()
