"""The policy's current weights under the names vLLM loads, for ``expbank train`` with ``actor.backend=vllm``.

A colocated engine (one per rank, ``VLLMBackend.colocated``) samples each step's rollouts, so before every step
the trained weights are pushed into it. vLLM's ``load_weights`` takes Hugging Face checkpoint names
(``model.layers.0.self_attn.q_proj.weight``), so:

- full fine-tuning gives its parameters as they are;
- LoRA gives every base weight with its adapter's delta added (``W + B A × scale``, computed beside the layer,
  never merged into it: merging and unmerging a bf16 base in place would round it a little further each step)
  under the base layer's name, and the adapter tensors not at all. Only the active adapter counts, so a frozen
  ``reference`` adapter (KL to the SFT start) is never pushed.

Tied embeddings appear once, as ``named_parameters`` yields them and vLLM expects. After TRL's colocate mode
(``trl/generation/vllm_generation.py``), for weights that are whole on every rank, as ``expbank train``'s
launches (one process, DDP) keep them.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from expbank.config import Config


def max_model_len(config: Config) -> int:
    """The longest sequence the engine must hold: a training row's length plus one reply."""
    return config.train.max_length + config.decoding.max_new_tokens


def base_model_weights(model: torch.nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    """Yield ``(hf_name, tensor)`` for every weight of the model vLLM serves, one tensor at a time."""
    if not hasattr(model, "peft_config"):
        for name, param in model.named_parameters():
            yield name, param.detach()
        return
    lora_layers = _active_lora_layers(model)
    for name, param in model.named_parameters():
        if ".lora_" in name:
            continue  # adapter tensors: their effect is in the base weight's delta
        tensor = param.detach()
        if name in lora_layers:  # computed one layer at a time: all deltas at once would be a second model
            module, adapters = lora_layers[name]
            with torch.no_grad():
                delta = sum(module.get_delta_weight(a).float() for a in adapters)
                tensor = (tensor.float() + delta).to(tensor.dtype)
        yield name.removeprefix("base_model.model.").replace(".base_layer.", "."), tensor


def _active_lora_layers(model: torch.nn.Module) -> dict[str, tuple[torch.nn.Module, list[str]]]:
    """``{parameter name of a LoRA layer's base weight: (the layer, its active adapters)}``."""
    from peft.tuners.lora import LoraLayer

    layers = {}
    for module_name, module in model.named_modules():
        if isinstance(module, LoraLayer):
            active = [a for a in module.active_adapters if a in module.lora_A]
            if active:
                layers[f"{module_name}.base_layer.weight"] = (module, active)
    return layers
