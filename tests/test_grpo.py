"""GRPO core: masking, advantages, loss variants (hand-computed), and SFT/GRPO sharing one row builder."""

from __future__ import annotations

import math

import pytest
import torch

from expbank.config import RewardConfig, TrainConfig, TrainLoraConfig
from expbank.training.agent import protocol, targets
from expbank.training.agent.rollout import RolloutResult, TurnStats
from expbank.training.agent.rows import tokenize_conversation
from expbank.training.rl.grpo import (
    batch_normaliser,
    episode_reward,
    group_advantages,
    informative_groups,
    policy_loss,
    training_rows,
)

AGENTIC_TURN = [
    {"role": "system", "content": "You are an agent."},
    {"role": "user", "content": "Task: put a apple in fridge.\n\nCurrent observation:\nYou arrive at countertop 1."},
    {"role": "assistant", "content": "<observe>an apple is here</observe><retrieve>apple fridge</retrieve>"},
    {"role": "user", "content": "<experience>\n[1] situation: holding food | guidance: open the fridge\n</experience>"},
    {"role": "assistant", "content": "<critique>[1] applies</critique><reconstruct>open fridge 1 first"
                                     "</reconstruct><action>take apple 1 from countertop 1</action>"},
]


@pytest.fixture(scope="module")
def tiny():
    from expbank.training.actors.models import load_model

    return load_model("tiny-random")


def test_only_policy_tokens_get_gradient(tiny):
    """Inserted tokens (system, observation, experience) get zero gradient; every policy stage gets some."""
    ids, mask = tokenize_conversation(tiny.tokenizer, AGENTIC_TURN)
    input_ids = torch.tensor([ids])
    logits = tiny.model(input_ids=input_ids).logits.float()
    logits.retain_grad()
    logp = torch.gather(logits[:, :-1].log_softmax(-1), 2, input_ids[:, 1:, None]).squeeze(-1)
    loss, _ = policy_loss(logp, logp.detach(), torch.tensor([1.0]), torch.tensor([mask[1:]]), TrainConfig(),
                          normaliser=float(sum(mask)))
    loss.backward()
    grad_per_target = logits.grad[0, :-1].abs().sum(-1)  # position t predicts token t + 1
    has_grad = (grad_per_target > 0).tolist()
    assert has_grad == [bool(m) for m in mask[1:]]
    trained_text = tiny.tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
    for tag in ("observe", "retrieve", "critique", "reconstruct", "action"):
        assert f"<{tag}>" in trained_text, tag
    masked_text = tiny.tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if not m])
    assert "<experience>" in masked_text and "You arrive at countertop 1." in masked_text
    assert "<experience>" not in trained_text and "countertop 1." not in trained_text.split("<action>")[0]


def test_sft_records_and_grpo_rows_share_the_protocol_and_row_builder(tiny):
    """An SFT record tokenises through the same function, and its target parses cleanly under §5."""
    spec = protocol.ProtocolSpec("bank", "agentic", True)
    blocks = targets.target_blocks(spec, "put a apple in fridge.", "You arrive at countertop 1.",
                                   "pick_and_place_simple", "take apple 1 from countertop 1", [])
    first = targets._render(blocks, spec.first_stage_tags())
    second = targets._render(blocks, spec.second_stage_tags())
    assert not protocol.parse_output(first + second, spec.tags()).violations
    assert blocks["reconstruct"] == "NONE"
    ids, mask = tokenize_conversation(tiny.tokenizer, AGENTIC_TURN)
    assert len(ids) == len(mask) and 0 < sum(mask) < len(mask)


def test_group_advantages_by_hand():
    rewards = [10.0, 0.0, 0.0, 2.0]
    mean = 3.0
    std = math.sqrt(((7**2) + 9 + 9 + 1) / 4)
    scaled = group_advantages(rewards, scale=True)
    assert scaled == pytest.approx([(r - mean) / (std + 1e-4) for r in rewards])
    assert group_advantages(rewards, scale=False) == pytest.approx([7.0, -3.0, -3.0, -1.0])
    assert group_advantages([1.0, 1.0], scale=True) == [0.0, 0.0]


