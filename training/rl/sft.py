"""Supervised cold start on expert trajectories (``expbank sft``).

The records are built by ``agent/targets.py`` in the rollout's exact message layout (what the policy sees,
and template answers for each of its five stages); rows are tokenised by ``agent/rows.py`` (the same masking
as GRPO) and trained with TRL's ``SFTTrainer``, with loss on assistant tokens only; LoRA or full fine-tuning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expbank.config import Config
from expbank.errors import UserError
from expbank.training.actors.models import load_model
from expbank.training.agent import protocol, targets
from expbank.training.agent.rows import tokenize_conversation
from expbank.training.evaluation.evaluate import open_memory
from expbank.trajectory import episodes_in_id_order


def build_records(config: Config, trajectories: list[str]) -> list[list[dict]]:
    """SFT conversations from the successful episodes of ``trajectories``."""
    spec = protocol.ProtocolSpec.of(config.memory, config.prompt.system)
    memory = open_memory(config.model_copy(update={"env": config.env.model_copy(update={"split": config.sft.split})}))
    conversations = []
    for path in trajectories:
        for episode in episodes_in_id_order(path):
            if episode.success and episode.env == config.env.name:
                conversations += targets.records_from_episode(episode, spec, memory, config.prompt.history_length)
    return conversations


def sft(config: Config, trajectories: list[str], out: str | Path, progress: bool = True) -> Path:
    """Train on the records and save the model (or LoRA adapter) with its tokenizer to ``out``."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    cfg = config.sft
    loaded = load_model(config.actor.model, device="cpu" if not torch.cuda.is_available() else None,
                        dtype="float32")
    conversations = build_records(config, trajectories)
    if not conversations:
        raise UserError(f"no successful {config.env.name} episodes in {trajectories}")
    rows: dict[str, list[Any]] = {"input_ids": [], "assistant_masks": []}
    for conversation in conversations:
        ids, mask = tokenize_conversation(loaded.tokenizer, conversation, cfg.max_length)
        rows["input_ids"].append(ids)
        rows["assistant_masks"].append(mask)
    out = Path(out)
    micro = cfg.micro_batch_size or (cfg.batch_size if torch.cuda.is_available() else 1)
    args = SFTConfig(output_dir=str(out / "trainer"), num_train_epochs=cfg.epochs, learning_rate=cfg.learning_rate,
                     per_device_train_batch_size=micro,
                     gradient_accumulation_steps=cfg.batch_size // micro, logging_steps=10, save_strategy="no",
                     report_to="none", bf16=False, use_cpu=not torch.cuda.is_available(), seed=config.run.seed,
                     max_length=cfg.max_length, lr_scheduler_type="constant", disable_tqdm=not progress,
                     gradient_checkpointing=cfg.gradient_checkpointing,
                     gradient_checkpointing_kwargs={"use_reentrant": False})
    shape = config.train.lora
    peft_config = LoraConfig(r=shape.r, lora_alpha=shape.alpha, task_type="CAUSAL_LM",
                             target_modules=shape.target_modules) if cfg.lora else None
    trainer = SFTTrainer(model=loaded.model, args=args, train_dataset=Dataset.from_dict(rows),
                         processing_class=loaded.tokenizer, peft_config=peft_config)
    trainer.train()
    trainer.model.save_pretrained(out / "model")
    loaded.tokenizer.save_pretrained(out / "model")
    return out / "model"
