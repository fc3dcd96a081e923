"""``expbank train CONFIG --dry-run``: check a GPU recipe on a machine without a GPU.

It resolves the config, builds the model on the meta device (no weights are read or allocated), applies LoRA
as the trainer would, checks the accelerate config that ``accelerate launch`` will be given (or plans FSDP2
for ``train.sharding: fsdp2``, over ``--num-processes``, else ``train.gpus`` GPUs), and prints the memory one
GPU needs. The memory model, in bytes (GiB = 2**30 bytes):

- weights: frozen parameters in bf16 (2 per parameter); trainable ones in fp32 (4), because bf16 cannot hold
  the updates of a 1e-6 learning rate;
- gradients (4) and AdamW's two moments (8) per trainable parameter;
- the KL reference: a frozen bf16 copy of every parameter for full fine-tuning with ``train.beta > 0``;
  none with LoRA (the reference is the base model with the adapters disabled);
- sharding over the data-parallel processes: DDP shards nothing; ZeRO-1 the optimizer states; ZeRO-2 and
  FSDP ``SHARD_GRAD_OP`` gradients and optimizer states; ZeRO-3 and FSDP full shard everything (the layer
  being computed is gathered transiently, not counted); CPU offload moves the offloaded part off the GPU;
- ``train.sharding: fsdp2`` (what ``expbank train`` runs sharded): fp32 shards of the weights, gradients,
  AdamW states and a bf16-sharded KL reference, plus on every GPU the unsharded bf16 copy rollouts generate
  from (2 per parameter) and what FSDP2 gathers while computing: the root unit (embeddings, final norm, LM
  head) and two decoder layers in bf16, and the largest unit's unsharded gradient in bf16 and fp32 (6 per
  parameter) before it is reduce-scattered;
- activations: see :func:`saved_bytes_per_token`; per GPU for ``micro_batch_size × max_length`` tokens,
  counted without gradient checkpointing, so an upper bound when ``train.gradient_checkpointing`` is on (the
  default);
- ``actor.backend: vllm``: a colocated engine per GPU holds its own bf16 copy of the weights, a runtime
  allowance, and the KV cache for the episodes one rank plays at once, each up to ``max_length`` tokens.

Not counted: the CUDA context and allocator fragmentation (leave a GiB or two).
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expbank.config import Config
from expbank.errors import UserError
from expbank.training.actors.models import resolve_checkpoint, resolve_model_path
from expbank.training.actors.vllm_sync import max_model_len
from expbank.training.rl import fsdp
from expbank.training.rl.distributed import launch_refusal

GIB = 2**30
VLLM_RUNTIME_GIB = 2.0  # vLLM's own activations and CUDA graphs: a rough allowance, not a measurement

# Published architectures (config.json on the hub), so a recipe can be checked with no network.
QWEN25: dict[str, dict[str, Any]] = {
    "Qwen/Qwen2.5-0.5B-Instruct": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                                       num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                                       tie_word_embeddings=True, max_position_embeddings=32768),
    "Qwen/Qwen2.5-1.5B-Instruct": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                                       num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
                                       tie_word_embeddings=True, max_position_embeddings=32768),
    "Qwen/Qwen2.5-3B-Instruct": dict(hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                                     num_attention_heads=16, num_key_value_heads=2, vocab_size=151936,
                                     tie_word_embeddings=True, max_position_embeddings=32768),
    "Qwen/Qwen2.5-7B-Instruct": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                                     num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
                                     tie_word_embeddings=False, max_position_embeddings=32768),
}

# accelerate's distributed types the trainer can run under
SUPPORTED_TYPES = ("NO", "MULTI_CPU", "MULTI_GPU", "FSDP", "DEEPSPEED")




# --------------------------------------------------------------------------------------- the model
def model_architecture(name: str) -> tuple[Any, str]:
    """The transformers config of ``name`` and where it came from.

    Local folders, checkpoints and the hub cache come first; then the bundled table of Qwen2.5 models; then
    the hub itself (which fails fast when ``HF_HUB_OFFLINE`` is set).
    """
    from transformers import AutoConfig, Qwen2Config

    base, _ = resolve_checkpoint(name)
    path = resolve_model_path(base)
    try:
        return AutoConfig.from_pretrained(path, local_files_only=True), "config.json"
    except (OSError, ValueError):
        pass
    if base in QWEN25:
        return Qwen2Config(**QWEN25[base]), "bundled architecture table"
    try:
        return AutoConfig.from_pretrained(path), "hub"
    except (OSError, ValueError):
        raise UserError(f"actor.model {name!r}: no config.json found locally, in the Hugging Face cache or on "
                        f"the hub, and it is not one of the bundled architectures ({', '.join(QWEN25)})") from None


def lora_config(config: Config):
    """The PEFT config the trainer would apply: the SFT adapter to continue, new adapters, or None."""
    from peft import LoraConfig

    if config.actor.adapter:
        try:
            return LoraConfig.from_pretrained(config.actor.adapter)
        except (OSError, ValueError):
            raise UserError(f"actor.adapter {config.actor.adapter!r}: no adapter_config.json there") from None
    cfg = config.train
    if not cfg.lora.enabled:
        return None
    return LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                      task_type="CAUSAL_LM", target_modules=cfg.lora.target_modules)


def meta_model(architecture: Any, lora: Any):
    """The model with LoRA applied, on the meta device: shapes and parameter counts without memory."""
    from accelerate import init_empty_weights
    from transformers import AutoModelForCausalLM

    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(architecture)
    model.tie_weights()  # init_empty_weights re-registers parameters, which unties tied embeddings
    if lora is None:
        return model
    import warnings

    from peft import get_peft_model

    try:
        with warnings.catch_warnings():  # transformers' deprecation notices about PEFT's own calls
            warnings.simplefilter("ignore", FutureWarning)
            return get_peft_model(model, lora)
    except ValueError as err:
        raise UserError(f"train.lora.target_modules {sorted(lora.target_modules)}: "
                        f"{str(err).splitlines()[0]}") from None


def parameter_counts(model) -> tuple[int, int]:
    """(all parameters, trainable parameters); tied weights count once."""
    params = list(model.parameters())
    return sum(p.numel() for p in params), sum(p.numel() for p in params if p.requires_grad)


# --------------------------------------------------------------------------------------- strategy
@dataclass
class Strategy:
    """How the data-parallel processes split model state, as read from an accelerate config."""

    name: str
    processes: int
    shard_optimizer: bool = False
    shard_gradients: bool = False
    shard_weights: bool = False
    offload_optimizer: bool = False
    offload_weights: bool = False
    mixed_precision: str = "bf16"
    distributed_type: str = "MULTI_GPU"  # accelerate's name, or FSDP2 for train.sharding=fsdp2


def launch_strategy(config: Config, path: str | None, num_processes: int | None) -> Strategy:
    """The strategy ``expbank train`` will run: ``path``'s accelerate config (or one process), sharded with
    FSDP2 when ``train.sharding`` says so; GPUs from ``num_processes``, else the accelerate config, else
    ``train.gpus``."""
    if num_processes is None and path is None:
        num_processes = config.train.gpus
    strategy = read_accelerate_config(path, num_processes)
    if config.train.sharding != "fsdp2" or strategy.distributed_type in ("FSDP", "DEEPSPEED"):
        return strategy
    return Strategy(f"FSDP2 (train.sharding=fsdp2; torchrun --nproc_per_node {strategy.processes})",
                    strategy.processes, shard_optimizer=True, shard_gradients=True, shard_weights=True,
                    distributed_type="FSDP2")


def _launch_options() -> set[str]:
    """Every option name ``accelerate launch`` knows (config sub-keys must be among them)."""
    from accelerate.commands.launch import launch_command_parser

    return {action.dest for action in launch_command_parser()._actions}


def read_accelerate_config(path: str | None, num_processes: int | None) -> Strategy:
    """Parse ``path`` with accelerate's own loader and decide the sharding; None means one process."""
    if path is None:
        processes = num_processes or 1
        return Strategy("single GPU" if processes == 1 else "DDP (accelerate launch --multi_gpu)", processes)
    from accelerate.commands.config.config_args import load_config_from_file

    if not Path(path).is_file():
        raise UserError(f"accelerate config not found: {path}")
    try:
        loaded = load_config_from_file(path)
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise UserError(f"{path}: not a valid accelerate config: {str(err).splitlines()[0]}") from None
    kind = getattr(loaded.distributed_type, "value", str(loaded.distributed_type))
    if kind not in SUPPORTED_TYPES:
        raise UserError(f"{path}: distributed_type {kind} is not supported here (use one of "
                        f"{', '.join(SUPPORTED_TYPES)})")
    processes = num_processes or loaded.num_processes
    if processes is None or processes < 1:
        raise UserError(f"{path}: num_processes is {processes}; set it there or pass --num-processes")
    if kind in ("MULTI_GPU", "MULTI_CPU") and processes < 2:
        raise UserError(f"{path}: distributed_type {kind} needs num_processes >= 2 (got {processes})")
    options = _launch_options()
    for section, prefix in (("deepspeed_config", ""), ("fsdp_config", "fsdp_")):
        for key in getattr(loaded, section) or {}:
            name = key if key.startswith(prefix) else prefix + key
            if name not in options:
                raise UserError(f"{path}: unknown key '{section}.{key}' (accelerate launch has no --{name})")
    precision = loaded.mixed_precision or "no"
    if kind == "DEEPSPEED":
        return _deepspeed_strategy(path, loaded.deepspeed_config, processes, precision)
    if kind == "FSDP":
        return _fsdp_strategy(path, loaded.fsdp_config, processes, precision)
    return Strategy("DDP" if processes > 1 else "single process", processes, mixed_precision=precision)