def _result(record: dict, format_score: float, turns: int = 0) -> RolloutResult:
    return RolloutResult(record, TurnStats(format_score=format_score), [AGENTIC_TURN[:3]] * turns)


def test_episode_reward_by_hand():
    record = {"env": "webshop", "score": 0.5, "success": False, "num_invalid": 2}
    reward = RewardConfig(outcome_scale=10, format_weight=0.1, invalid_penalty=0.1)
    assert episode_reward(_result(record, 0.75), reward) == pytest.approx(10 * 0.5 + 0.1 * 0.75 - 0.2)
    assert episode_reward(_result(record, 0.75), reward.model_copy(update={"webshop_outcome": "success"})) == \
        pytest.approx(0.075 - 0.2)
    alf = {**record, "env": "alfworld", "success": True}
    assert episode_reward(_result(alf, 0.75), reward) == pytest.approx(10 + 0.075 - 0.2)


def test_informative_groups_count_tasks_whose_rewards_differ():
    records = [{"task_id": task, "env": "alfworld"} for task in ("a", "a", "b", "b", "c", "c")]
    results = [_result(record, 0.0) for record in records]
    assert informative_groups(results, [1.0, 0.0, 1.0, 1.0, 0.0, 0.5]) == 2  # a and c differ, b agrees
    assert informative_groups(results, [0.0] * 6) == 0


def test_errored_episodes_are_left_out_of_their_group_and_a_step_of_errors_stops_the_run(tiny):
    """A reset that failed (a full disk) is not the policy's loss: scored 0 beside a win it would make the
    group look informative and push the win up; a step where every episode failed stops the run."""
    from expbank.errors import UserError
    from expbank.training.rl.distributed import OneProcess
    from expbank.training.rl.grpo import refuse_failed_step

    won = _result({"task_id": "a", "env": "alfworld", "error": None}, 1.0, turns=1)
    failed = _result({"task_id": "a", "env": "alfworld", "error": "reset failed: OSError: [Errno 28]"}, 0.0)
    assert informative_groups([won, won, failed], [10.0, 10.0, 0.0]) == 0
    rows, zero_variance = training_rows([won, won, failed], [10.0, 10.0, 0.0], tiny.tokenizer,
                                        TrainConfig(drop_zero_variance=True))
    assert rows == [] and zero_variance == 1
    one = OneProcess(torch.device("cpu"))
    refuse_failed_step(one, 3, [won, failed])
    with pytest.raises(UserError, match="step 3: all 2 episodes ended in an error, e.g. reset failed"):
        refuse_failed_step(one, 3, [failed, failed])


@pytest.mark.parametrize("rounds", [0, 2])
def test_dynamic_sampling_plays_fresh_tasks_while_no_group_differs(tmp_path, rounds):
    """With every reward 0 no group carries a signal: ``resample_rounds`` more rounds of fresh tasks are
    played (DAPO's dynamic sampling), and none without it."""
    from expbank.config import config_from_tree
    from expbank.training.rl import grpo

    config = config_from_tree({
        "env": {"name": "webshop", "split": "test", "max_steps": 1}, "report": {"splits": ["test"]},
        "actor": {"backend": "hf", "model": "tiny-random"}, "memory": {"mode": "none"},
        "decoding": {"temperature": 1.0, "max_new_tokens": 4}, "select": {"every": 0},
        "reward": {"outcome_scale": 0.0, "format_weight": 0.0, "invalid_penalty": 0.0},
        "train": {"steps": 1, "split": "train", "tasks_per_step": 2, "group_size": 2, "resample_rounds": rounds,
                  "lora": {"enabled": False}},
        "run": {"dir": str(tmp_path / "run"), "seed": 0, "episodes_in_flight": 4}}, "test")
    run = grpo.start_run(config, resume=False)
    with grpo.rollout_pool(run) as pool:
        results, rewards = grpo.play_groups(run, pool, 1)
    tasks = [result.record["task_id"] for result in results]
    assert len(set(tasks)) == 2 * (1 + rounds) and len(tasks) == 2 * len(set(tasks))  # fresh tasks, whole groups
    assert rewards == [0.0] * len(results)
    assert [result.episode_id for result in results] == sorted(result.episode_id for result in results)


