"""``expbank ablate CONFIG [key=value ...]``: several arms on the same panel with paired statistics."""

from __future__ import annotations

import argparse

from expbank.commands import add_config_arguments
from expbank.config import load_config
from expbank.training.evaluation.ablate import ablate, ablation_dir
from expbank.training.evaluation.evaluate import headline


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, "YAML run config with an optional `ablate:` section", "config overrides for every arm")


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config, args.overrides)
    summary = ablate(config, progress=not args.no_progress)
    for line in summary["skipped"]:
        print(f"skipped {line}")
    print(headline(summary))
    for comparison in summary["comparisons"]:
        ci = comparison.get("ci95") or [None, None]
        low, high = (f"{v:+.1f}" if v is not None else "n/a" for v in ci)
        print(f"  {comparison['b']} vs {comparison['a']}: {comparison['diff']:+.1f} points, "
              f"95% CI [{low}, {high}], McNemar p={comparison['mcnemar_p']:.3g} (n={comparison['n_pairs']})")
    print(f"run directory: {ablation_dir(config)} (report.md)")
    return 0
