"""Multi-turn GRPO (docs/design.md §6), written to be read top to bottom like a CleanRL script.

Each step:

1. sample ``tasks_per_step`` tasks from the training split and play ``group_size`` episodes of each from
   the same initial state with the current policy (the same rollout code as ``expbank eval``); with
   ``resample_rounds``, play fresh tasks while too few groups differ in reward (DAPO's dynamic sampling);
2. score each episode: ``outcome_scale`` × outcome + ``format_weight`` × format score
   − ``invalid_penalty`` × invalid actions; normalise within its group to get the advantage;
3. turn every policy turn into a row (prompt = the messages it saw, completion = what it wrote; only
   policy-written tokens carry loss, so observe, retrieve, critique, reconstruct and action are all trained)
   with its episode's advantage;
4. take ``mu`` optimisation passes with the clipped importance-ratio objective (and an optional k3 KL to the
   reference, the policy the run started from: with new LoRA adapters the base with adapters disabled, when
   continuing an SFT adapter a frozen copy of it);
5. log metrics and checkpoint (trainable weights, optimizer, RNG states, step) for ``--resume``.

With several ranks (``torchrun``) each plays its share of the groups and the update combines every rank's
rows. ``train.sharding: fsdp2`` shards the policy over the ranks (``training/rl/fsdp.py``): rollouts then
generate from an unsharded copy refreshed at the start of each step (:func:`generation_model`), and the
update runs sharded, with as many micro-batches on every rank.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.nn.utils.rnn import pad_sequence
from tqdm import tqdm

from expbank import envs
from expbank.bank.store import copy_bank
from expbank.config import Config, RewardConfig, TrainConfig
from expbank.envs.pool import EnvPool
from expbank.errors import UserError
from expbank.training.actors import vllm_sync
from expbank.training.actors.backends import HFBackend, VLLMBackend, require_vllm
from expbank.training.actors.models import load_model
from expbank.training.agent import protocol
from expbank.training.agent.retrieve import Memory
from expbank.training.agent.rollout import RolloutJob, RolloutResult, RolloutSettings, rollout
from expbank.training.agent.rows import tokenize_conversation
from expbank.training.evaluation.curves import write_curves
from expbank.training.evaluation.evaluate import open_memory
from expbank.training.rl import fsdp, living_bank, selection
from expbank.training.rl.distributed import Distributed, OneProcess
from expbank.training.runs import fingerprint, prepare_run_dir, write_json
from expbank.trajectory import Episode, EpisodeWriter, make_episode_id, parse_episode_id


# ------------------------------------------------------------------------------------------ rewards
def episode_reward(result: RolloutResult, reward: RewardConfig) -> float:
    """The reward of one episode (docs/design.md §6; an errored episode gets no outcome credit)."""
    record = result.record
    if record["env"] == "webshop" and reward.webshop_outcome == "score":
        outcome = record["score"]
    else:
        outcome = float(record["success"])
    return reward.outcome_scale * outcome + reward.format_weight * result.stats.format_score - \
        reward.invalid_penalty * record["num_invalid"]


def group_advantages(rewards: list[float], scale: bool, eps: float = 1e-4) -> list[float]:
    """Rewards centred on their group's mean (and divided by its std when ``scale``)."""
    values = torch.tensor(rewards, dtype=torch.float64)
    centred = values - values.mean()
    if scale:
        centred = centred / (values.std(unbiased=False) + eps)
    return centred.tolist()


# ------------------------------------------------------------------------------------------- loss
def token_logprobs(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: int | None = None,
                   temperature: float = 1.0) -> torch.Tensor:
    """log p(token_t | tokens_<t) for the last ``keep`` of t = 1..T-1 (all when None; shape [batch, keep]),
    under the distribution the rollouts sampled from (logits divided by ``temperature``, as TRL does): with
    samples drawn at T < 1 and log-probs taken at T = 1, a batch whose advantages do not sum to zero over its
    rows (failed episodes have more turns) pushes the policy towards a flatter distribution at every step.

    Only the kept positions go through the LM head: most of a row is prompt, and full-vocabulary logits
    at every prompt position would dominate the update's time and memory.
    """
    keep = input_ids.shape[1] - 1 if keep is None else keep
    logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep + 1,
                   use_cache=False).logits  # one pass over whole rows: no cache to keep
    logits = logits[:, :-1].float() / temperature
    return torch.gather(logits.log_softmax(-1), 2, input_ids[:, -keep:, None]).squeeze(-1)


