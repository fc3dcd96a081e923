"""`expbank train CONFIG --dry-run`: every GPU recipe checks out here, the numbers match hand computations, and
bad accelerate configs are refused with a message naming the file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from expbank.cli import main
from expbank.config import load_config
from expbank.errors import UserError
from expbank.training.rl import dry_run

ROOT = Path(__file__).resolve().parent.parent
RECIPES = sorted((ROOT / "configs" / "gpu").glob("*.yaml"))
ACCELERATE = {path.stem: path for path in (ROOT / "configs" / "accelerate").glob("*.yaml")}
GIB = 2**30

# Qwen2.5-1.5B-Instruct by hand: embeddings (tied with the LM head) + 28 layers + the final norm
H, FF, L, V, KV = 1536, 8960, 28, 151936, 256
LAYER = (H * H + H) + 2 * (H * KV + KV) + H * H + 3 * H * FF + 2 * H  # q (bias), k and v (bias), o, MLP, norms
QWEN_1_5B = V * H + L * LAYER + H
LORA_TARGETS = {"q_proj": (H, H), "k_proj": (H, KV), "v_proj": (H, KV), "o_proj": (H, H),
                "gate_proj": (H, FF), "up_proj": (H, FF), "down_proj": (FF, H)}


def _dry_run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["train", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _line(out: str, label: str) -> float:
    return float(next(line for line in out.splitlines() if line.strip().startswith(label)).split()[-1])


def test_the_recipes_and_accelerate_configs_are_all_there():
    assert {p.stem for p in RECIPES} >= {
        f"{env}-{model}" for env in ("alfworld", "webshop")
        for model in ("qwen1.5b-full", "qwen1.5b-lora", "qwen7b-lora", "qwen1.5b-lora-nomemory")}
    assert set(ACCELERATE) == {"ddp", "fsdp", "zero2", "zero3"}


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_every_gpu_recipe_passes_the_dry_run(recipe, capsys):
    config = load_config(recipe)
    assert config.train.group_size == 8 and config.train.tasks_per_step == 16 and config.train.beta == 0.01
    assert config.select.split == "dev" and config.prompt.history_length == 2
    assert config.train.learning_rate == (1e-5 if config.train.lora.enabled else 1e-6)
    header = recipe.read_text().splitlines()[:3]
    assert any("GB" in line for line in header), "the first lines name the hardware"
    code, out, _ = _dry_run(capsys, str(recipe), "--dry-run")
    assert code == 0
    assert out.splitlines()[-1].startswith("dry run OK: fits in 80 GiB per GPU")
    assert "bundled architecture table" in out and "vLLM" not in out  # recipes train with the hf backend
    assert "vllm" not in sys.modules and "deepspeed" not in sys.modules


def test_parameter_and_memory_figures_match_a_hand_computation(capsys):
    recipe = str(ROOT / "configs/gpu/alfworld-qwen1.5b-full.yaml")
    code, out, _ = _dry_run(capsys, recipe, "--dry-run")
    assert code == 0 and QWEN_1_5B == 1_543_714_304  # the published 1.54 B
    assert f"parameters  {QWEN_1_5B:,}" in out and f"trainable {QWEN_1_5B:,} (100.00 %)" in out
    assert _line(out, "weights") == pytest.approx(4 * QWEN_1_5B / GIB, abs=0.01)  # fp32 trainable weights
    assert _line(out, "AdamW states") == pytest.approx(8 * QWEN_1_5B / GIB, abs=0.01)
    assert _line(out, "KL reference") == pytest.approx(2 * QWEN_1_5B / GIB, abs=0.01)

    # ZeRO-2 on 4 GPUs shards gradients and optimizer states, not the weights
    code, sharded, _ = _dry_run(capsys, recipe, "--dry-run", "--accelerate-config", str(ACCELERATE["zero2"]))
    assert code == 0 and "DeepSpeed ZeRO-2, 4 process(es)" in sharded
    assert _line(sharded, "weights") == _line(out, "weights")
    assert _line(sharded, "gradients") == pytest.approx(4 * QWEN_1_5B / 4 / GIB, abs=0.01)
    assert _line(sharded, "AdamW states") == pytest.approx(8 * QWEN_1_5B / 4 / GIB, abs=0.01)

    # LoRA r32 on every linear layer: r × (in + out) per adapted matrix; no reference copy
    lora = str(ROOT / "configs/gpu/alfworld-qwen1.5b-lora.yaml")
    code, out, _ = _dry_run(capsys, lora, "--dry-run")
    trainable = L * sum(32 * (fan_in + fan_out) for fan_in, fan_out in LORA_TARGETS.values())
    assert f"parameters  {QWEN_1_5B + trainable:,}" in out and f"trainable {trainable:,}" in out
    assert _line(out, "KL reference") == 0.0
    assert _line(out, "weights") == pytest.approx((2 * QWEN_1_5B + 4 * trainable) / GIB, abs=0.01)


def test_a_recipe_too_big_for_the_gpu_is_flagged(capsys):
    recipe = str(ROOT / "configs/gpu/alfworld-qwen1.5b-full.yaml")
    code, out, _ = _dry_run(capsys, recipe, "train.micro_batch_size=16", "--dry-run")
    assert code == 0 and out.splitlines()[-1].startswith("dry run WARNING: needs")


@pytest.mark.parametrize("model", ["tiny-random", "smollm2-135m"])
def test_local_models_dry_run(model, capsys):
    code, out, _ = _dry_run(capsys, str(ROOT / "configs/train-cpu-smoke.yaml"), f"actor.model={model}", "--dry-run")
    assert code == 0 and "architecture from config.json" in out and "vLLM" not in out


def test_an_unknown_model_offline_is_one_clear_error(capsys):
    code, _, err = _dry_run(capsys, str(RECIPES[0]), "actor.model=nobody/no-such-model", "--dry-run")
    assert code == 1 and "nobody/no-such-model" in err and len(err.strip().splitlines()) == 1


def test_lora_targets_missing_from_the_model_are_named(capsys):
    code, _, err = _dry_run(capsys, str(RECIPES[0]), "train.lora.enabled=true",
                            "train.lora.target_modules=[qkv]", "--dry-run")
    assert code == 1 and "train.lora.target_modules" in err


def test_shipped_accelerate_configs_parse_and_shard_as_documented():
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    for path in ACCELERATE.values():  # accelerate's own launch-time checks
        args = launch_command_parser().parse_args(["--config_file", str(path), "-m", "expbank.cli", "train", "x"])
        _validate_launch_command(args)
    strategies = {name: dry_run.read_accelerate_config(str(path), None) for name, path in ACCELERATE.items()}
    shards = {name: (s.shard_gradients, s.shard_optimizer, s.shard_weights) for name, s in strategies.items()}
    assert shards == {"ddp": (False, False, False), "zero2": (True, True, False), "zero3": (True, True, True),
                      "fsdp": (True, True, True)}
    assert all(s.processes == 4 and s.mixed_precision == "bf16" for s in strategies.values())
    assert dry_run.read_accelerate_config(str(ACCELERATE["ddp"]), 8).processes == 8


@pytest.mark.parametrize(("text", "message"), [
    ("distributed_type: XLA\nnum_processes: 8\n", "distributed_type XLA is not supported"),
    ("num_processes: 4\n", "not a valid accelerate config: A `distributed_type` must be specified"),
    ("distributed_type: MULTI_GPU\nnum_processes: 1\n", "needs num_processes >= 2"),
    ("distributed_type: FSDP\nnum_processes: 4\nfsdp_config:\n  fsdp_wrap_everything: true\n",
     "unknown key 'fsdp_config.fsdp_wrap_everything'"),
    ("distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  zero_stage: 5\n",
     "zero_stage must be 0, 1, 2 or 3"),
    ("distributed_type: MULTI_GPU\nnum_processes: 4\nnum_gpus: 4\n", "unknown keys (['num_gpus'])"),
])
def test_bad_accelerate_configs_are_refused(tmp_path, capsys, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    code, _, err = _dry_run(capsys, str(RECIPES[0]), "--dry-run", "--accelerate-config", str(path))
    assert code == 1 and str(path) in err and message in err
    with pytest.raises(UserError, match="accelerate config not found"):
        dry_run.read_accelerate_config(str(tmp_path / "missing.yaml"), None)


def test_activation_formula_matches_what_autograd_keeps():
    """The per-token formula against the tensors a bf16 Qwen2 forward actually saves for backward."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    arch = Qwen2Config(hidden_size=256, intermediate_size=704, num_hidden_layers=3, num_attention_heads=4,
                       num_key_value_heads=2, vocab_size=3000, attn_implementation="sdpa")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(arch).to(torch.bfloat16)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in params:
            saved[storage.data_ptr()] = max(saved.get(storage.data_ptr(), 0), storage.nbytes())
        return tensor

    tokens = 256
    ids = torch.randint(0, arch.vocab_size, (1, tokens))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        from expbank.training.rl.grpo import token_logprobs

        token_logprobs(model, ids, torch.ones_like(ids))
    measured = sum(saved.values()) / tokens
    assert measured == pytest.approx(dry_run.saved_bytes_per_token(arch), rel=0.03)


