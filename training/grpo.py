"""Multi-turn GRPO (DESIGN.md §6), written to be read top to bottom like a CleanRL script.

Each step:

1. sample ``tasks_per_step`` tasks from the training split and play ``group_size`` episodes of each from
   the same initial state with the current policy (the same rollout code as ``expbank eval``);
2. score each episode: ``outcome_scale`` × outcome + ``format_weight`` × format score
   − ``invalid_penalty`` × invalid actions; normalise within its group to get the advantage;
3. turn every policy turn into a row (prompt = the messages it saw, completion = what it wrote; only
   policy-written tokens carry loss, so observe, retrieve, critique, reconstruct and action are all trained)
   with its episode's advantage;
4. take ``mu`` optimisation passes with the clipped importance-ratio objective (and an optional k3 KL to the
   reference, the policy the run started from: with new LoRA adapters the base with adapters disabled, when
   continuing an SFT adapter a frozen copy of it);
5. log metrics and checkpoint (trainable weights, optimizer, RNG states, step) for ``--resume``.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from expbank.config import Config, RewardConfig, TrainConfig
from expbank.training.distributed import Distributed, OneProcess
from expbank.training.rows import tokenize_conversation


# ------------------------------------------------------------------------------------------ rewards
def episode_reward(record: dict[str, Any], reward: RewardConfig) -> float:
    """DESIGN.md §6 reward of one episode (an errored episode gets no outcome credit)."""
    if record["env"] == "webshop" and reward.webshop_outcome == "score":
        outcome = record["score"]
    else:
        outcome = float(record["success"])
    format_score = record["_stats"]["format_score"]
    return reward.outcome_scale * outcome + reward.format_weight * format_score - \
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
    logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep + 1).logits
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


def _pad(rows: list[tuple[list[int], list[int]]], pad_id: int) -> tuple[torch.Tensor, ...]:
    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (row_ids, row_mask) in enumerate(rows):
        ids[i, : len(row_ids)] = torch.tensor(row_ids)
        attention[i, : len(row_ids)] = 1
        mask[i, : len(row_mask)] = torch.tensor(row_mask)
    return ids, attention, mask[:, 1:]


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


def build_policy(config: Config, device: torch.device | None = None) -> Policy:
    """The model to train: a base model with new LoRA adapters, an SFT adapter to continue, or full weights."""
    import copy

    from peft import LoraConfig, PeftModel, get_peft_model

    from expbank.training.models import load_model

    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cfg = config.train
    # a frozen base under LoRA can sit in bf16 on a GPU (PEFT keeps the adapters in fp32); trained weights stay fp32
    dtype = "bfloat16" if device.type == "cuda" and (cfg.lora or config.actor.adapter) else "float32"
    loaded = load_model(config.actor.model, device="cpu" if device.type == "cpu" else str(device), dtype=dtype)
    model = loaded.model
    if config.actor.adapter:
        model = PeftModel.from_pretrained(model.get_base_model() if hasattr(model, "get_base_model") else model,
                                          config.actor.adapter, is_trainable=True)
    elif cfg.lora:
        model = get_peft_model(model, LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha,
                                                 lora_dropout=cfg.lora_dropout, task_type="CAUSAL_LM",
                                                 target_modules=cfg.lora_target_modules))
    is_peft = hasattr(model, "disable_adapter")
    reference, reference_adapter = None, None
    if cfg.beta > 0 and not is_peft:
        reference = copy.deepcopy(model).eval().requires_grad_(False)
    if cfg.beta > 0 and config.actor.adapter:  # KL to where the run starts (base + SFT), not to the bare base
        reference_adapter = "reference"
        model.load_adapter(config.actor.adapter, adapter_name=reference_adapter, is_trainable=False)
        model.set_adapter("default")
    return Policy(model, loaded.tokenizer, config.actor.model, reference, reference_adapter)


# ------------------------------------------------------------------------------------ checkpoints
def save_checkpoint(run_dir: Path, step: int, policy: Policy, optimizer: torch.optim.Optimizer,
                    bank: Path | None = None) -> Path:
    """Write ``checkpoints/step-N`` atomically: trainable weights, adapter/model, optimizer, RNG states, and
    the living bank's snapshot (``bank/``, a bank directory ``Bank.open`` reads) when there is one."""
    final = run_dir / "checkpoints" / f"step-{step:05d}"
    staging = final.with_name(final.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    torch.save({n: p.detach().cpu() for n, p in policy.trainable().items()}, staging / "trainable.pt")
    torch.save(optimizer.state_dict(), staging / "optimizer.pt")
    torch.save({"torch": torch.get_rng_state(), "python": random.getstate()}, staging / "rng.pt")
    if policy.reference_adapter is not None:  # the frozen reference is the run's input, not its output
        policy.model.save_pretrained(staging / "model", selected_adapters=["default"])
    else:
        policy.model.save_pretrained(staging / "model")
    policy.tokenizer.save_pretrained(staging / "model")
    (staging / "state.json").write_text(json.dumps({"step": step}) + "\n")
    if bank is not None:
        from expbank.training.living_bank import copy_bank

        copy_bank(bank, staging / "bank")
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = sorted((run_dir / "checkpoints").glob("step-[0-9][0-9][0-9][0-9][0-9]"))
    return found[-1] if found else None


def load_checkpoint(path: Path, policy: Policy, optimizer: torch.optim.Optimizer) -> int:
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
    import re

    metrics, episodes = run_dir / "metrics.jsonl", run_dir / "episodes.jsonl"
    if metrics.exists():
        kept = [line for line in metrics.read_text().splitlines() if json.loads(line)["step"] <= step]
        metrics.write_text("".join(line + "\n" for line in kept))
    if episodes.exists():
        pattern = re.compile(r"-it(\d+)-g\d+$")

        def keep(line: str) -> bool:
            if not line.endswith("}"):
                return False  # torn by the kill
            return int(pattern.search(json.loads(line)["episode_id"]).group(1)) <= step

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
    normalised over all ranks' rows, every micro-batch but the last only accumulates gradients, and the last
    one all-reduces them, so ranks with different numbers of rows (or none) still meet in exactly one
    all-reduce per pass. Without ``dist`` the update runs in this process alone. All log-probs are taken at
    the sampling ``temperature``.
    """
    model = policy.model if model is None else model
    dist = dist or OneProcess(policy.model.device)
    pad_id = policy.tokenizer.pad_token_id
    tokens, count = dist.total([sum(sum(m) for _, m, _ in rows), len(rows)])
    if count == 0:  # every group was dropped on every rank: nothing to learn from
        return {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0}
    normaliser = normaliser_of(tokens, count, cfg, max_new_tokens)
    batch = rows or [([pad_id, pad_id], [0, 0], 0.0)]  # a rank without rows joins with a zero-loss row
    chunks = [batch[i: i + cfg.micro_batch_size] for i in range(0, len(batch), cfg.micro_batch_size)]
    tensors = []
    policy.model.eval()
    with torch.no_grad():  # the sampling policy's log-probs, fixed for all passes
        for chunk in chunks:
            ids, attention, mask = _pad([(i, m) for i, m, _ in chunk], pad_id)
            ids, attention, mask = ids.to(dist.device), attention.to(dist.device), mask.to(dist.device)
            keep = loss_positions(mask)
            mask = mask[:, -keep:]
            # with one pass the sampling policy is the current one: its log-probs are the live ones, detached
            old = token_logprobs(policy.model, ids, attention, keep, temperature) if cfg.mu > 1 else None
            ref = policy.ref_logprobs(ids, attention, keep, temperature) if cfg.beta > 0 else None
            advantages = torch.tensor([a for _, _, a in chunk], device=dist.device)
            tensors.append((ids, attention, mask, old, ref, advantages))
    policy.model.train()
    stats = {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0}
    for _ in range(cfg.mu):
        optimizer.zero_grad()
        for index, (ids, attention, mask, old, ref, adv) in enumerate(tensors):
            with dist.sync_gradients(model, sync=index == len(tensors) - 1):
                logp = token_logprobs(model, ids, attention, mask.shape[1], temperature)
                loss, info = policy_loss(logp, logp.detach() if old is None else old, adv, mask, cfg, normaliser, ref)
                dist.backward(loss)
            share = len(ids) / count if rows else 0.0
            stats["loss"] += loss.item() / cfg.mu
            stats["kl"] += info["kl"] * share / cfg.mu
            stats["clip_fraction"] += info["clip_fraction"] * share / cfg.mu
        dist.clip(list(policy.trainable().values()), cfg.max_grad_norm)
        optimizer.step()
    policy.model.eval()
    return stats


def training_rows(records: list[dict[str, Any]], tokenizer: Any, cfg: TrainConfig, reward: RewardConfig
                  ) -> tuple[list[tuple[list[int], list[int], float]], int]:
    """One row (ids, loss mask, advantage) per policy turn, advantages normalised within each task's group;
    also the number of zero-variance groups. Sets each record's ``_reward``."""
    by_task: dict[str, list[dict]] = {}
    for record in records:
        record["_reward"] = episode_reward(record, reward)
        by_task.setdefault(record["task_id"], []).append(record)
    rows, zero_variance = [], 0
    for group in by_task.values():
        rewards = [r["_reward"] for r in group]
        if max(rewards) == min(rewards):
            zero_variance += 1
            if cfg.drop_zero_variance:
                continue
        advantages = group_advantages(rewards, cfg.scale_rewards)
        if cfg.balance_turns:  # every episode weighs the same, however many turns it took
            turns = [len(r["_conversations"]) for r in group]
            mean_turns = sum(turns) / len(turns)
            advantages = [a * mean_turns / max(1, n) for a, n in zip(advantages, turns, strict=True)]
        for record, advantage in zip(group, advantages, strict=True):
            for conversation in record["_conversations"]:
                ids, mask = tokenize_conversation(tokenizer, conversation, cfg.max_length)
                rows.append((ids, mask, advantage))
    return rows, zero_variance


def step_metrics(step: int, records: list[dict[str, Any]], totals: dict[str, float]) -> dict[str, Any]:
    """The metrics.jsonl line of a step from every rank's episodes and the rank-summed update statistics."""
    n = max(1, len(records))
    counters = [record["_stats"] for record in records]
    reconstruct_turns = sum(c["reconstruct_turns"] for c in counters)
    return {
        "step": step, "episodes": len(records),
        "reward_mean": sum(r["_reward"] for r in records) / n,
        "format_score": sum(c["format_score"] for c in counters) / n,
        "success_rate": sum(r["success"] for r in records) / n,
        "score_mean": sum(r["score"] for r in records) / n,
        "invalid_rate": sum(r["num_invalid"] for r in records) / max(1, sum(r["num_steps"] for r in records)),
        "reconstruct_none_rate": sum(c["none_reconstructions"] for c in counters) / reconstruct_turns
        if reconstruct_turns else None,
        **totals,
    }


def train(config: Config, resume: bool = False, progress: bool = True, stop_after: int | None = None) -> Path:
    """Run GRPO as configured; returns the run directory. ``stop_after`` ends early after that step.

    Under ``accelerate launch`` each rank plays its share of every step's groups; rank 0 writes the run
    directory (metrics, episodes, checkpoints, the living bank, dev evaluations).
    """
    from contextlib import nullcontext

    from tqdm import tqdm

    from expbank import envs
    from expbank.envs.pool import EnvPool
    from expbank.errors import UserError
    from expbank.training import living_bank, protocol, selection, vllm_sync
    from expbank.training.backends import HFBackend, VLLMBackend, require_vllm
    from expbank.training.curves import write_curves
    from expbank.training.evaluate import open_memory
    from expbank.training.rollout import RolloutJob, RolloutSettings, rollout
    from expbank.training.runs import fingerprint, prepare_run_dir, write_json
    from expbank.trajectory import Episode, EpisodeWriter, make_episode_id

    cfg = config.train
    if config.actor.backend == "openai":
        raise UserError("expbank train samples from the policy it trains: actor.backend=openai serves a fixed remote "
                        "model; use hf or vllm (evaluate an exported checkpoint behind an endpoint instead)")
    if config.actor.backend == "vllm":
        require_vllm()  # before anything is loaded or written
    run_dir = Path(config.run.dir or f"runs/train-{config.env.name}")
    dist = Distributed(cfg.tracker, run_dir)
    if dist.is_main:
        prepare_run_dir(run_dir, config)
    dist.barrier()
    torch.manual_seed(config.run.seed)
    policy = build_policy(config, dist.device)
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
    bank_path = bank.path if bank else None
    memory = bank.memory if bank else \
        open_memory(config.model_copy(update={"env": config.env.model_copy(update={"split": cfg.split})}))
    if cfg.eval_every:
        selection.check(config, bank_path)
    env = envs.make(config.env.name, split=cfg.split, data_dir=config.env.data_dir)
    task_ids = env.task_ids()
    if dist.is_main:
        bank_hash = living_bank.source_hash(config) if bank else memory.manifest_hash() if memory else None
        write_json(run_dir / "fingerprint.json", fingerprint(config, env.env_fingerprint(), bank_hash,
                                                            protocol.PROMPT_VERSION,
                                                            {"base_model": config.actor.model,
                                                             "processes": dist.world}))
        if cfg.eval_every:
            selection.write_best(config, run_dir)
    env.close()
    spec = protocol.ProtocolSpec(config.memory.mode, config.memory.retrieval, config.memory.reconstruct)
    settings = RolloutSettings(env=config.env.name, split=cfg.split, arm=config.arm_name(), run_id=run_dir.name,
                               spec=spec, history_length=config.prompt.history_length,
                               # GRPO needs diverse groups: greedy decoding (temperature 0) samples at 1.0
                               temperature=config.decoding.temperature or 1.0,
                               max_new_tokens=config.decoding.max_new_tokens)
    if config.actor.backend == "vllm":  # a colocated engine per rank, given the policy's weights every step
        backend = VLLMBackend.colocated(config.actor.model, dist.rank, cfg.vllm_gpu_memory_utilization,
                                        vllm_sync.max_model_len(config))
    else:
        backend = HFBackend.wrap(policy.model, policy.tokenizer, policy.name, batch_size=cfg.micro_batch_size)
    last = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    tasks_per_step = min(cfg.tasks_per_step, len(task_ids))
    workers = max(1, min(config.run.episodes_in_flight, len(dist.shard(range(tasks_per_step))) * cfg.group_size))
    dist.start_tracking("grpo", config.model_dump(mode="json"))
    with EnvPool(config.env.name, cfg.split, config.env.data_dir, workers=workers,
                 max_steps=config.env.max_steps) as pool, \
            (EpisodeWriter(run_dir / "episodes.jsonl") if dist.is_main else nullcontext()) as writer, \
            tqdm(total=cfg.steps, initial=start, desc="grpo", unit="step",
                 disable=not (progress and dist.is_main)) as bar:
        for step in range(start + 1, last + 1):
            began = time.perf_counter()
            # every rank draws the same tasks and plays its share; a task's group stays on one rank
            tasks = dist.shard(random.Random(f"{config.run.seed}-{step}").sample(task_ids, tasks_per_step))
            if config.actor.backend == "vllm":
                backend.load_weights(vllm_sync.base_model_weights(policy.model))
            jobs = [RolloutJob(make_episode_id(config.env.name, cfg.split, task, policy.name, settings.arm,
                                               config.run.seed, step, g), task, config.run.seed, f"it{step}-g{g}")
                    for task in tasks for g in range(cfg.group_size)]
            records = sorted(rollout(backend, pool, jobs, settings, bank.memory if bank else memory),
                             key=lambda r: r["episode_id"])
            rows, zero_variance = training_rows(records, policy.tokenizer, cfg, config.reward)
            stats = update(policy, optimizer, rows, cfg, config.decoding.max_new_tokens, model, dist,
                           settings.temperature)
            local = {"zero_variance_groups": zero_variance, "rows": len(rows),
                     "trained_tokens": sum(sum(m) for _, m, _ in rows), **stats}
            totals = {key: type(value)(total) for (key, value), total in
                      zip(local.items(), dist.total(list(local.values())), strict=True)}
            for record in records:
                record.pop("_conversations")
            records = sorted(dist.gather(records), key=lambda r: r["episode_id"])
            metrics = step_metrics(step, records, totals)
            episodes = [Episode.model_validate({k: v for k, v in r.items() if not k.startswith("_")})
                        for r in records]
            if bank:
                metrics |= bank.after_step(step, episodes)
            evaluate_now = selection.due(config, step)
            if evaluate_now and dist.is_main:
                metrics |= selection.evaluate_dev(config, policy, run_dir, step, bank_path)
            metrics["seconds"] = time.perf_counter() - began
            if dist.is_main:
                for episode in episodes:
                    writer.write(episode)
                with (run_dir / "metrics.jsonl").open("a") as handle:
                    handle.write(json.dumps(metrics, sort_keys=True) + "\n")
                dist.log(metrics, step)
                if step % cfg.checkpoint_every == 0 or step == cfg.steps or evaluate_now:
                    save_checkpoint(run_dir, step, policy, optimizer, bank_path)
                    best = selection.write_best(config, run_dir) if cfg.eval_every else None
                    selection.prune_checkpoints(run_dir, cfg.keep_checkpoints, best and best["step"])
            dist.barrier()
            bar.set_postfix(success=f"{metrics['success_rate']:.2f}", loss=f"{metrics['loss']:.3f}")
            bar.update()
    if dist.is_main:
        write_curves(run_dir, bank_path)
    dist.end()
    return run_dir


# ---------------------------------------------------------------------------------------------- CLI
def add_arguments(parser) -> None:
    parser.add_argument("config", help="YAML run config with a `train:` section")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    parser.add_argument("--resume", action="store_true", help="continue from the run directory's last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    from expbank.training import dry_run

    dry_run.add_arguments(parser)


def run(args) -> int:
    from expbank.config import load_config

    config = load_config(args.config, args.overrides)
    if args.dry_run:
        from expbank.training.dry_run import dry_run

        return dry_run(config, args.accelerate_config, args.num_processes, args.gpu_memory_gb, source=args.config)
    run_dir = train(config, resume=args.resume, progress=not args.no_progress)
    last = latest_checkpoint(run_dir)
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    tail = metrics[-1] if metrics else {}
    print(f"trained {tail.get('step', 0)} steps; last step: reward {tail.get('reward_mean', 0):.2f}, "
          f"success {tail.get('success_rate', 0):.2f}\ncheckpoint: {last / 'model' if last else 'none'} "
          f"(evaluate with actor.adapter=... or actor.model=... for full fine-tuning)")
    return 0
