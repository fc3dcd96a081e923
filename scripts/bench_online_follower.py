"""Online from an empty bank: how fast does a frozen actor's bank learn the rooms, with and without sightings?

The actor is the scripted follower (``training/actors/follower.py``: it goes where the bank says its food was
taken from, else looks where it has not been and no not-found warning of its room has looked), served on
loopback behind ``actor.backend: openai``, on the households family's ``stream`` split (a constructed panel:
every (household, food) pair once a round, in held-out rooms, from ``memory.bank: empty``). Arms, each an
online evaluation of the same stream:

- ``plain``: the rule summariser as it is (a find entry only where an episode took its task's food);
- ``retire``: ``train.bank.retire_disproved`` alone (not-found warnings superseded once a find is written);
- ``sightings``: ``train.bank.sightings`` and ``retire_disproved``: every episode also writes where each
  object it saw lay, so an episode that misses its own food teaches where the others are.

Prints wins per round and ``sightings``/``retire`` against ``plain`` on the same episodes (exact McNemar);
writes ``summary.json``, ``report.md`` and ``rounds.png`` in ``--out`` (each arm's run directory under it resumes).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import yaml

from expbank.config import config_from_tree
from expbank.envs.alfworld.households import STEP_LIMIT, Recipe, stream_task_ids, write_households
from expbank.training.actors.follower import Follower
from expbank.training.evaluation import report, stats
from expbank.training.evaluation.curves import plot_rounds
from expbank.training.evaluation.evaluate import evaluate
from expbank.training.runs import write_json
from expbank.trajectory import read_episodes

ARMS = {"plain": {}, "retire": {"retire_disproved": True}, "sightings": {"sightings": True, "retire_disproved": True}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--held-out", type=int, default=8, help="held-out households")
    parser.add_argument("--rounds", type=int, default=4, help="rounds of the stream")
    parser.add_argument("--k", type=int, default=2, help="entries shown (memory.k)")
    parser.add_argument("--wave", type=int, default=8, help="episodes per wave (run.episodes_in_flight)")
    args = parser.parse_args()

    recipe = Recipe(seed=args.seed, train_households=2, held_out_households=args.held_out, dev_games=2,
                    stream_rounds=args.rounds, moved_rounds=1)
    games = write_households(args.out / "games", recipe, progress=True)
    task_ids, pairs = stream_task_ids(recipe), args.held_out * recipe.foods
    rows = {}
    with Follower().served() as url:
        for name, bank in ARMS.items():
            run = args.out / name
            tree = {"env": {"name": "alfworld", "split": "stream", "data_dir": str(games), "max_steps": STEP_LIMIT},
                    "panel": {"task_ids": task_ids, "seeds": [0]},
                    "actor": {"backend": "openai", "model": "follower", "base_url": f"{url}/v1"},
                    "memory": {"mode": "bank", "k": args.k, "bank": "empty", "observation": "first",
                               "online": True, "online_order": "panel"},
                    "prompt": {"history_length": 3}, "run": {"dir": str(run), "episodes_in_flight": args.wave},
                    "train": {"bank": bank}}
            (args.out / f"{name}.yaml").write_text(yaml.safe_dump(tree, sort_keys=False))
            evaluate(config_from_tree(tree, f"bench_online_follower {name}"))
            rows[name] = stats.rows_from_episodes(read_episodes(run / "episodes.jsonl"))

    round_of = {task: i // pairs for i, task in enumerate(task_ids)}
    rounds = {name: [sum(r.success for r in arm if round_of[r.task_id] == i) for i in range(args.rounds)]
              for name, arm in rows.items()}
    comparisons = [{"a": "plain", "b": name, **stats.compare_arms(rows["plain"], rows[name], "alfworld", args.seed)}
                   for name in ("retire", "sightings")]
    write_json(args.out / "summary.json", {"recipe": dataclasses.asdict(recipe), "args": {k: str(v) for k, v in
               vars(args).items()}, "constructed_panel": True, "actor": "scripted follower", "pairs": pairs,
               "wins_per_round": rounds, "comparisons": comparisons})
    plot_rounds({name: (1, [100 * w / pairs for w in wins]) for name, wins in rounds.items()},
                "Online from an empty bank (households, scripted follower; a constructed panel)",
                args.out / "rounds.png")
    lines = [f"# Online from an empty bank (households seed {args.seed}, scripted follower; a constructed panel)", ""]
    lines += [f"- {name}: wins per round (of {pairs}) {wins}, {sum(wins)}/{len(task_ids)} over the stream"
              for name, wins in rounds.items()]
    lines += [f"- {report.comparison_line(comparison)}" for comparison in comparisons]
    (args.out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