def loss_positions(mask: torch.Tensor) -> int:
    """How many trailing positions of a [batch, T-1] mask hold every loss token of the micro-batch."""
    columns = mask.any(0).nonzero()
    return int(mask.shape[1] - columns[0]) if len(columns) else 1


def policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor,
                cfg: TrainConfig, normaliser: float, ref_logp: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, dict[str, float]]:
    """Clipped GRPO objective over a micro-batch, aggregated as ``cfg.loss_aggregation`` says.

    ``mask`` marks loss tokens ([batch, T-1]); ``normaliser`` is the batch-wide denominator (total loss
    tokens for ``token_mean``, rows for ``sequence_mean``, rows × max completion tokens for ``dr_grpo``), so
    micro-batches add up to the loss of the whole batch.
    """
    ratio = torch.exp(logp - old_logp)
    high = cfg.epsilon if cfg.epsilon_high is None else cfg.epsilon_high
    adv = advantages[:, None]
    per_token = -torch.min(ratio * adv, ratio.clamp(1 - cfg.epsilon, 1 + high) * adv)
    kl = torch.zeros_like(per_token)
    if ref_logp is not None and cfg.beta > 0:
        delta = ref_logp - logp
        kl = torch.exp(delta) - delta - 1  # k3 estimator, >= 0
        per_token = per_token + cfg.beta * kl
    mask = mask.to(per_token.dtype)
    if cfg.loss_aggregation == "sequence_mean":
        loss = ((per_token * mask).sum(1) / mask.sum(1).clamp(min=1)).sum() / normaliser
    else:  # token_mean and dr_grpo differ only in the normaliser
        loss = (per_token * mask).sum() / normaliser
    clipped = ((ratio < 1 - cfg.epsilon) | (ratio > 1 + high)).to(per_token.dtype)
    tokens = mask.sum().clamp(min=1)
    kl = kl.detach()
    return loss, {"kl": float((kl * mask).sum() / tokens), "clip_fraction": float((clipped * mask).sum() / tokens)}


def batch_normaliser(masks: list[list[int]], cfg: TrainConfig, max_new_tokens: int) -> float:
    return normaliser_of(sum(sum(m) for m in masks), len(masks), cfg, max_new_tokens)


def normaliser_of(tokens: float, rows: float, cfg: TrainConfig, max_new_tokens: int) -> float:
    """The loss denominator of a batch of ``rows`` rows holding ``tokens`` loss tokens (over all ranks)."""
    if cfg.loss_aggregation == "token_mean":
        return float(max(1, tokens))
    if cfg.loss_aggregation == "sequence_mean":
        return float(max(1, rows))
    return float(max(1, rows) * max_new_tokens)  # Dr. GRPO: a constant per row


def _pad(rows: list[tuple[list[int], list[int]]], tokenizer: Any) -> tuple[torch.Tensor, ...]:
    """Right-padded ids and attention mask (the tokenizer's own padding) and the loss mask of positions 1..T-1."""
    batch = tokenizer.pad({"input_ids": [ids for ids, _ in rows]}, padding=True, padding_side="right",
                          return_tensors="pt")
    mask = pad_sequence([torch.tensor(m, dtype=torch.long) for _, m in rows], batch_first=True, padding_value=0)
    return batch["input_ids"], batch["attention_mask"], mask[:, 1:]


# ------------------------------------------------------------------------------------------ policy
@dataclass
class Policy:
    model: Any
    tokenizer: Any
    name: str
    reference: Any = None  # a frozen copy for full fine-tuning with KL; LoRA uses disabled adapters
    reference_adapter: str | None = None  # a frozen copy of the SFT adapter a LoRA run continues

    def trainable(self) -> dict[str, torch.Tensor]:
        return {n: p for n, p in self.model.named_parameters() if p.requires_grad}

    def ref_logprobs(self, ids: torch.Tensor, attention: torch.Tensor, keep: int | None = None,
                     temperature: float = 1.0) -> torch.Tensor:
        with torch.no_grad():
            if self.reference is not None:
                return token_logprobs(self.reference, ids, attention, keep, temperature)
            if self.reference_adapter is not None:
                self.model.set_adapter(self.reference_adapter)  # PEFT also moves requires_grad to it ...
                try:
                    return token_logprobs(self.model, ids, attention, keep, temperature)
                finally:
                    self.model.set_adapter("default")  # ... and back
            with self.model.disable_adapter():
                return token_logprobs(self.model, ids, attention, keep, temperature)


