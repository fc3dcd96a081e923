"""FSDP2 (``train.sharding: fsdp2``) on two CPU processes over gloo, the code path GPUs run with NCCL.

The sharded update equals the one-process update (ranks holding different numbers of rows), ranks that
generate different numbers of tokens do not hang, a run killed with SIGKILL (during a step and during a
checkpoint save) resumes to the weights of an uninterrupted run, a sharded checkpoint exports to a plain
model with the same logits, the 7B full fine-tuning recipe plans its memory over 8 GPUs, and
``scripts/gpu_check.sh --cpu`` runs. Every launch runs under a timeout, so a hang fails the test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

from expbank.training.actors.models import load_model

ROOT = Path(__file__).resolve().parent.parent
RANKS = Path(__file__).with_name("fsdp2_ranks.py")
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
GIB = 2**30


def _env() -> dict[str, str]:
    # CUDA hidden: on a GPU machine the test still runs two CPU ranks; one thread each, same sums in every run
    return {**os.environ, "EXPBANK_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": ""}


def _start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """A launch whose output goes to a file (a pipe nobody reads while the test waits could fill and block it)."""
    output = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(args, env=env or _env(), cwd=ROOT, stdout=output, stderr=subprocess.STDOUT,
                               text=True)
    process.output = output
    return process


def _output(process: subprocess.Popen) -> str:
    process.output.seek(0)
    return process.output.read()


def _signal(process: subprocess.Popen, sig: signal.Signals) -> None:
    """Send ``sig`` to the launch and all its descendants, deepest first: torchrun starts each rank in a
    session of its own, so a signal to torchrun's process group would leave the ranks running."""
    import psutil

    try:
        tree = psutil.Process(process.pid).children(recursive=True)[::-1] + [psutil.Process(process.pid)]
    except psutil.NoSuchProcess:
        return
    for member in tree:
        try:
            member.send_signal(sig)
        except psutil.NoSuchProcess:
            pass


def _finish(process: subprocess.Popen, timeout: float) -> str:
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        pytest.fail(f"timed out after {timeout:.0f} s (a hang?):\n{_output(process)[-3000:]}")
    out = _output(process)
    assert process.returncode == 0, out[-3000:]
    return out


def _ranks(scenario: str, out: Path, timeout: float = 120) -> None:
    _finish(_start([*TORCHRUN, str(RANKS), scenario, str(out)]), timeout)


def test_update_matches_one_process(tmp_path):
    from fsdp2_ranks import SHARES, UPDATE, my_rows
    from test_train_accelerate import synthetic_rows

    from expbank.training.rl.grpo import Policy, frozen_copy, update

    _ranks("update", tmp_path)
    loaded = load_model("tiny-random", device="cpu", dtype="float32")
    initial = {n: p.detach().clone() for n, p in loaded.model.named_parameters()}
    policy = Policy(loaded.model, loaded.tokenizer, "tiny-random", frozen_copy(loaded.model, torch.float32))
    optimizer = torch.optim.SGD(list(policy.trainable().values()), lr=1.0)
    rows = synthetic_rows(policy.tokenizer)
    for shares in SHARES:  # one process, the union of both ranks' rows
        update(policy, optimizer, my_rows(rows, shares, 0) + my_rows(rows, shares, 1), UPDATE, 8)
    alone = dict(policy.model.named_parameters())
    ranks = [torch.load(tmp_path / f"rank{rank}.pt") for rank in (0, 1)]
    assert ranks[0].keys() == alone.keys()
    moved = 0.0
    for name, expected in alone.items():
        expected = expected.detach()
        assert torch.equal(ranks[0][name], ranks[1][name]), name  # both ranks gathered the same weights
        assert torch.linalg.norm(ranks[0][name] - expected) <= 1e-5 * torch.linalg.norm(expected), name
        step = expected - initial[name]  # and the update itself, not only the weights it moved
        assert torch.linalg.norm(ranks[0][name] - initial[name] - step) <= 1e-4 * torch.linalg.norm(step) + 1e-7
        moved = max(moved, float(torch.linalg.norm(step)))
    assert moved > 1e-3, "the update moved nothing: the test is vacuous"


def test_generation_with_different_lengths_per_rank(tmp_path):
    _ranks("generate", tmp_path)
    results = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in (0, 1)]
    assert all(result["copy_matches_shards"] for result in results)  # the copy generates with current weights
    for round_ in range(2):  # different numbers of replies and of tokens per rank
        assert len(results[0]["lengths"][round_]) == 2 and len(results[1]["lengths"][round_]) == 1
        assert min(results[0]["lengths"][round_]) > 10 * max(results[1]["lengths"][round_])
    weights = [torch.load(tmp_path / f"rank{rank}.pt") for rank in (0, 1)]
    assert all(torch.equal(weights[0][name], weights[1][name]) for name in weights[0])


# ----------------------------------------------------------------------------- kill -9 and resume
CONFIG = "configs/train-cpu-learning.yaml"
SMALL = ["train.sharding=fsdp2", "train.steps=3", "train.tasks_per_step=2", "train.group_size=2",
         "train.drop_zero_variance=false", "train.checkpoint.every=1", "env.max_steps=4",
         "run.episodes_in_flight=1"]


def _train(run_dir: Path, model: Path, *extra: str) -> subprocess.Popen:
    return _start([*TORCHRUN, "-m", "expbank.cli", "train", CONFIG, *SMALL, f"actor.model={model}",
                   f"run.dir={run_dir}", *extra, "--no-progress"])


