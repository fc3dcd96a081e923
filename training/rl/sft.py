"""Supervised cold start on expert trajectories (``expbank sft``).

The records are built by ``agent/targets.py`` in the rollout's exact message layout (what the policy sees,
and template answers for each of its five stages); rows are tokenised by ``agent/rows.py`` (the same masking
as GRPO) and trained with TRL's ``SFTTrainer``, with loss on assistant tokens only; LoRA or full fine-tuning.
With ``sft.critique_share`` (ALFWorld, a bank) critique rows join them: turns shown only other rooms' entries,
with loss on the critique and reconstruction alone (:func:`critique_rows`). With ``sft.verdict_head`` a linear
head is then fitted on the trained policy's hidden state to decide the critique's verdicts (``agent/verdict.py``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from expbank.bank.summarise import first_take
from expbank.config import Config
from expbank.envs.alfworld.games import room_of
from expbank.errors import UserError
from expbank.training.actors.backends import HFBackend
from expbank.training.actors.models import load_model
from expbank.training.agent import protocol, targets, verdict
from expbank.training.agent.retrieve import Memory
from expbank.training.agent.rows import tokenize_conversation
from expbank.training.evaluation.evaluate import open_memory, policy_folder
from expbank.trajectory import Episode, episodes_in_id_order


def _sources(config: Config, trajectories: list[str]) -> tuple[protocol.ProtocolSpec, Config, Memory | None,
                                                                  list[Episode]]:
    """The protocol, the config on ``sft.split``, its memory and the won episodes records are built from."""
    spec = protocol.ProtocolSpec.of(config.memory, config.prompt.system)
    on_split = config.model_copy(update={"env": config.env.model_copy(update={"split": config.sft.split})})
    won = [episode for path in trajectories for episode in episodes_in_id_order(path)
           if episode.success and episode.env == config.env.name]
    return spec, on_split, open_memory(on_split), won


def build_records(config: Config, trajectories: list[str]) -> tuple[list[list[dict]], list[list[dict]]]:
    """SFT conversations from the successful episodes of ``trajectories``, and the critique rows
    ``sft.critique_share`` asks for (:func:`critique_rows`)."""
    spec, on_split, memory, won = _sources(config, trajectories)
    conversations = [record for episode in won
                     for record in targets.records_from_episode(episode, spec, memory, config.prompt.history_length)]
    if not config.sft.critique_share:
        return conversations, []
    if memory is None or config.env.name != "alfworld" or "critique" not in spec.tags():
        raise UserError("sft.critique_share needs ALFWorld, a bank (memory.mode) and the critique stage")
    other = open_memory(on_split.model_copy(update={"memory": config.memory.model_copy(update={"rooms": "other"})}))
    pool = [row for episode in won for row in critique_rows(episode, spec, other, config.prompt.history_length)]
    random.Random(config.run.seed).shuffle(pool)
    wanted = round(config.sft.critique_share * len(conversations))
    return conversations, [pool[i % len(pool)] for i in range(wanted)] if pool else []


def verdict_rows(config: Config, trajectories: list[str]) -> verdict.Rows:
    """The rows ``sft.verdict_head`` fits on: each won episode's turns before its take, twice, shown what the
    evaluated arms' retrieval finds (``memory.observation``; at the first turn the room's own entry, where the
    bank holds one) and shown only other rooms' entries, as ``sft-bank-other`` is. At the first turn, the one
    where the records alone would teach the step instead of the entry (docs/training.md), a pair differs in
    nothing but the entry; at later turns each half shows what evaluation shows there. At most
    ``sft.verdict_head_rows`` rows, half of each verdict where there are enough (a seeded draw)."""
    spec, on_split, memory, won = _sources(config, trajectories)
    if memory is None or config.env.name != "alfworld" or "critique" not in spec.tags():
        raise UserError("sft.verdict_head needs ALFWorld, a bank (memory.mode) and the critique stage")
    rows = verdict.Rows()
    for rooms in ("any", "other"):
        shown = memory if config.memory.rooms == rooms else open_memory(
            on_split.model_copy(update={"memory": config.memory.model_copy(update={"rooms": rooms})}))
        for episode in won:
            rows.add(critique_rows(episode, spec, shown, config.prompt.history_length), room_of(episode.task_id))
    draw = random.Random(config.run.seed)
    by_label = {label: draw.sample([i for i, y in enumerate(rows.labels) if y == label],
                                   sum(y == label for y in rows.labels)) for label in (True, False)}
    wanted = config.sft.verdict_head_rows
    applies = min(len(by_label[True]), max(wanted // 2, wanted - len(by_label[False])))  # the rest: rejections
    chosen = rows.subset(sorted(by_label[True][:applies] + by_label[False][:wanted - applies]))
    if len(set(chosen.labels)) < 2:
        raise UserError("sft.verdict_head: the records hold only one verdict; a head needs both")
    if len(set(chosen.rooms) - {None}) < 2:
        raise UserError("sft.verdict_head: the rows come from fewer than two rooms; its folds hold out whole rooms")
    return chosen


def fit_verdict_head(backend: HFBackend, rows: verdict.Rows, layer: int | None,
                     progress: bool = True) -> verdict.VerdictHead:
    """A logistic regression (standardised, C = 0.1, balanced classes: the probe's fit) on a hidden state at
    each row's verdict position. With ``layer`` None, the layer and the states (the policy's, or its base
    model's where it has an adapter) are those with the best balanced accuracy in a cross-validation whose
    folds hold out whole training rooms, as evaluation does. The threshold is where the out-of-fold scores
    reject as many rows that apply as they accept rows that do not (the equal-error point): the critique is
    asked for both rates alike, and a fit's own rows would put it where it separates rows it has seen."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_curve
    from sklearn.model_selection import GroupKFold, cross_val_predict, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def classifier():
        return make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000, class_weight="balanced"))

    def states(base: bool, at: int | None) -> np.ndarray:
        chunks = range(0, len(rows.labels), 16)
        return np.concatenate([backend.hidden_states(rows.conversations[i: i + 16], rows.prefixes[i: i + 16], at,
                                                     base=base)
                               for i in tqdm(chunks, desc=f"verdict head{' (base)' if base else ''}",
                                             unit="16 rows", disable=not progress)])

    labels = np.array(rows.labels)
    folds = GroupKFold(n_splits=min(4, len(set(rows.rooms))))
    if layer is not None:
        layer %= backend.model.config.num_hidden_layers + 1  # hidden states: the embeddings, then each layer
        best, features = (None, False, layer), states(False, layer)
    else:
        best, features = (-1.0, False, 0), None
        for base in (False, True) if hasattr(backend.model, "disable_adapter") else (False,):
            every = states(base, None)  # rows × layers × hidden
            for at in range(every.shape[1]):
                score = cross_val_score(classifier(), every[:, at], labels, groups=rows.rooms, cv=folds,
                                        scoring="balanced_accuracy").mean()
                if score > best[0]:
                    best, features = (float(score), base, at), every[:, at]
    held_out = cross_val_predict(classifier(), features, labels, groups=rows.rooms, cv=folds,
                                 method="decision_function")
    accepted_others, accepted_own, thresholds = roc_curve(labels, held_out)
    threshold = thresholds[np.argmin(np.maximum(accepted_others, 1 - accepted_own))]
    model = classifier().fit(features, labels)
    scaler, regression = model[0], model[1]
    return verdict.VerdictHead(layer=best[2], base=best[1], cv_balanced_accuracy=best[0], threshold=float(threshold),
                               mean=scaler.mean_.tolist(), scale=scaler.scale_.tolist(),
                               coef=regression.coef_[0].tolist(), intercept=float(regression.intercept_[0]))