def frozen_copy(model: Any, dtype: torch.dtype) -> Any:
    """A frozen copy of a plain model's current weights, built in ``dtype`` on the model's device (a deep copy
    would first hold a second model in the original dtype, and initialising one would draw random numbers)."""
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        copy = AutoModelForCausalLM.from_config(model.config, dtype=dtype)
    copy.to_empty(device=model.device)
    copy.tie_weights()  # to_empty gives tied parameters separate storage
    copy.load_state_dict(model.state_dict())
    for name, buffer in model.named_buffers():  # non-persistent ones too (rotary frequencies)
        copy.get_buffer(name).copy_(buffer)
    copy.generation_config = model.generation_config
    return copy.eval().requires_grad_(False)


def frozen_dtype(device: torch.device) -> torch.dtype:
    """Weights that are only read (KL reference, generation copy): bf16 on a GPU, fp32 on a CPU."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def build_policy(config: Config, device: torch.device | None = None) -> Policy:
    """The model to train: a base model with new LoRA adapters, an SFT adapter to continue, or full weights."""
    from peft import LoraConfig, PeftModel, get_peft_model

    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cfg = config.train
    # a frozen base under LoRA can sit in bf16 on a GPU (PEFT keeps the adapters in fp32); trained weights stay fp32
    dtype = "bfloat16" if device.type == "cuda" and (cfg.lora.enabled or config.actor.adapter) else "float32"
    loaded = load_model(config.actor.model, device="cpu" if device.type == "cpu" else str(device), dtype=dtype)
    model = loaded.model
    if config.actor.adapter:
        model = PeftModel.from_pretrained(model.get_base_model() if hasattr(model, "get_base_model") else model,
                                          config.actor.adapter, is_trainable=True)
    elif cfg.lora.enabled:
        model = get_peft_model(model, LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha,
                                                 lora_dropout=cfg.lora.dropout, task_type="CAUSAL_LM",
                                                 target_modules=cfg.lora.target_modules))
    if cfg.gradient_checkpointing:  # the update keeps each layer's input, not its activations
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    is_peft = hasattr(model, "disable_adapter")
    reference, reference_adapter = None, None
    if cfg.beta > 0 and not is_peft:
        reference = frozen_copy(model, frozen_dtype(device))
    if cfg.beta > 0 and config.actor.adapter:  # KL to where the run starts (base + SFT), not to the bare base
        reference_adapter = "reference"
        model.load_adapter(config.actor.adapter, adapter_name=reference_adapter, is_trainable=False)
        model.set_adapter("default")
    # rollouts sample in eval mode (get_peft_model leaves train mode on, where LoRA dropout would perturb the
    # sampling policy); `update` switches to train mode for its backward passes and back
    model.eval()
    return Policy(model, loaded.tokenizer, config.actor.model, reference, reference_adapter)


def shard_policy(policy: Policy, device: torch.device) -> Any:
    """FSDP2: shard the policy and its KL reference over all ranks, in place, and return the unsharded copy
    that rollouts generate from (refreshed every step by :func:`generation_model`)."""
    replica = frozen_copy(policy.model, frozen_dtype(device))
    mesh = fsdp.device_mesh(device)
    fsdp.shard(policy.model, mesh)
    if policy.reference is not None:
        fsdp.shard(policy.reference, mesh)
    return replica


# ------------------------------------------------------------------------------------ checkpoints
def save_checkpoint(run_dir: Path, step: int, policy: Policy, optimizer: torch.optim.Optimizer,
                    bank: Path | None = None) -> Path:
    """Write ``checkpoints/step-N`` atomically: trainable weights, adapter/model, optimizer, RNG states, and
    the living bank's snapshot (``bank/``, a bank directory ``Bank.open`` reads) when there is one.

    Rank 0 alone calls it, unless the policy is sharded (FSDP2): then every rank does, writing its shards of
    the weights and AdamW states to ``dcp/`` (``torch.distributed.checkpoint``) and its RNG states to
    ``rng-RANK.pt``, and ``model/`` holds only the config and tokenizer (``expbank export-model`` assembles
    the full weights). The folder is renamed into place once every rank has written.
    """
    final = run_dir / "checkpoints" / f"step-{step:05d}"
    staging = final.with_name(final.name + ".partial")
    sharded = fsdp.is_sharded(policy.model)
    main = not sharded or fsdp.rank() == 0
    if main:
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
    rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if sharded:
        fsdp.barrier()  # the folder exists before any rank writes into it
        fsdp.save_state(staging / "dcp", policy.model, optimizer)
        torch.save(rng, staging / f"rng-{fsdp.rank()}.pt")
    else:
        torch.save({n: p.detach().cpu() for n, p in policy.trainable().items()}, staging / "trainable.pt")
        torch.save(optimizer.state_dict(), staging / "optimizer.pt")
        torch.save(rng, staging / "rng.pt")
    if main:
        if sharded:
            policy.model.config.save_pretrained(staging / "model")
            policy.model.generation_config.save_pretrained(staging / "model")
        elif policy.reference_adapter is not None:  # the frozen reference is the run's input, not its output
            policy.model.save_pretrained(staging / "model", selected_adapters=["default"])
        else:
            policy.model.save_pretrained(staging / "model")
        policy.tokenizer.save_pretrained(staging / "model")
        (staging / "state.json").write_text(json.dumps({"step": step}) + "\n")
        if bank is not None:
            copy_bank(bank, staging / "bank")
    if sharded:
        fsdp.barrier()  # every rank's shards are on disk
    if main:
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = sorted((run_dir / "checkpoints").glob("step-[0-9][0-9][0-9][0-9][0-9]"))
    return found[-1] if found else None


def load_checkpoint(path: Path, policy: Policy, optimizer: torch.optim.Optimizer) -> int:
    """Restore weights, optimizer and RNG states from :func:`save_checkpoint`'s folder; returns its step. A
    sharded policy loads on every rank (from any number of ranks that wrote it)."""
    sharded, written = fsdp.is_sharded(policy.model), (path / "dcp").is_dir()
    if sharded != written:
        raise UserError(f"{path} was written with train.sharding={'fsdp2' if written else 'none'}; resume it "
                        "with the same setting")
    if sharded:
        fsdp.load_state(path / "dcp", policy.model, optimizer)
        own = path / f"rng-{fsdp.rank()}.pt"
        rng = torch.load(own if own.exists() else path / "rng-0.pt", weights_only=False)
    else:
        weights = torch.load(path / "trainable.pt")
        params = policy.trainable()
        with torch.no_grad():
            for name, tensor in weights.items():
                params[name].copy_(tensor)
        optimizer.load_state_dict(torch.load(path / "optimizer.pt"))
        rng = torch.load(path / "rng.pt", weights_only=False)
    torch.set_rng_state(rng["torch"])
    random.setstate(rng["python"])
    return json.loads((path / "state.json").read_text())["step"]


def _drop_after(run_dir: Path, step: int) -> None:
    """Forget metrics and episodes of steps after ``step`` (a run killed mid-step replays that step)."""
    metrics, episodes = run_dir / "metrics.jsonl", run_dir / "episodes.jsonl"
    if metrics.exists():
        kept = [line for line in metrics.read_text().splitlines() if json.loads(line)["step"] <= step]
        metrics.write_text("".join(line + "\n" for line in kept))
    if episodes.exists():
        def keep(line: str) -> bool:
            if not line.endswith("}"):
                return False  # torn by the kill
            return parse_episode_id(json.loads(line)["episode_id"]).train_step <= step

        kept = [line for line in episodes.read_text().splitlines() if keep(line)]
        episodes.write_text("".join(line + "\n" for line in kept))


# ---------------------------------------------------------------------------------------- one step
def update(policy: Policy, optimizer: torch.optim.Optimizer, rows: list[tuple[list[int], list[int], float]],
           cfg: TrainConfig, max_new_tokens: int, model: Any = None,
           dist: Distributed | OneProcess | None = None, temperature: float = 1.0) -> dict[str, float]:
    """``mu`` optimisation passes over the step's batch (every rank's rows); returns this rank's share of the
    loss, KL and clip statistics (summed over ranks they are the batch's).

    ``model`` is what training forwards run through (DDP-wrapped when there are several ranks; default
    ``policy.model``); the sampling and reference log-probs come from the bare ``policy.model``. The loss is
    normalised over all ranks' rows. Every rank runs as many micro-batches as the rank with the most (the
    others add zero-loss rows), because sharded forwards and gradient syncs are collective: under DDP every
    micro-batch but the last only accumulates gradients and the last all-reduces them, under FSDP2 each
    backward reduce-scatters into the rank's shard. Without ``dist`` the update runs in this process alone.
    All log-probs are taken at the sampling ``temperature``.
    """
    model = policy.model if model is None else model
    dist = dist or OneProcess(policy.model.device)
    pad_id = policy.tokenizer.pad_token_id
    tokens, count = dist.total([sum(sum(m) for _, m, _ in rows), len(rows)])
    if count == 0:  # every group was dropped on every rank: nothing to learn from
        return {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0}
    normaliser = normaliser_of(tokens, count, cfg, max_new_tokens)
    # rows of similar length share a micro-batch, so little padding is computed (the loss is a sum over rows)
    rows = sorted(rows, key=lambda row: len(row[0]), reverse=True)
    size = cfg.update_micro_batch_size or (1 if dist.device.type == "cpu" else cfg.micro_batch_size)
    chunks = [rows[i: i + size] for i in range(0, len(rows), size)]
    padding = [([pad_id, pad_id], [0, 0], 0.0)]
    chunks += [padding] * (dist.most(len(chunks)) - len(chunks))
    tensors = []
    policy.model.eval()
    with torch.no_grad():  # the sampling policy's log-probs, fixed for all passes
        for chunk in chunks:
            ids, attention, mask = _pad([(i, m) for i, m, _ in chunk], policy.tokenizer)
            ids, attention, mask = ids.to(dist.device), attention.to(dist.device), mask.to(dist.device)
            keep = loss_positions(mask)
            mask = mask[:, -keep:]
            # with one pass the sampling policy is the current one: its log-probs are the live ones, detached
            old = token_logprobs(policy.model, ids, attention, keep, temperature) if cfg.mu > 1 else None
            ref = policy.ref_logprobs(ids, attention, keep, temperature) if cfg.beta > 0 else None
            advantages = torch.tensor([a for _, _, a in chunk], device=dist.device)
            share = 0.0 if chunk is padding else len(chunk) / count
            tensors.append((ids, attention, mask, old, ref, advantages, share))
    policy.model.train()
    stats = {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0}
    for _ in range(cfg.mu):
        optimizer.zero_grad()
        for index, (ids, attention, mask, old, ref, adv, share) in enumerate(tensors):
            with dist.sync_gradients(model, sync=index == len(tensors) - 1):
                logp = token_logprobs(model, ids, attention, mask.shape[1], temperature)
                loss, info = policy_loss(logp, logp.detach() if old is None else old, adv, mask, cfg, normaliser, ref)
                dist.backward(loss)
            stats["loss"] += loss.item() / cfg.mu
            stats["kl"] += info["kl"] * share / cfg.mu
            stats["clip_fraction"] += info["clip_fraction"] * share / cfg.mu
        dist.clip(list(policy.trainable().values()), cfg.max_grad_norm)
        optimizer.step()
    policy.model.eval()
    return stats


def task_groups(results: list[RolloutResult], rewards: list[float]) -> list[list[tuple[RolloutResult, float]]]:
    """The episodes and rewards of each task's group, in order of first appearance. An episode that ended in
    an error (the environment, backend or retrieval failed, not the policy) is left out: scored as a loss it
    would tell the policy that its group's other episodes did well."""
    by_task: dict[str, list[tuple[RolloutResult, float]]] = {}
    for result, reward in zip(results, rewards, strict=True):
        if result.record.get("error") is None:
            by_task.setdefault(result.record["task_id"], []).append((result, reward))
    return list(by_task.values())


