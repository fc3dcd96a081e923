"""`expbank export-model`: a real GRPO checkpoint (tiny model, CPU) merged into a folder that transformers loads
and `expbank eval` plays, with the checkpoint's bank snapshot beside it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from expbank.cli import main

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "train-cpu-smoke.yaml"


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory) -> Path:
    """One GRPO step with LoRA, continuing from an adapter whose B matrices are random.

    A freshly initialised LoRA adapter is the identity (B = 0), and one step of a random model learns nothing
    (every episode scores the same), so starting from random B is what makes the merge check below mean
    something. The trainer loads that adapter, trains and checkpoints as in any run.
    """
    from peft import LoraConfig, get_peft_model

    from expbank.training.actors.models import load_model

    folder = tmp_path_factory.mktemp("lora-run")
    torch.manual_seed(0)
    base = load_model("tiny-random", device="cpu", dtype="float32").model
    start = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"],
                                            task_type="CAUSAL_LM", init_lora_weights=False))
    start.save_pretrained(folder / "start-adapter")
    done = subprocess.run(["expbank", "train", str(SMOKE), f"run.dir={folder / 'run'}", "train.steps=1",
                           "train.lora.enabled=true", f"actor.adapter={folder / 'start-adapter'}", "--no-progress"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return folder / "run"


def _logits(model) -> torch.Tensor:
    ids = torch.arange(3, 67).reshape(2, 32)  # any token ids will do
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_export_merges_the_adapter_exactly(lora_run, tmp_path, capsys):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from expbank.training.actors.models import load_model, resolve_model_path

    out = tmp_path / "export"
    assert main(["export-model", str(lora_run), "--out", str(out)]) == 0
    assert "merged LoRA adapter into tiny-random" in capsys.readouterr().out
    record = json.loads((out / "expbank-export.json").read_text())
    assert record["step"] == 1 and record["checkpoint"] == "step-00001" and record["merged_lora"] is True
    assert record["base_model"] == "tiny-random" and record["bank"] is None
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()

    merged = AutoModelForCausalLM.from_pretrained(out).eval()
    base = AutoModelForCausalLM.from_pretrained(resolve_model_path("tiny-random"), dtype=torch.float32)
    peft = PeftModel.from_pretrained(base, lora_run / "checkpoints" / "step-00001" / "model").eval()
    assert torch.allclose(_logits(merged), _logits(peft), atol=1e-5)
    with peft.disable_adapter():
        assert not torch.allclose(_logits(merged), _logits(peft), atol=1e-3), "the adapter changes the model"

    # a checkpoint folder loads the same way through the shared loader (base + adapter)
    loaded = load_model(str(lora_run / "checkpoints" / "step-00001"), device="cpu", dtype="float32")
    assert hasattr(loaded.model, "disable_adapter")
    assert torch.allclose(_logits(loaded.model), _logits(merged), atol=1e-5)


def test_the_export_evaluates_with_expbank_eval(lora_run, tmp_path):
    out = tmp_path / "export"
    assert main(["export-model", str(lora_run), "--checkpoint", "1", "--out", str(out)]) == 0
    done = subprocess.run(["expbank", "eval", str(SMOKE), f"actor.model={out}", f"run.dir={tmp_path / 'eval'}",
                           "panel.limit=1", "env.max_steps=2", "run.episodes_in_flight=1", "--no-progress"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    episodes = (tmp_path / "eval" / "episodes.jsonl").read_text().splitlines()
    assert len(episodes) == 1 and json.loads(episodes[0])["policy"] == str(out)


def test_the_bank_snapshot_travels_with_the_export_and_is_the_default_bank(lora_run, tmp_path, capsys):
    from expbank.bank.store import Bank
    from expbank.config import load_config
    from expbank.training.actors.models import default_bank_for, with_default_bank

    run = tmp_path / "run"
    shutil.copytree(lora_run, run)
    checkpoint = run / "checkpoints" / "step-00001"
    Bank.create(checkpoint / "bank", dim=384).save()
    out = tmp_path / "export"
    assert main(["export-model", str(run), "--out", str(out)]) == 0
    assert f"bank snapshot in {out}/bank" in capsys.readouterr().out
    record = json.loads((out / "expbank-export.json").read_text())
    snapshot = Bank.open(out / "bank", writable=False, verify=True)
    assert record["bank"] == "bank" and record["bank_manifest_hash"] == snapshot.content_hash is not None

    assert default_bank_for(str(out)) == str(out / "bank")
    assert default_bank_for(str(checkpoint)) == default_bank_for(str(checkpoint / "model")) == str(checkpoint / "bank")
    assert default_bank_for("tiny-random") is None and default_bank_for(str(lora_run)) is None
    config = load_config(SMOKE, [f"actor.model={out}", "memory.mode=bank"])
    assert with_default_bank(config).memory.bank == str(out / "bank")
    assert with_default_bank(config.model_copy(update={"memory": config.memory.model_copy(
        update={"bank": "elsewhere"})})).memory.bank == "elsewhere"
    assert with_default_bank(load_config(SMOKE, [f"actor.model={out}"])).memory.bank is None  # memory none


@pytest.mark.parametrize(("argv", "message"), [
    (["--checkpoint", "best"], "best.json not found"),
    (["--checkpoint", "7"], "step-00007 does not exist (checkpointed steps: 1)"),
    (["--checkpoint", "newest"], "must be best, last or a step number"),
])
def test_bad_checkpoint_choices_are_one_line_errors(lora_run, tmp_path, capsys, argv, message):
    assert main(["export-model", str(lora_run), *argv, "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_missing_runs_and_occupied_outputs_are_refused(lora_run, tmp_path, capsys):
    assert main(["export-model", str(tmp_path / "nope"), "--out", str(tmp_path / "x")]) == 1
    assert "run directory not found" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    assert main(["export-model", str(lora_run), "--out", str(tmp_path / "full")]) == 1
    assert "exists and is not empty" in capsys.readouterr().err
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
