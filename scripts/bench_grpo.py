"""Benchmark: one GRPO step of expbank's trainer vs TRL's ``GRPOTrainer`` on the same single-turn batch.

What is measured, per system, for ``smollm2-135m`` + LoRA on CPU:

- seconds per GRPO step, split into *generate* (sampling G completions per prompt), *score* (reward,
  advantages, batch assembly; for TRL everything in ``_generate_and_score_completions`` outside
  ``generate``) and *update* (the optimisation pass: forward, backward, optimizer step);
- trained tokens per step (completion tokens that carry loss) and trained tokens/s; the headline figure is
  seconds per trained token, and the ratio ours / TRL (target: <= 1);
- peak memory of each system's own process: ``ru_maxrss`` from ``resource.getrusage`` (the kernel's
  lifetime peak, model loading included) and the highest RSS a psutil sampler saw during the measured steps.

Why the two are comparable: both run in their own worker process, load the same model with
``expbank.training.actors.models.load_model`` (fp32, CPU, same torch thread count) and add the same LoRA adapters
(rank, alpha, dropout and target modules of ``train.lora``: ``expbank.config.TrainLoraConfig``). Both see
the same prompts (the project's protocol: ``system_prompt`` + ``step_message`` for the first observation of
bundled WebShop training goals), sample G completions per prompt at the same temperature with no top-k/top-p, no
stop strings and the same cap on new tokens, score them with the same reward function (:func:`keyword_reward`),
normalise rewards within the group by the std, and take one optimisation pass with the same learning rate
(constant), AdamW, gradient clipping at 1.0, micro-batch size and token-mean loss (TRL's ``dapo`` = ours
``token_mean``), no KL (beta 0, so neither loads a reference). TRL runs without gradient checkpointing,
as ours does. Ours is ``HFBackend.generate_tokens`` + rows of (prompt + completion ids, loss mask on the
completion) + ``expbank.training.rl.grpo.update``; TRL is ``GRPOTrainer.train()`` paced by a callback.

The machine is shared, so the parent process interleaves the two workers step by step (ours, TRL, then
TRL, ours, ...): a change in load hits both alike. The first step of each is a warm-up and is dropped;
the table gives medians of the measured steps.

    python scripts/bench_grpo.py [--steps 3] [--prompts 4] [--group-size 4] [--max-new-tokens 32] \\
        [--threads 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SYSTEMS = ("ours", "trl")
MARK = "@@bench "  # prefix of the protocol lines a worker writes to stdout (other output is ignored)
TAGS = ("<observe>", "</observe>", "<action>", "</action>")


# ------------------------------------------------------------------------------------- shared inputs
def build_prompts(count: int, env_name: str = "webshop") -> list[list[dict[str, str]]]:
    """The first-turn conversation (system + user message) of ``count`` bundled training tasks."""
    from expbank import envs
    from expbank.training.agent import conversation, protocol

    spec = protocol.ProtocolSpec("none")
    env = envs.make(env_name, split="train")
    prompts = []
    for task_id in env.task_ids()[:count]:
        observation, info = env.reset(options={"task_id": task_id})
        user = conversation.step_message(info["task"], [], observation, info["admissible_actions"])
        prompts.append([{"role": "system", "content": conversation.system_prompt(env_name, spec)},
                        {"role": "user", "content": user}])
    env.close()
    if len(prompts) < count:
        raise SystemExit(f"only {len(prompts)} {env_name} training tasks; ask for fewer --prompts")
    return prompts


def keyword_reward(text: str) -> float:
    """The reward both systems use: protocol tags present (0..1), minus a small length term to break ties."""
    return sum(tag in text for tag in TAGS) / len(TAGS) - len(text) / 2000


class MemoryMonitor:
    """Peak resident memory: ``ru_maxrss`` (lifetime) and the highest RSS sampled while ``active``."""

    def __init__(self, interval: float = 0.05):
        import psutil

        self._process = psutil.Process()
        self._interval = interval
        self.active = False
        self.sampled_peak = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            if self.active:
                self.sampled_peak = max(self.sampled_peak, self._process.memory_info().rss)
            time.sleep(self._interval)

    def report(self) -> dict[str, float]:
        maxrss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        return {"ru_maxrss_mib": maxrss_kib / 1024, "psutil_peak_rss_mib": self.sampled_peak / 2**20}


# ------------------------------------------------------------------------------------------ worker
def emit(message: dict[str, Any]) -> None:
    print(MARK + json.dumps(message), flush=True)


def await_command() -> str:
    """Block until the parent says ``step`` or ``finish``."""
    return sys.stdin.readline().strip() or "finish"


def setup_threads(threads: int | None) -> None:
    """Make ``load_model``'s thread rule use ``threads`` (the project default when None)."""
    if threads:
        os.environ["EXPBANK_TORCH_THREADS"] = str(threads)


