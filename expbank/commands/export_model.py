"""``expbank export-model RUN --out DIR``: a trained checkpoint as a folder transformers and vLLM load."""

from __future__ import annotations

import argparse
from pathlib import Path

from expbank.training.rl.export import export


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="a run directory written by `expbank train`")
    parser.add_argument("--checkpoint", default="last", metavar="best|last|N",
                        help="best (by checkpoints/best.json), last (the highest step; default) or a step number")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write (must not exist or be empty)")
    parser.add_argument("--dtype", choices=("auto", "bfloat16", "float32"), default="auto",
                        help="weights' dtype in DIR (auto: the base model's; LoRA is merged in float32 first)")


def run(args: argparse.Namespace) -> int:
    record = export(Path(args.run), args.checkpoint, Path(args.out), args.dtype)
    merged = "merged LoRA adapter into " if record["merged_lora"] else ""
    bank = f"; bank snapshot in {args.out}/bank" if record["bank"] else "; no bank snapshot in the checkpoint"
    print(f"exported {record['checkpoint']} of {args.run} ({merged}{record['base_model']}, {record['dtype']}) "
          f"to {args.out}{bank}\nload with AutoModelForCausalLM.from_pretrained({args.out!r}), serve with "
          f"`vllm serve {args.out}`, evaluate with `expbank eval CONFIG actor.model={args.out}`")
    return 0