def fit_policy_verdict_head(config: Config, trajectories: list[str], progress: bool = True) -> Path:
    """The verdict head of a policy trained without ``expbank sft`` (a ``tiny-warm`` folder): fitted on
    ``config.actor``'s model from :func:`verdict_rows` as ``sft.verdict_head`` fits it, and saved in the policy's
    folder (its adapter, or its model), where ``decoding.verdict: head`` reads it."""
    rows = verdict_rows(config, trajectories)
    backend = HFBackend(config.actor.model, adapter=config.actor.adapter)
    return fit_verdict_head(backend, rows, config.sft.verdict_head_layer, progress).save(policy_folder(config))


def critique_rows(episode: Episode, spec: protocol.ProtocolSpec, memory: Memory,
                  history_length: int) -> list[list[dict]]:
    """The turns of a won ALFWorld episode before it takes its goal object, shown what ``memory`` finds. For
    critique rows that is a retrieval that never shows the episode's own room (``memory.rooms: other``): the
    critique says "another room", the reconstruction NONE."""
    take = first_take(episode)
    before = episode.model_copy(update={"steps": episode.steps[:take]})  # (None keeps every step)
    return targets.records_from_episode(before, spec, memory, history_length)


def sft(config: Config, trajectories: list[str], out: str | Path, progress: bool = True) -> Path:
    """Train on the records and save the model (or LoRA adapter) with its tokenizer to ``out``."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    cfg = config.sft
    loaded = load_model(config.actor.model, device="cpu" if not torch.cuda.is_available() else None,
                        dtype="float32")
    conversations, critiques = build_records(config, trajectories)
    if not conversations:
        raise UserError(f"no successful {config.env.name} episodes in {trajectories}")
    head_rows = verdict_rows(config, trajectories) if cfg.verdict_head else None  # refused before training
    rows: dict[str, list[Any]] = {"input_ids": [], "assistant_masks": []}
    tokenized = [tokenize_conversation(loaded.tokenizer, c, cfg.max_length) for c in conversations]
    tokenized += [tokenize_conversation(loaded.tokenizer, c, cfg.max_length, tags=("critique", "reconstruct"))
                  for c in critiques]
    for ids, mask in tokenized:
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
    if head_rows is not None:
        trainer.model.eval()
        backend = HFBackend.wrap(trainer.model, loaded.tokenizer, config.actor.model)
        fit_verdict_head(backend, head_rows, cfg.verdict_head_layer, progress).save(out / "model")
    return out / "model"
