"""``expbank train CONFIG [key=value ...] [--resume] [--dry-run]``: multi-turn GRPO with checkpoints.

Several processes: ``torchrun --nproc_per_node N -m expbank.cli train CONFIG`` (DDP, or FSDP2 with
``train.sharding=fsdp2``; docs/gpu.md).
"""

from __future__ import annotations

import argparse
import json
import os

from expbank.commands import add_config_arguments
from expbank.config import load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, "YAML run config with a `train:` section")
    parser.add_argument("--resume", action="store_true", help="continue from the run directory's last checkpoint")
    group = parser.add_argument_group("dry run (check a GPU recipe without a GPU)")
    group.add_argument("--dry-run", action="store_true",
                       help="build the model on the meta device and print memory per GPU; trains nothing")
    group.add_argument("--accelerate-config", metavar="FILE",
                       help="the file you will pass to `accelerate launch --config_file` (default: one GPU)")
    group.add_argument("--num-processes", type=int, metavar="N",
                       help="GPUs in total (default: the accelerate config's num_processes, else train.gpus, "
                            "else 1)")
    group.add_argument("--gpu-memory-gb", type=float, default=80.0, metavar="GIB",
                       help="memory of one GPU in GiB (default 80)")


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config, args.overrides)
    if args.dry_run:
        from expbank.training.rl.dry_run import dry_run  # torch on the meta device

        return dry_run(config, args.accelerate_config, args.num_processes, args.gpu_memory_gb, source=args.config)
    from expbank.training.rl.grpo import latest_checkpoint, train  # torch

    run_dir = train(config, resume=args.resume, progress=not args.no_progress)
    if int(os.environ.get("RANK", "0")) != 0:  # one summary per launch, from rank 0
        return 0
    last = latest_checkpoint(run_dir)
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    tail = metrics[-1] if metrics else {}
    if last is None:
        where = "none"
    elif (last / "dcp").is_dir():
        where = (f"{last} (sharded: `expbank export-model {run_dir} --out DIR` writes the full model; evaluate "
                 "with actor.model=DIR)")
    else:
        where = f"{last / 'model'} (evaluate with actor.adapter=... or actor.model=... for full fine-tuning)"
    print(f"trained {tail.get('step', 0)} steps; last step: reward {tail.get('reward_mean', 0):.2f}, "
          f"success {tail.get('success_rate', 0):.2f}\ncheckpoint: {where}")
    return 0