@pytest.mark.parametrize("balance", [False, True])
def test_balanced_turns_make_each_groups_rows_sum_to_zero(tiny, balance):
    """A won episode of 2 turns and a lost one of 4: plain rows sum to 2·A_win + 4·A_loss < 0 (a net push down
    on every shared token); with ``balance_turns`` each turn gets A × (3 mean turns / its episode's turns)."""

    def episode(success: bool, turns: int) -> RolloutResult:
        return _result({"task_id": "t", "env": "alfworld", "success": success, "score": float(success),
                        "num_invalid": 0}, 1.0, turns)

    results = [episode(True, 2), episode(False, 4)]
    rewards = [episode_reward(result, RewardConfig()) for result in results]
    rows, _ = training_rows(results, rewards, tiny.tokenizer, TrainConfig(balance_turns=balance))
    advantages = [advantage for _, _, advantage in rows]
    win, loss = group_advantages([10.1, 0.1], scale=True)
    if balance:
        assert advantages == pytest.approx([win * 1.5] * 2 + [loss * 0.75] * 4)
        assert sum(advantages) == pytest.approx(0.0, abs=1e-9)
    else:
        assert advantages == pytest.approx([win] * 2 + [loss] * 4)
        assert sum(advantages) < -1.0


# A fixed batch: 2 rows, 3 target positions each; row 0 has 2 loss tokens, row 1 has 3.
LOGP = torch.log(torch.tensor([[0.5, 0.25, 0.9], [0.4, 0.2, 0.1]]))
OLD = torch.log(torch.tensor([[0.4, 0.25, 0.5], [0.5, 0.2, 0.2]]))
REF = torch.log(torch.tensor([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]))
MASK = torch.tensor([[1, 1, 0], [1, 1, 1]])
ADV = torch.tensor([1.0, -0.5])


def _hand(eps_low=0.2, eps_high=0.2, beta=0.0):
    """Per-token losses computed with plain floats."""
    out = []
    for r in range(2):
        row = []
        for t in range(3):
            p, o, ref = math.exp(LOGP[r, t]), math.exp(OLD[r, t]), math.exp(REF[r, t])
            ratio = p / o
            a = float(ADV[r])
            clipped = min(max(ratio, 1 - eps_low), 1 + eps_high)
            value = -min(ratio * a, clipped * a)
            kl = ref / p - math.log(ref / p) - 1
            row.append(value + beta * kl)
        out.append(row)
    return out


@pytest.mark.parametrize("aggregation", ["token_mean", "sequence_mean", "dr_grpo"])
@pytest.mark.parametrize(("epsilon_high", "beta"), [(None, 0.0), (0.28, 0.0), (None, 0.04)])
def test_loss_variants_by_hand(aggregation, epsilon_high, beta):
    cfg = TrainConfig(loss_aggregation=aggregation, epsilon=0.2, epsilon_high=epsilon_high, beta=beta)
    per_token = _hand(0.2, epsilon_high or 0.2, beta)
    masked = [[v if MASK[r, t] else 0.0 for t, v in enumerate(row)] for r, row in enumerate(per_token)]
    max_new_tokens = 4
    normaliser = batch_normaliser(MASK.tolist(), cfg, max_new_tokens)
    if aggregation == "token_mean":
        expected = sum(map(sum, masked)) / 5
        assert normaliser == 5
    elif aggregation == "sequence_mean":
        expected = (sum(masked[0]) / 2 + sum(masked[1]) / 3) / 2
        assert normaliser == 2
    else:
        expected = sum(map(sum, masked)) / (2 * max_new_tokens)
        assert normaliser == 8
    loss, info = policy_loss(LOGP, OLD, ADV, MASK, cfg, normaliser, REF if beta else None)
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    assert 0.0 <= info["clip_fraction"] <= 1.0
    if beta:
        assert info["kl"] > 0


