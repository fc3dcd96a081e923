"""The weights a colocated vLLM engine is given each GRPO step (``training/actors/vllm_sync.py``).

vLLM itself needs a GPU; what decides whether it samples from the policy being trained is that the tensors it
loads, under Hugging Face names, make a plain base model compute what the policy computes. That is checked here
with the real tiny Qwen2 model and real PEFT adapters.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from expbank.cli import main
from expbank.training.actors.models import load_model
from expbank.training.actors.vllm_sync import base_model_weights

ROOT = Path(__file__).resolve().parent.parent


def _logits(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_lora_weights_make_the_base_model_compute_the_policy():
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    lora = dict(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"], task_type="CAUSAL_LM",
                init_lora_weights=False)  # random B: a zero delta would hide a missing or doubled one
    policy = get_peft_model(load_model("tiny-random").model, LoraConfig(**lora))
    policy.add_adapter("reference", LoraConfig(**lora))  # a frozen KL reference must never be pushed
    policy.set_adapter("default")
    before = {name: tensor.clone() for name, tensor in policy.state_dict().items()}
    ids = torch.randint(0, policy.config.vocab_size, (2, 12))

    weights = dict(base_model_weights(policy))

    engine = load_model("tiny-random").model  # stands in for vLLM: loads the same names into a plain model
    assert list(weights) == [name for name, _ in engine.named_parameters()]
    assert not torch.allclose(_logits(engine, ids), _logits(policy, ids), atol=1e-4)
    engine.load_state_dict(weights, strict=False)
    torch.testing.assert_close(_logits(engine, ids), _logits(policy, ids), atol=1e-5, rtol=1e-5)
    after = policy.state_dict()
    assert all(torch.equal(before[name], after[name]) for name in before)  # nothing merged into the policy


def test_full_fine_tuning_gives_the_parameters_as_they_are():
    model = load_model("tiny-random").model
    with torch.no_grad():
        model.model.norm.weight.add_(1.0)
    weights = list(base_model_weights(model))
    assert [name for name, _ in weights] == [name for name, _ in model.named_parameters()]
    assert torch.equal(dict(weights)["model.norm.weight"], model.model.norm.weight)


@pytest.mark.parametrize(("backend", "message"), [
    ("openai", "actor.backend=openai serves a fixed remote model"),
    pytest.param("vllm", 'pip install "expbank[vllm]"', marks=pytest.mark.skipif(
        importlib.util.find_spec("vllm") is not None, reason="vllm is installed: the engine would start")),
])
def test_train_refuses_a_backend_it_cannot_train_with_before_writing_anything(backend, message, tmp_path, capsys):
    run_dir = tmp_path / "run"
    code = main(["train", str(ROOT / "configs/train-cpu-smoke.yaml"), f"actor.backend={backend}",
                 f"run.dir={run_dir}", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and message in err and not run_dir.exists()
