"""The living bank during GRPO: a short CPU run on WebShop with the tiny model.

After the run the run's bank holds new entries whose provenance points at training episodes, utility counters
that moved, logged prunes; each checkpoint holds the bank snapshot, and a killed-and-resumed run ends with
the same weights and the same bank as an uninterrupted one. The user's bank is never written.
"""

from __future__ import annotations

import json

import pytest
import torch

from expbank.bank.store import Bank
from expbank.config import config_from_tree


@pytest.fixture(scope="module")
def user_bank(alfworld_trajectories, embedder, tmp_path_factory):
    """A small WebShop bank from 16 expert episodes of the bundled train goals."""
    from expbank.bank.build import build
    from expbank.bank.summarise import RuleSummariser

    folder = tmp_path_factory.mktemp("user-bank")
    lines = alfworld_trajectories["webshop_expert"].read_text().splitlines()[:16]
    source = folder / "expert16.jsonl"
    source.write_text("".join(line + "\n" for line in lines))
    bank = Bank.create(folder / "bank", embedder=embedder)
    build(bank, [source], RuleSummariser())
    bank.save()
    return folder / "bank"


def run_config(bank, run_dir, **train):
    return config_from_tree({
        "env": {"name": "webshop", "split": "test", "max_steps": 3},
        "actor": {"backend": "hf", "model": "tiny-random"},
        "memory": {"mode": "bank", "bank": str(bank), "k": 2},
        "decoding": {"temperature": 1.0, "max_new_tokens": 16},
        "prompt": {"history_length": 1},
        "report": {"splits": ["test"]},
        "train": {"steps": 2, "split": "train", "tasks_per_step": 2, "group_size": 2, "learning_rate": 1e-3,
                  "lora": {"enabled": False}, "micro_batch_size": 8, "max_length": 128,
                  "drop_zero_variance": False, "bank": {"update_every": 1, "prune_every": 2, "capacity": 20},
                  **train},
        "run": {"seed": 0, "dir": str(run_dir), "episodes_in_flight": 2},
    })


def trainable(run_dir, step):
    return torch.load(run_dir / "checkpoints" / f"step-{step:05d}" / "trainable.pt")


def bank_state(path):
    """What must match between two runs: entries (ids, counters), summarised episodes, prune events."""
    bank = Bank.open(path, writable=False)
    entries = sorted((e.id, e.stats.uses, e.stats.successes, tuple(e.provenance.episodes)) for e in bank.entries())
    prunes = [(event["event"], event["id"]) for event in bank.log()]
    return entries, sorted(bank.episodes), prunes


def test_the_bank_learns_during_training_and_resumes(user_bank, tmp_path):
    from expbank.training.rl.grpo import train

    before = json.loads((user_bank / "manifest.json").read_text())
    original = {e.id for e in Bank.open(user_bank, writable=False).entries()}
    run_dir = train(run_config(user_bank, tmp_path / "straight"), progress=False)

    # the user's bank is untouched; the run's own copy changed
    assert json.loads((user_bank / "manifest.json").read_text()) == before
    bank = Bank.open(run_dir / "bank", verify=True)
    episode_ids = {json.loads(line)["episode_id"] for line in (run_dir / "episodes.jsonl").read_text().splitlines()}
    new = [e for e in bank.entries(include_quarantined=True) if e.id not in original]
    assert new, "no entry was summarised from the training episodes"
    for entry in new:
        assert entry.provenance.source == "policy"
        assert set(entry.provenance.episodes) <= episode_ids
        assert all(e.startswith("webshop-train-") and "-it" in e for e in entry.provenance.episodes)
    assert bank.episodes & episode_ids
    # step 1 credited the entries its episodes were shown (step 2 then pruned: used failures go first)
    first = Bank.open(run_dir / "checkpoints" / "step-00001" / "bank")
    assert any(e.stats.uses > 0 for e in first.entries()), "no utility counter moved"
    assert len(first) > 20 >= len(bank)

    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    for row in metrics:
        for key in ("bank_size", "bank_inserts", "bank_prunes", "bank_utility_mean", "reconstruct_none_rate"):
            assert key in row, key
    assert metrics[-1]["bank_size"] <= 20
    assert sum(row["bank_prunes"] for row in metrics) > 0
    assert sum(row["bank_inserts"] for row in metrics) > 0
    assert sum(row["bank_credits"] for row in metrics) > 0
    assert any(event["event"] == "prune" and event["reason"] for event in bank.log())

    # every checkpoint holds a bank; the last one is the bank the run ended with
    for step in (1, 2):
        Bank.open(run_dir / "checkpoints" / f"step-{step:05d}" / "bank", verify=True)
    assert bank_state(run_dir / "checkpoints" / "step-00002" / "bank") == bank_state(run_dir / "bank")
    assert (run_dir / "curves.png").exists() and (run_dir / "utility.png").exists()

    # killed after step 1, resumed: same weights, same bank, same metrics
    config = run_config(user_bank, tmp_path / "resumed")
    train(config, progress=False, stop_after=1)
    resumed = train(config, resume=True, progress=False)
    assert all(torch.equal(a, b) for a, b in zip(trainable(run_dir, 2).values(),
                                                 trainable(resumed, 2).values(), strict=True))
    assert bank_state(resumed / "bank") == bank_state(run_dir / "bank")
    again = [json.loads(line) for line in (resumed / "metrics.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in again] == \
        [{k: v for k, v in row.items() if k != "seconds"} for row in metrics]