def _deepspeed_strategy(path: str, ds: dict[str, Any], processes: int, precision: str) -> Strategy:
    stage = ds.get("zero_stage")
    if ds.get("deepspeed_config_file"):
        import json

        try:
            stage = json.loads(Path(ds["deepspeed_config_file"]).read_text())["zero_optimization"]["stage"]
        except (OSError, ValueError, KeyError) as err:
            raise UserError(f"{path}: deepspeed_config_file {ds['deepspeed_config_file']}: {err}") from None
    stage = 2 if stage is None else int(stage)
    if stage not in (0, 1, 2, 3):
        raise UserError(f"{path}: deepspeed_config.zero_stage must be 0, 1, 2 or 3 (got {stage})")
    return Strategy(f"DeepSpeed ZeRO-{stage}", processes, shard_optimizer=stage >= 1, shard_gradients=stage >= 2,
                    shard_weights=stage == 3,
                    offload_optimizer=ds.get("offload_optimizer_device", "none") not in (None, "none"),
                    offload_weights=stage == 3 and ds.get("offload_param_device", "none") not in (None, "none"),
                    mixed_precision=precision, distributed_type="DEEPSPEED")


def _fsdp_strategy(path: str, fsdp: dict[str, Any], processes: int, precision: str) -> Strategy:
    def get(key: str, default: Any = None) -> Any:  # accelerate accepts keys with or without "fsdp_"
        return fsdp.get(f"fsdp_{key}", fsdp.get(key, default))

    if str(get("version", 1)) == "2":
        reshard = str(get("reshard_after_forward", True)).lower() in ("true", "1")
        sharding = "FULL_SHARD" if reshard else "SHARD_GRAD_OP"
    else:
        legacy = {"1": "FULL_SHARD", "2": "SHARD_GRAD_OP", "3": "NO_SHARD", "4": "HYBRID_SHARD",
                  "5": "HYBRID_SHARD_ZERO2"}
        sharding = str(get("sharding_strategy", "FULL_SHARD"))
        sharding = legacy.get(sharding, sharding)
    if sharding not in ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"):
        raise UserError(f"{path}: unknown fsdp sharding strategy {sharding}")
    offload = str(get("offload_params", False)).lower() in ("true", "1")
    full = sharding in ("FULL_SHARD", "HYBRID_SHARD")  # hybrid: full shard within a node (one node assumed)
    return Strategy(f"FSDP {sharding}", processes, shard_optimizer=sharding != "NO_SHARD",
                    shard_gradients=sharding != "NO_SHARD", shard_weights=full, offload_optimizer=offload,
                    offload_weights=offload, mixed_precision=precision, distributed_type="FSDP")


