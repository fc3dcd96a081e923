"""``expbank collect``: play a scripted policy (expert or random) and write trajectories.

Episodes already in ``--out`` are skipped, so re-running the same command resumes an interrupted
collection and never duplicates a line; episodes that ended with an error are played again.
"""

from __future__ import annotations

from pathlib import Path

from expbank import envs
from expbank.envs.pool import EnvPool, EpisodeJob
from expbank.errors import UserError
from expbank.trajectory import EpisodeWriter, drop_episodes, make_episode_id, read_episode_ids


def episode_record(result, env: str, split: str, run_id: str = "collect", arm: str = "none") -> dict:
    """A docs/design.md §3 record from a pool result; failures keep their ``error``."""
    job = result.job
    steps = [{**step, "output": None, "retrieved": [], "reconstruction": None} for step in result.steps]
    return {
        "episode_id": make_episode_id(env, split, job.task_id, job.policy, arm, job.seed),
        "run_id": run_id, "arm": arm, "env": env, "split": split, "task_id": job.task_id,
        "task_type": result.task_type, "task": result.task, "policy": job.policy, "seed": job.seed,
        "steps": steps, "success": result.won and result.error is None, "score": result.score,
        "num_steps": len(steps), "num_invalid": sum(s["invalid"] for s in steps), "error": result.error,
    }


def collect(env: str, split: str, policy: str, out: str | Path, data_dir: str | None = None,
            episodes: int | None = None, seeds: int = 1, workers: int = 1, max_steps: int | None = None,
            progress: bool = True, replay_errors: bool = True) -> dict[str, int]:
    """Play and append episodes to ``out``; returns counts of played, skipped, won and failed episodes.

    Episodes already in ``out`` are skipped, except those that ended with an error (a crashed worker), which
    are played again, their old records removed first, unless ``replay_errors`` is false.
    """
    from tqdm import tqdm

    if episodes is not None and episodes < 1 or seeds < 1 or workers < 1:
        raise UserError("--episodes, --seeds and --workers must be positive")
    task_ids = envs.task_ids(env, split, data_dir)
    if episodes is not None:
        task_ids = task_ids[:episodes]
    written = read_episode_ids(out)
    done = read_episode_ids(out, include_errored=False) if replay_errors else written
    jobs = [
        EpisodeJob(make_episode_id(env, split, task_id, policy, "none", seed), task_id, seed, policy)
        for seed in range(seeds) for task_id in task_ids
    ]
    todo = [job for job in jobs if job.key not in done]
    counts = {"played": 0, "skipped": len(jobs) - len(todo), "won": 0, "errors": 0}
    if not todo:
        return counts
    replayed = written & {job.key for job in todo}
    if replayed:
        drop_episodes(out, replayed)
    options = {} if max_steps is None else {"max_steps": max_steps}
    with EnvPool(env, split, data_dir, workers=min(workers, len(todo)), **options) as pool, \
            EpisodeWriter(out) as writer, \
            tqdm(total=len(todo), desc=f"{env}/{split} {policy}", unit="ep", disable=not progress) as bar:
        for result in pool.play(todo):
            record = episode_record(result, env, split)
            writer.write(record)
            counts["played"] += 1
            counts["won"] += record["success"]
            counts["errors"] += record["error"] is not None
            bar.set_postfix(won=counts["won"], errors=counts["errors"])
            bar.update()
    return counts
