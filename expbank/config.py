"""Run configs: YAML files validated on load, with dotted ``key=value`` overrides (docs/design.md §9).

Every section is a pydantic model that forbids unknown keys, so a typo such as ``memory.kk`` fails on
load with the closest valid key suggested instead of silently doing nothing. Every key has a description,
from which ``scripts/config_reference.py`` writes the table of docs/config-reference.md. A renamed key is
still read for one release, with a warning naming its new name (:data:`RENAMED_KEYS`), so configs and run
directories written before the rename load (and resume) unchanged.
"""

from __future__ import annotations

import copy
import difflib
import logging
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo

from expbank.errors import UserError

log = logging.getLogger(__name__)


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EnvConfig(Section):
    name: Literal["alfworld", "webshop"] = Field("alfworld", description="Environment: `alfworld` or `webshop`.")
    split: str = Field("valid_unseen", description=(
        "Split played by `eval`/`ablate` (ALFWorld `train`, `dev`, `valid_seen`, `valid_unseen`; WebShop `train`, "
        "`dev`, `test`). An evaluation refuses a bank holding entries made from this split."))
    data_dir: str | None = Field(None, description=(
        "Official data folder; `null` = `$ALFWORLD_DATA` for ALFWorld if set, else the bundled data."))
    max_steps: int = Field(50, ge=1, description=(
        "Step limit per episode (ALFWorld papers use 50, WebShop 15); reaching it truncates the episode."))
    split_scheme: Literal["original", "expbank"] = Field(
        "original", description="WebShop official data: `original` = the original's IL/RL baselines (test "
        "goals 0-499, dev 500-1499, train 1500+); `expbank` = test 0-499, dev 500-999, train 1000+.")
    spacy_model: str | None = Field(
        None, description="WebShop: spaCy pipeline package or folder that tags title nouns for the type "
        "reward; `null` = the installed English one.")
    allow_fallback_nouns: bool = Field(
        False, description="WebShop: play official data without a spaCy pipeline, with the approximate "
        "stop-word noun rule (recorded in the run fingerprint).")

    def options(self) -> dict[str, Any]:
        """The environment-specific keyword options ``envs.make``, ``envs.task_ids`` and ``EnvPool`` take."""
        if self.name != "webshop":
            return {}
        return {"split_scheme": self.split_scheme, "spacy_model": self.spacy_model,
                "allow_fallback_nouns": self.allow_fallback_nouns}


class PanelConfig(Section):
    task_ids: list[str] | None = Field(
        None, description="Explicit task ids to evaluate (in this order); `null` = the split's tasks.")
    limit: int | None = Field(
        None, ge=1, description="Evaluate only the first N tasks of the split, in split order; `null` = all.")
    seeds: list[int] = Field(
        default_factory=lambda: [0], description="Seeds; every task is played once per seed. Several seeds "
        "add mean ± sd to the report.")


class PriceConfig(Section):
    """What an API model costs, for the cost line of ``summary.json`` and the report."""

    prompt: float | None = Field(None, ge=0, description="US$ per million prompt tokens; `null` = no cost line.")
    completion: float | None = Field(None, ge=0, description="US$ per million completion tokens.")