def informative_groups(results: list[RolloutResult], rewards: list[float]) -> int:
    """How many groups' episodes differ in reward (the only groups with a learning signal)."""
    return sum(len({reward for _, reward in group}) > 1 for group in task_groups(results, rewards))


def training_rows(results: list[RolloutResult], rewards: list[float], tokenizer: Any, cfg: TrainConfig
                  ) -> tuple[list[tuple[list[int], list[int], float]], int]:
    """One row (ids, loss mask, advantage) per policy turn, advantages normalised within each task's group;
    also the number of zero-variance groups."""
    rows, zero_variance = [], 0
    for group in task_groups(results, rewards):
        group_rewards = [reward for _, reward in group]
        if max(group_rewards) == min(group_rewards):
            zero_variance += 1
            if cfg.drop_zero_variance:
                continue
        advantages = group_advantages(group_rewards, cfg.scale_rewards)
        if cfg.balance_turns:  # every episode weighs the same, however many turns it took
            turns = [len(result.conversations) for result, _ in group]
            mean_turns = sum(turns) / len(turns)
            advantages = [a * mean_turns / max(1, n) for a, n in zip(advantages, turns, strict=True)]
        for (result, _), advantage in zip(group, advantages, strict=True):
            for conversation in result.conversations:
                ids, mask = tokenize_conversation(tokenizer, conversation, cfg.max_length)
                rows.append((ids, mask, advantage))
    return rows, zero_variance