def test_a_vllm_run_budgets_the_engine_share(capsys):
    recipe = str(ROOT / "configs/gpu/alfworld-qwen7b-lora.yaml")
    code, out, _ = _dry_run(capsys, recipe, "actor.backend=vllm", "--dry-run")
    total = int(next(line for line in out.splitlines() if "parameters  " in line).split()[1].replace(",", ""))
    assert code == 0 and _line(out, "vLLM weights") == pytest.approx(2 * total / GIB, abs=0.01)  # its bf16 copy
    engine = sum(_line(out, f"vLLM {part}") for part in ("weights", "runtime", "KV cache"))
    assert engine == pytest.approx(0.3 * 80, abs=0.02)  # the engine takes its whole share (the default 0.3)
    assert out.splitlines()[-1].startswith("dry run OK") and "vllm" not in sys.modules

    code, out, _ = _dry_run(capsys, recipe, "actor.backend=vllm", "train.vllm.gpu_memory_utilization=0.1",
                            "--dry-run")
    assert code == 0 and out.splitlines()[-1].startswith("dry run WARNING: train.vllm.gpu_memory_utilization=0.1")


@pytest.mark.parametrize(("launch", "kind"), [("fsdp", "FSDP"), ("zero2", "DEEPSPEED"), ("zero3", "DEEPSPEED")])
def test_launches_the_training_loop_cannot_run_under_are_flagged(launch, kind, capsys):
    recipe = str(ROOT / "configs/gpu/alfworld-qwen1.5b-full.yaml")
    code, out, _ = _dry_run(capsys, recipe, "--dry-run", "--accelerate-config", str(ACCELERATE[launch]))
    assert code == 0 and "memory per GPU" in out  # still planned
    last = out.splitlines()[-1]
    assert last.startswith(f"dry run WARNING: expbank train does not run under {kind}")
    assert "train.sharding=fsdp2" in last and "torchrun" in last  # the refusal names the way that works
    code, out, _ = _dry_run(capsys, recipe, "--dry-run", "--accelerate-config", str(ACCELERATE["ddp"]))
    assert out.splitlines()[-1].startswith("dry run OK")