class ActorConfig(Section):
    backend: Literal["hf", "openai", "vllm"] = Field(
        "hf", description="`hf` (local transformers), `openai` (any OpenAI-compatible endpoint; evaluation "
        "only) or `vllm` (in-process, the `vllm` extra; in `expbank train` a colocated engine per GPU given "
        "the policy's weights every step).")
    model: str = Field(
        "smollm2-135m", description="`smollm2-135m`, `tiny-random` (tests), a local folder, a hub name, a "
        "training checkpoint (`RUN/checkpoints/step-N`) or an API model name.")
    adapter: str | None = Field(
        None, description="A PEFT (LoRA) adapter folder put on `actor.model`, e.g. "
        "`RUN/checkpoints/step-N/model` or an SFT run's `model/`.")
    base_url: str | None = Field(
        None, description="Endpoint of the `openai` backend; `null` = `$OPENAI_BASE_URL`.")
    api_key_env: str = Field(
        "OPENAI_API_KEY", description="Name of the environment variable holding the API key.")
    timeout_s: float = Field(
        60.0, gt=0, description="`openai` backend: seconds to connect and to wait for each read of a reply.")
    deadline_s: float = Field(
        300.0, gt=0, description="`openai` backend: seconds one request may take in all, retries included; "
        "a server that trickles its reply fails here.")
    max_reply_chars: int = Field(
        32_000, ge=1, description="`openai` backend: a reply is cut to this many characters, and a body too "
        "large to hold them fails the request.")
    max_retries: int = Field(
        5, ge=0, description="`openai` backend: retries of a failed request (the openai client's own: 408, 409, "
        "429, 5xx, timeouts, connection errors; exponential backoff or the server's `Retry-After`).")
    concurrency: int = Field(
        4, ge=1, description="`openai` backend: requests in flight at once (the conversations of one batch).")
    cache: bool = Field(
        False, description="`openai` backend: keep every reply in `RUN/cache`, keyed by the full request "
        "(model, messages, sampling); a rerun replays hits for free (counted in `usage.json`).")
    price: PriceConfig = Field(default_factory=PriceConfig)


class MemoryConfig(Section):
    mode: Literal["none", "raw", "bank"] = Field(
        "none", description="`none` (no experience), `raw` (trajectory excerpts: raw replay) or `bank` "
        "(distilled strategy/warning entries).")
    retrieval: Literal["fixed", "agentic"] = Field(
        "fixed", description="`fixed`: the system retrieves with the task and observation each step; "
        "`agentic`: the policy writes a `<retrieve>` query first.")
    reconstruct: bool = Field(
        True, description="Ask for `<critique>` and `<reconstruct>` before the action; `false` is the "
        "without-reconstruction ablation.")
    k: int = Field(
        3, ge=1, description="Entries retrieved per step (raw and bank arms use the same k and token cap).")
    bank: str | None = Field(
        None, description="A bank directory or the URL of `expbank serve` (`http://host:port`); `empty` "
        "with `memory.online`.")
    source: Literal["matched", "none", "random"] = Field(
        "matched", description="Source-observation counterfactual: show each entry's own source observation "
        "(`matched`), none, or another entry's (`random`).")
    observation: Literal["current", "first"] = Field(
        "current", description="The observation retrieval matches entry situations with: the step's own "
        "(`current`), or the episode's first (`first`: every step is shown what the first step was; "
        "ALFWorld's later observations describe one receptacle, not the room the entries were written in).")
    rooms: Literal["any", "other"] = Field(
        "any", description="`other`: never show entries made in the episode's own ALFWorld room (scene), the "
        "wrong-facts counterfactual (`sft-bank-other`).")
    source_chars: int = Field(
        200, ge=0, description="Characters of each item's quoted source observation (0: not shown); raw and "
        "bank arms alike.")
    guidance_tokens: int = Field(
        256, ge=1, description="Token cap of each item's guidance with its actions; raw and bank arms alike.")
    online: bool = Field(
        False, description="Online (streaming) evaluation: play the panel in `online_order` in waves of "
        "`online_wave` episodes; after each wave its episodes are credited to the entries they were shown, "
        "summarised (gate, dedup) into the run's own copy of the bank (`RUN/bank`) and pruned every "
        "`train.bank.prune_every` waves by the `train.bank` rule, so later waves retrieve what earlier ones "
        "learnt. `memory.bank` is never written; `empty` starts from an empty bank.")
    online_wave: int | None = Field(
        None, ge=1, description="Online evaluation: episodes per wave; `null` = `run.episodes_in_flight`.")
    online_order: Literal["shuffled", "panel"] = Field(
        "shuffled", description="Online evaluation: the stream's order, the panel shuffled with `run.seed` or "
        "the panel's own order (a split written as a stream, e.g. the households `stream`).")
    online_credit: Literal["shown", "followed"] = Field(
        "shown", description="Online evaluation: which entries an episode's outcome credits: every entry it "
        "was shown (`shown`), or only those shown at a step whose action is one of the entry's actions "
        "(`followed`, for actors that do not say what they used).")

    @model_validator(mode="after")
    def _online_has_a_bank_to_grow(self) -> MemoryConfig:
        if self.online:
            if self.mode == "none":
                raise ValueError("memory.online needs memory.mode raw or bank (memory none has no bank to grow)")
            if self.bank and self.bank.startswith(("http://", "https://")):
                raise ValueError(f"memory.online grows a local copy of the bank; memory.bank={self.bank} is a "
                                 "service (give a bank directory, or `empty`)")
        elif self.bank == "empty":
            raise ValueError("memory.bank=empty is for memory.online (an evaluation against an empty bank "
                             "retrieves nothing)")
        return self