def _kill_when(process: subprocess.Popen, ready, timeout: float = 120) -> None:
    """SIGSTOP the launch the moment ``ready()`` holds (stopped, so that what the test then checks is what
    the kill interrupts)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            pytest.fail(f"the run ended before the kill:\n{_output(process)[-3000:]}")
        if time.monotonic() > deadline:
            _signal(process, signal.SIGKILL)
            pytest.fail("timed out waiting for the moment to kill")
        time.sleep(0.001)
    _signal(process, signal.SIGSTOP)


def _kill(process: subprocess.Popen) -> None:
    _signal(process, signal.SIGKILL)
    process.wait()


def _weights(checkpoint: Path) -> dict[str, torch.Tensor]:
    from transformers import AutoConfig, AutoModelForCausalLM

    from expbank.training.rl import fsdp

    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(checkpoint / "model"))
    fsdp.load_full_weights(checkpoint / "dcp", model)
    return model.state_dict()


def test_kill_during_step_then_resume(tmp_path, tiny_warm):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    checkpoints = killed / "checkpoints"
    _finish(_train(straight, tiny_warm), 300)

    # 1. killed while step 2's checkpoint is being written: the last complete one is step 1
    process = _train(killed, tiny_warm)
    _kill_when(process, lambda: (checkpoints / "step-00002.partial").exists())
    torn = (checkpoints / "step-00001").is_dir() and not (checkpoints / "step-00002").exists()
    _kill(process)
    assert torn, "step 2's checkpoint was complete before the kill"

    # 2. resumed from step 1, killed during step 3's rollouts
    process = _train(killed, tiny_warm, "--resume")
    _kill_when(process, lambda: (checkpoints / "step-00002").exists())
    _signal(process, signal.SIGCONT)
    time.sleep(0.5)  # inside step 3: its rollouts take seconds
    _signal(process, signal.SIGSTOP)
    in_step_3 = not (checkpoints / "step-00003.partial").exists() and not (checkpoints / "step-00003").exists()
    _kill(process)
    assert in_step_3, "step 3 reached its checkpoint before the kill"

    # 3. resumed from step 2 to the end
    _finish(_train(killed, tiny_warm, "--resume"), 300)
    first, final = _weights(straight / "checkpoints" / "step-00001"), _weights(straight / "checkpoints" / "step-00003")
    resumed = _weights(checkpoints / "step-00003")
    assert any(not torch.equal(first[n], final[n]) for n in final), "training changed nothing: the test is vacuous"
    for name in final:
        assert torch.equal(final[name], resumed[name]), name
    assert len((killed / "metrics.jsonl").read_text().splitlines()) == 3  # replayed steps are not logged twice


def test_export_from_sharded_checkpoint(tmp_path):
    from fsdp2_ranks import PROBE
    from transformers import AutoModelForCausalLM

    from expbank.training.rl.export import export

    _ranks("export", tmp_path)
    record = export(tmp_path / "run", "last", tmp_path / "exported")
    assert record["step"] == 1 and not record["merged_lora"]
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "exported")
    with torch.no_grad():
        logits = model(input_ids=PROBE, attention_mask=torch.ones_like(PROBE)).logits
    sharded = torch.load(tmp_path / "sharded_logits.pt")
    assert torch.allclose(logits, sharded, atol=1e-5)
    initial = load_model("tiny-random", device="cpu", dtype="float32").model
    with torch.no_grad():
        assert not torch.allclose(initial(input_ids=PROBE).logits, sharded, atol=1e-3)  # trained weights


def test_7b_full_recipe_plans_8_gpus(capsys):
    from expbank.cli import main

    assert main(["train", str(ROOT / "configs/gpu/alfworld-qwen7b-full.yaml"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "launch FSDP2 (train.sharding=fsdp2; torchrun --nproc_per_node 8), 8 process(es)" in out
    total = 7_615_616_512  # Qwen2.5-7B: untied embeddings

    def line(label: str) -> float:
        return float(next(row for row in out.splitlines() if row.strip().startswith(label)).split()[-1])

    assert line("weights") == pytest.approx(4 * total / 8 / GIB, abs=0.01)
    assert line("AdamW states") == pytest.approx(8 * total / 8 / GIB, abs=0.01)
    assert line("generation copy") == pytest.approx(2 * total / GIB, abs=0.01)
    assert out.splitlines()[-1].startswith("dry run OK: fits in 80 GiB per GPU")


def test_fsdp2_refuses_lora_with_one_line(tmp_path, capsys):
    from expbank.cli import main

    code = main(["train", str(ROOT / "configs/train-cpu-smoke.yaml"), "train.sharding=fsdp2", "train.lora.enabled=true",
                 f"run.dir={tmp_path / 'run'}"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1 and "train.lora.enabled=false" in err
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_gpu_check_runs_on_cpu(tmp_path):
    process = _start(["bash", "scripts/gpu_check.sh", "--cpu"],
                     {**_env(), "GPU_CHECK_WORK": str(tmp_path), "PYTHON": sys.executable})
    out = _finish(process, 300)
    for stage in ("lora-1.5b-shaped", "full-fsdp2-1.5b-shaped", "lora-7b-shaped"):
        assert f"[{stage}] OK" in out, out[-3000:]
    assert "check-only reward" in out and "ERROR" not in out


def test_gpu_check_runs_only_the_stages_named(tmp_path):
    process = _start(["bash", "scripts/gpu_check.sh", "--cpu", "--stage", "lora-7b-shaped"],
                     {**_env(), "GPU_CHECK_WORK": str(tmp_path), "PYTHON": sys.executable})
    out = _finish(process, 300)
    assert "[lora-7b-shaped] OK" in out and "gpu_check: 1 of 1 stages OK" in out, out[-3000:]
    assert "[lora-1.5b-shaped]" not in out and "[full-fsdp2-1.5b-shaped]" not in out