# ----------------------------------------------------------------------------------------- memory
def _dims(arch: Any) -> dict[str, int]:
    heads = arch.num_attention_heads
    head_dim = getattr(arch, "head_dim", None) or arch.hidden_size // heads
    return {"h": arch.hidden_size, "i": arch.intermediate_size, "layers": arch.num_hidden_layers,
            "q": heads * head_dim, "kv": (getattr(arch, "num_key_value_heads", None) or heads) * head_dim,
            "vocab": arch.vocab_size}


def saved_bytes_per_token(arch: Any) -> int:
    """Bytes autograd keeps for the backward pass per token of a Llama/Qwen2-style model in bf16.

    Per decoder layer: for each of the two RMSNorms its fp32 input (4h), the normalised bf16 value (2h) and
    the bf16 output the next matmul keeps (2h); q after RoPE and the attention output (2q + 2q); k and v
    (2kv + 2kv); the four MLP tensors gate, up, silu(gate) and their product (8i): ``16h + 4q + 4kv + 8i``.
    SDPA/flash attention keeps no ``T × T`` score matrix. On top: the final norm and lm_head input (about 9h)
    and the fp32 log-softmax the loss keeps (4·vocab). Checked against saved-tensor hooks in
    ``tests/test_dry_run.py``.
    """
    d = _dims(arch)
    per_layer = 16 * d["h"] + 4 * d["q"] + 4 * d["kv"] + 8 * d["i"]
    return d["layers"] * per_layer + 9 * d["h"] + 4 * d["vocab"]