def refuse_failed_step(dist: Distributed | OneProcess, step: int, results: list[RolloutResult]) -> None:
    """Stop the run when every episode of a step, over all ranks, ended in an error (a full disk, a dead bank
    service): the steps after it would train on nothing and log zeros; ``--resume`` replays the step."""
    errors = [result.record["error"] for result in results if result.record.get("error") is not None]
    failed, played = dist.total([float(len(errors)), float(len(results))])
    if played and failed == played:
        example = f", e.g. {errors[0][:300]}" if errors else ""
        raise UserError(f"GRPO step {step}: all {int(played)} episodes ended in an error{example}; "
                        "fix the cause and rerun with --resume")


def step_metrics(step: int, results: list[RolloutResult], rewards: list[float], totals: dict[str, float]
                 ) -> dict[str, Any]:
    """The metrics.jsonl line of a step from every rank's episodes and the rank-summed update statistics."""
    n = max(1, len(results))
    records = [result.record for result in results]
    counters = [result.stats for result in results]
    reconstruct_turns = sum(c.reconstruct_turns for c in counters)
    return {
        "step": step, "episodes": len(records),
        "reward_mean": sum(rewards) / n,
        "format_score": sum(c.format_score for c in counters) / n,
        "success_rate": sum(r["success"] for r in records) / n,
        "score_mean": sum(r["score"] for r in records) / n,
        "invalid_rate": sum(r["num_invalid"] for r in records) / max(1, sum(r["num_steps"] for r in records)),
        "errors": sum(r.get("error") is not None for r in records),
        "reconstruct_none_rate": sum(c.none_reconstructions for c in counters) / reconstruct_turns
        if reconstruct_turns else None,
        **totals,
    }


