"""``decoding.action: scored``: the admissible action the policy finds likeliest after its own reply, on the real
ALFWorld engine with a real (tiny) model."""

from __future__ import annotations

import pytest
import torch

from expbank import envs
from expbank.config import ConfigError, load_config
from expbank.envs.pool import EnvPool
from expbank.errors import UserError
from expbank.training.actors.backends import HFBackend
from expbank.training.agent.protocol import ACTION_STOP, ProtocolSpec
from expbank.training.agent.rollout import RolloutJob, RolloutSettings, rollout
from expbank.training.rl import grpo

CONVERSATION = [{"role": "user", "content": "You arrive at drawer 1. On the drawer 1, you see a egg 1.\n"
                                            "Admissible actions:\ngo to shelf 1\ntake egg 1 from drawer 1"}]


@pytest.fixture(scope="module")
def backend() -> HFBackend:
    return HFBackend("tiny-random")


def full_sequence_logprob(backend: HFBackend, context: str, option: str) -> float:
    """The option's log-probability from one uncached forward over the whole text (the reference)."""
    ids = backend.tokenizer(context + option, add_special_tokens=False)["input_ids"]
    alone = backend.tokenizer(context, add_special_tokens=False)["input_ids"]
    start = next((i for i, (a, b) in enumerate(zip(alone, ids, strict=False)) if a != b), len(alone))
    with torch.no_grad():
        logprobs = backend.model(input_ids=torch.tensor([ids])).logits.float().log_softmax(-1)[0]
    return float(sum(logprobs[i - 1, ids[i]] for i in range(start, len(ids))))


def test_option_scores_equal_one_uncached_forward_per_option(backend):
    """The cached, right-padded batch must score each option exactly as the whole text scored alone; options
    of different lengths in one batch catch padding that leaks into a shorter option's score."""
    prefix = "<observe>drawer 1</observe><action>"
    options = ["go to shelf 1" + ACTION_STOP, "take egg 1 from drawer 1" + ACTION_STOP, "look" + ACTION_STOP]
    scores = backend.score_options([CONVERSATION], [prefix], [options])[0]
    context = backend.render(CONVERSATION) + prefix
    reference = [full_sequence_logprob(backend, context, option) for option in options]
    assert scores == pytest.approx(reference, abs=1e-4)
    assert len(set(scores)) == 3


def test_scored_rollout_takes_only_admissible_actions(backend):
    """A random tiny model writes almost no admissible action; scored, every turn takes one and the reply
    records it in its ``<action>`` block; the turns whose written action was replaced are counted."""
    task_id = envs.task_ids("alfworld", "valid_unseen")[0]
    jobs = [RolloutJob(f"scored-{seed}", task_id, seed) for seed in range(2)]
    results = {}
    for action in ("generated", "scored"):
        settings = RolloutSettings(env="alfworld", spec=ProtocolSpec("none"), max_new_tokens=8, action=action)
        with EnvPool("alfworld", "valid_unseen", workers=2, max_steps=3) as pool:
            results[action] = list(rollout(backend, pool, jobs, settings, None))
    generated = [step for result in results["generated"] for step in result.record["steps"]]
    assert sum(step["invalid"] for step in generated) == len(generated), "the random model's own actions"
    scored = [step for result in results["scored"] for step in result.record["steps"]]
    assert len(scored) == 6
    for step in scored:
        assert step["action"] in step["admissible_actions"] and not step["invalid"]
        assert step["output"].endswith(f"<action>{step['action']}{ACTION_STOP}")
    assert sum(result.stats.rescored_actions for result in results["scored"]) == 6


def test_sampled_scored_actions_are_admissible_and_replay_the_same(backend):
    """At temperature > 0 the action is drawn from the scored options, seeded by episode and step."""
    task_id = envs.task_ids("alfworld", "valid_unseen")[0]
    settings = RolloutSettings(env="alfworld", spec=ProtocolSpec("none"), max_new_tokens=8, action="scored",
                               temperature=1.0)
    played = []
    for _ in range(2):
        jobs = [RolloutJob(f"sampled-{draw}", task_id, 0, draw) for draw in ("g0", "g1", "g2", "g3")]
        with EnvPool("alfworld", "valid_unseen", workers=2, max_steps=3) as pool:
            records = sorted((r.record for r in rollout(backend, pool, jobs, settings, None)),
                             key=lambda r: r["episode_id"])
        played.append([[step["action"] for step in record["steps"]] for record in records])
        assert all(step["action"] in step["admissible_actions"] for record in records for step in record["steps"])
    assert played[0] == played[1], "a rerun draws the same actions"
    assert len({tuple(actions) for actions in played[0]}) > 1, "the draws of one task differ"


def test_scored_actions_need_a_local_model_and_are_not_trained_on(tmp_path):
    with pytest.raises(ConfigError, match="decoding.action=scored needs actor.backend=hf"):
        load_config(None, ["decoding.action=scored", "actor.backend=openai", "actor.model=m"])
    with pytest.raises(ConfigError, match="decoding.verdict=head needs actor.backend=hf .* not hidden states"):
        load_config(None, ["decoding.verdict=head", "actor.backend=openai", "actor.model=m"])
    config = load_config(None, ["decoding.action=scored", "actor.model=tiny-random", f"run.dir={tmp_path / 'run'}"])
    with pytest.raises(UserError, match="decoding.action=scored is for evaluation"):
        grpo.start_run(config, resume=False)
    assert not (tmp_path / "run").exists()


class BrokenWriter(HFBackend):
    """tiny-random scoring for real, writing what a policy whose format broke down wrote on the households
    stream: a reply that opens ``<action>`` twice."""

    def generate(self, messages: list[list[dict]], **sampling) -> list[str]:
        return ["<observe>You are 1</observe><action>go to drawer 9 from shelf 1</reconstruct><action>look"
                for _ in messages]


def test_a_reply_that_opens_action_twice_still_takes_the_scored_action():
    """The scored action replaces everything from the first ``<action>``: the step's action (what the engine
    received) is admissible, not the broken text between two action tags."""
    task_id = envs.task_ids("alfworld", "valid_unseen")[0]
    settings = RolloutSettings(env="alfworld", spec=ProtocolSpec("none"), max_new_tokens=8, action="scored")
    with EnvPool("alfworld", "valid_unseen", workers=1, max_steps=2) as pool:
        [result] = rollout(BrokenWriter("tiny-random"), pool, [RolloutJob("broken", task_id, 0)], settings, None)
    steps = result.record["steps"]
    assert len(steps) == 2
    for step in steps:
        assert step["action"] in step["admissible_actions"] and not step["invalid"]
        assert step["output"] == f"<observe>You are 1</observe><action>{step['action']}{ACTION_STOP}"