def lora_settings():
    """The project's default LoRA settings (``train.lora``) with rank 16."""
    from expbank.config import TrainLoraConfig

    lora = TrainLoraConfig(enabled=True, r=16)
    return lora.r, lora.alpha, lora.dropout, list(lora.target_modules)


def run_ours(args: argparse.Namespace, prompts: list[list[dict]], memory: MemoryMonitor) -> None:
    """Our trainer's pieces: backend generation, rows with a completion loss mask, ``grpo.update``."""
    import torch

    from expbank.config import ActorConfig, Config, TrainConfig, TrainLoraConfig
    from expbank.training.actors.backends import HFBackend
    from expbank.training.rl.grpo import build_policy, group_advantages, update

    r, alpha, dropout, targets = lora_settings()
    lora = TrainLoraConfig(enabled=True, r=r, alpha=alpha, dropout=dropout, target_modules=targets)
    train = TrainConfig(lora=lora, learning_rate=args.learning_rate, group_size=args.group_size, beta=0.0, mu=1,
                        loss_aggregation="token_mean", scale_rewards=True, drop_zero_variance=False,
                        micro_batch_size=args.micro_batch_size, update_micro_batch_size=args.micro_batch_size,
                        gradient_checkpointing=False, max_grad_norm=1.0)  # as TRL runs here
    torch.manual_seed(args.seed)
    policy = build_policy(Config(actor=ActorConfig(model=args.model), train=train))
    optimizer = torch.optim.AdamW(list(policy.trainable().values()), lr=train.learning_rate)
    batch = len(prompts) * args.group_size
    backend = HFBackend.wrap(policy.model, policy.tokenizer, policy.name, batch_size=batch)
    conversations = [prompt for prompt in prompts for _ in range(args.group_size)]
    emit({"ready": True, "trainable_params": sum(p.numel() for p in policy.trainable().values())})
    while await_command() == "step":
        memory.active = True
        began = time.perf_counter()
        generations = backend.generate_tokens(conversations, temperature=args.temperature,
                                              max_new_tokens=args.max_new_tokens, stop=[])
        generated = time.perf_counter()
        rewards = [keyword_reward(g.text) for g in generations]
        rows = []
        for start in range(0, batch, args.group_size):
            group = generations[start: start + args.group_size]
            advantages = group_advantages(rewards[start: start + args.group_size], train.scale_rewards)
            rows += [(g.prompt_ids + g.completion_ids, [0] * len(g.prompt_ids) + [1] * len(g.completion_ids), a)
                     for g, a in zip(group, advantages, strict=True)]
        scored = time.perf_counter()
        update(policy, optimizer, rows, train, args.max_new_tokens)
        done = time.perf_counter()
        memory.active = False
        emit({"seconds": done - began, "generate": generated - began, "score": scored - generated,
              "update": done - scored, "trained_tokens": sum(len(g.completion_ids) for g in generations),
              "prompt_tokens": sum(len(g.prompt_ids) for g in generations), "completions": len(generations),
              "reward_mean": statistics.fmean(rewards), "threads": torch.get_num_threads()})
    emit({"memory": memory.report()})