def test_micro_batches_add_up_to_the_whole_batch():
    cfg = TrainConfig(loss_aggregation="token_mean")
    whole, _ = policy_loss(LOGP, OLD, ADV, MASK, cfg, 5.0)
    parts = [policy_loss(LOGP[i:i + 1], OLD[i:i + 1], ADV[i:i + 1], MASK[i:i + 1], cfg, 5.0)[0] for i in range(2)]
    assert float(sum(parts)) == pytest.approx(float(whole))


def test_lora_run_from_an_sft_adapter_keeps_its_start_as_the_kl_reference(tmp_path):
    """Continuing an SFT adapter with KL: the reference is base + SFT adapter (KL 0 at step 0), not the bare
    base, and only the run's own adapter trains and is saved."""
    from peft import LoraConfig, get_peft_model

    from expbank.config import config_from_tree
    from expbank.training.actors.models import load_model
    from expbank.training.rl.grpo import build_policy, save_checkpoint, token_logprobs

    loaded = load_model("tiny-random")
    sft = get_peft_model(loaded.model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM",
                                                  init_lora_weights=False))
    sft.save_pretrained(tmp_path / "sft")
    config = config_from_tree({
        "env": {"name": "webshop", "split": "test"}, "report": {"splits": ["test"]},
        "actor": {"backend": "hf", "model": "tiny-random", "adapter": str(tmp_path / "sft")},
        "train": {"beta": 0.04}}, "test")
    policy = build_policy(config, torch.device("cpu"))
    ids = torch.randint(3, 100, (2, 12), generator=torch.Generator().manual_seed(0))
    attention = torch.ones_like(ids)
    trainable_before = sorted(policy.trainable())
    with torch.no_grad():
        start = token_logprobs(policy.model, ids, attention)
        with policy.model.disable_adapter():
            bare_base = token_logprobs(policy.model, ids, attention)
    assert torch.allclose(policy.ref_logprobs(ids, attention), start)
    assert not torch.allclose(bare_base, start, atol=1e-4)  # the adapter matters: the base is another reference
    assert sorted(policy.trainable()) == trainable_before and trainable_before
    assert all(".reference." not in name for name in trainable_before)
    optimizer = torch.optim.AdamW(policy.trainable().values())
    save_checkpoint(tmp_path / "run", 1, policy, optimizer)
    saved = tmp_path / "run" / "checkpoints" / "step-00001" / "model"
    assert (saved / "adapter_config.json").exists() and not (saved / "reference").exists()


