"""``expbank report RUN_DIR``: rebuild ``summary.json``, ``report.md`` and the plots from the episode rows."""

from __future__ import annotations

import argparse

from expbank.errors import UserError
from expbank.training.evaluation import report, stats


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="an eval run directory or an ablation run directory")
    parser.add_argument("--with-published", action="store_true",
                        help="append published numbers of other systems in a separate table, labelled as theirs")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 10000)")


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    resamples = stats.BOOTSTRAP_RESAMPLES if args.resamples is None else args.resamples
    if resamples < 1:
        raise UserError("--resamples must be positive")
    summary = report.write_report(args.run_dir, with_published=args.with_published, resamples=resamples)
    sys.stdout.write((Path(args.run_dir) / "report.md").read_text())
    print(f"wrote summary.json, report.md and {len(summary['plots'])} plots in {args.run_dir}")
    return 0
