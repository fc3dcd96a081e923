"""The ``expbank`` command line.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``.
Only the module of the subcommand being run is imported, so ``expbank --help`` stays fast and heavy
libraries (torch, faiss, alfworld) load only when a command needs them.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from expbank import __version__
from expbank.errors import UserError

# name -> (module, one-line help). Modules must not import heavy libraries at import time.
COMMANDS: dict[str, tuple[str, str]] = {
    "collect": ("expbank.commands.collect", "play an expert or random policy and write trajectories (JSONL)"),
    "eval": ("expbank.commands.eval", "evaluate one actor and memory arm on a fixed panel (run directory)"),
    "show": ("expbank.commands.show", "print one episode of a run as a readable transcript"),
    "ablate": ("expbank.commands.ablate", "run several arms on the same panel with paired statistics"),
    "sft": ("expbank.commands.sft", "supervised cold start on expert trajectories (LoRA or full)"),
    "train": ("expbank.commands.train", "train a policy with multi-turn GRPO (checkpoints, --resume)"),
    "quickstart": ("expbank.commands.quickstart", "run the whole pipeline on the bundled data"),
    "bank": ("expbank.commands.bank", "build, query, inspect and curate an experience bank"),
    "serve": ("expbank.commands.serve", "serve a bank over HTTP for frozen actors (FastAPI)"),
    "serve-model": ("expbank.commands.serve_model", "serve a local model over an OpenAI-compatible API (FastAPI)"),
    "report": ("expbank.commands.report", "rebuild summary.json, report.md and plots of a run from its episodes"),
    "compare": ("expbank.commands.compare", "paired comparison of two eval runs on the same panel"),
    "export-model": ("expbank.commands.export_model", "merge a trained checkpoint (LoRA or full) into a folder "
                     "transformers and vLLM load, with its bank snapshot"),
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag or subcommand as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser; only ``command``'s module is imported to describe its arguments."""
    parser = _Parser(prog="expbank", description="Experience-bank trainer for agentic LLM tasks.")
    parser.add_argument("--version", action="version", version=f"expbank {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module_name, help_text) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            importlib.import_module(module_name).add_arguments(cmd)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is not None and command not in COMMANDS and argv and argv[0] == command:
        close = __import__("difflib").get_close_matches(command, COMMANDS, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        sys.stderr.write(f"expbank: error: unknown command '{command}'{hint} (see 'expbank --help')\n")
        return 2
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.run(args) or 0)
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("expbank: interrupted; finished work is kept and a re-run resumes.\n")
        return 130
    except Exception as err:
        if not _is_user_error(err):
            raise
        sys.stderr.write(f"expbank {args.command}: error: {err}\n")
        return 1


def _is_user_error(err: Exception) -> bool:
    """Errors from bad input are reported in one line; anything else is a bug and keeps its traceback."""
    if isinstance(err, UserError):
        return True
    envs_errors = sys.modules.get("expbank.envs.errors")
    return envs_errors is not None and isinstance(err, envs_errors.EnvDataError)


if __name__ == "__main__":
    raise SystemExit(main())
