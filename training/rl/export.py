"""``expbank export-model RUN [--checkpoint best|last|N] --out DIR``: a trained policy as a plain model folder.

A GRPO run keeps ``checkpoints/step-NNNNN/model/`` (a PEFT adapter with LoRA, full weights otherwise; with
``train.sharding: fsdp2`` only the config and tokenizer, the weights being shards in ``dcp/``) and, when it
trained with a living bank, ``checkpoints/step-NNNNN/bank/``. Serving tools want one folder of merged
weights, so export merges the adapter into its base model (``merge_and_unload``) or assembles the shards
into one model, and writes safetensors plus the tokenizer to ``DIR`` (``AutoModelForCausalLM.from_pretrained(DIR)`` and
``vllm serve DIR`` load it), copies the bank snapshot to ``DIR/bank``, and records where it all came from in
``DIR/expbank-export.json``.

``expbank eval actor.model=DIR`` (or ``actor.model=RUN/checkpoints/step-N``) then plays that policy with that
bank by default: :func:`with_default_bank` fills an unset ``memory.bank`` from the folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from expbank.bank.store import content_hash, copy_bank, is_bank
from expbank.errors import UserError
from expbank.training.actors.models import resolve_checkpoint, resolve_model_path

EXPORT_RECORD = "expbank-export.json"


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


def assembled_model(checkpoint: Path, dtype: str) -> Any:
    """A sharded (FSDP2) checkpoint's full model: built from ``model/config.json`` and filled from ``dcp/``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig

    from expbank.training.rl import fsdp

    config = AutoConfig.from_pretrained(checkpoint / "model")
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config = GenerationConfig.from_pretrained(checkpoint / "model")
    fsdp.load_full_weights(checkpoint / "dcp", model)
    target = {"auto": config.dtype or torch.float32, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    return model.to(target)


def export(run: Path, which: str, out: Path, dtype: str = "auto") -> dict[str, Any]:
    """Write the merged model, tokenizer, bank snapshot and ``expbank-export.json`` to ``out``."""
    from transformers import AutoTokenizer

    checkpoint = find_checkpoint(run, which)
    model_dir = checkpoint / "model"
    if not model_dir.is_dir():
        raise UserError(f"{checkpoint}: no model/ folder (an interrupted or foreign checkpoint?)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"--out {out} exists and is not empty; choose a new folder")
    if (checkpoint / "dcp").is_dir():
        model, adapter_base = assembled_model(checkpoint, dtype), None
    else:
        model, adapter_base = merged_model(model_dir, dtype)
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(staging)
    bank_hash = None
    if is_bank(checkpoint / "bank"):
        copy_bank(checkpoint / "bank", staging / "bank")
        bank_hash = content_hash(staging / "bank")
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