class _TRLTimers:
    """Wall time spent inside TRL's generation and generate-and-score methods during the current step."""

    def __init__(self, trainer) -> None:
        self.generate = 0.0
        self.generate_and_score = 0.0
        self.trained_tokens = 0
        self.prompt_tokens = 0
        generate, generate_and_score = trainer._generate_single_turn, trainer._generate_and_score_completions

        def timed_generate(*a, **k):
            began = time.perf_counter()
            try:
                return generate(*a, **k)
            finally:
                self.generate += time.perf_counter() - began

        def timed_generate_and_score(*a, **k):
            began = time.perf_counter()
            out = generate_and_score(*a, **k)
            self.generate_and_score += time.perf_counter() - began
            self.trained_tokens += int(out["completion_mask"].sum())
            self.prompt_tokens += int(out["prompt_mask"].sum())
            return out

        trainer._generate_single_turn = timed_generate
        trainer._generate_and_score_completions = timed_generate_and_score

    def reset(self) -> None:
        self.generate = self.generate_and_score = 0.0
        self.trained_tokens = self.prompt_tokens = 0


def run_trl(args: argparse.Namespace, prompts: list[list[dict]], memory: MemoryMonitor) -> None:
    """TRL's ``GRPOTrainer`` on the same batch, one ``train()`` call paced step by step by a callback."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from expbank.training.actors.models import load_model

    r, alpha, dropout, targets = lora_settings()
    torch.manual_seed(args.seed)
    loaded = load_model(args.model, device="cpu", dtype="float32")
    batch = len(prompts) * args.group_size
    rewards_seen: list[float] = []

    def reward(completions, **_):
        values = [keyword_reward(c[0]["content"] if isinstance(c, list) else c) for c in completions]
        rewards_seen.extend(values)
        return values

    config = GRPOConfig(
        output_dir=tempfile.mkdtemp(prefix="bench-grpo-trl-"), max_steps=args.steps + 1, seed=args.seed,
        per_device_train_batch_size=args.micro_batch_size, gradient_accumulation_steps=batch // args.micro_batch_size,
        num_generations=args.group_size, max_completion_length=args.max_new_tokens, temperature=args.temperature,
        top_p=1.0, top_k=0, learning_rate=args.learning_rate, lr_scheduler_type="constant", warmup_steps=0,
        optim="adamw_torch", max_grad_norm=1.0, beta=0.0, loss_type="dapo", scale_rewards="group", epsilon=0.2,
        num_iterations=1, gradient_checkpointing=False, use_cpu=True, bf16=False, fp16=False, logging_steps=1,
        report_to=[], save_strategy="no", disable_tqdm=True, dataloader_num_workers=0,
    )
    state: dict[str, Any] = {}

    class Pace(TrainerCallback):
        def on_step_begin(self, args_, state_, control, **kwargs):
            if await_command() != "step":
                control.should_training_stop = True  # not expected: the parent asks for exactly max_steps
            timers.reset()
            rewards_seen.clear()
            memory.active = True
            state["began"] = time.perf_counter()

        def on_step_end(self, args_, state_, control, **kwargs):
            seconds = time.perf_counter() - state["began"]
            memory.active = False
            state["pending"] = {
                "seconds": seconds, "generate": timers.generate, "score": timers.generate_and_score - timers.generate,
                "update": seconds - timers.generate_and_score, "trained_tokens": timers.trained_tokens,
                "prompt_tokens": timers.prompt_tokens, "completions": batch,
                "reward_mean": statistics.fmean(rewards_seen) if rewards_seen else float("nan"),
                "threads": torch.get_num_threads()}

        def on_log(self, args_, state_, control, logs=None, **kwargs):
            pending = state.pop("pending", None)
            if pending is not None:  # TRL's own count, as a cross-check of trained_tokens
                pending["logged_mean_length"] = (logs or {}).get("completions/mean_length")
                emit(pending)

    trainer = GRPOTrainer(model=loaded.model, reward_funcs=reward, args=config,
                          train_dataset=Dataset.from_dict({"prompt": prompts}), processing_class=loaded.tokenizer,
                          peft_config=LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, task_type="CAUSAL_LM",
                                                 target_modules=targets),
                          callbacks=[Pace()])
    timers = _TRLTimers(trainer)
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    emit({"ready": True, "trainable_params": trainable})
    trainer.train()
    await_command()  # "finish"
    emit({"memory": memory.report()})


def worker_main(args: argparse.Namespace) -> None:
    setup_threads(args.threads)
    memory = MemoryMonitor()
    prompts = build_prompts(args.prompts)
    (run_ours if args.worker == "ours" else run_trl)(args, prompts, memory)


# ------------------------------------------------------------------------------------------ parent
class Worker:
    """One system's process; ``request`` sends a command and returns its next protocol message."""

    def __init__(self, system: str, argv: list[str], log_dir: Path):
        self.system = system
        self.log = log_dir / f"{system}.log"
        self._process = subprocess.Popen(
            [sys.executable, __file__, *argv, "--worker", system], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log.open("w"), text=True, bufsize=1)

    def receive(self) -> dict[str, Any]:
        for line in self._process.stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        tail = self.log.read_text()[-3000:]
        raise SystemExit(f"{self.system} worker exited (code {self._process.wait()}); log tail:\n{tail}")

    def request(self, command: str) -> dict[str, Any]:
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        return self.receive()

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait(timeout=60)


