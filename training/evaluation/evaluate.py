"""``expbank eval CONFIG [k=v ...]``: one arm (actor × memory settings) on a fixed panel, in a run directory.

The run directory holds ``config.yaml``, ``fingerprint.json``, ``episodes.jsonl``, ``episode_stats.jsonl``
(per-episode turn counters for the diagnostics), ``usage.json`` (per invocation: what the backend was asked,
paid, retried and hit in its cache, the served model and request latencies: timing lives here, never in the
episode rows), ``summary.json``, ``report.md`` and plots. Re-running the
same command resumes: finished episodes are not replayed, those that ended with an error are (unless
``run.replay_errors`` is false) and their new records replace the old, and the files end in panel order
either way. The config, the panel and the memory are checked before the run directory is written.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from expbank import envs
from expbank.config import Config
from expbank.envs.pool import EnvPool
from expbank.errors import UserError
from expbank.training.actors.backends import backend_for
from expbank.training.actors.models import with_default_bank
from expbank.training.agent import protocol
from expbank.training.agent.retrieve import Memory
from expbank.training.agent.rollout import RolloutJob, RolloutSettings, rollout
from expbank.training.agent.verdict import FILE as VERDICT_HEAD_FILE
from expbank.training.agent.verdict import VerdictHead
from expbank.training.evaluation import online
from expbank.training.evaluation.report import write_report
from expbank.training.runs import fingerprint, prepare_run_dir, write_json
from expbank.trajectory import (
    Episode,
    EpisodeWriter,
    cut_torn_tail,
    make_episode_id,
    read_episode_ids,
    read_episodes,
)


def panel_task_ids(config: Config) -> list[str]:
    """The panel's task ids: ``panel.task_ids``, else the split's first ``panel.limit`` tasks."""
    available = envs.task_ids(config.env.name, config.env.split, config.env.data_dir, **config.env.options())
    if config.panel.task_ids:
        missing = [t for t in config.panel.task_ids if t not in available]
        if missing:
            raise UserError(f"panel.task_ids not in {config.env.name}/{config.env.split}: {missing[:3]}")
        return list(config.panel.task_ids)
    return available[: config.panel.limit] if config.panel.limit else available


def default_run_dir(config: Config) -> Path:
    model = re.sub(r"[^A-Za-z0-9_.-]+", "_", config.actor.model).strip("_")
    return Path("runs") / f"eval-{config.env.name}-{config.env.split}-{model}-{config.arm_name()}"


def open_memory(config: Config):
    """The arm's memory (None for ``none``, and for an online run from an empty bank); refuses a bank,
    directory or service, built from the evaluated split."""
    if config.memory.mode == "none" or (config.memory.online and config.memory.bank == online.EMPTY):
        return None
    if not config.memory.bank:
        raise UserError(f"memory.mode={config.memory.mode} needs memory.bank (a bank directory or service URL)")
    memory = Memory.from_config(config.memory, config.run.seed)
    if (config.env.name, config.env.split) in memory.source_splits():
        raise UserError(f"bank {config.memory.bank} holds entries made from {config.env.name}/{config.env.split}, "
                        "the split being evaluated; build the bank from other splits")
    return memory


def _rewrite_in_order(path: Path, order: list[str]) -> None:
    """Rewrite a JSONL file keyed by ``episode_id`` in panel order (atomic); of two lines with one id (an
    errored episode played again) the later wins. Split on newlines only: model text may hold characters
    ``str.splitlines`` also breaks at."""
    text = path.read_text(encoding="utf-8")
    lines = {json.loads(line)["episode_id"]: line for line in text.split("\n") if line.strip()}
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(lines[i] + "\n" for i in order if i in lines))
    os.replace(tmp, path)


def policy_folder(config: Config) -> Path:
    """Where the policy's own files live, its verdict head among them: its adapter, or its model folder."""
    return Path(config.actor.adapter or config.actor.model)


def verdict_head(config: Config) -> VerdictHead | None:
    """``decoding.verdict: head``: the head ``expbank sft`` saved beside the policy (its adapter, or its model
    folder when fully fine-tuned)."""
    if config.decoding.verdict != "head":
        return None
    folder = policy_folder(config)
    if not (folder / VERDICT_HEAD_FILE).is_file():
        raise UserError(f"{folder / VERDICT_HEAD_FILE}: not found; decoding.verdict=head needs a policy trained "
                        "with sft.verdict_head: true")
    return VerdictHead.load(folder)


