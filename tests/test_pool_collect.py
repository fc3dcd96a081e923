"""The env pool (worker processes, crash recovery) and `expbank collect` (acceptance of the ALFWorld issue)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter

from expbank import envs
from expbank.envs.alfworld.authoring import TASK_TYPES
from expbank.envs.pool import EnvPool, EpisodeJob
from expbank.trajectory import read_episodes


def test_collect_expert_wins_every_valid_unseen_game_and_resumes(tmp_path):
    out = tmp_path / "t.jsonl"
    command = ["expbank", "collect", "--env", "alfworld", "--split", "valid_unseen", "--policy", "expert",
               "--workers", "2", "--out", str(out)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    episodes = list(read_episodes(out))
    task_ids = envs.task_ids("alfworld", "valid_unseen")
    assert sorted(e.task_id for e in episodes) == task_ids
    assert all(e.success and e.score == 1.0 and e.error is None for e in episodes)
    assert {e.task_type for e in episodes} == set(TASK_TYPES)
    for episode in episodes:
        assert episode.num_steps == len(episode.steps) and episode.steps[-1].reward == 1.0
        assert episode.steps[0].observation.startswith("You are in the middle of a room")
        assert episode.steps[0].action in episode.steps[0].admissible_actions
    lines = out.read_text()
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and out.read_text() == lines
    assert f"{len(task_ids)} already there" in again.stdout


def test_collect_resumes_after_an_interruption(tmp_path):
    out = tmp_path / "r.jsonl"
    command = ["expbank", "collect", "--env", "alfworld", "--split", "dev", "--policy", "random",
               "--episodes", "4", "--seeds", "2", "--max-steps", "8", "--out", str(out)]
    # a shell's background job starts with SIGINT ignored, and children inherit that: restore Ctrl-C
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 2):
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert 2 <= len(kept) < 8
    with out.open("a") as handle:  # a torn line, as a kill during a write would leave
        handle.write('{"episode_id": "alfworld-dev-')
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    episodes = list(read_episodes(out))
    ids = [e.episode_id for e in episodes]
    assert len(ids) == 8 == len(set(ids))
    assert {e.seed for e in episodes} == {0, 1}
    assert all(e.num_steps <= 8 for e in episodes)
    assert [e.episode_id for e in episodes[: len(kept)]] == [k["episode_id"] for k in kept]


def test_random_policy_is_uniform_over_admissible_actions_and_seeded(tmp_path):
    jobs = [EpisodeJob(f"k{seed}", envs.task_ids("alfworld", "dev")[0], seed, "random") for seed in (0, 0, 1)]
    with EnvPool("alfworld", "dev", workers=1, max_steps=10) as pool:
        results = sorted(pool.play(jobs), key=lambda r: r.job.key)
    actions = [[s["action"] for s in r.steps] for r in results]
    assert actions[0] == actions[1] != actions[2]  # same task and seed -> same episode
    assert all(s["action"] in s["admissible_actions"] and not s["invalid"] for r in results for s in r.steps)


def test_a_crashed_worker_is_replaced_and_its_episode_comes_back_with_an_error():
    task_ids = envs.task_ids("alfworld", "train")[:6]
    jobs = [EpisodeJob(f"job{i}", task_id, 0, "random") for i, task_id in enumerate(task_ids)]
    with EnvPool("alfworld", "train", workers=2, max_steps=50) as pool:
        victim = pool._workers[0][0].pid

        def kill_soon():
            time.sleep(4)
            os.kill(victim, signal.SIGKILL)

        threading.Thread(target=kill_soon, daemon=True).start()
        results = list(pool.play(jobs))
        alive_pids = [process.pid for process, _ in pool._workers]
    assert Counter(r.job.key for r in results) == Counter(j.key for j in jobs)
    crashed = [r for r in results if r.error]
    assert len(crashed) == 1 and "worker crashed" in crashed[0].error
    assert victim not in alive_pids
    assert sum(len(r.steps) == 50 for r in results if not r.error) >= 4
