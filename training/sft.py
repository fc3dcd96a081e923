"""``expbank sft CONFIG``: supervised cold start on expert trajectories in the DESIGN.md §5 message layout.

For every step of an expert episode a record holds exactly what the policy will see during rollouts
(system prompt, task, windowed history, observation, admissible actions and, with memory, the experience
retrieved with the episode's own task excluded) and a target answer written from templates: what to
observe, which retrieved items apply and why, the applicable guidance rewritten for this step (or NONE),
and the expert's action. Rows are tokenised by ``training.rows`` (the same masking as GRPO) and trained
with TRL's ``SFTTrainer``, with loss on assistant tokens only; LoRA or full fine-tuning.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from expbank.config import Config
from expbank.entry import Entry
from expbank.training import protocol


def _first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence[:limit]


_PAGE_CHROME = {"webshop", "instruction:", "back to search", "< prev", "next >", "search"}


def observe_note(observation: str, task: str, limit: int = 80) -> str:
    """A short statement of the state: ALFWorld's first sentence, or WebShop's page content without the
    instruction and navigation it repeats on every page (short notes keep generation cheap)."""
    if "[SEP]" not in observation:
        return _first_sentence(observation, limit)
    segments = [s.strip() for s in observation.split("[SEP]")]
    content = [s for s in segments if s and s.lower() not in _PAGE_CHROME and s != task]
    if not content:
        return "search page"
    return "; ".join(content[:2])[:limit]


def target_blocks(spec: protocol.ProtocolSpec, task: str, observation: str, task_type: str, action: str,
                  entries: list[Entry]) -> dict[str, str]:
    """Template answers for each tag of ``spec`` (offline; a teacher model can replace them later)."""
    blocks = {"observe": observe_note(observation, task),
              "retrieve": f"{task_type.replace('_', ' ')}: {_first_sentence(observation, 80)}",
              "action": action}
    applicable = [i for i, e in enumerate(entries, 1) if e.task_type == task_type]
    notes = []
    for i, entry in enumerate(entries, 1):
        verdict = "applies: same kind of task" if i in applicable else f"does not apply: it is about {entry.task}"
        notes.append(f"[{i}] {verdict}")
    blocks["critique"] = " ".join(notes) if notes else "No experience was shown."
    if applicable:
        entry = entries[applicable[0] - 1]
        blocks["reconstruct"] = f"{_first_sentence(entry.guidance, 200)} Here that means: {action}."
    else:
        blocks["reconstruct"] = "NONE"
    return blocks


def _render(blocks: dict[str, str], tags: tuple[str, ...]) -> str:
    return "".join(f"<{tag}>{blocks[tag]}</{tag}>" for tag in tags)


def records_from_episode(episode, spec: protocol.ProtocolSpec, memory, history_length: int) -> list[list[dict]]:
    """One conversation per step of a successful expert episode, in the rollout's exact layout."""
    from expbank.retrieval import format_experience

    conversations = []
    history: list[tuple[str, str]] = []
    system = protocol.system_prompt(episode.env, spec)
    for step in episode.steps:
        entries = []
        if memory is not None:
            entries = memory.retrieve(task=episode.task, observation=step.observation,
                                      exclude_task_ids=(episode.task_id,))
        experience = (format_experience(entries) if entries else
                      "<experience>\n(no matching experience)\n</experience>") if spec.uses_memory else None
        blocks = target_blocks(spec, episode.task, step.observation, episode.task_type, step.action, entries)
        window = history[-history_length:] if history_length else []
        if spec.agentic:
            user = protocol.step_message(episode.task, window, step.observation, step.admissible_actions)
            conversation = [{"role": "system", "content": system}, {"role": "user", "content": user},
                            {"role": "assistant", "content": _render(blocks, spec.first_stage_tags())},
                            {"role": "user", "content": experience},
                            {"role": "assistant", "content": _render(blocks, spec.second_stage_tags())}]
        else:
            user = protocol.step_message(episode.task, window, step.observation, step.admissible_actions, experience)
            conversation = [{"role": "system", "content": system}, {"role": "user", "content": user},
                            {"role": "assistant", "content": _render(blocks, spec.tags())}]
        conversations.append(conversation)
        history.append((step.observation, step.action))
    return conversations


def build_records(config: Config, trajectories: list[str]) -> list[list[dict]]:
    """SFT conversations from the successful episodes of ``trajectories``."""
    from expbank.training.evaluate import open_memory
    from expbank.trajectory import episodes_in_id_order

    spec = protocol.ProtocolSpec(config.memory.mode, config.memory.retrieval, config.memory.reconstruct)
    memory = open_memory(config.model_copy(update={"env": config.env.model_copy(update={"split": config.sft.split})}))
    conversations = []
    for path in trajectories:
        for episode in episodes_in_id_order(path):
            if episode.success and episode.env == config.env.name:
                conversations += records_from_episode(episode, spec, memory, config.prompt.history_length)
    return conversations


def sft(config: Config, trajectories: list[str], out: str | Path, progress: bool = True) -> Path:
    """Train on the records and save the model (or LoRA adapter) with its tokenizer to ``out``."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    from expbank.training.models import load_model
    from expbank.training.rows import tokenize_conversation

    cfg = config.sft
    loaded = load_model(config.actor.model, device="cpu" if not torch.cuda.is_available() else None,
                        dtype="float32")
    conversations = build_records(config, trajectories)
    if not conversations:
        from expbank.errors import UserError

        raise UserError(f"no successful {config.env.name} episodes in {trajectories}")
    rows: dict[str, list[Any]] = {"input_ids": [], "assistant_masks": []}
    for conversation in conversations:
        ids, mask = tokenize_conversation(loaded.tokenizer, conversation, cfg.max_length)
        rows["input_ids"].append(ids)
        rows["assistant_masks"].append(mask)
    out = Path(out)
    args = SFTConfig(output_dir=str(out / "trainer"), num_train_epochs=cfg.epochs, learning_rate=cfg.learning_rate,
                     per_device_train_batch_size=cfg.batch_size, logging_steps=10, save_strategy="no",
                     report_to="none", bf16=False, use_cpu=not torch.cuda.is_available(), seed=config.run.seed,
                     max_length=cfg.max_length, lr_scheduler_type="constant", disable_tqdm=not progress,
                     gradient_checkpointing=False)
    peft_config = LoraConfig(r=config.train.lora_r, lora_alpha=config.train.lora_alpha, task_type="CAUSAL_LM",
                             target_modules=config.train.lora_target_modules) if cfg.lora else None
    trainer = SFTTrainer(model=loaded.model, args=args, train_dataset=Dataset.from_dict(rows),
                         processing_class=loaded.tokenizer, peft_config=peft_config)
    trainer.train()
    trainer.model.save_pretrained(out / "model")
    loaded.tokenizer.save_pretrained(out / "model")
    return out / "model"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="YAML run config with an `sft:` section")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def run(args: argparse.Namespace) -> int:
    from expbank.config import load_config
    from expbank.errors import UserError

    config = load_config(args.config, args.overrides)
    if not config.sft.trajectories:
        raise UserError("sft.trajectories is empty: give expert trajectory files (expbank collect --policy expert)")
    out = Path(config.run.dir or f"runs/sft-{config.env.name}")
    from expbank.training.runs import prepare_run_dir

    prepare_run_dir(out, config)
    model_dir = sft(config, config.sft.trajectories, out, progress=not args.no_progress)
    kind = "adapter" if config.sft.lora else "model"
    flag = "actor.adapter" if config.sft.lora else "actor.model"
    print(f"SFT {kind} saved to {model_dir}; use it with {flag}={model_dir}")
    return 0
