"""Stale memory: do utility credit and pruning retire what stopped being true?

The actor is the scripted follower (``training/actors/follower.py``: it goes where the bank says the food was
taken from, else looks where it has not been and no not-found warning of its room has looked), a frozen
actor served on loopback behind ``actor.backend: openai``, on the households family's held-out rooms (a
constructed panel). Every step retrieves with the episode's first observation (``memory.observation: first``;
``--observation current`` for the step's own), so the block the first step was shown (its room's entries)
stays for the episode. Stages, each a run directory under ``--out`` that resumes:

1. ``visits-bank``: the bank built from the expert's ``visits`` (``expbank collect`` + ``expbank bank build``),
   where each room's foods lay before the move.
2. ``before``: an online evaluation of the ``stream`` split from that bank, without pruning:
   ``--before-rounds`` rounds, every (household, food) pair once a round. Its bank (``before/bank``) ends
   with entries that were shown and credited with the environment's outcome, most with several successes:
   the stale bank. (From an empty bank the follower learns too slowly for that: the early entries are shown
   in look-alike rooms, fail there, and their credit never builds up.)
3. The households rearrange their food (``moved``: each food in another receptacle of its room). From the
   stale bank, on ``--after-rounds`` rounds of ``moved``:

   - ``frozen``: plain evaluation, the bank never changes;
   - ``online``: online (credit and new entries every wave), no pruning;
   - ``online-prune-laplace``: online, pruned every wave by the Laplace utility (``prune_by: laplace``);
   - ``online-prune``: online, pruned every wave by the recency-weighted utility (``prune_by: recent``);
   - ``no-move``: ``online-prune`` on ``unmoved`` (the same tasks, in the same order, nothing moved): the
     level to reach; ``no-move-frozen``: the stale bank, frozen, on ``unmoved`` (what it was worth);
   - ``online-prune-followed`` and ``no-move-followed``: the same with ``memory.online_credit: followed``
     (an episode credits only the entries whose actions it took, not every entry it was shown).
   - ``online-disproved`` and ``no-move-disproved``: online with ``followed`` credit, no pruning, and
     ``train.bank.retire_disproved`` (an entry is retired when an episode went where it said the food lay
     and saw the place without it, or took the food elsewhere).

Prints success per round and over the stream's last half per arm, and the entries pruning or disproof
retired with their utility; writes ``summary.json``, ``report.md`` and ``rounds.png`` in ``--out``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import yaml

from expbank.bank.build import build
from expbank.bank.store import Bank
from expbank.bank.summarise import make_summariser
from expbank.config import config_from_tree
from expbank.envs.alfworld.games import room_of
from expbank.envs.alfworld.households import STEP_LIMIT, Recipe, stream_task_ids, write_households
from expbank.training.actors.follower import Follower
from expbank.training.agent.collect import collect
from expbank.training.evaluation.curves import plot_rounds
from expbank.training.evaluation.evaluate import evaluate
from expbank.training.runs import write_json
from expbank.trajectory import read_episodes

ARMS = {  # name: (split, online, prune_by: None for no pruning, memory.online_credit, retire_disproved)
    "frozen": ("moved", False, None, "shown", False),
    "online": ("moved", True, None, "shown", False),
    "online-prune-laplace": ("moved", True, "laplace", "shown", False),
    "online-prune": ("moved", True, "recent", "shown", False),
    "no-move": ("unmoved", True, "recent", "shown", False),
    "no-move-frozen": ("unmoved", False, None, "shown", False),
    "online-prune-followed": ("moved", True, "recent", "followed", False),
    "no-move-followed": ("unmoved", True, "recent", "followed", False),
    "online-disproved": ("moved", True, None, "followed", True),
    "no-move-disproved": ("unmoved", True, None, "followed", True),
}


def arm_tree(args: argparse.Namespace, games: Path, url: str, split: str, bank: str, run: Path, online: bool,
             prune_by: str | None, task_ids: list[str], credit: str = "shown",
             disproved: bool = False) -> dict[str, Any]:
    memory = {"mode": "bank", "k": args.k, "bank": bank, "observation": args.observation}
    if online:
        memory |= {"online": True, "online_order": "panel", "online_credit": credit}
    tree = {"env": {"name": "alfworld", "split": split, "data_dir": str(games), "max_steps": STEP_LIMIT},
            "panel": {"task_ids": task_ids, "seeds": [0]},
            "actor": {"backend": "openai", "model": "follower", "base_url": f"{url}/v1"},
            "memory": memory, "prompt": {"history_length": STEP_LIMIT},
            "run": {"dir": str(run), "seed": args.seed, "episodes_in_flight": args.wave}}
    if prune_by:  # online arms prune every wave
        tree["train"] = {"bank": {"prune_every": 1, "prune_by": prune_by, "prune_min_uses": args.prune_min_uses,
                                  "prune_threshold": args.prune_threshold}}
    if disproved:
        tree.setdefault("train", {}).setdefault("bank", {})["retire_disproved"] = True
    return tree


def run_arm(tree: dict[str, Any], name: str) -> None:
    run = Path(tree["run"]["dir"])
    run.parent.mkdir(parents=True, exist_ok=True)
    (run.parent / f"{run.name}.yaml").write_text(yaml.safe_dump(tree, sort_keys=False))
    evaluate(config_from_tree(tree, f"bench_stale_memory {name}"))


def per_round(run: Path, task_ids: list[str], pairs: int) -> list[float]:
    """Success (%) of each round of the stream, from the run's episodes."""
    round_of = {task: i // pairs for i, task in enumerate(task_ids)}
    wins, seen = [0] * (len(task_ids) // pairs), [0] * (len(task_ids) // pairs)
    for episode in read_episodes(run / "episodes.jsonl"):
        seen[round_of[episode.task_id]] += 1
        wins[round_of[episode.task_id]] += episode.success
    return [round(100 * w / n, 1) if n else 0.0 for w, n in zip(wins, seen, strict=True)]


def retired(run: Path) -> list[dict[str, Any]]:
    path = run / "online.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [{"wave": line["wave"], **entry} for line in lines for entry in line["retired"]]


def stale_credit(bank_dir: Path, rooms: set[str]) -> dict[str, Any]:
    """The successes credited at the move to the stale bank's "find the food" entries of the held-out
    ``rooms`` (the rule summariser's entry that says where a food was taken from), one per pair."""
    finds = sorted(e.stats.successes for e in Bank.open(bank_dir, writable=False).entries()
                   if e.kind == "strategy" and "first find and take" in e.situation
                   and {room_of(t) for t in e.provenance.task_ids} & rooms)
    return {"find_entries": len(finds), "min_successes": finds[0] if finds else 0,
            "median_successes": finds[len(finds) // 2] if finds else 0,
            "with_5_successes": sum(s >= 5 for s in finds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--held-out", type=int, default=8, help="held-out households")
    parser.add_argument("--before-rounds", type=int, default=6)
    parser.add_argument("--after-rounds", type=int, default=8)
    parser.add_argument("--k", type=int, default=2, help="entries shown (memory.k)")
    parser.add_argument("--observation", choices=("current", "first"), default="first",
                        help="memory.observation: retrieve with each step's observation or the episode's first")
    parser.add_argument("--wave", type=int, default=8, help="episodes per wave (run.episodes_in_flight)")
    parser.add_argument("--prune-min-uses", type=int, default=3)
    parser.add_argument("--prune-threshold", type=float, default=0.3)
    parser.add_argument("--arms", default=",".join(ARMS),
                        help="comma-separated arms to run (default: all); the report covers the arms whose run "
                             "directory exists under --out")
    args = parser.parse_args()
    chosen = args.arms.split(",")
    if unknown := [name for name in chosen if name not in ARMS]:
        parser.error(f"--arms: unknown arm(s) {unknown}; choose from {list(ARMS)}")

    recipe = Recipe(seed=args.seed, train_households=2, held_out_households=args.held_out, dev_games=2,
                    stream_rounds=args.before_rounds, moved_rounds=args.after_rounds)
    games = write_households(args.out / "games", recipe, progress=True)
    pairs = args.held_out * recipe.foods
    visits, source = args.out / "visits.jsonl", args.out / "visits-bank"
    collect("alfworld", "visits", "expert", visits, data_dir=str(games), workers=2, max_steps=STEP_LIMIT)
    bank = Bank.open_or_create(source)  # built episodes are skipped on a re-run
    build(bank, [visits], make_summariser("rule"))
    bank.save()
    follower = Follower()
    with follower.served() as url:
        before_ids = stream_task_ids(recipe)
        before = args.out / "before"
        run_arm(arm_tree(args, games, url, "stream", str(source), before, True, None, before_ids), "before")
        for name in chosen:
            split, online, prune_by, credit, disproved = ARMS[name]
            run_arm(arm_tree(args, games, url, split, str(before / "bank"), args.out / name, online, prune_by,
                             stream_task_ids(recipe, split), credit, disproved), name)

    arms = {name: ARMS[name] for name in ARMS if (args.out / name / "episodes.jsonl").exists()}
    rooms = {room_of(task) for task in before_ids}
    before_rounds = per_round(before, before_ids, pairs)
    rounds = {name: per_round(args.out / name, stream_task_ids(recipe, split), pairs)
              for name, (split, *_) in arms.items()}
    half = args.after_rounds // 2
    last_half = {name: round(sum(values[half:]) / len(values[half:]), 1) for name, values in rounds.items()}
    summary = {"recipe": dataclasses.asdict(recipe), "args": {k: str(v) for k, v in vars(args).items()},
               "constructed_panel": True, "actor": "scripted follower (training/actors/follower.py)",
               "pairs": pairs, "before_rounds": before_rounds, "stale_bank": stale_credit(before / "bank", rooms),
               "rounds": rounds, "last_half": last_half,
               "retired": {name: retired(args.out / name) for name in arms}}
    write_json(args.out / "summary.json", summary)
    after = len(before_rounds) + 1  # the first round after the move
    plot_rounds({"before the move (online)": (1, before_rounds)} | {name: (after, v) for name, v in rounds.items()},
                "Stale memory (households, scripted follower; a constructed panel)", args.out / "rounds.png",
                divider=after - 0.5)
    lines = ["# Stale memory (households, scripted follower; a constructed panel)", "",
             f"{pairs} (household, food) pairs a round; before the move, {args.before_rounds} online rounds from the "
             f"visits' bank, unpruned: success per round {before_rounds}. Stale bank at the move: "
             f"{summary['stale_bank']}.", "",
             "| arm | split | online | pruning | credit | retire disproved | success per round after the move (%) | "
             "last half |", "|---|---|---|---|---|---|---|---|"]
    for name, values in rounds.items():
        split, online, prune_by, credit, disproved = arms[name]
        lines.append(f"| {name} | {split} | {'yes' if online else 'no'} | {prune_by or '-'} | "
                     f"{credit if online else '-'} | {'yes' if disproved else '-'} | {values} | "
                     f"{last_half[name]} |")
    for name in arms:
        gone = summary["retired"][name]
        if gone:
            disproved = sum(g["reason"].startswith("disproved") for g in gone)
            superseded = sum(g["reason"].startswith("superseded") for g in gone)
            lines += ["", f"{name}: {len(gone)} entries retired ({disproved} disproved, {superseded} not-found "
                          "warnings superseded by a find); first ones:"]
            lines += [f"- wave {g['wave']}: uses {g['uses']}, successes {g['successes']}, utility {g['utility']}, "
                      f"recent {g['recent']}, ending {(g.get('actions') or ['-'])[-1]!r}: {g['reason'][:100]}"
                      for g in gone[:6]]
    (args.out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