@dataclass
class GRPORun:
    """Everything a training step needs, set up once by :func:`start_run` (and restored on ``--resume``)."""

    config: Config
    run_dir: Path
    dist: Distributed | OneProcess
    policy: Policy
    model: Any  # what training forwards run through (DDP-wrapped under several processes)
    optimizer: torch.optim.Optimizer
    start: int  # the last finished step
    task_ids: list[str]
    settings: RolloutSettings
    backend: Any
    memory: Memory | None
    bank: living_bank.LivingBank | None
    replica: Any = None  # FSDP2: the unsharded copy rollouts generate from (else they use policy.model)

    @property
    def cfg(self) -> TrainConfig:
        return self.config.train


def train(config: Config, resume: bool = False, progress: bool = True, stop_after: int | None = None) -> Path:
    """Run GRPO as configured; returns the run directory. ``stop_after`` ends early after that step.

    Under ``torchrun`` (or ``accelerate launch``) each rank plays its share of every step's groups; rank 0
    writes the run directory (metrics, episodes, checkpoints, the living bank, dev evaluations), with every
    rank writing its own shards of a sharded checkpoint.
    """
    run = start_run(config, resume)
    cfg = config.train
    last = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    with rollout_pool(run) as pool, \
            (EpisodeWriter(run.run_dir / "episodes.jsonl") if run.dist.is_main else nullcontext()) as writer, \
            tqdm(total=cfg.steps, initial=run.start, desc="grpo", unit="step",
                 disable=not (progress and run.dist.is_main)) as bar:
        for step in range(run.start + 1, last + 1):
            began = time.perf_counter()
            results, rewards = play_groups(run, pool, step)                                 # 1-2. groups
            refuse_failed_step(run.dist, step, results)
            rows, zero_variance = training_rows(results, rewards, run.policy.tokenizer, cfg)  # 3. rows
            stats = update(run.policy, run.optimizer, rows, cfg, config.decoding.max_new_tokens, run.model,
                           run.dist, run.settings.temperature)                               # 4. update
            metrics = finish_step(run, step, results, rewards, rows, zero_variance, stats, writer, began)  # 5.
            bar.set_postfix(success=f"{metrics['success_rate']:.2f}", loss=f"{metrics['loss']:.3f}")
            bar.update()
    if run.dist.is_main:
        write_curves(run.run_dir, run.bank.path if run.bank else None)
    run.dist.end()
    return run.run_dir


