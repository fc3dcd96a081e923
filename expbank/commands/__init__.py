"""One module per ``expbank`` subcommand, each exposing ``add_arguments(parser)`` and ``run(args) -> int``."""

from __future__ import annotations

import argparse


def add_config_arguments(parser: argparse.ArgumentParser, config_help: str, overrides_help: str = "config overrides"
                         ) -> None:
    """The arguments of every command that runs from a YAML config: the file, ``key=value`` overrides, and
    ``--no-progress``."""
    parser.add_argument("config", help=config_help)
    parser.add_argument("overrides", nargs="*", metavar="key=value", help=overrides_help)
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
