"""Scale-out through accelerate: two CPU processes (DDP over gloo) train the smoke
config with the same metrics shape as one process, and their summed gradients are the one-process gradient
of the whole batch even when ranks hold different numbers of rows (or none). Plus the tracker check."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from expbank.config import TrainConfig, load_config

ACCELERATE = Path(sys.executable).with_name("accelerate")
# accelerate's --cpu launcher starts several processes only through mpirun; --multi_gpu starts them with
# torchrun, and without a GPU the trainer's Accelerator(cpu=True) makes them meet over gloo
LAUNCH = [str(ACCELERATE), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
          "--mixed_precision", "no", "--dynamo_backend", "no"]


def _env() -> dict[str, str]:
    # CUDA hidden: on a GPU machine the test still runs two CPU ranks
    return {**os.environ, "EXPBANK_TORCH_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "CUDA_VISIBLE_DEVICES": ""}


def test_two_processes_give_the_metrics_shape_of_one(tmp_path):
    from expbank.training.rl.grpo import train

    overrides = ["train.steps=2", "train.drop_zero_variance=false", "train.max_length=128"]
    one = train(load_config("configs/train-cpu-smoke.yaml", [*overrides, f"run.dir={tmp_path / 'one'}"]),
                progress=False)
    two = tmp_path / "two"
    done = subprocess.run([*LAUNCH, "-m", "expbank.cli", "train", "configs/train-cpu-smoke.yaml", *overrides,
                           f"run.dir={two}", "--no-progress"], env=_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    rows = {name: [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]
            for name, path in (("one", one), ("two", two))}
    assert [sorted(row) for row in rows["two"]] == [sorted(row) for row in rows["one"]]
    assert [row["episodes"] for row in rows["two"]] == [row["episodes"] for row in rows["one"]] == [4, 4]
    episodes = [json.loads(line)["episode_id"] for line in (two / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == len(set(episodes)) == 8  # both ranks' groups, written once, by rank 0
    assert json.loads((two / "fingerprint.json").read_text())["processes"] == 2
    assert (two / "checkpoints" / "step-00002" / "trainable.pt").exists()


RANKS_SCRIPT = """
import sys, torch
from pathlib import Path
from expbank.config import TrainConfig
from expbank.training.rl.distributed import Distributed
from expbank.training.rl.grpo import Policy, update
from expbank.training.actors.models import load_model
sys.path.insert(0, {tests!r})
from test_train_accelerate import synthetic_rows

out = Path({out!r})
loaded = load_model("tiny-random", device="cpu", dtype="float32")
policy = Policy(loaded.model, loaded.tokenizer, "tiny-random")
dist = Distributed("none", out)
model, optimizer = dist.prepare(policy.model, torch.optim.SGD(list(policy.trainable().values()), lr=1.0))
cfg = TrainConfig(micro_batch_size=2, update_micro_batch_size=2, max_grad_norm=1e9)
rows = synthetic_rows(policy.tokenizer)
for shares in ((3, 1), (4, 0)):  # rank 1 holds one row, then none
    mine = rows[: shares[0]] if dist.rank == 0 else rows[shares[0]:shares[0] + shares[1]]
    update(policy, optimizer, mine, cfg, 8, model, dist)
torch.save({{n: p.detach() for n, p in policy.trainable().items()}}, out / f"rank{{dist.rank}}.pt")
"""


def synthetic_rows(tokenizer) -> list[tuple[list[int], list[int], float]]:
    """Four rows of random tokens with a loss span at the end and advantages of both signs."""
    generator = torch.Generator().manual_seed(0)
    rows = []
    for index, length in enumerate((12, 9, 15, 7)):
        ids = torch.randint(0, len(tokenizer), (length,), generator=generator).tolist()
        rows.append((ids, [0] * (length - 4) + [1] * 4, (-1.0) ** index * (index + 1)))
    return rows


def test_ranks_sum_to_the_one_process_gradient(tmp_path):
    from expbank.training.actors.models import load_model
    from expbank.training.rl.grpo import Policy, update

    script = tmp_path / "ranks.py"
    script.write_text(textwrap.dedent(RANKS_SCRIPT.format(tests=str(Path(__file__).parent), out=str(tmp_path))))
    done = subprocess.run([*LAUNCH, str(script)], env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    loaded = load_model("tiny-random", device="cpu", dtype="float32")
    policy = Policy(loaded.model, loaded.tokenizer, "tiny-random")
    optimizer = torch.optim.SGD(list(policy.trainable().values()), lr=1.0)
    cfg = TrainConfig(micro_batch_size=2, update_micro_batch_size=2, max_grad_norm=1e9)
    rows = synthetic_rows(policy.tokenizer)
    update(policy, optimizer, rows, cfg, 8)  # the union of (3, 1)
    update(policy, optimizer, rows, cfg, 8)  # the union of (4, 0)
    alone = policy.trainable()
    ranks = [torch.load(tmp_path / f"rank{rank}.pt") for rank in (0, 1)]
    initial = load_model("tiny-random", device="cpu", dtype="float32").model.state_dict()
    for name, value in alone.items():
        assert torch.equal(ranks[0][name], ranks[1][name]), name  # DDP kept the ranks identical
        moved = (value.detach() - initial[name]).abs().max()
        assert torch.allclose(ranks[0][name], value, atol=1e-6 + 1e-4 * float(moved)), name


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is not None, reason="tensorboard is installed")
def test_a_missing_tracker_package_is_named_before_training(tmp_path):
    from expbank.errors import UserError
    from expbank.training.rl.grpo import train

    config = load_config("configs/train-cpu-smoke.yaml", ["train.tracker=tensorboard", f"run.dir={tmp_path}"])
    with pytest.raises(UserError, match=r"train.tracker=tensorboard .* pip install tensorboard"):
        train(config, progress=False)