def start_run(config: Config, resume: bool) -> GRPORun:
    """Refuse what cannot train, prepare the run directory, build the policy (from the last checkpoint on
    ``--resume``), the living bank, the rollout settings and the generation backend; write the fingerprint."""
    cfg = config.train
    if config.actor.backend == "openai":
        raise UserError("expbank train samples from the policy it trains: actor.backend=openai serves a fixed remote "
                        "model; use hf or vllm (evaluate an exported checkpoint behind an endpoint instead)")
    if config.decoding.action == "scored":
        raise UserError("decoding.action=scored is for evaluation: GRPO trains on the actions the policy wrote; "
                        "train with decoding.action=generated and evaluate the checkpoint with scored")
    if config.decoding.verdict == "head":
        raise UserError("decoding.verdict=head is for evaluation: GRPO trains on the verdicts the policy wrote; "
                        "train with decoding.verdict=generated and evaluate the checkpoint with head")
    refusal = fsdp.refusal(config)
    if refusal:
        raise UserError(refusal)
    if config.actor.backend == "vllm":
        require_vllm()  # before anything is loaded or written
    run_dir = Path(config.run.dir or f"runs/train-{config.env.name}")
    dist = Distributed(cfg.tracker, run_dir, sharded=cfg.sharding == "fsdp2")
    if dist.is_main:
        prepare_run_dir(run_dir, config)
    dist.barrier()
    torch.manual_seed(config.run.seed)
    policy = build_policy(config, dist.device)
    replica = shard_policy(policy, dist.device) if dist.sharded else None
    optimizer = torch.optim.AdamW(list(policy.trainable().values()), lr=cfg.learning_rate)
    start = 0
    checkpoint = latest_checkpoint(run_dir)
    if checkpoint is not None:
        if not resume:
            raise UserError(f"{run_dir} already holds checkpoints; pass --resume to continue it")
        start = load_checkpoint(checkpoint, policy, optimizer)
    model, optimizer = dist.prepare(policy.model, optimizer)
    if dist.is_main:
        _drop_after(run_dir, start)
        selection.forget_after(run_dir, start)
    bank = living_bank.LivingBank(config, run_dir, dist, checkpoint, start) if living_bank.wanted(config) else None
    memory = bank.memory if bank else \
        open_memory(config.model_copy(update={"env": config.env.model_copy(update={"split": cfg.split})}))
    if config.select.every:
        selection.check(config, bank.path if bank else None)
    env = envs.make(config.env.name, split=cfg.split, data_dir=config.env.data_dir, **config.env.options())
    task_ids = env.task_ids()
    if dist.is_main:
        bank_hash = living_bank.source_hash(config) if bank else memory.manifest_hash() if memory else None
        write_json(run_dir / "fingerprint.json", fingerprint(config, env.env_fingerprint(), bank_hash,
                                                            protocol.PROMPT_VERSION,
                                                            {"base_model": config.actor.model,
                                                             "processes": dist.world}))
        if config.select.every:
            selection.write_best(config, run_dir)
    env.close()
    spec = protocol.ProtocolSpec.of(config.memory, config.prompt.system)
    settings = RolloutSettings(env=config.env.name, split=cfg.split, arm=config.arm_name(), run_id=run_dir.name,
                               spec=spec, history_length=config.prompt.history_length,
                               # GRPO needs diverse groups: greedy decoding (temperature 0) samples at 1.0
                               temperature=config.decoding.temperature or 1.0,
                               max_new_tokens=config.decoding.max_new_tokens)
    if config.actor.backend == "vllm":  # a colocated engine per rank, given the policy's weights every step
        backend = VLLMBackend.colocated(config.actor.model, dist.rank, cfg.vllm.gpu_memory_utilization,
                                        vllm_sync.max_model_len(config))
    else:
        # one generate call for every episode in flight (the update's micro-batch bounds backward memory, not this)
        backend = HFBackend.wrap(policy.model if replica is None else replica, policy.tokenizer, policy.name)
    dist.start_tracking("grpo", config.model_dump(mode="json"))
    return GRPORun(config, run_dir, dist, policy, model, optimizer, start, task_ids, settings, backend, memory, bank,
                   replica)


def generation_model(run: GRPORun) -> Any:
    """The model rollouts and dev evaluations generate from, holding the current weights: the policy itself
    when every rank holds it whole; under FSDP2 the unsharded copy, refreshed here from the shards (a
    collective: every rank calls this at the same points, then generates alone, as long as it needs)."""
    if run.replica is None:
        return run.policy.model
    fsdp.copy_full_weights(run.policy.model, run.replica)
    return run.replica


def rollout_pool(run: GRPORun) -> EnvPool:
    """Environment workers for this rank's share of a step's episodes."""
    cfg, config = run.cfg, run.config
    tasks_per_step = min(cfg.tasks_per_step, len(run.task_ids))
    episodes = len(run.dist.shard(range(tasks_per_step))) * cfg.group_size
    return EnvPool(config.env.name, cfg.split, config.env.data_dir,
                   workers=max(1, min(config.run.episodes_in_flight, episodes)), max_steps=config.env.max_steps,
                   **config.env.options())


