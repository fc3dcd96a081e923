"""Benchmark: rollout throughput of a local model on the bundled ALFWorld panel.

Prints episode-turns/s and generated tokens/s with 1 vs N episodes in flight (generation batched across
episodes), prompt tokens per turn for each memory mode, and the peak resident memory.

    python scripts/bench_rollout.py --model smollm2-135m --bank BANK [--episodes 8] [--max-steps 5]
"""

from __future__ import annotations

import argparse
import resource
import time

from expbank import envs
from expbank.envs.pool import EnvPool
from expbank.training.actors.backends import HFBackend
from expbank.training.agent.protocol import ProtocolSpec
from expbank.training.agent.retrieve import Memory
from expbank.training.agent.rollout import RolloutJob, RolloutSettings, rollout


def measure(backend: HFBackend, jobs: list[RolloutJob], in_flight: int, mode: str, bank: str | None,
            max_steps: int, max_new_tokens: int) -> dict[str, float]:
    memory = Memory(mode, bank) if mode != "none" else None
    settings = RolloutSettings(env="alfworld", spec=ProtocolSpec(mode), max_new_tokens=max_new_tokens)
    before = (backend.usage.prompt_tokens, backend.usage.completion_tokens)
    start = time.perf_counter()
    with EnvPool("alfworld", "valid_unseen", workers=in_flight, max_steps=max_steps) as pool:
        turns = sum(len(result.record["steps"]) for result in rollout(backend, pool, jobs, settings, memory))
    seconds = time.perf_counter() - start
    prompt = backend.usage.prompt_tokens - before[0]
    generated = backend.usage.completion_tokens - before[1]
    return {"turns/s": turns / seconds, "tokens/s": generated / seconds, "prompt tokens/turn": prompt / turns,
            "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--bank", default=None, help="bank directory for the raw and bank modes")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=5)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    backend = HFBackend(args.model, batch_size=args.in_flight)
    task_ids = envs.task_ids("alfworld", "valid_unseen")[: args.episodes]
    jobs = [RolloutJob(f"bench-{i}", task_id, 0) for i, task_id in enumerate(task_ids)]
    print(f"{args.model}, {len(jobs)} ALFWorld valid_unseen episodes, {args.max_steps} steps, "
          f"{args.max_new_tokens} new tokens max")
    for in_flight in (1, args.in_flight):
        row = measure(backend, jobs, in_flight, "none", None, args.max_steps, args.max_new_tokens)
        print(f"  memory none, {in_flight} in flight: {row['turns/s']:.2f} turns/s, {row['tokens/s']:.1f} "
              f"generated tokens/s, {row['prompt tokens/turn']:.0f} prompt tokens/turn ({row['seconds']:.0f} s)")
    if args.bank:
        for mode in ("raw", "bank"):
            row = measure(backend, jobs, args.in_flight, mode, args.bank, args.max_steps, args.max_new_tokens)
            print(f"  memory {mode}, {args.in_flight} in flight: {row['turns/s']:.2f} turns/s, "
                  f"{row['prompt tokens/turn']:.0f} prompt tokens/turn")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak resident memory of the main process: {peak:.0f} MiB (env workers not included)")


if __name__ == "__main__":
    main()
