"""Benchmark: CPU generation speed and training memory, before and after, side by side in one run.

Every measurement runs twice in fresh processes, once on the code of ``--before`` (a git commit, checked out
into a worktree under ``OUT/before``) and once on this working tree, on the same inputs:

- ``workload`` (once, this tree): expert walkthroughs of ALFWorld and WebShop ``train`` tasks (the bank's
  sources) and ``dev`` tasks (the prompts and SFT records), a bank built from the former with the rule
  summariser, and the prompts every turn of the ``dev`` walkthroughs shows the policy with memory ``none``
  and ``bank`` (k = 2), saved to ``OUT/prompts.json``;
- ``generate-none`` / ``generate-bank``: greedy replies of SmolLM2-135M to those prompts, batched as
  ``expbank eval`` batches its episodes in flight: turns/s, prompt and generated tokens/s; the replies of
  both trees are compared;
- ``sft``: ``expbank sft`` as the quickstart runs it (LoRA, batch 4, rows up to 1024 tokens, memory bank) on
  the records of the first 6 WebShop ``dev`` walkthroughs;
- ``update``: one GRPO update (LoRA, KL to the SFT start, micro-batches of 4) on rows made from the SFT
  records, advantages alternating +1/-1.

Each process's peak memory is the summed RSS of its whole process tree (``expbank/peak_memory.py``).

    python scripts/bench_cpu.py --out runs/bench-cpu [--before 1bab04d] [--stages generate-none,sft]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "1bab04d"  # the last commit before the lean-CPU work
STAGES = ("generate-none", "generate-bank", "sft", "update")
MODEL = "smollm2-135m"
IN_FLIGHT = 8  # episodes in flight, as the issue measured (one generate call per turn of 8 episodes)
MAX_NEW_TOKENS = 48
PROMPTS_PER_ARM = 48
SFT_EPISODES = 6  # about 24 records: 6 optimiser steps of 4, enough for the peak (every step is alike)


# ------------------------------------------------------------------------------------------ workload
def sft_config(out: Path):
    """The quickstart's SFT and GRPO settings on the workload's walkthroughs (memory bank)."""
    from expbank.config import config_from_tree

    tree = {
        "env": {"name": "webshop", "split": "dev"},
        "actor": {"backend": "hf", "model": MODEL},
        "memory": {"mode": "bank", "bank": str(out / "bank"), "k": 2},
        "prompt": {"history_length": 1},
        "decoding": {"temperature": 1.0, "max_new_tokens": MAX_NEW_TOKENS},
        "run": {"seed": 0, "dir": str(out / "runs")},
        "sft": {"trajectories": [str(out / "sft-expert.jsonl")], "split": "dev", "epochs": 1.0,
                "learning_rate": 2e-4, "batch_size": 4, "max_length": 1024, "lora": True},
        "train": {"split": "train", "steps": 1, "tasks_per_step": 1, "group_size": 2, "beta": 0.01,
                  "lora": {"enabled": True}, "max_length": 1024, "micro_batch_size": 4},
    }
    return config_from_tree(tree, "bench_cpu")


def build_workload(out: Path) -> None:
    """Trajectories, bank and prompts (skipped when ``OUT/prompts.json`` exists)."""
    from expbank.bank.build import build
    from expbank.bank.store import Bank
    from expbank.bank.summarise import make_summariser
    from expbank.training.agent import protocol, targets
    from expbank.training.agent.collect import collect
    from expbank.training.agent.retrieve import Memory
    from expbank.trajectory import episodes_in_id_order

    sources = []
    for env, split, episodes in (("alfworld", "train", None), ("webshop", "train", 60),
                                 ("alfworld", "dev", None), ("webshop", "dev", 40)):
        path = out / f"{env}-{split}-expert.jsonl"
        collect(env, split, "expert", path, episodes=episodes, workers=2)
        if split == "train":
            sources.append(path)
    if not (out / "bank" / "manifest.json").exists():
        bank = Bank.create(out / "bank")
        build(bank, sources, make_summariser("rule"))
        bank.save()
    lines = (out / "webshop-dev-expert.jsonl").read_text().splitlines(keepends=True)
    (out / "sft-expert.jsonl").write_text("".join(lines[:SFT_EPISODES]))
    memory = Memory("bank", str(out / "bank"), k=2)
    prompts = {}
    for mode in ("none", "bank"):
        spec = protocol.ProtocolSpec(mode, "fixed", True)
        arm = []
        for env in ("alfworld", "webshop"):
            for episode in episodes_in_id_order(out / f"{env}-dev-expert.jsonl"):
                records = targets.records_from_episode(episode, spec, memory if mode == "bank" else None, 1)
                arm += [record[:-1] for record in records]  # what the policy sees, without the target
        prompts[mode] = arm[:: max(1, len(arm) // PROMPTS_PER_ARM)][:PROMPTS_PER_ARM]
    (out / "prompts.json").write_text(json.dumps(prompts))


# --------------------------------------------------------------------------------------- child stages
def run_generate(out: Path, mode: str) -> dict:
    from expbank.training.actors.backends import HFBackend

    prompts = json.loads((out / "prompts.json").read_text())[mode]
    backend = HFBackend(MODEL, batch_size=IN_FLIGHT)
    backend.generate(prompts[:IN_FLIGHT], temperature=0.0, max_new_tokens=4)  # warm-up (first-call costs)
    backend.usage.prompt_tokens = backend.usage.completion_tokens = backend.usage.calls = 0
    began = time.perf_counter()
    replies = backend.generate(prompts, temperature=0.0, max_new_tokens=MAX_NEW_TOKENS)
    seconds = time.perf_counter() - began
    usage = backend.usage
    return {"turns": len(prompts), "seconds": round(seconds, 2), "turns_per_s": round(len(prompts) / seconds, 3),
            "prompt_tokens_per_s": round(usage.prompt_tokens / seconds, 1),
            "generated_tokens_per_s": round(usage.completion_tokens / seconds, 1),
            "prompt_tokens": usage.prompt_tokens, "generated_tokens": usage.completion_tokens, "replies": replies}


def run_sft(out: Path, tree: str) -> dict:
    from expbank.training.rl.sft import sft

    config = sft_config(out)
    began = time.perf_counter()
    sft(config, config.sft.trajectories, out / f"sft-{tree}", progress=False)
    return {"seconds": round(time.perf_counter() - began, 1)}


def run_update(out: Path) -> dict:
    import torch

    from expbank.training.agent.rows import tokenize_conversation
    from expbank.training.rl import grpo, sft

    config = sft_config(out)
    config.actor.adapter = str(out / "sft-after" / "model") if (out / "sft-after").exists() else None
    policy = grpo.build_policy(config)
    records = sft.build_records(config, config.sft.trajectories)[0][:16]
    rows = []
    for i, record in enumerate(records):
        ids, mask = tokenize_conversation(policy.tokenizer, record, config.train.max_length)
        rows.append((ids, mask, 1.0 if i % 2 else -1.0))
    optimizer = torch.optim.AdamW(list(policy.trainable().values()), lr=1e-5)
    began = time.perf_counter()
    stats = grpo.update(policy, optimizer, rows, config.train, MAX_NEW_TOKENS)
    return {"seconds": round(time.perf_counter() - began, 1), "rows": len(rows),
            "tokens": sum(len(ids) for ids, _, _ in rows), "loss": stats["loss"]}


def child(stage: str, out: Path, tree: str) -> None:
    import torch

    if stage == "workload":
        build_workload(out)
        result: dict = {}
    elif stage.startswith("generate-"):
        result = run_generate(out, stage.removeprefix("generate-"))
    elif stage == "sft":
        result = run_sft(out, tree)
    else:
        result = run_update(out)
    result["threads"] = torch.get_num_threads()
    (out / f"{stage}-{tree}.json").write_text(json.dumps(result))


# --------------------------------------------------------------------------------------------- parent
def before_tree(out: Path, ref: str) -> Path:
    """An importable copy of ``ref``: a git worktree, and a folder laying its packages out as installed."""
    worktree = out / "before" / "src"
    if not worktree.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), ref], check=True,
                       capture_output=True)
    site = out / "before" / "site"
    if not site.exists():
        (site / "expbank").mkdir(parents=True)
        for item in (worktree / "expbank").iterdir():
            (site / "expbank" / item.name).symlink_to(item)
        (site / "expbank" / "envs").symlink_to(worktree / "envs")
        (site / "expbank" / "training").symlink_to(worktree / "training")
    return site


def measure(stage: str, out: Path, tree: str, site: Path | None, threads: int | None = None) -> dict:
    """Run one stage in a fresh process (on the ``before`` copy when ``site`` is given) under the sampler,
    with each tree's default torch threads unless ``threads`` is given."""
    from expbank.peak_memory import PeakMemory

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if threads:
        env["EXPBANK_TORCH_THREADS"] = str(threads)
    if site is not None:
        env["PYTHONPATH"] = str(site)
    command = [sys.executable, __file__, "--out", str(out), "--child", stage, "--tree", tree]
    with PeakMemory() as peak:
        process = subprocess.Popen(command, env=env)
        peak.watch(process.pid)
        if process.wait():
            raise SystemExit(f"{stage} ({tree}) failed with exit code {process.returncode}")
    result = json.loads((out / f"{stage}-{tree}.json").read_text())
    result["peak_gib"] = round(peak.peak_bytes / 2**30, 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--before", default=BEFORE, help="the commit measured as 'before'")
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--after-only", action="store_true",
                        help="measure this tree only, against the 'before' an earlier run recorded")
    parser.add_argument("--threads", type=int, help="torch threads for both trees (default: each tree's own "
                        "default, 1 before and one per core after)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out = args.out.resolve()
    if args.child:
        child(args.child, out, args.tree)
        return
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "prompts.json").exists():
        measure("workload", out, "after", None)
    site = before_tree(out, args.before)
    path = out / "results.json"  # stages measured by earlier runs stay, those run again are replaced
    recorded = json.loads(path.read_text())["stages"] if path.exists() else {}
    results = {}
    for stage in args.stages.split(","):
        if stage not in STAGES:
            raise SystemExit(f"--stages: unknown stage {stage!r} (stages: {', '.join(STAGES)})")
        if args.after_only and "before" not in recorded.get(stage, {}):
            raise SystemExit(f"--after-only: {path} holds no 'before' of {stage}; measure both trees first")
        before = recorded[stage]["before"] if args.after_only else measure(stage, out, "before", site, args.threads)
        results[stage] = {"before": before, "after": measure(stage, out, "after", None, args.threads)}
        print(render_stage(stage, results[stage]), flush=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    path.write_text(json.dumps({"before": args.before, "after": commit, "threads": args.threads,
                                "stages": {**recorded, **results}}, indent=2))


def render_stage(stage: str, pair: dict) -> str:
    before, after = pair["before"], pair["after"]
    line = f"{stage:14s} peak {before['peak_gib']:.2f} -> {after['peak_gib']:.2f} GiB " \
           f"({after['peak_gib'] / before['peak_gib']:.2f}x)"
    if stage.startswith("generate-"):
        same = sum(a == b for a, b in zip(before["replies"], after["replies"], strict=True))
        line += (f" | turns/s {before['turns_per_s']:.3f} -> {after['turns_per_s']:.3f} "
                 f"({after['turns_per_s'] / before['turns_per_s']:.2f}x)"
                 f" | prompt tok/s {before['prompt_tokens_per_s']:.0f} -> {after['prompt_tokens_per_s']:.0f}"
                 f" | gen tok/s {before['generated_tokens_per_s']:.1f} -> {after['generated_tokens_per_s']:.1f}"
                 f" | identical greedy replies {same}/{len(before['replies'])}")
    else:
        line += f" | wall {before['seconds']:.0f} -> {after['seconds']:.0f} s"
    return line


if __name__ == "__main__":
    main()