def play_groups(run: GRPORun, pool: EnvPool, step: int) -> tuple[list[RolloutResult], list[float]]:
    """Steps 1-2: every rank draws the same tasks and plays its share, ``group_size`` episodes per task from
    the same initial state (a task's group stays on one rank), and scores them; results in episode-id order.
    With ``train.resample_rounds``, while fewer than ``tasks_per_step`` groups over all ranks differ in reward,
    fresh tasks are drawn and played (DAPO's dynamic sampling)."""
    cfg, config = run.cfg, run.config
    generation_model(run)  # FSDP2: this step's weights into the copy rollouts sample from (a collective)
    if config.actor.backend == "vllm":
        run.backend.load_weights(vllm_sync.base_model_weights(run.policy.model))
    results: list[RolloutResult] = []
    rewards: list[float] = []
    left = list(run.task_ids)
    for extra in range(cfg.resample_rounds + 1):
        if extra and (not left or run.dist.total([float(informative_groups(results, rewards))])[0]
                      >= cfg.tasks_per_step):
            break
        seed = f"{config.run.seed}-{step}" + (f"-{extra}" if extra else "")
        drawn = random.Random(seed).sample(left, min(cfg.tasks_per_step, len(left)))
        chosen = set(drawn)
        left = [task for task in left if task not in chosen]
        more = play_tasks(run, pool, step, drawn)
        results += more
        rewards += [episode_reward(result, config.reward) for result in more]
    order = sorted(range(len(results)), key=lambda i: results[i].episode_id)
    return [results[i] for i in order], [rewards[i] for i in order]


def play_tasks(run: GRPORun, pool: EnvPool, step: int, tasks: list[str]) -> list[RolloutResult]:
    """This rank's share of ``tasks``, ``group_size`` episodes each."""
    cfg, config = run.cfg, run.config
    jobs = [RolloutJob(make_episode_id(config.env.name, cfg.split, task, run.policy.name, run.settings.arm,
                                       config.run.seed, step, g), task, config.run.seed, f"it{step}-g{g}")
            for task in run.dist.shard(tasks) for g in range(cfg.group_size)]
    memory = run.bank.memory if run.bank else run.memory
    return list(rollout(run.backend, pool, jobs, run.settings, memory))


def finish_step(run: GRPORun, step: int, results: list[RolloutResult], rewards: list[float], rows: list,
                zero_variance: int, stats: dict[str, float], writer: EpisodeWriter | None, began: float
                ) -> dict[str, Any]:
    """Step 5: gather every rank's episodes, grow the living bank, evaluate on ``select.split`` when due, log
    the metrics and checkpoint; returns the step's metrics."""
    cfg, config, dist = run.cfg, run.config, run.dist
    local = {"groups": len(task_groups(results, rewards)), "zero_variance_groups": zero_variance, "rows": len(rows),
             "trained_tokens": sum(sum(m) for _, m, _ in rows), **stats}
    totals = {key: type(value)(total) for (key, value), total in
              zip(local.items(), dist.total(list(local.values())), strict=True)}
    light = [(dataclasses.replace(result, conversations=[]), reward)  # the rows are built already
             for result, reward in zip(results, rewards, strict=True)]
    gathered = sorted(dist.gather(light), key=lambda pair: pair[0].episode_id)
    results, rewards = [result for result, _ in gathered], [reward for _, reward in gathered]
    metrics = step_metrics(step, results, rewards, totals)
    episodes = [Episode.model_validate(result.record) for result in results]
    bank_path = run.bank.path if run.bank else None
    if run.bank:
        metrics |= run.bank.after_step(step, episodes)
    evaluate_now = selection.due(config, step)
    if evaluate_now:
        model = generation_model(run)  # every rank: a sharded policy's copy is gathered by all
        if dist.is_main:
            metrics |= selection.evaluate_dev(config, dataclasses.replace(run.policy, model=model), run.run_dir,
                                              step, bank_path)
    metrics["seconds"] = time.perf_counter() - began
    if dist.is_main:
        for episode in episodes:
            writer.write(episode)
        with (run.run_dir / "metrics.jsonl").open("a") as handle:
            handle.write(json.dumps(metrics, sort_keys=True) + "\n")
        dist.log(metrics, step)
    if step % cfg.checkpoint.every == 0 or step == cfg.steps or evaluate_now:
        if dist.is_main or dist.sharded:  # every rank writes its shards of a sharded checkpoint
            save_checkpoint(run.run_dir, step, run.policy, run.optimizer, bank_path)
        if dist.is_main:
            best = selection.write_best(config, run.run_dir) if config.select.every else None
            selection.prune_checkpoints(run.run_dir, cfg.checkpoint.keep, best and best["step"])
    dist.barrier()
    return metrics