def activation_bytes(arch: Any, tokens: int) -> int:
    """Peak activation memory of one micro-batch of ``tokens`` tokens: what backward keeps, plus the
    transient fp32 logits and their gradient at the top of the backward pass (8·vocab per token)."""
    return tokens * (saved_bytes_per_token(arch) + 8 * _dims(arch)["vocab"])


def kv_bytes_per_token(arch: Any) -> int:
    """bf16 K and V of every layer for one token (what vLLM's KV cache holds)."""
    d = _dims(arch)
    return 2 * d["layers"] * d["kv"] * 2


def unit_sizes(model: Any) -> tuple[int, int]:
    """(parameters of the FSDP root unit, of one decoder layer) as ``training/rl/fsdp.py`` wraps ``model``."""
    layers = [m for m in model.modules() if type(m).__name__ in set(getattr(model, "_no_split_modules", None) or ())]
    per_layer = sum(p.numel() for p in layers[0].parameters()) if layers else 0
    return parameter_counts(model)[0] - per_layer * len(layers), per_layer


def memory_per_gpu(config: Config, arch: Any, total: int, trainable: int, strategy: Strategy,
                   units: tuple[int, int] = (0, 0)) -> dict[str, float]:
    """Bytes per GPU for each part of the training state (see the module docstring); ``units`` are
    :func:`unit_sizes`, which FSDP2 gathers."""
    def shard(nbytes: float, sharded: bool) -> float:
        return nbytes / strategy.processes if sharded else nbytes

    frozen = total - trainable
    weights = shard(2 * frozen + 4 * trainable, strategy.shard_weights)
    full_ft = trainable == total
    parts = {
        "weights": 0.0 if strategy.offload_weights else weights,
        "gradients": 0.0 if strategy.offload_weights else shard(4 * trainable, strategy.shard_gradients),
        "AdamW states": 0.0 if strategy.offload_optimizer else shard(8 * trainable, strategy.shard_optimizer),
        "KL reference": shard(2 * total, strategy.shard_weights) if full_ft and config.train.beta > 0 else 0.0,
        "activations": float(activation_bytes(arch, config.train.micro_batch_size * config.train.max_length)),
    }
    if strategy.distributed_type == "FSDP2":
        root, layer = units
        parts["generation copy"] = 2.0 * total
        parts["FSDP2 gathers"] = 2.0 * (root + 2 * layer) + 6.0 * max(root, layer)
    if config.actor.backend == "vllm":
        parts["vLLM weights"] = 2.0 * total
        parts["vLLM runtime"] = VLLM_RUNTIME_GIB * GIB
        sequences = vllm_sequences(config, strategy.processes)
        parts["vLLM KV cache"] = float(sequences * max_model_len(config) * kv_bytes_per_token(arch))
    return parts


def vllm_sequences(config: Config, processes: int) -> int:
    """Episodes one rank generates for at once: its share of a step, capped by the env workers."""
    per_rank = math.ceil(config.train.tasks_per_step * config.train.group_size / processes)
    return min(per_rank, config.run.episodes_in_flight)