@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_the_update_takes_log_probs_at_the_sampling_temperature(temperature):
    """The gradient of ``update`` is that of the loss on log_softmax(logits / T), the distribution the
    rollouts sampled from, not on the untempered one."""
    from expbank.training.actors.models import load_model
    from expbank.training.rl.grpo import Policy, loss_positions, update

    loaded = load_model("tiny-random", device="cpu", dtype="float32")
    model, tokenizer = loaded.model, loaded.tokenizer
    ids, mask = tokenize_conversation(tokenizer, AGENTIC_TURN)
    cfg = TrainConfig(lora=TrainLoraConfig(enabled=False), max_grad_norm=1e9)
    update(Policy(model, tokenizer, "tiny-random"), torch.optim.SGD(model.parameters(), lr=0.0),
           [(ids, mask, 1.0)], cfg, 8, temperature=temperature)
    got = {name: p.grad.clone() for name, p in model.named_parameters()}

    def grads_at(t: float) -> dict[str, torch.Tensor]:
        model.zero_grad()
        target, kept = torch.tensor([ids]), torch.tensor([mask[1:]])
        keep = loss_positions(kept)
        logits = model(input_ids=target).logits[:, :-1].float() / t
        logp = torch.gather(logits.log_softmax(-1), 2, target[:, 1:, None]).squeeze(-1)[:, -keep:]
        loss, _ = policy_loss(logp, logp.detach(), torch.tensor([1.0]), kept[:, -keep:], cfg,
                              normaliser=float(sum(mask)))
        loss.backward()
        return {name: p.grad.clone() for name, p in model.named_parameters()}

    expected, untempered = grads_at(temperature), grads_at(1.0)
    for name, grad in got.items():
        assert torch.allclose(grad, expected[name], atol=1e-7, rtol=1e-4), name
    assert any(not torch.allclose(g, untempered[n], atol=1e-7, rtol=1e-4) for n, g in got.items()) == (temperature != 1.0)


@pytest.mark.parametrize("lora", [True, False])
def test_a_new_policy_samples_in_eval_mode_with_its_kv_cache(lora):
    """The first step's rollouts run before any update: the policy must already be in eval mode
    (``get_peft_model`` leaves it in train mode, where LoRA dropout would perturb what is sampled), and
    generation must keep its KV cache although gradient checkpointing is on for the update."""
    from expbank.config import config_from_tree
    from expbank.training.rl.grpo import build_policy

    config = config_from_tree({
        "env": {"name": "webshop", "split": "test"}, "report": {"splits": ["test"]},
        "actor": {"backend": "hf", "model": "tiny-random"},
        "train": {"gradient_checkpointing": True, "lora": {"enabled": lora, "dropout": 0.5}}}, "test")
    policy = build_policy(config, torch.device("cpu"))
    assert not policy.model.training and not any(module.training for module in policy.model.modules())
    assert any(getattr(module, "gradient_checkpointing", False) for module in policy.model.modules())  # for the update
    ids = torch.randint(3, 100, (1, 6), generator=torch.Generator().manual_seed(0))
    seen = []
    hook = policy.model.get_base_model() if lora else policy.model
    handle = hook.model.layers[0].register_forward_hook(lambda _m, args, _o: seen.append(args[0].shape[1]))
    with torch.no_grad():
        policy.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, do_sample=False,
                              pad_token_id=0)
    handle.remove()
    assert seen == [6, 1, 1, 1]  # the prompt once, then one new token per step: the cache is used


def test_rollouts_generate_for_every_episode_in_flight_at_once(tmp_path):
    """The generation batch is the episodes in flight, not the update's micro-batch: a recipe's 16 episodes
    with micro-batches of 2 would otherwise generate 2 at a time on a GPU."""
    from expbank.config import config_from_tree
    from expbank.training.rl import grpo

    config = config_from_tree({
        "env": {"name": "webshop", "split": "test", "max_steps": 1}, "report": {"splits": ["test"]},
        "actor": {"backend": "hf", "model": "tiny-random"}, "memory": {"mode": "none"},
        "decoding": {"temperature": 1.0, "max_new_tokens": 4}, "select": {"every": 0},
        "train": {"steps": 1, "split": "train", "tasks_per_step": 2, "group_size": 2, "micro_batch_size": 1,
                  "lora": {"enabled": False}},
        "run": {"dir": str(tmp_path / "run"), "seed": 0, "episodes_in_flight": 4}}, "test")
    run = grpo.start_run(config, resume=False)
    with grpo.rollout_pool(run) as pool:
        results, _ = grpo.play_groups(run, pool, 1)
    assert len(results) == 4 and all(len(result.conversations) == 1 for result in results)
    assert run.backend.usage.calls == 1  # one turn each, one generate call for all four