class PromptConfig(Section):
    history_length: int = Field(
        3, ge=0, description="Previous (observation, action) pairs shown in each step's prompt.")
    system: Literal["full", "none"] = Field(
        "full", description="`full`: a system message with the rules, the answer grammar and an example; "
        "`none`: no system message, for a policy trained from scratch on the rows (the same ~200 tokens in "
        "every row teach it nothing and cost a third of its training compute).")


class DecodingConfig(Section):
    temperature: float = Field(
        0.0, ge=0.0, description="Sampling temperature; 0 = greedy (evaluation). GRPO samples at 1.0 when "
        "this is 0.")
    max_new_tokens: int = Field(128, ge=1, description="Token cap of each reply.")
    action: Literal["generated", "scored"] = Field(
        "generated", description="`generated`: the action is what the policy writes in `<action>`; `scored` "
        "(evaluation, `actor.backend: hf`): the policy writes its reply up to `<action>`, then every admissible "
        "action is scored by the probability the policy gives it there and the likeliest is taken (at "
        "`temperature` > 0 one is drawn from their softmax; docs/design.md §5), so a small policy cannot act "
        "outside the admissible list.")
    verdict: Literal["generated", "head"] = Field(
        "generated", description="`generated`: the critique's verdicts are what the policy writes; `head` "
        "(evaluation, `actor.backend: hf`, a policy trained with `sft.verdict_head`): a linear head on the "
        "policy's hidden state decides each item's \"applies\" or \"does not apply\" and the policy writes the "
        "rest of its reply after the head's words (docs/training.md, \"The verdict head\").")


class RewardConfig(Section):
    outcome_scale: float = Field(
        10.0, description="GRPO reward weight of the episode outcome (the literature's recipes use 10).")
    format_weight: float = Field(
        0.1, description="Reward weight of the fraction of turns that follow the tagged grammar.")
    invalid_penalty: float = Field(0.1, description="Reward subtracted per invalid action.")
    webshop_outcome: Literal["score", "success"] = Field(
        "score", description="WebShop outcome: the purchase `score`, or `success` (1 iff the score is 1).")


class TrainLoraConfig(Section):
    """LoRA adapters of ``expbank train`` (their shape is also what ``expbank sft`` trains)."""

    enabled: bool = Field(
        True, description="Train new LoRA adapters (`true`) or all weights; a run with `actor.adapter` "
        "continues that adapter either way.")
    r: int = Field(16, ge=1, description="LoRA rank.")
    alpha: int = Field(32, ge=1, description="LoRA alpha; the adapter's update is scaled by alpha / r.")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="LoRA dropout probability.")
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        description="Module names that get LoRA adapters.")


class CheckpointConfig(Section):
    every: int = Field(
        1, ge=1, description="Checkpoint every N steps (and at the last step and every selection "
        "evaluation); `--resume` continues from the newest.")
    keep: int | None = Field(
        None, ge=1, description="Keep only the newest N checkpoints (the best one is always kept); `null` = "
        "all.")