# ----------------------------------------------------------------------------------------- report
def _describe(config: Config) -> list[str]:
    """The resolved settings a researcher checks before spending GPU hours."""
    t, m = config.train, config.memory
    if m.mode == "none":
        memory = "none"
    else:
        memory = (f"{m.mode} ({m.retrieval} retrieval, {'with' if m.reconstruct else 'without'} reconstruct, "
                  f"k {m.k}, bank {m.bank})")
    lora = t.lora
    tuning = f"LoRA r{lora.r}/alpha {lora.alpha}" if lora.enabled or config.actor.adapter else "full fine-tuning"
    return [
        f"  env       {config.env.name}: train on {t.split}, max_steps {config.env.max_steps}, "
        f"history_length {config.prompt.history_length}, select on {config.select.split}, "
        f"report {', '.join(config.report.splits)}",
        f"  actor     {config.actor.model} (backend {config.actor.backend}"
        + (f", adapter {config.actor.adapter})" if config.actor.adapter else ")"),
        f"  memory    {memory}",
        f"  reward    outcome x{config.reward.outcome_scale:g}, format {config.reward.format_weight:g}, "
        f"invalid -{config.reward.invalid_penalty:g}",
        f"  train     {t.steps} steps x {t.tasks_per_step} tasks x {t.group_size} episodes"
        + (f" (up to {t.resample_rounds} more rounds of tasks a step)" if t.resample_rounds else "") + f", {tuning}, "
        f"lr {t.learning_rate:g}, beta {t.beta:g}, micro-batch {t.micro_batch_size} x {t.max_length} tokens",
        f"  decoding  temperature {config.decoding.temperature:g}, max_new_tokens {config.decoding.max_new_tokens}",
    ]


def dry_run(config: Config, accelerate_config: str | None = None, num_processes: int | None = None,
            gpu_memory_gb: float = 80.0, source: str = "config") -> int:
    """Print the resolved settings, the model's size, the launch strategy and memory per GPU."""
    print(f"dry run of {source}")
    for line in _describe(config):
        print(line)
    if config.memory.mode != "none" and config.memory.bank and not config.memory.bank.startswith("http") \
            and not Path(config.memory.bank).exists():
        print(f"  note      memory.bank {config.memory.bank} does not exist here; build it before training")

    arch, origin = model_architecture(config.actor.model)
    model = meta_model(arch, lora_config(config))
    total, trainable = parameter_counts(model)
    print(f"model {config.actor.model} ({type(model).__name__}, architecture from {origin})")
    print(f"  parameters  {total:,} ({total:.3g}); trainable {trainable:,} ({100 * trainable / total:.2f} %)")

    strategy = launch_strategy(config, accelerate_config, num_processes)
    print(f"launch {strategy.name}, {strategy.processes} process(es), mixed precision {strategy.mixed_precision}"
          + (f" (from {accelerate_config})" if accelerate_config else ""))
    if strategy.mixed_precision != "bf16":
        print(f"  note      mixed precision {strategy.mixed_precision}: the figures below assume bf16")

    if config.actor.backend == "vllm" and importlib.util.find_spec("vllm") is None:
        print('  note      vllm is not installed here; the GPU machine needs pip install "expbank[vllm]"')

    parts = memory_per_gpu(config, arch, total, trainable, strategy, unit_sizes(model))
    if config.actor.backend == "vllm":
        engine = parts["vLLM weights"] + parts["vLLM runtime"] + parts["vLLM KV cache"]
        share, given = engine / (gpu_memory_gb * GIB), config.train.vllm.gpu_memory_utilization
        # vLLM takes its whole share whatever it needs: the KV cache grows into the rest
        parts["vLLM KV cache"] += max(0.0, given * gpu_memory_gb * GIB - engine)
    needed = sum(parts.values())
    print(f"memory per GPU (GiB; no gradient checkpointing, activations for "
          f"{config.train.micro_batch_size} x {config.train.max_length} tokens)")
    for name, nbytes in parts.items():
        print(f"  {name:<16} {nbytes / GIB:8.2f}")
    print(f"  {'total':<16} {needed / GIB:8.2f}")
    if config.actor.backend == "vllm":
        print(f"  vLLM needs gpu_memory_utilization >= {share:.2f} for {vllm_sequences(config, strategy.processes)} "
              f"sequences of {max_model_len(config)} tokens "
              f"({kv_bytes_per_token(arch) / 2**10:.0f} KiB of KV cache per token); "
              f"train.vllm.gpu_memory_utilization is {given:g}")
        if given < share:
            print(f"dry run WARNING: train.vllm.gpu_memory_utilization={given:g} is below the {share:.2f} the engine "
                  "needs; raise it")
            return 0
    refusal = launch_refusal(strategy.distributed_type) or fsdp.refusal(config)
    if refusal:
        print(f"dry run WARNING: {refusal}. The figures above are for planning.")
        return 0
    if needed > gpu_memory_gb * GIB:
        print(f"dry run WARNING: needs {needed / GIB:.1f} GiB per GPU, more than {gpu_memory_gb:g} GiB; "
              "lower train.micro_batch_size or train.max_length, or use LoRA")
    else:
        print(f"dry run OK: fits in {gpu_memory_gb:g} GiB per GPU ({needed / GIB:.1f} GiB needed)")
    return 0
