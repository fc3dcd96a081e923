"""`expbank sft` as the README shows it: expert trajectories in, a model that `expbank eval` plays out."""

from __future__ import annotations

import json
import subprocess

from expbank.training.agent.collect import collect


def test_sft_command_trains_on_assistant_tokens_and_its_model_evaluates(tmp_path, tiny_warm):
    expert = tmp_path / "ws-expert.jsonl"
    collect("webshop", "train", "expert", expert, episodes=12, progress=False)
    sft_dir = tmp_path / "sft"
    done = subprocess.run(["expbank", "sft", "configs/train-cpu-learning.yaml", f"sft.trajectories=[{expert}]",
                           f"actor.model={tiny_warm}", f"run.dir={sft_dir}", "sft.epochs=1", "--no-progress"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"use it with actor.model={sft_dir / 'model'}" in done.stdout
    assert (sft_dir / "config.yaml").exists() and (sft_dir / "model" / "config.json").exists()

    evaluated = subprocess.run(["expbank", "eval", "configs/train-cpu-learning.yaml", f"actor.model={sft_dir / 'model'}",
                                "panel.limit=2", "env.max_steps=2", "decoding.temperature=0",
                                f"run.dir={tmp_path / 'eval'}", "--no-progress"],
                               capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    episodes = [json.loads(line) for line in (tmp_path / "eval" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2 and all(e["steps"] for e in episodes)


def test_sft_without_trajectories_is_refused_in_one_line(tmp_path):
    done = subprocess.run(["expbank", "sft", "configs/train-cpu-learning.yaml", f"run.dir={tmp_path}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "sft.trajectories" in done.stderr


def test_sft_records_do_not_depend_on_the_order_episodes_were_written(tmp_path):
    """A collection writes episodes as its workers finish; collecting twice must give the same SFT data."""
    from expbank.config import load_config
    from expbank.training.rl.sft import build_records

    expert = tmp_path / "ws-expert.jsonl"
    collect("webshop", "train", "expert", expert, episodes=4, progress=False)
    config = load_config("configs/train-cpu-learning.yaml")
    first, _ = build_records(config, [str(expert)])
    lines = expert.read_text().splitlines()
    expert.write_text("\n".join(reversed(lines)) + "\n")
    assert len(lines) == 4 and first and build_records(config, [str(expert)])[0] == first


def test_verdict_weight_stresses_only_the_replys_verdict_and_weight_one_is_trls_loss(tmp_path, tiny_warm):
    """``sft.verdict_weight``: the verdict words of the reply (not those an experience block quotes) carry the
    weight, and the weighted loss exceeds TRL's by exactly (weight - 1) times their log-loss share."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from expbank.training.actors.models import load_model
    from expbank.training.agent.rows import token_weights, tokenize_conversation
    from expbank.training.agent.targets import verdict_words
    from expbank.training.rl.weighted_sft import WeightedSFTTrainer

    loaded = load_model(str(tiny_warm), device="cpu", dtype="float32")
    tokenizer = loaded.tokenizer
    conversation = [
        {"role": "user", "content": "<experience>[1] applies: quoted, not written</experience> You see a drawer 1."},
        {"role": "assistant", "content": "<critique>[1] does not apply: another room</critique>"
                                         "<reconstruct>NONE</reconstruct><action>look</action>"}]
    ids, mask = tokenize_conversation(tokenizer, conversation)
    weights = token_weights(tokenizer, conversation, None, verdict_words, 3.0)
    stressed = [t for t, w in zip(ids, weights, strict=True) if w == 3.0]
    assert tokenizer.decode(stressed).strip() == "does not apply"
    assert all(m for m, w in zip(mask, weights, strict=True) if w == 3.0)

    def batch_loss(trainer_class, row_weights):
        rows = {"input_ids": [ids], "assistant_masks": [mask]}
        if row_weights is not None:
            rows["loss_weights"] = [row_weights]
        args = SFTConfig(output_dir=str(tmp_path / "trainer"), per_device_train_batch_size=1, report_to="none",
                         use_cpu=True, max_length=512)
        trainer = trainer_class(model=loaded.model, args=args, train_dataset=Dataset.from_dict(rows),
                                processing_class=tokenizer)
        batch = next(iter(trainer.get_train_dataloader()))
        with torch.no_grad():
            return trainer.compute_loss(trainer.model, batch).item(), batch

    trl_loss, batch = batch_loss(SFTTrainer, None)
    ones, _ = batch_loss(WeightedSFTTrainer, [1.0] * len(ids))
    stressed_loss, _ = batch_loss(WeightedSFTTrainer, weights)
    assert abs(ones - trl_loss) < 1e-4
    with torch.no_grad():
        logits = loaded.model(input_ids=batch["input_ids"]).logits[0, :-1]
    labels = batch["labels"][0, 1:]
    nll = torch.nn.functional.cross_entropy(logits, labels, ignore_index=-100, reduction="none")
    verdict = torch.tensor(weights[1:]) == 3.0
    expected = trl_loss + 2.0 * nll[verdict].sum().item() / (labels != -100).sum().item()
    assert stressed_loss > trl_loss and abs(stressed_loss - expected) < 1e-4
