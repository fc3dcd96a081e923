"""Sampled rollouts: what fixes their random stream, on the real ALFWorld engine with a real (tiny) model."""

from __future__ import annotations

import pytest

from expbank import envs
from expbank.envs.pool import EnvPool
from expbank.training.actors.backends import HFBackend
from expbank.training.agent.protocol import ProtocolSpec
from expbank.training.agent.rollout import RolloutJob, RolloutSettings, rollout


@pytest.fixture(scope="module")
def sampled_actions():
    backend = HFBackend("tiny-random")
    settings = RolloutSettings(env="alfworld", spec=ProtocolSpec("none"), temperature=1.0, max_new_tokens=12)
    task_id = envs.task_ids("alfworld", "valid_unseen")[0]

    def play(*jobs: RolloutJob) -> list[list[str]]:
        with EnvPool("alfworld", "valid_unseen", workers=len(jobs), max_steps=2) as pool:
            records = sorted((r.record for r in rollout(backend, pool, list(jobs), settings, None)),
                             key=lambda r: r["episode_id"])
        return [[step["output"] for step in record["steps"]] for record in records]

    return play, task_id


def test_sampling_does_not_depend_on_where_the_model_lives(sampled_actions):
    """Episode ids name the policy by its path; moving the model folder must not change what a run samples."""
    play, task_id = sampled_actions
    here = play(RolloutJob(f"alfworld-train-{task_id}-/runs/a/model-none-s0-it1-g0", task_id, 0, "it1-g0"),
                RolloutJob(f"alfworld-train-{task_id}-/runs/a/model-none-s0-it1-g1", task_id, 0, "it1-g1"))
    moved = play(RolloutJob(f"alfworld-train-{task_id}-/elsewhere/b/model-none-s0-it1-g0", task_id, 0, "it1-g0"),
                 RolloutJob(f"alfworld-train-{task_id}-/elsewhere/b/model-none-s0-it1-g1", task_id, 0, "it1-g1"))
    assert here == moved
    other_draw = play(RolloutJob(f"alfworld-train-{task_id}-/runs/a/model-none-s0-it2-g0", task_id, 0, "it2-g0"),
                      RolloutJob(f"alfworld-train-{task_id}-/runs/a/model-none-s0-it2-g1", task_id, 0, "it2-g1"))
    assert other_draw != here, "another step's draw samples another stream"
    assert here[0] != here[1], "two members of one group sample differently"
