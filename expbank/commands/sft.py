"""``expbank sft CONFIG [key=value ...]``: supervised cold start on expert trajectories (LoRA or full)."""

from __future__ import annotations

import argparse
from pathlib import Path

from expbank.commands import add_config_arguments
from expbank.config import load_config
from expbank.errors import UserError
from expbank.training.rl.sft import sft  # torch, transformers and TRL
from expbank.training.runs import prepare_run_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, "YAML run config with an `sft:` section")


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config, args.overrides)
    if not config.sft.trajectories:
        raise UserError("sft.trajectories is empty: give expert trajectory files (expbank collect --policy expert)")
    out = Path(config.run.dir or f"runs/sft-{config.env.name}")
    prepare_run_dir(out, config)
    model_dir = sft(config, config.sft.trajectories, out, progress=not args.no_progress)
    kind = "adapter" if config.sft.lora else "model"
    flag = "actor.adapter" if config.sft.lora else "actor.model"
    print(f"SFT {kind} saved to {model_dir}; use it with {flag}={model_dir}")
    return 0
