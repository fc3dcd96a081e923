"""Run configs: YAML files validated on load, with dotted ``key=value`` overrides (DESIGN.md §9).

Every section is a pydantic model that forbids unknown keys, so a typo such as ``memory.kk`` fails on
load with the closest valid key suggested instead of silently doing nothing.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from expbank.errors import UserError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EnvConfig(Section):
    name: Literal["alfworld", "webshop"] = "alfworld"
    split: str = "valid_unseen"
    data_dir: str | None = None
    max_steps: int = Field(50, ge=1)


class PanelConfig(Section):
    task_ids: list[str] | None = None
    limit: int | None = Field(None, ge=1)
    seeds: list[int] = Field(default_factory=lambda: [0])


class ActorConfig(Section):
    backend: Literal["hf", "openai", "vllm"] = "hf"
    model: str = "smollm2-135m"
    adapter: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"


class MemoryConfig(Section):
    mode: Literal["none", "raw", "bank"] = "none"
    retrieval: Literal["fixed", "agentic"] = "fixed"
    reconstruct: bool = True
    k: int = Field(3, ge=1)
    bank: str | None = None
    # source-observation counterfactual: the entry's own source, none, or another entry's
    source: Literal["matched", "none", "random"] = "matched"


class PromptConfig(Section):
    history_length: int = Field(3, ge=0)


class DecodingConfig(Section):
    temperature: float = Field(0.0, ge=0.0)
    max_new_tokens: int = Field(128, ge=1)


class RewardConfig(Section):
    outcome_scale: float = 10.0
    format_weight: float = 0.1
    invalid_penalty: float = 0.1
    # WebShop's outcome: the purchase score, or 1 iff the score is 1
    webshop_outcome: Literal["score", "success"] = "score"


class TrainConfig(Section):
    """GRPO settings (DESIGN.md §6); the defaults are a CPU-sized run."""

    steps: int = Field(10, ge=1)
    split: str = "train"
    tasks_per_step: int = Field(2, ge=1)
    group_size: int = Field(4, ge=2)
    learning_rate: float = Field(1e-5, gt=0)
    beta: float = Field(0.0, ge=0)  # KL to the reference (k3); 0 loads no reference
    epsilon: float = Field(0.2, gt=0)
    epsilon_high: float | None = None  # asymmetric upper clip (DAPO's clip-higher); None = epsilon
    loss_aggregation: Literal["token_mean", "sequence_mean", "dr_grpo"] = "token_mean"
    scale_rewards: bool = True  # divide group-centred rewards by the group's std
    drop_zero_variance: bool = True  # groups whose episodes all scored the same carry no signal
    # weight each episode once, not each turn: a turn's advantage × (its group's mean turns / its episode's
    # turns), so a group's rows sum to zero (failed episodes run longer and would push down shared tokens)
    balance_turns: bool = False
    mu: int = Field(1, ge=1)  # optimisation passes over each batch (importance ratios after the first)
    micro_batch_size: int = Field(8, ge=1)
    max_grad_norm: float = 1.0
    max_length: int = Field(2048, ge=16)
    lora: bool = True
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_target_modules: list[str] = Field(default_factory=lambda: [
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    checkpoint_every: int = Field(1, ge=1)
    keep_checkpoints: int | None = Field(None, ge=1)  # newest N kept (the best one always); None = all
    # model selection: a greedy eval on select.split every N steps and at the end (0 = off)
    eval_every: int = Field(0, ge=0)
    eval_tasks: int | None = Field(20, ge=1)  # first N tasks of the split; None = the whole split
    # the living bank (memory.mode=bank with a local memory.bank): the run trains with its own copy
    bank_update_every: int = Field(1, ge=0)  # summarise new entries every N steps; 0 = the bank stays frozen
    bank_episodes_per_group: int = Field(2, ge=1)  # success/failure-balanced episodes kept per group
    bank_summariser: Literal["rule", "llm"] = "rule"
    bank_summariser_model: str | None = None  # llm: model name on the server (default: actor.model)
    bank_summariser_base_url: str | None = None  # llm: an OpenAI-compatible server
    prune_every: int = Field(0, ge=0)  # prune the bank every N steps; 0 = never
    prune_min_uses: int = Field(3, ge=1)
    prune_threshold: float = Field(0.3, ge=0.0, le=1.0)
    bank_capacity: int | None = Field(None, ge=1)
    tracker: Literal["none", "tensorboard", "wandb"] = "none"
    # actor.backend=vllm: the share of each GPU its colocated engine takes (`expbank train --dry-run` prints the
    # least that fits)
    vllm_gpu_memory_utilization: float = Field(0.3, gt=0, le=1)

    @model_validator(mode="after")
    def _llm_summariser_has_a_server(self) -> TrainConfig:
        if self.bank_summariser == "llm" and not self.bank_summariser_base_url:
            raise ValueError("train.bank_summariser=llm needs train.bank_summariser_base_url (an OpenAI-compatible "
                             "server; `expbank serve-model` serves a local model)")
        return self


class SelectConfig(Section):
    split: str = "dev"


class ReportConfig(Section):
    splits: list[str] = Field(default_factory=lambda: ["valid_unseen"])


class RunConfig(Section):
    dir: str | None = None
    seed: int = 0
    arm: str | None = None  # name of this arm in reports; default derived from the memory settings
    episodes_in_flight: int = Field(4, ge=1)  # env workers; generation is batched across them


class AblateConfig(Section):
    # a list of arms, each a mapping of dotted overrides, e.g. [{memory.mode: none}, {memory.mode: bank}]
    arms: list[dict[str, Any]] | None = None
    # or a grid: dotted key -> values; every combination becomes an arm
    grid: dict[str, list[Any]] | None = None


class SFTConfig(Section):
    """Supervised cold start on expert trajectories (DESIGN.md §5 layout, template targets)."""

    trajectories: list[str] = Field(default_factory=list)
    split: str = "train"  # the split the trajectories come from (retrieval refuses banks made from it)
    epochs: float = Field(1.0, gt=0)
    learning_rate: float = Field(2e-4, gt=0)
    batch_size: int = Field(8, ge=1)
    max_length: int = Field(2048, ge=16)
    lora: bool = True


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
        return name


class ConfigError(UserError):
    """A config file or override that does not fit the schema."""


def valid_keys(model: type[BaseModel] = Config, prefix: str = "") -> list[str]:
    """Every dotted key the schema accepts, e.g. ``memory.k``."""
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += valid_keys(annotation, f"{prefix}{name}.")
        else:
            keys.append(f"{prefix}{name}")
    return keys


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
            raise ConfigError(f"override '{key}': '{part}' is not a section{_suggest(key)}")
        node = child
    node[parts[-1]] = value


def _leaf_key(key: str, value: Any) -> str:
    """``memroy`` with value ``{"mode": ...}`` -> ``memroy.mode``: name the key as the user wrote it."""
    while isinstance(value, dict) and len(value) == 1:
        sub, value = next(iter(value.items()))
        key = f"{key}.{sub}"
    return key


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
    for text in overrides:
        key, value = parse_override(text)
        set_dotted(tree, key, value)
    return config_from_tree(tree, source, model)


def config_from_tree(tree: dict[str, Any], source: str = "<config>", model: type[Config] = Config) -> Config:
    """Validate a nested mapping as a config; errors name the key and suggest the closest valid one."""
    try:
        return model.model_validate(tree)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":
            key = _leaf_key(key, first["input"])
            raise ConfigError(f"{source}: unknown key '{key}'{_suggest(key)}") from None
        if not key:  # a check across keys
            raise ConfigError(f"{source}: {first['msg'].removeprefix('Value error, ')}") from None
        raise ConfigError(f"{source}: bad value for '{key}': {first['msg']}") from None


def dump_config(config: Config, path: str | Path) -> None:
    """Write the resolved config (what a run directory records as ``config.yaml``)."""
    Path(path).write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
