"""Play episodes in worker processes.

Each worker owns one environment. The pool either hands out whole scripted episodes (expert or random,
``play``) or steps every worker's environment in lockstep for a learned policy (``reset``/``step``), so
generation can be batched across episodes in the main process. A worker that dies is replaced, and the
episode it was playing comes back with an error, never dropped.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from expbank.envs import make

POLICIES = ("expert", "random")


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to play: ``key`` identifies it to the caller (e.g. the episode id)."""

    key: str
    task_id: str
    seed: int
    policy: str


@dataclass
class EpisodeResult:
    """What a worker reports for one episode (steps as plain dicts, docs/design.md §3 step fields)."""

    job: EpisodeJob
    task: str = ""
    task_type: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    won: bool = False
    score: float = 0.0
    error: str | None = None


def play_episode(env, job: EpisodeJob) -> EpisodeResult:
    """Play ``job`` on ``env`` with its scripted policy; an exception ends the episode with ``error``."""
    if job.policy not in POLICIES:
        raise ValueError(f"unknown scripted policy {job.policy!r}; choose one of {POLICIES}")
    result = EpisodeResult(job)
    rng = random.Random(f"{job.task_id}|{job.seed}")
    try:
        observation, info = env.reset(seed=job.seed, options={"task_id": job.task_id})
        result.task, result.task_type = info["task"], info["task_type"]
        done = False
        while not done:
            action = env.expert_action() if job.policy == "expert" else env.random_action(rng)
            if action is None:
                result.error = "expert has no action in this state"
                break
            step = {"t": info["step"], "observation": observation,
                    "admissible_actions": info["admissible_actions"], "action": action}
            observation, reward, terminated, truncated, info = env.step(action)
            result.steps.append({**step, "reward": float(reward), "invalid": bool(info["invalid"])})
            done = terminated or truncated
        result.won, result.score = bool(info["won"]), float(info["score"])
    except Exception:  # the run goes on; the episode is recorded as a failure with its error
        result.error = traceback.format_exc(limit=3).strip().splitlines()[-1]
    return result


@dataclass(frozen=True)
class WorkerError:
    """A reset or step that failed in a worker (the worker may have died); ends that episode."""

    message: str


def _worker(conn: Connection, name: str, split: str, data_dir: str | None, options: dict[str, Any]) -> None:
    env = make(name, split=split, data_dir=data_dir, **options)
    while True:
        request = conn.recv()
        if request is None:
            break
        if isinstance(request, EpisodeJob):
            conn.send(play_episode(env, request))
            continue
        command, argument = request
        try:
            if command == "reset":
                task_id, seed = argument
                conn.send(env.reset(seed=seed, options={"task_id": task_id}))
            else:
                conn.send(env.step(argument))
        except Exception as err:  # the caller records the episode with this error and goes on
            conn.send(WorkerError(f"{command} failed: {type(err).__name__}: {err}"))
    env.close()


class EnvPool:
    """``workers`` processes, each with its own ``name``/``split`` environment."""

    def __init__(self, name: str, split: str, data_dir: str | None = None, workers: int = 1, **options: Any):
        self._args = (name, split, data_dir, options)
        self._ctx = mp.get_context("spawn")  # safe beside torch threads and on every platform
        self._workers: list[tuple[Any, Connection]] = [self._spawn() for _ in range(max(1, workers))]

    def _spawn(self):
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=_worker, args=(child, *self._args), daemon=True)
        process.start()
        child.close()
        return process, parent

    def play(self, jobs: Iterable[EpisodeJob]) -> Iterator[EpisodeResult]:
        """Yield one result per job, in completion order."""
        pending = list(jobs)[::-1]
        busy: dict[int, EpisodeJob] = {}
        while pending or busy:
            for slot in range(len(self._workers)):
                if slot not in busy and pending:
                    busy[slot] = pending.pop()
                    self._workers[slot][1].send(busy[slot])
            conns = {self._workers[slot][1]: slot for slot in busy}
            for conn in wait(list(conns)):
                slot = conns[conn]
                try:
                    result = conn.recv()
                except (EOFError, ConnectionError, OSError):
                    result = EpisodeResult(busy[slot], error=self._replace(slot))
                del busy[slot]
                yield result

    @property
    def size(self) -> int:
        return len(self._workers)

    def reset(self, tasks: dict[int, tuple[str, int]]) -> dict[int, Any]:
        """Reset worker ``slot`` to ``(task_id, seed)`` for each entry; returns ``(obs, info)`` or WorkerError."""
        return self._request({slot: ("reset", task) for slot, task in tasks.items()})

    def step(self, actions: dict[int, str]) -> dict[int, Any]:
        """Step each worker's environment; returns gymnasium's 5-tuple or WorkerError per slot."""
        return self._request({slot: ("step", action) for slot, action in actions.items()})

    def _request(self, requests: dict[int, tuple[str, Any]]) -> dict[int, Any]:
        for slot, request in requests.items():
            try:
                self._workers[slot][1].send(request)
            except (BrokenPipeError, OSError):
                pass  # the receive below notices the dead worker
        replies = {}
        for slot in requests:
            try:
                replies[slot] = self._workers[slot][1].recv()
            except (EOFError, ConnectionError, OSError):
                replies[slot] = WorkerError(self._replace(slot))
        return replies

    def _replace(self, slot: int) -> str:
        """Start a new worker in place of a dead one; returns the error the lost episode carries."""
        process = self._workers[slot][0]
        process.join(timeout=5)
        self._workers[slot] = self._spawn()
        return f"worker crashed (exit code {process.exitcode})"

    def close(self) -> None:
        for _process, conn in self._workers:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        for process, _ in self._workers:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
        self._workers = []

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