def run_interleaved(args: argparse.Namespace, argv: list[str]) -> dict[str, Any]:
    """Warm-up plus ``--steps`` rounds, alternating which system goes first; raw per-step results."""
    log_dir = Path(tempfile.mkdtemp(prefix="bench-grpo-"))
    workers, setup = {}, {}
    for system in SYSTEMS:  # started one after the other, so model loading does not compete either
        workers[system] = Worker(system, argv, log_dir)
        setup[system] = workers[system].receive()
    steps: dict[str, list[dict]] = {system: [] for system in SYSTEMS}
    for round_index in range(args.steps + 1):
        order = SYSTEMS if round_index % 2 == 0 else SYSTEMS[::-1]
        for system in order:
            result = workers[system].request("step")
            result["warmup"] = round_index == 0
            steps[system].append(result)
            print(f"  round {round_index}{' (warm-up)' if round_index == 0 else ''} {system:>4}: "
                  f"{result['seconds']:.1f} s, {result['trained_tokens']} trained tokens", flush=True)
    memory = {system: workers[system].request("finish")["memory"] for system in SYSTEMS}
    for worker in workers.values():
        worker.close()
    return {"setup": setup, "steps": steps, "memory": memory, "logs": str(log_dir)}


def summarise(steps: list[dict]) -> dict[str, float]:
    """Medians over the measured (non-warm-up) steps."""
    measured = [s for s in steps if not s["warmup"]]

    def median(key: str) -> float:
        return statistics.median(s[key] for s in measured)

    return {
        "steps": len(measured), "seconds": median("seconds"), "generate": median("generate"),
        "score": median("score"), "update": median("update"), "trained_tokens": median("trained_tokens"),
        "prompt_tokens": median("prompt_tokens"),
        "ms_per_trained_token": 1000 * statistics.median(s["seconds"] / s["trained_tokens"] for s in measured),
        "update_ms_per_trained_token": 1000 * statistics.median(s["update"] / s["trained_tokens"] for s in measured),
        "trained_tokens_per_s": statistics.median(s["trained_tokens"] / s["seconds"] for s in measured),
        "threads": measured[0]["threads"],
    }


