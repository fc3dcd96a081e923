"""Benchmark: raw TextWorld vs the expbank ALFWorld wrapper, and env-pool throughput.

Median of 3 runs over the bundled games of one split:
  - reset (game start + reset) and step time of raw TextWorld (PddlEnv + ALFWorld's demangler, the
    recipe ``alfworld-play-tw`` uses) and of ``expbank.envs.make("alfworld")``, and the overhead %;
  - episodes/s of the env pool playing the expert policy with 1 and 2 workers.

    python scripts/bench_envs.py [--split train] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from expbank import envs
from expbank.envs.alfworld.games import list_games
from expbank.envs.pool import EnvPool, EpisodeJob


def time_raw(games) -> tuple[float, float]:
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler

    resets, steps = [], []
    for game in games:
        walkthrough = json.loads(game.game_file.read_text())["walkthrough"]
        start = time.perf_counter()
        env = textworld.start(str(game.game_file), request_infos=textworld.EnvInfos(won=True, admissible_commands=True),
                              wrappers=[AlfredDemangler(shuffle=False)])
        env.reset()
        resets.append(time.perf_counter() - start)
        for command in walkthrough:
            start = time.perf_counter()
            env.step(command)
            steps.append(time.perf_counter() - start)
        env.close()
    return statistics.median(resets), statistics.median(steps)


def time_wrapper(split: str, games) -> tuple[float, float, float]:
    """Median reset and step time of the wrapper, and the share of step time spent outside the engine.

    The last figure times the wrapper's own code directly (engine calls are timed from inside), so it does
    not depend on how loaded the machine is while raw and wrapped runs alternate.
    """
    env = envs.make("alfworld", split=split)
    resets, steps, engine = [], [], []
    for game in games:
        start = time.perf_counter()
        env.reset(options={"task_id": game.task_id})
        resets.append(time.perf_counter() - start)
        engine_step = env._tw.step

        def timed_step(command, engine_step=engine_step):
            began = time.perf_counter()
            try:
                return engine_step(command)
            finally:
                engine.append(time.perf_counter() - began)

        env._tw.step = timed_step
        while (action := env.expert_action()) is not None:
            start = time.perf_counter()
            env.step(action)
            steps.append(time.perf_counter() - start)
    env.close()
    own = (sum(steps) - sum(engine)) / sum(engine)
    return statistics.median(resets), statistics.median(steps), own


def pool_rate(split: str, workers: int) -> float:
    jobs = [EpisodeJob(t, t, 0, "expert") for t in envs.task_ids("alfworld", split)]
    with EnvPool("alfworld", split, workers=workers) as pool:
        list(pool.play(jobs[:workers]))  # warm-up: process start and imports are not episode cost
        start = time.perf_counter()
        list(pool.play(jobs))
        return len(jobs) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="train")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    games = list_games(args.split)
    raw, wrapped = [], []
    for _ in range(args.runs):  # interleaved, so load on the machine hits both sides alike
        raw.append(time_raw(games))
        wrapped.append(time_wrapper(args.split, games))
    raw_reset, raw_step = (statistics.median(x) for x in zip(*raw, strict=True))
    our_reset, our_step, own = (statistics.median(x) for x in zip(*wrapped, strict=True))
    print(f"ALFWorld bundled '{args.split}' ({len(games)} games), median of {args.runs} runs")
    print(f"  reset  raw TextWorld {raw_reset * 1e3:8.1f} ms   expbank {our_reset * 1e3:8.1f} ms   "
          f"overhead {100 * (our_reset / raw_reset - 1):+.1f} %")
    print(f"  step   raw TextWorld {raw_step * 1e3:8.1f} ms   expbank {our_step * 1e3:8.1f} ms   "
          f"overhead {100 * (our_step / raw_step - 1):+.1f} %")
    print(f"  wrapper's own code per step, timed directly: {100 * own:.2f} % of the engine's step time")
    for workers in (1, 2):
        rates = [pool_rate(args.split, workers) for _ in range(args.runs)]
        print(f"  pool, expert policy, {workers} worker(s): {statistics.median(rates):.2f} episodes/s")


if __name__ == "__main__":
    main()