def test_fsdp2_shards_the_training_state_and_adds_the_generation_copy(capsys):
    recipe = str(ROOT / "configs/gpu/alfworld-qwen1.5b-full.yaml")
    _, whole, _ = _dry_run(capsys, recipe, "--dry-run")
    code, out, _ = _dry_run(capsys, recipe, "train.sharding=fsdp2", "--dry-run", "--num-processes", "4")
    assert code == 0 and "launch FSDP2 (train.sharding=fsdp2; torchrun --nproc_per_node 4), 4 process(es)" in out
    for part in ("weights", "gradients", "AdamW states", "KL reference"):
        assert _line(out, part) == pytest.approx(_line(whole, part) / 4, abs=0.01), part
    assert _line(out, "activations") == _line(whole, "activations")
    assert _line(out, "generation copy") == pytest.approx(2 * QWEN_1_5B / GIB, abs=0.01)  # bf16, whole
    # gathered while computing: the root unit (tied embeddings, final norm) and two layers in bf16, and the
    # largest unit's gradient in bf16 + fp32
    root = V * H + H
    assert _line(out, "FSDP2 gathers") == pytest.approx((2 * (root + 2 * LAYER) + 6 * root) / GIB, abs=0.01)
    code, out, _ = _dry_run(capsys, recipe, "train.sharding=fsdp2", "train.lora.enabled=true", "--dry-run")
    assert out.splitlines()[-1].startswith("dry run WARNING: train.sharding=fsdp2 shards full fine-tuning")