class LivingBankConfig(Section):
    """The bank a GRPO run grows from its episodes (``memory.mode: bank`` with a local ``memory.bank``)."""

    update_every: int = Field(
        1, ge=0, description="Living bank: summarise kept training episodes into the run's copy of the bank "
        "every N steps; 0 = the bank stays frozen.")
    episodes_per_group: int = Field(
        2, ge=1, description="Success/failure-balanced episodes of each group kept for the bank.")
    summariser: Literal["rule", "llm"] = Field(
        "rule", description="Summariser of the living bank: `rule` or `llm`.")
    sightings: bool = Field(
        False, description="`rule` summariser, ALFWorld: also write where each object an episode saw lay (a find "
        "strategy per object seen, but the task's own once taken), so a failed episode teaches the places of the "
        "objects it passed.")
    summariser_model: str | None = Field(
        None, description="`llm` summariser: model name on the server; `null` = `actor.model`.")
    summariser_base_url: str | None = Field(
        None, description="`llm` summariser: an OpenAI-compatible server (e.g. `expbank serve-model`).")
    prune_every: int = Field(0, ge=0, description="Prune the living bank every N steps; 0 = never.")
    prune_min_uses: int = Field(
        3, ge=1, description="Pruning: only entries shown in at least this many episodes can be pruned.")
    prune_threshold: float = Field(
        0.3, ge=0.0, le=1.0, description="Pruning: remove entries whose utility (successes+1)/(uses+2) is "
        "below this.")
    capacity: int | None = Field(
        None, ge=1, description="Pruning: evict the lowest-utility entries above this many entries; `null` = "
        "no cap.")
    prune_by: Literal["laplace", "recent"] = Field(
        "laplace", description="Pruning: compare `prune_threshold` with the Laplace utility, or with `recent`, "
        "a success rate weighted to recent episodes (r <- r/2 + outcome/2), which retires an entry that stopped "
        "being true after 2 failures where Laplace needs 14 after 5 successes.")
    retire_disproved: bool = Field(
        False, description="Retire a take fact (where an object lay) an episode disproved as its entries are "
        "written: the episode acted on the entry, and saw the place without the object in the entry's room, or "
        "took the object from another place in the same situation (a room rearranged). Direct evidence, where "
        "pruning waits for failures.")

    @model_validator(mode="after")
    def _llm_summariser_has_a_server(self) -> LivingBankConfig:
        if self.summariser == "llm" and not self.summariser_base_url:
            raise ValueError("train.bank.summariser=llm needs train.bank.summariser_base_url (an "
                             "OpenAI-compatible server; `expbank serve-model` serves a local model)")
        return self


class VLLMConfig(Section):
    gpu_memory_utilization: float = Field(
        0.3, gt=0, le=1, description="With `actor.backend: vllm`: the fraction of each GPU's memory the "
        "colocated vLLM engine takes (`expbank train --dry-run` prints the least that fits).")


