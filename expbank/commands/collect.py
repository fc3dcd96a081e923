"""``expbank collect``: play a scripted policy (expert or random) and write trajectories.

Episodes already in ``--out`` are skipped, so re-running the same command resumes an interrupted collection
and never duplicates a line; episodes that ended with an error are played again unless ``--keep-errors``.
"""

from __future__ import annotations

import argparse

from expbank.training.agent.collect import collect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", required=True, choices=["alfworld", "webshop"], help="environment")
    parser.add_argument("--split", required=True, help="split to play (e.g. train, dev, valid_unseen, test)")
    parser.add_argument("--data", default=None, help="official data folder (default: bundled data)")
    parser.add_argument("--policy", required=True, choices=["expert", "random"], help="scripted policy")
    parser.add_argument("--episodes", type=int, default=None, help="play the first N tasks in split order")
    parser.add_argument("--seeds", type=int, default=1, help="play each task K times (seeds 0..K-1)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--max-steps", type=int, default=None, help="step limit per episode")
    parser.add_argument("--out", required=True, help="trajectory file (JSON Lines); appended to and resumed")
    parser.add_argument("--keep-errors", action="store_true",
                        help="on resume, keep episodes that ended with an error instead of playing them again")


def run(args: argparse.Namespace) -> int:
    counts = collect(args.env, args.split, args.policy, args.out, data_dir=args.data, episodes=args.episodes,
                     seeds=args.seeds, workers=args.workers, max_steps=args.max_steps,
                     replay_errors=not args.keep_errors)
    played = counts["played"]
    rate = f"{counts['won'] / played:.0%}" if played else "n/a"
    print(f"{args.out}: {played} episodes played ({counts['won']} won, {rate}; {counts['errors']} errors), "
          f"{counts['skipped']} already there")
    return 0
