"""``expbank show RUN [--episode ID]``: list a run's episodes, or print one as a readable transcript."""

from __future__ import annotations

import argparse
from pathlib import Path

from expbank.errors import UserError
from expbank.training.evaluation.show import bank_for, episode_files, transcript
from expbank.trajectory import read_episodes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="an eval, ablation or training run directory")
    parser.add_argument("--episode", default=None, help="episode id (default: list the run's episode ids)")


def run(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    for path in episode_files(run_dir):
        for episode in read_episodes(path):
            if args.episode is None:
                print(episode.episode_id)
            elif episode.episode_id == args.episode:
                print(transcript(episode, bank_for(path)))
                return 0
    if args.episode is not None:
        raise UserError(f"no episode {args.episode!r} in {run_dir} (run without --episode to list them)")
    return 0
