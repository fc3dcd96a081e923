"""``expbank export-model RUN [--checkpoint best|last|N] --out DIR``: a trained policy as a plain model folder.

A GRPO run keeps ``checkpoints/step-NNNNN/model/`` (a PEFT adapter with LoRA, full weights otherwise) and,
when it trained with a living bank, ``checkpoints/step-NNNNN/bank/``. Serving tools want one folder of
merged weights, so export merges the adapter into its base model (``merge_and_unload``) and writes
safetensors plus the tokenizer to ``DIR`` (``AutoModelForCausalLM.from_pretrained(DIR)`` and
``vllm serve DIR`` load it), copies the bank snapshot to ``DIR/bank``, and records where it all came from in
``DIR/expbank-export.json``.

``expbank eval actor.model=DIR`` (or ``actor.model=RUN/checkpoints/step-N``) then plays that policy with that
bank by default: :func:`with_default_bank` fills an unset ``memory.bank`` from the folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from expbank.config import Config
from expbank.errors import UserError

EXPORT_RECORD = "expbank-export.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="a run directory written by `expbank train`")
    parser.add_argument("--checkpoint", default="last", metavar="best|last|N",
                        help="best (by checkpoints/best.json), last (the highest step; default) or a step number")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write (must not exist or be empty)")
    parser.add_argument("--dtype", choices=("auto", "bfloat16", "float32"), default="auto",
                        help="weights' dtype in DIR (auto: the base model's; LoRA is merged in float32 first)")


def find_checkpoint(run: Path, which: str) -> Path:
    """``RUN/checkpoints/step-NNNNN`` for ``best``, ``last`` or a step number."""
    folder = run / "checkpoints"
    if not run.is_dir():
        raise UserError(f"run directory not found: {run}")
    found = sorted(folder.glob("step-[0-9][0-9][0-9][0-9][0-9]"))
    if not found:
        raise UserError(f"{run}: no checkpoints (no {folder}/step-NNNNN folders); train it with `expbank train`")
    if which == "last":
        return found[-1]
    if which == "best":
        record = folder / "best.json"
        if not record.is_file():
            raise UserError(f"{record} not found: the run has no dev-selected checkpoint yet; "
                            "use --checkpoint last or a step number")
        step = json.loads(record.read_text())["step"]
        source = f"{record} names step {step}"
    elif which.isdigit():
        step, source = int(which), f"--checkpoint {which}"
    else:
        raise UserError(f"--checkpoint must be best, last or a step number, not {which!r}")
    path = folder / f"step-{step:05d}"
    if not path.is_dir():
        steps = ", ".join(str(int(p.name.removeprefix("step-"))) for p in found)
        raise UserError(f"{source}, but {path} does not exist (checkpointed steps: {steps})")
    return path


def _run_base_model(run: Path) -> str | None:
    """``actor.model`` of the run's resolved config: the name it trained from (e.g. a hub name)."""
    import yaml

    path = run / "config.yaml"
    return (yaml.safe_load(path.read_text()) or {}).get("actor", {}).get("model") if path.is_file() else None


def merged_model(model_dir: Path, dtype: str) -> tuple[Any, str | None]:
    """The checkpoint's model with any LoRA adapter merged in, and the base the adapter names (or None)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from expbank.training.models import resolve_checkpoint, resolve_model_path

    base, adapter = resolve_checkpoint(str(model_dir))
    path = resolve_model_path(base)
    try:
        stored = AutoConfig.from_pretrained(path).dtype or torch.float32  # the dtype the base is saved in
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    except OSError as err:
        raise UserError(f"cannot load the model of {model_dir} ({base}): {str(err).splitlines()[0]}") from None
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
    target = {"auto": stored, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    return model.to(target), base if adapter else None


def export(run: Path, which: str, out: Path, dtype: str = "auto") -> dict[str, Any]:
    """Write the merged model, tokenizer, bank snapshot and ``expbank-export.json`` to ``out``."""
    from transformers import AutoTokenizer

    checkpoint = find_checkpoint(run, which)
    model_dir = checkpoint / "model"
    if not model_dir.is_dir():
        raise UserError(f"{checkpoint}: no model/ folder (an interrupted or foreign checkpoint?)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"--out {out} exists and is not empty; choose a new folder")
    model, adapter_base = merged_model(model_dir, dtype)
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(staging)
    bank_hash = None
    if (checkpoint / "bank" / "manifest.json").is_file():
        from expbank.training.living_bank import copy_bank

        copy_bank(checkpoint / "bank", staging / "bank")
        bank_hash = json.loads((staging / "bank" / "manifest.json").read_text()).get("content_hash")
    record = {
        "run": str(run.resolve()), "checkpoint": checkpoint.name,
        "step": json.loads((checkpoint / "state.json").read_text())["step"],
        "base_model": _run_base_model(run) or adapter_base, "merged_lora": adapter_base is not None,
        "dtype": str(model.dtype).removeprefix("torch."), "bank": "bank" if bank_hash else None,
        "bank_manifest_hash": bank_hash,
    }
    (staging / EXPORT_RECORD).write_text(json.dumps(record, indent=2) + "\n")
    if out.exists():
        out.rmdir()
    staging.rename(out)
    return record


# ------------------------------------------------------------------------------------ default bank
def default_bank_for(model: str) -> str | None:
    """The bank snapshot saved with a checkpoint or an export, or None.

    ``model`` is what ``actor.model`` says: an export folder, ``RUN/checkpoints/step-N`` or that checkpoint's
    ``model/`` folder hold their snapshot in ``bank/`` beside the weights; hub names and other folders have none.
    """
    folder = Path(model)
    if folder.name == "model" and (folder.parent / "state.json").is_file():
        folder = folder.parent
    bank = folder / "bank"
    return str(bank) if (bank / "manifest.json").is_file() else None


def with_default_bank(config: Config) -> Config:
    """``config`` with ``memory.bank`` set to the actor's own bank snapshot when memory is on and no bank is
    given, so evaluating a checkpoint plays it with the bank it trained with (raw and bank arms alike)."""
    if config.memory.mode == "none" or config.memory.bank:
        return config
    bank = default_bank_for(config.actor.model)
    if bank is None:
        return config
    return config.model_copy(update={"memory": config.memory.model_copy(update={"bank": bank})})


def run(args: argparse.Namespace) -> int:
    record = export(Path(args.run), args.checkpoint, Path(args.out), args.dtype)
    merged = "merged LoRA adapter into " if record["merged_lora"] else ""
    bank = f"; bank snapshot in {args.out}/bank" if record["bank"] else "; no bank snapshot in the checkpoint"
    print(f"exported {record['checkpoint']} of {args.run} ({merged}{record['base_model']}, {record['dtype']}) "
          f"to {args.out}{bank}\nload with AutoModelForCausalLM.from_pretrained({args.out!r}), serve with "
          f"`vllm serve {args.out}`, evaluate with `expbank eval CONFIG actor.model={args.out}`")
    return 0
