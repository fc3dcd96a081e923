"""``expbank compare RUN_A RUN_B``: paired comparison of two eval runs made on the same panel."""

from __future__ import annotations

import argparse

from expbank.errors import UserError
from expbank.training.evaluation import report, stats


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", metavar="RUN_A", help="eval run directory (a: the reference)")
    parser.add_argument("run_b", metavar="RUN_B", help="eval run directory (b: diff = b - a)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON instead of Markdown")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 10000)")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    resamples = stats.BOOTSTRAP_RESAMPLES if args.resamples is None else args.resamples
    if resamples < 1:
        raise UserError("--resamples must be positive")
    summary = report.compare_runs(args.run_a, args.run_b, resamples=resamples)
    text = json.dumps(summary, indent=2, sort_keys=True) + "\n" if args.json else report.render_report(summary)
    sys.stdout.write(text)
    return 0