def print_table(summary: dict[str, dict], memory: dict[str, dict], ratio: float, update_ratio: float) -> None:
    rows = [("s/step", "seconds", "{:.2f}"), ("  generate s", "generate", "{:.2f}"), ("  score s", "score", "{:.3f}"),
            ("  update s", "update", "{:.2f}"), ("trained tokens/step", "trained_tokens", "{:.0f}"),
            ("prompt tokens/step", "prompt_tokens", "{:.0f}"), ("trained tokens/s", "trained_tokens_per_s", "{:.1f}"),
            ("ms/trained token", "ms_per_trained_token", "{:.1f}"),
            ("update ms/trained token", "update_ms_per_trained_token", "{:.1f}")]
    print(f"\n| {'median of measured steps':<28} | {'ours':>9} | {'TRL':>9} |")
    print(f"|{'-' * 30}|{'-' * 11}|{'-' * 11}|")
    for label, key, fmt in rows:
        print(f"| {label:<28} | {fmt.format(summary['ours'][key]):>9} | {fmt.format(summary['trl'][key]):>9} |")
    for label, key in (("peak RSS MiB (ru_maxrss)", "ru_maxrss_mib"), ("peak RSS MiB (psutil, steps)", "psutil_peak_rss_mib")):
        print(f"| {label:<28} | {memory['ours'][key]:>9.0f} | {memory['trl'][key]:>9.0f} |")
    print(f"\nratio ours/TRL, time per trained token: {ratio:.2f} (target <= 1); update only: {update_ratio:.2f}")


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("torch", "transformers", "trl", "peft", "accelerate")}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--steps", type=int, default=3, help="measured steps per system (after one warm-up)")
    parser.add_argument("--prompts", type=int, default=4, help="distinct prompts per step (WebShop train goals)")
    parser.add_argument("--group-size", type=int, default=4, help="completions per prompt (G)")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--micro-batch-size", type=int, default=8, help="rows per forward/backward (both systems)")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per worker (default: the project's rule, cores - 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write settings, raw steps and summary here")
    parser.add_argument("--worker", choices=SYSTEMS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    batch = args.prompts * args.group_size
    args.micro_batch_size = min(args.micro_batch_size, batch)
    if batch % args.micro_batch_size:
        parser.error(f"prompts x group size ({batch}) must be a multiple of --micro-batch-size")
    return args


def worker_argv(args: argparse.Namespace) -> list[str]:
    """The settings, as command-line options, that each worker process gets."""
    argv = []
    for key in ("model", "steps", "prompts", "group_size", "max_new_tokens", "micro_batch_size", "temperature",
                "learning_rate", "threads", "seed"):
        if getattr(args, key) is not None:
            argv += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
    return argv


def main() -> None:
    args = parse_args(sys.argv[1:])
    if args.worker:
        worker_main(args)
        return
    print(f"{args.model} + LoRA r16, {args.prompts} prompts x G={args.group_size}, {args.max_new_tokens} new tokens, "
          f"T={args.temperature}, micro-batch {args.micro_batch_size}, {args.steps} measured steps + 1 warm-up each; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    load_before = os.getloadavg()
    began = time.perf_counter()
    raw = run_interleaved(args, worker_argv(args))
    summary = {system: summarise(raw["steps"][system]) for system in SYSTEMS}
    ratio = summary["ours"]["ms_per_trained_token"] / summary["trl"]["ms_per_trained_token"]
    update_ratio = summary["ours"]["update_ms_per_trained_token"] / summary["trl"]["update_ms_per_trained_token"]
    print_table(summary, raw["memory"], ratio, update_ratio)
    load_after = os.getloadavg()
    print(f"load average (1/5/15 min) before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
          f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}; "
          f"{time.perf_counter() - began:.0f} s in all; worker logs in {raw['logs']}")
    if args.json:
        report = {"settings": {k: v for k, v in vars(args).items() if k not in ("worker", "json")},
                  "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                              "load_before": load_before, "load_after": load_after, **versions()},
                  "summary": summary, "memory": raw["memory"], "setup": raw["setup"], "steps": raw["steps"],
                  "ratio_ms_per_trained_token": ratio, "ratio_update_ms_per_trained_token": update_ratio}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