def evaluate(config: Config, progress: bool = True, backend: Any = None) -> dict[str, Any]:
    """Play the panel with the configured actor and memory; returns the run's summary."""
    from tqdm import tqdm

    config = with_default_bank(config)  # a checkpoint plays with the bank snapshot it trained with
    task_ids = panel_task_ids(config)
    memory = open_memory(config)  # before the run directory exists: a mistyped bank must not claim it
    head = verdict_head(config)
    run_dir = prepare_run_dir(config.run.dir or default_run_dir(config), config)
    arm = config.arm_name()
    policy = config.actor.model
    jobs = [RolloutJob(make_episode_id(config.env.name, config.env.split, task_id, policy, arm, seed), task_id, seed)
            for seed in config.panel.seeds for task_id in task_ids]
    extra: dict[str, Any] = {"panel": {"task_ids": task_ids, "seeds": config.panel.seeds}}
    if head is not None:  # which head decided the verdicts: its layer, its states, its score and its threshold
        extra["verdict_head"] = {"layer": head.layer, "base": head.base, "cv_balanced_accuracy": head.cv_balanced_accuracy,
                                 "threshold": head.threshold}
    if config.memory.online:
        jobs = online.stream_order(jobs, config)
        extra["online"] = {"wave": online.wave_size(config), "order": [job.episode_id for job in jobs],
                           "source_bank": config.memory.bank}
    episodes_path, stats_path = run_dir / "episodes.jsonl", run_dir / "episode_stats.jsonl"
    done = read_episode_ids(episodes_path, include_errored=not config.run.replay_errors)
    todo = [job for job in jobs if job.episode_id not in done]

    env = envs.make(config.env.name, split=config.env.split, data_dir=config.env.data_dir, **config.env.options())
    write_json(run_dir / "fingerprint.json", fingerprint(
        config, env.env_fingerprint(), memory.manifest_hash() if memory else None, protocol.PROMPT_VERSION, extra))
    env.close()

    if todo or config.memory.online:
        if backend is None and todo:
            backend = backend_for(config.actor, cache_dir=run_dir / "cache")
        meter = UsageMeter(backend)
        settings = RolloutSettings(
            env=config.env.name, split=config.env.split, arm=arm, run_id=run_dir.name,
            spec=protocol.ProtocolSpec.of(config.memory, config.prompt.system),
            history_length=config.prompt.history_length, temperature=config.decoding.temperature,
            max_new_tokens=config.decoding.max_new_tokens, action=config.decoding.action, verdict_head=head)
        workers = max(1, min(config.run.episodes_in_flight, len(todo)))
        cut_torn_tail(stats_path)
        with EnvPool(config.env.name, config.env.split, config.env.data_dir, workers=workers,
                     max_steps=config.env.max_steps, **config.env.options()) as pool, EpisodeWriter(episodes_path) as writer, \
                stats_path.open("a") as stats_file, \
                tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc=f"eval {arm}", unit="ep",
                     disable=not progress) as bar:

            def play(batch: list[RolloutJob], memory: Memory | None) -> list[dict[str, Any]]:
                records = []
                for result in rollout(backend, pool, batch, settings, memory):
                    writer.write(result.record)
                    counters = {"episode_id": result.episode_id, "arm": arm, **dataclasses.asdict(result.stats)}
                    stats_file.write(json.dumps(counters) + "\n")
                    stats_file.flush()
                    records.append(result.record)
                    bar.update()
                return records

            if config.memory.online:
                _stream(config, run_dir, jobs, done, play)
            else:
                play(todo, memory)
        meter.append_to(run_dir / "usage.json", episodes=len(todo))
    order = [job.episode_id for job in jobs]
    _rewrite_in_order(episodes_path, order)
    if stats_path.exists():
        _rewrite_in_order(stats_path, order)
    return write_report(run_dir)


class UsageMeter:
    """What one ``evaluate`` call cost its backend (the backend may be shared by an ablation's arms): the
    counters' change over the call, request latencies and the served model, for the run's ``usage.json``."""

    def __init__(self, backend: Any):
        self.backend, self.start = backend, time.time()
        usage = getattr(backend, "usage", None)
        self.before = dataclasses.asdict(usage) if usage is not None else {}
        self.hits = getattr(backend, "cache_hits", 0)
        self.latencies = len(getattr(backend, "latencies", []))

    def append_to(self, path: Path, episodes: int) -> None:
        """Add this call's line to ``usage.json`` (a resumed run adds one per invocation)."""
        usage = getattr(self.backend, "usage", None)
        now = dataclasses.asdict(usage) if usage is not None else {}
        latencies = sorted(getattr(self.backend, "latencies", [])[self.latencies:])
        line = {"started": datetime.fromtimestamp(self.start, timezone.utc).isoformat(timespec="seconds"),
                "seconds": round(time.time() - self.start, 3), "episodes": episodes,
                **{"requests" if key == "calls" else key: now[key] - self.before.get(key, 0) for key in now},
                "cache_hits": getattr(self.backend, "cache_hits", 0) - self.hits,
                "served_model": getattr(self.backend, "served_model", None),
                "latency_s": {"mean": round(sum(latencies) / len(latencies), 4),
                              "p50": round(latencies[len(latencies) // 2], 4),
                              "p95": round(latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 4),
                              "max": round(latencies[-1], 4)} if latencies else None}
        record = json.loads(path.read_text()) if path.exists() else {"invocations": []}
        record["invocations"].append(line)
        write_json(path, record)


def _stream(config: Config, run_dir: Path, jobs: list[RolloutJob], done: set[str], play) -> None:
    """Online evaluation: each wave plays what is left of it, then the run's bank absorbs the whole wave."""
    bank = online.OnlineBank(config, run_dir)
    earlier = {e.episode_id: e for e in read_episodes(run_dir / "episodes.jsonl")} if done else {}
    for number, wave in enumerate(online.waves(jobs, online.wave_size(config)), start=1):
        played = play([job for job in wave if job.episode_id not in done], bank.memory)
        finished = earlier | {record["episode_id"]: Episode.model_validate(record) for record in played}
        bank.absorb(number, [finished[job.episode_id] for job in wave])


def headline(summary: dict[str, Any]) -> str:
    """One line with the numbers a user looks for first."""
    parts = []
    for name, arm in summary["arms"].items():
        text = f"{name}: success {arm['success']:.1f}% (n={arm['n']}"
        text += f", {arm['errors']} errors)" if arm.get("errors") else ")"
        if arm.get("score") is not None:
            text += f", score {arm['score']:.1f}"
        if arm.get("macro") is not None:
            text += f", macro {arm['macro']:.1f}"
        parts.append(text)
    return "; ".join(parts)
