"""The per-rank side of tests/test_fsdp2.py: ``torchrun --nproc_per_node 2 tests/fsdp2_ranks.py SCENARIO OUT``.

Each rank shards the tiny random model with FSDP2 (gloo on CPU) through the trainer's own functions, runs
the scenario and writes what the test compares to ``OUT``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from expbank.config import TrainConfig
from expbank.training.actors.backends import HFBackend
from expbank.training.actors.models import load_model
from expbank.training.rl import fsdp
from expbank.training.rl.distributed import Distributed
from expbank.training.rl.grpo import (
    Policy,
    frozen_copy,
    save_checkpoint,
    shard_policy,
    token_logprobs,
    update,
)

sys.path.insert(0, str(Path(__file__).parent))
from test_train_accelerate import synthetic_rows  # noqa: E402

# rank 0 holds three rows and rank 1 one, then rank 0 all four and rank 1 none
SHARES = ((3, 1), (4, 0))
UPDATE = TrainConfig(micro_batch_size=2, update_micro_batch_size=2, max_grad_norm=0.5, beta=0.1, mu=2)
PROBE = torch.arange(5, 37).reshape(2, 16)  # token ids whose logits the export scenario compares


def sharded_policy(out: Path, beta: float) -> tuple[Policy, object, Distributed]:
    loaded = load_model("tiny-random", device="cpu", dtype="float32")
    reference = frozen_copy(loaded.model, torch.float32) if beta > 0 else None
    policy = Policy(loaded.model, loaded.tokenizer, "tiny-random", reference)
    dist = Distributed("none", out, sharded=True)
    return policy, shard_policy(policy, dist.device), dist


def my_rows(rows: list, shares: tuple[int, int], rank: int) -> list:
    return rows[: shares[0]] if rank == 0 else rows[shares[0]: shares[0] + shares[1]]


def full_weights(replica) -> dict[str, torch.Tensor]:
    return {name: param.detach().clone() for name, param in replica.named_parameters()}


def scenario_update(out: Path) -> None:
    """Two updates with unequal rows per rank; every rank saves the full weights its copy gathers."""
    policy, replica, dist = sharded_policy(out, UPDATE.beta)
    optimizer = torch.optim.SGD(list(policy.trainable().values()), lr=1.0)
    rows = synthetic_rows(policy.tokenizer)
    for shares in SHARES:
        update(policy, optimizer, my_rows(rows, shares, dist.rank), UPDATE, 8, policy.model, dist)
    fsdp.copy_full_weights(policy.model, replica)
    torch.save(full_weights(replica), out / f"rank{dist.rank}.pt")


def scenario_generate(out: Path) -> None:
    """Each rank generates from its copy alone: rank 0 two replies of 48 tokens (two generate calls), rank 1
    one of 2 tokens; then all update and refresh the copy; twice. (Sharded forwards would hang on the
    different number of calls: transformers keeps FSDP ranks in step within one call only.)"""
    policy, replica, dist = sharded_policy(out, 0.0)
    optimizer = torch.optim.AdamW(list(policy.trainable().values()), lr=1e-2)
    backend = HFBackend.wrap(replica, policy.tokenizer, "tiny-random", batch_size=1)  # a call per reply
    replies_wanted, budget = (2, 48) if dist.rank == 0 else (1, 2)
    lengths = []
    for round_ in range(2):
        fsdp.copy_full_weights(policy.model, replica)
        conversations = [[{"role": "user", "content": f"say something, round {round_}"}]] * replies_wanted
        replies = backend.generate_tokens(conversations, temperature=1.0, max_new_tokens=budget, stop=[],
                                          seed=round_)
        lengths.append([len(reply.completion_ids) for reply in replies])
        rows = [(reply.prompt_ids + reply.completion_ids,
                 [0] * len(reply.prompt_ids) + [1] * len(reply.completion_ids), advantage)
                for reply, advantage in zip(replies, (1.0, -1.0), strict=False)]
        update(policy, optimizer, rows, TrainConfig(micro_batch_size=1), 48, policy.model, dist)
    fsdp.copy_full_weights(policy.model, replica)
    ids = PROBE
    with torch.no_grad():
        sharded = token_logprobs(policy.model, ids, torch.ones_like(ids))  # a collective forward
        copied = token_logprobs(replica, ids, torch.ones_like(ids))
    (out / f"rank{dist.rank}.json").write_text(json.dumps({
        "lengths": lengths, "copy_matches_shards": bool(torch.allclose(sharded, copied, atol=1e-5))}))
    torch.save(full_weights(replica), out / f"rank{dist.rank}.pt")


def scenario_export(out: Path) -> None:
    """One update, a sharded checkpoint of step 1 in ``out/run``, and the sharded model's logits on PROBE."""
    policy, _, dist = sharded_policy(out, 0.0)
    optimizer = torch.optim.AdamW(list(policy.trainable().values()), lr=1e-2)
    rows = synthetic_rows(policy.tokenizer)
    update(policy, optimizer, my_rows(rows, SHARES[0], dist.rank),
           TrainConfig(micro_batch_size=2, update_micro_batch_size=2), 8, policy.model, dist)
    save_checkpoint(out / "run", 1, policy, optimizer)
    with torch.no_grad():
        logits = policy.model(input_ids=PROBE, attention_mask=torch.ones_like(PROBE)).logits
    if dist.is_main:
        torch.save(logits, out / "sharded_logits.pt")


if __name__ == "__main__":
    scenario, folder = sys.argv[1], Path(sys.argv[2])
    {"update": scenario_update, "generate": scenario_generate, "export": scenario_export}[scenario](folder)
    torch.distributed.destroy_process_group()
