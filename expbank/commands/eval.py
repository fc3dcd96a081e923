"""``expbank eval CONFIG [key=value ...]``: one actor and memory arm on a fixed panel, one run directory."""

from __future__ import annotations

import argparse

from expbank.commands import add_config_arguments
from expbank.config import load_config
from expbank.training.evaluation.evaluate import default_run_dir, evaluate, headline


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, "YAML run config (see configs/)", "config overrides, e.g. memory.k=5")


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config, args.overrides)
    summary = evaluate(config, progress=not args.no_progress)
    run_dir = config.run.dir or default_run_dir(config)
    print(f"{headline(summary)}\nrun directory: {run_dir} (report.md, summary.json)")
    return 0
