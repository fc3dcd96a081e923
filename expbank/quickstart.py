"""``expbank quickstart``: the whole pipeline on the bundled data (not yet available)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="runs/quickstart", help="run directory")
    parser.add_argument("--full", action="store_true", help="larger panel and training run")


def run(args: argparse.Namespace) -> int:
    print("expbank quickstart: not yet available. It arrives with the quickstart issue; until then use\n"
          "  expbank collect --env alfworld --split valid_unseen --policy expert --out t.jsonl")
    return 0