class TrainConfig(Section):
    """GRPO settings (docs/design.md §6; docs/training.md maps them to TRL's); the defaults are a CPU run."""

    steps: int = Field(10, ge=1, description="GRPO steps.")
    split: str = Field("train", description="Split GRPO samples its tasks from.")
    tasks_per_step: int = Field(2, ge=1, description="Tasks per GRPO step (one group each).")
    group_size: int = Field(
        4, ge=2, description="Episodes per task from the same initial state (G); advantages are normalised "
        "within the group.")
    learning_rate: float = Field(
        1e-5, gt=0, description="AdamW learning rate (recipes: ~1e-5 LoRA, 1e-6 full).")
    beta: float = Field(
        0.0, ge=0, description="Weight of the k3 KL to the reference (the policy the run started from); 0 "
        "loads no reference.")
    epsilon: float = Field(0.2, gt=0, description="Lower (and default upper) clip of the importance ratio.")
    epsilon_high: float | None = Field(
        None, gt=0, description="Upper clip of the importance ratio (DAPO's clip-higher); `null` = "
        "`epsilon`.")
    loss_aggregation: Literal["token_mean", "sequence_mean", "dr_grpo"] = Field(
        "token_mean", description="How token losses add up to the step's loss: `token_mean` (their sum / the "
        "step's loss tokens), `sequence_mean` (mean per row, then over rows) or `dr_grpo` (their sum / (rows × "
        "`decoding.max_new_tokens`)); docs/training.md gives TRL's names.")
    scale_rewards: bool = Field(True, description="Divide group-centred rewards by the group's std.")
    drop_zero_variance: bool = Field(
        True, description="Drop groups whose episodes all got the same reward (no signal); they are counted "
        "in the metrics either way.")
    resample_rounds: int = Field(
        0, ge=0, description="DAPO's dynamic sampling: while fewer than `tasks_per_step` of a step's groups "
        "differ in reward, play up to this many more rounds of `tasks_per_step` fresh tasks (a policy that "
        "wins most practice tasks otherwise trains on one group in four); 0 plays one round.")
    balance_turns: bool = Field(
        False, description="Weight each episode once instead of each turn: a turn's advantage is multiplied "
        "by (its group's mean turns / its episode's turns), so a group's rows sum to zero. Without it, "
        "failed episodes (which run longer) push down every token they share with wins (docs/training.md).")
    mu: int = Field(
        1, ge=1, description="Optimisation passes over each step's batch (importance ratios after the "
        "first).")
    micro_batch_size: int = Field(
        8, ge=1, description="Rows per forward/backward pass of the update (rollouts generate for all "
        "`run.episodes_in_flight` episodes at once).")
    update_micro_batch_size: int | None = Field(
        None, ge=1, description="Rows per forward/backward pass of the update when it should differ from "
        "`train.micro_batch_size`; `null`: 1 on a CPU (a 1k-token row costs ~1.6 GiB in the backward pass "
        "there, and no padding is computed), `train.micro_batch_size` on a GPU.")
    max_grad_norm: float = Field(
        1.0, gt=0, description="Gradient clipping: the largest L2 norm of the gradient.")
    gradient_checkpointing: bool = Field(
        True, description="Recompute each layer's activations during the update's backward pass instead of "
        "keeping them all (docs/benchmarks.md, \"Lean CPU\", has the memory it saves).")
    max_length: int = Field(2048, ge=16, description="Token cap of a training row (truncated from the left).")
    lora: TrainLoraConfig = Field(default_factory=TrainLoraConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    bank: LivingBankConfig = Field(default_factory=LivingBankConfig)
    tracker: Literal["none", "tensorboard", "wandb"] = Field(
        "none", description="Metrics tracker through accelerate: `none`, `tensorboard` or `wandb` "
        "(metrics.jsonl and PNG curves are always written).")
    vllm: VLLMConfig = Field(default_factory=VLLMConfig)
    sharding: Literal["none", "fsdp2"] = Field(
        "none", description="How ranks hold the policy: `none` (whole on every rank: one process or DDP) or "
        "`fsdp2` (PyTorch FSDP2: parameters, gradients and AdamW states sharded over the ranks of a `torchrun` "
        "launch; rollouts generate with a full copy gathered every step; full fine-tuning only; docs/gpu.md).")
    gpus: int | None = Field(
        None, ge=1, description="GPUs the recipe is sized for: `--dry-run` plans memory per GPU for this many "
        "unless `--num-processes` or an accelerate config says otherwise; the launch (`torchrun "
        "--nproc_per_node`) decides how many run.")


class SelectConfig(Section):
    """Model selection during GRPO (docs/training.md): greedy evaluations on a split that is not reported."""

    split: str = Field(
        "dev", description="Split used for model selection; a config that also reports it is refused.")
    every: int = Field(
        0, ge=0, description="Greedy evaluation on `select.split` every N GRPO steps and at the last step, "
        "for model selection (`checkpoints/best.json`); 0 = off.")
    tasks: int | None = Field(
        20, ge=1, description="First N tasks of `select.split` in each of those evaluations; `null` = the "
        "whole split.")


class ReportConfig(Section):
    splits: list[str] = Field(
        default_factory=lambda: ["valid_unseen"],
        description="Splits whose numbers are reported; must not contain `select.split`.")


class RunConfig(Section):
    dir: str | None = Field(
        None, description="Run directory; `null` = a name derived from the command, env, split, model and "
        "arm under `runs/`. Re-running with the same config resumes it; a different config is refused.")
    seed: int = Field(0, description="Seed of training, sampling and the bootstrap.")
    arm: str | None = Field(
        None, description="Name of this arm in reports; `null` = derived from the memory settings (`none`, "
        "`bank`, `bank-norecon`, ...).")
    episodes_in_flight: int = Field(
        4, ge=1, description="Environment workers; an `hf` actor generates for all of them in one batch "
        "(rollouts, evaluation, GRPO and its `dev` selection).")
    replay_errors: bool = Field(
        True, description="`expbank eval`: a resumed run plays again the episodes that ended with an error "
        "(a backend or service outage), replacing their records; `false` keeps them as failures.")


class AblateConfig(Section):
    arms: list[dict[str, Any]] | None = Field(
        None, description="`expbank ablate`: a list of arms, each a mapping of dotted overrides, e.g. "
        "`[{memory.mode: none}, {memory.mode: bank}]`; `null` = none, raw, bank, bank without "
        "reconstruction, bank with random sources.")
    grid: dict[str, list[Any]] | None = Field(
        None, description="`expbank ablate`: dotted key → list of values; every combination becomes an arm "
        "(instead of `ablate.arms`).")


class SFTConfig(Section):
    """Supervised cold start on expert trajectories (docs/design.md §5 layout, template targets)."""

    trajectories: list[str] = Field(
        default_factory=list, description="Expert trajectory files (JSONL) whose successful episodes become "
        "SFT records.")
    split: str = Field(
        "train", description="The split those trajectories come from; SFT retrieval refuses a bank built "
        "from it.")
    epochs: float = Field(1.0, gt=0, description="SFT epochs (fractions allowed).")
    learning_rate: float = Field(2e-4, gt=0, description="SFT learning rate.")
    batch_size: int = Field(8, ge=1, description="SFT batch size (records per optimiser step).")
    max_length: int = Field(2048, ge=16, description="Token cap of an SFT record.")
    lora: bool = Field(
        True, description="SFT trains LoRA adapters (`true`; rank, alpha and modules from `train.lora`) or "
        "all weights.")
    micro_batch_size: int | None = Field(
        None, ge=1, description="Records per forward/backward pass, gradients accumulating to `sft.batch_size` "
        "(which it must divide); `null`: 1 on a CPU (no padding is computed and activations are smallest), "
        "`sft.batch_size` on a GPU.")
    gradient_checkpointing: bool = Field(
        True, description="Recompute each layer's activations during the backward pass instead of keeping "
        "them all (docs/benchmarks.md, \"Lean CPU\", has the memory it saves).")
    critique_share: float = Field(
        0.0, ge=0, description="ALFWorld with a bank: critique rows added per record (1.0 doubles the rows): the "
        "turns of each won episode before it takes its goal object, shown only other rooms' entries "
        "(`memory.rooms: other`), with loss on `<critique>` and `<reconstruct>` alone. The records show a "
        "training room's own entry at the first turn and other rooms' later, so without these rows a policy can "
        "learn to write NONE by turn instead of by room (docs/training.md, \"Critique rows\").")
    verdict_head: bool = Field(
        False, description="After training, fit a verdict head (a logistic regression on one hidden layer at "
        "each critiqued item's verdict) on every won training episode's turns before its take, each shown its "
        "room's own entry and other rooms' (ALFWorld, at least two rooms), read from the logit where "
        "room-grouped folds misjudge both verdicts equally often, and save it beside the model as "
        "`verdict_head.json`; `decoding.verdict: head` uses it (docs/training.md, \"The verdict head\").")
    verdict_head_layer: int | None = Field(
        None, description="The hidden layer the verdict head reads (0: the embeddings; negative counts from the "
        "last); `null`: the layer, and whether it reads the trained policy or its base model (the LoRA adapter "
        "switched off), chosen by cross-validation grouped by training room (the best balanced accuracy on "
        "rooms each fit did not see).")
    verdict_head_rows: int = Field(
        400, ge=2, description="At most this many rows fit the head, half of each verdict where there are "
        "enough (a seeded draw; each row is one forward pass).")

    @model_validator(mode="after")
    def _micro_batches_fill_a_batch(self) -> SFTConfig:
        if self.micro_batch_size is not None and self.batch_size % self.micro_batch_size:
            raise ValueError(f"sft.micro_batch_size {self.micro_batch_size} must divide sft.batch_size "
                             f"{self.batch_size}")
        return self


class Config(Section):
    env: EnvConfig = Field(default_factory=EnvConfig)
    panel: PanelConfig = Field(default_factory=PanelConfig)
    actor: ActorConfig = Field(default_factory=ActorConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    prompt: PromptConfig = Field(default_factory=PromptConfig)
    decoding: DecodingConfig = Field(default_factory=DecodingConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    select: SelectConfig = Field(default_factory=SelectConfig)
    report: ReportConfig = Field(default_factory=ReportConfig)
    run: RunConfig = Field(default_factory=RunConfig)
    ablate: AblateConfig = Field(default_factory=AblateConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    sft: SFTConfig = Field(default_factory=SFTConfig)


    @model_validator(mode="after")
    def _local_readouts_need_a_local_model(self) -> Config:
        """Scored actions and the verdict head read what only a local model exposes."""
        for key, value, reads in (("action", "scored", "the probability of each admissible action"),
                                  ("verdict", "head", "hidden states")):
            if getattr(self.decoding, key) == value and self.actor.backend != "hf":
                raise ValueError(f"decoding.{key}={value} needs actor.backend=hf (the {self.actor.backend} backend "
                                 f"returns text, not {reads})")
        return self

    @model_validator(mode="after")
    def _selection_is_not_reported(self) -> Config:
        """Model selection on a reported split would leak the test set into the numbers."""
        if self.select.split in self.report.splits:
            raise ValueError(f"select.split '{self.select.split}' is also in report.splits; "
                             "choose checkpoints on a split you do not report (e.g. dev)")
        return self

    def arm_name(self) -> str:
        """``run.arm``, or a name built from the memory settings (e.g. ``bank``, ``bank-norecon``)."""
        if self.run.arm:
            return self.run.arm
        memory = self.memory
        name = memory.mode
        if memory.mode != "none":
            name += "-agentic" if memory.retrieval == "agentic" else ""
            name += "" if memory.reconstruct else "-norecon"
            name += "" if memory.source == "matched" else f"-source{memory.source}"
            name += "-online" if memory.online else ""
        return name


class ConfigError(UserError):
    """A config file or override that does not fit the schema."""


def key_fields(model: type[BaseModel] = Config, prefix: str = "") -> list[tuple[str, FieldInfo]]:
    """Every dotted key the schema accepts (e.g. ``memory.k``) with its field: default, description, bounds."""
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += key_fields(annotation, f"{prefix}{name}.")
        else:
            keys.append((f"{prefix}{name}", field))
    return keys


def valid_keys(model: type[BaseModel] = Config) -> list[str]:
    """Every dotted key the schema accepts, e.g. ``memory.k``."""
    return [key for key, _ in key_fields(model)]


def _suggest(key: str) -> str:
    close = difflib.get_close_matches(key, valid_keys(), n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else ""


def parse_override(text: str) -> tuple[str, Any]:
    """``"memory.k=5"`` -> ``("memory.k", 5)``; the value is read as YAML (numbers, bools, lists)."""
    if "=" not in text:
        raise ConfigError(f"override '{text}' is not of the form key=value")
    key, raw = text.split("=", 1)
    return key.strip(), yaml.safe_load(raw) if raw.strip() else None


def set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    node = tree
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"'{key}': '{part}' is not a section{_suggest(key)}")
        node = child
    node[parts[-1]] = value


def _leaf_key(key: str, value: Any) -> str:
    """``memroy`` with value ``{"mode": ...}`` -> ``memroy.mode``: name the key as the user wrote it."""
    while isinstance(value, dict) and len(value) == 1:
        sub, value = next(iter(value.items()))
        key = f"{key}.{sub}"
    return key


# ------------------------------------------------------------------------------------------ renamed keys
# Old dotted key -> new one, from when `train:` was grouped into sections; old keys are read, with a warning,
# until the next release. `train.lora` comes first: its old value, a bool, has to become the section
# `train.lora` before `train.lora_r` and the others can move into it.
RENAMED_KEYS: dict[str, str] = {
    "train.lora": "train.lora.enabled",
    "train.lora_r": "train.lora.r",
    "train.lora_alpha": "train.lora.alpha",
    "train.lora_dropout": "train.lora.dropout",
    "train.lora_target_modules": "train.lora.target_modules",
    "train.checkpoint_every": "train.checkpoint.every",
    "train.keep_checkpoints": "train.checkpoint.keep",
    "train.eval_every": "select.every",
    "train.eval_tasks": "select.tasks",
    "train.bank_update_every": "train.bank.update_every",
    "train.bank_episodes_per_group": "train.bank.episodes_per_group",
    "train.bank_summariser": "train.bank.summariser",
    "train.bank_summariser_model": "train.bank.summariser_model",
    "train.bank_summariser_base_url": "train.bank.summariser_base_url",
    "train.prune_every": "train.bank.prune_every",
    "train.prune_min_uses": "train.bank.prune_min_uses",
    "train.prune_threshold": "train.bank.prune_threshold",
    "train.bank_capacity": "train.bank.capacity",
    "train.vllm_gpu_memory_utilization": "train.vllm.gpu_memory_utilization",
}

_MISSING = object()


def _get_dotted(tree: dict[str, Any], key: str) -> Any:
    """The value at dotted ``key`` of a raw tree, or ``_MISSING``."""
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _renamed(key: str, value: Any) -> str | None:
    """The new name of ``key`` when it is an old one holding ``value``, else None."""
    new = RENAMED_KEYS.get(key)
    if new is not None and isinstance(value, dict) and new.startswith(f"{key}."):
        return None  # `train.lora: {r: 8}` is the new section, not the old switch
    return new


def _warn_renamed(source: str, old: str, new: str) -> None:
    log.warning("%s: %s is deprecated; use %s (the old key is read until the next release)", source, old, new)


def upgrade_key(key: str, value: Any, source: str = "<overrides>") -> str:
    """The current name of an override's ``key`` (warning when it is an old one)."""
    new = _renamed(key, value)
    if new is None:
        return key
    _warn_renamed(source, key, new)
    return new


def upgrade_tree(tree: dict[str, Any], source: str = "<config>") -> dict[str, Any]:
    """A copy of a raw config tree with every old key moved to its new name, one warning per key moved."""
    tree = copy.deepcopy(tree)
    for old, new in RENAMED_KEYS.items():
        section, leaf = old.rsplit(".", 1)
        parent = _get_dotted(tree, section)
        if not isinstance(parent, dict) or leaf not in parent or _renamed(old, parent[leaf]) is None:
            continue
        if _get_dotted(tree, new) is not _MISSING:
            raise ConfigError(f"{source}: '{old}' and '{new}' are both set; '{old}' is the old name of "
                              f"'{new}', keep one")
        _warn_renamed(source, old, new)
        set_dotted(tree, new, parent.pop(leaf))
    return tree


def load_config(path: str | Path | None = None, overrides: list[str] = (), model: type[Config] = Config) -> Config:
    """Load and validate a YAML config, apply ``key=value`` overrides, and name any bad key."""
    tree: dict[str, Any] = {}
    source = "<overrides>"
    if path is not None:
        source = str(path)
        try:
            tree = yaml.safe_load(Path(path).read_text()) or {}
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: not valid YAML: {err}") from None
        if not isinstance(tree, dict):
            raise ConfigError(f"{path}: top level must be a mapping of sections")
        tree = upgrade_tree(tree, source)  # first, so that an override wins over an old key of the file
    for text in overrides:
        key, value = parse_override(text)
        set_dotted(tree, upgrade_key(key, value), value)
    return config_from_tree(tree, source, model)


def config_from_tree(tree: dict[str, Any], source: str = "<config>", model: type[Config] = Config) -> Config:
    """Validate a nested mapping as a config (old keys read under their new names); errors name the key and
    suggest the closest valid one."""
    try:
        return model.model_validate(upgrade_tree(tree, source))
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":
            key = _leaf_key(key, first["input"])
            raise ConfigError(f"{source}: unknown key '{key}'{_suggest(key)}") from None
        if not key or first["type"] == "value_error":  # a check across keys: its message names them
            raise ConfigError(f"{source}: {first['msg'].removeprefix('Value error, ')}") from None
        raise ConfigError(f"{source}: bad value for '{key}': {first['msg']}") from None


def dump_config(config: Config, path: str | Path) -> None:
    """Write the resolved config (what a run directory records as ``config.yaml``)."""
    Path(path).write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
