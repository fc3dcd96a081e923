"""``expbank quickstart [--out DIR] [--actor A] [--full] [--with-benchmarks] [key=value ...]``: the thesis
end to end on a laptop CPU.

The panel is the ALFWorld ``households`` family (docs/training.md, "The households panel"): in a held-out
household a food's place is known only from the bank, built before any training from expert visits of other
tasks in that room. A policy is trained in the run on the training households, with and without the bank,
and evaluated in households it never trained in. Stages, each a resumable step in DIR (a finished stage is
recorded in ``DIR/stages.json`` and skipped on a re-run; an interrupted one resumes through what it wraps):

1. ``games``: the households games (real ALFWorld engine, official layout) for ``seed``;
2. ``collect``: expert walkthroughs of the ``visits`` split (the bank's only source);
3. ``bank``: the bank (rule summariser, offline MiniLM);
4. ``sft``: two policies with the same budget, ``sft-none`` (no memory) and ``sft-bank`` (the retrieved block
   with critique/reconstruct targets);
5. ``eval-sft``: ``sft-none``, ``sft-bank`` and ``sft-bank-other`` (the bank policy shown only other rooms'
   entries: the same format, wrong facts) on the held-out households, greedy;
6. ``grpo``: GRPO from ``sft-bank`` with the same (frozen) bank on the training households; a stage whose
   steps trained no row (every group's episodes scored alike) samples more steps, up to ``grpo_extra_steps``;
7. ``eval-grpo``: ``grpo-bank`` on the held-out households;
8. ``report``: ``DIR/summary.json``, ``DIR/report.md`` and ``DIR/success.png``.

``--with-benchmarks`` adds the bundled ALFWorld and WebShop ablation of an untrained actor (memory none, raw,
bank): ``bench-collect``, ``bench-bank``, ``bench-eval``. The default policy is ``tiny-warm`` (~1M parameters,
trained from scratch here); ``--actor smollm2-135m`` trains SmolLM2-135M-Instruct with LoRA instead (slow on
a CPU). The scale is a :class:`Scale`; ``key=value`` overrides any field (``seed=1``, ``sft_steps=300``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expbank.bank.build import build
from expbank.bank.store import Bank
from expbank.bank.summarise import make_summariser
from expbank.config import Config, config_from_tree, parse_override, set_dotted
from expbank.envs.alfworld.households import STEP_LIMIT, Recipe, no_memory_ceiling, write_households
from expbank.errors import UserError
from expbank.peak_memory import PeakMemory
from expbank.training.agent.collect import collect
from expbank.training.evaluation import households, report
from expbank.training.evaluation.ablate import ablate
from expbank.training.evaluation.evaluate import evaluate
from expbank.training.runs import prepare_run_dir, write_json

ARMS = ("sft-none", "sft-bank", "sft-bank-other", "grpo-bank")
COMPARISONS = [("sft-none", "sft-bank"), ("sft-bank-other", "sft-bank"), ("sft-bank", "grpo-bank")]
BENCH_ENVS = ("alfworld", "webshop")
BENCH_HELD_OUT = {"alfworld": "valid_unseen", "webshop": "test"}


# ------------------------------------------------------------------------------------------------ scale
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EnvScale(_Strict):
    """How much of one bundled environment the benchmark stage plays."""

    panel: int = Field(ge=1)  # held-out tasks evaluated: the first N of the split
    max_steps: int = Field(ge=1)  # step limit of the evaluation episodes
    expert: int | None = Field(None, ge=1)  # train tasks played by the expert (None: all)
    random: int = Field(ge=0)  # train tasks played by the random policy
    random_max_steps: int = Field(ge=1)


class Benchmarks(_Strict):
    """The bundled ALFWorld and WebShop ablation of an untrained actor (``--with-benchmarks``)."""

    enabled: bool = False
    actor: str = "smollm2-135m"
    alfworld: EnvScale = EnvScale(panel=2, max_steps=3, expert=6, random=2, random_max_steps=5)
    webshop: EnvScale = EnvScale(panel=4, max_steps=3, expert=30, random=20, random_max_steps=5)
    max_new_tokens: int = Field(24, ge=1)
    history_length: int = Field(1, ge=0)
    memory_k: int = Field(2, ge=1)
    excerpt_tokens: int = Field(96, ge=16)  # token cap of the raw arm's trajectory excerpts
    episodes_in_flight: int = Field(4, ge=1)
    collect_workers: int = Field(2, ge=1)


class Scale(_Strict):
    """Everything that sets the quickstart's size; the defaults fit 15 minutes on 2 CPU cores."""

    actor: Literal["tiny-warm", "smollm2-135m"] = "tiny-warm"
    seed: int = Field(0, ge=0)  # households, placements, training and sampling
    train_households: int = Field(Recipe.train_households, ge=2)
    held_out_households: int = Field(Recipe.held_out_households, ge=1)
    sft_steps: int = Field(600, ge=1)  # optimiser steps per policy, the same for sft-none and sft-bank
    sft_learning_rate: float = Field(1e-3, gt=0)
    sft_batch_size: int = Field(8, ge=1)  # smollm2-135m only (tiny-warm trains at batch 8)
    memory_k: int = Field(1, ge=1)  # entries shown (k = 1 is learnt in half the steps k = 2 needs)
    system: Literal["full", "none"] = "none"  # prompt.system: a policy trained from scratch needs no rules
    grpo_steps: int = Field(1, ge=1)
    grpo_extra_steps: int = Field(3, ge=0)  # more steps while no row has been trained
    tasks_per_step: int = Field(2, ge=1)
    group_size: int = Field(8, ge=2)
    grpo_learning_rate: float = Field(2e-4, gt=0)
    grpo_temperature: float = Field(0.7, gt=0)
    episodes_in_flight: int = Field(8, ge=1)
    collect_workers: int = Field(2, ge=1)
    benchmarks: Benchmarks = Benchmarks()

    def recipe(self) -> Recipe:
        return Recipe(seed=self.seed, train_households=self.train_households,
                      held_out_households=self.held_out_households)

    def render(self) -> dict[str, int]:
        return {**households.RENDER, "k": self.memory_k}

    @property
    def reply_tokens(self) -> int:
        return households.TINY_REPLY_TOKENS if self.actor == "tiny-warm" else households.LM_REPLY_TOKENS


# --actor smollm2-135m: the pretrained LM with LoRA, at a smaller panel (its SFT steps are ~100x tiny-warm's)
SMOLLM2: dict[str, Any] = {"actor": "smollm2-135m", "held_out_households": 4, "train_households": 12,
                           "sft_steps": 30, "sft_learning_rate": 2e-4, "grpo_learning_rate": 1e-5,
                           "tasks_per_step": 1, "group_size": 4, "episodes_in_flight": 4, "system": "full"}
# --full: the households --small recipe of scripts/bench_households.py, every benchmark task
FULL: dict[str, Any] = {
    "sft_steps": 1200, "grpo_steps": 8,
    "benchmarks": {"alfworld": {"panel": 12, "max_steps": 20, "expert": None, "random": 24, "random_max_steps": 20},
                   "webshop": {"panel": 50, "max_steps": 10, "expert": None, "random": 88, "random_max_steps": 10},
                   "max_new_tokens": 96, "history_length": 2, "memory_k": 3, "excerpt_tokens": 256},
}


def _merge(tree: dict[str, Any], preset: dict[str, Any]) -> None:
    for key, value in preset.items():
        if isinstance(value, dict):
            _merge(tree.setdefault(key, {}), value)
        else:
            tree[key] = value


def load_scale(full: bool = False, overrides: list[str] = (), actor: str | None = None,
               with_benchmarks: bool = False) -> Scale:
    """The default scale, the ``--actor`` and ``--full`` presets, then ``key=value`` overrides; a bad key or
    value is a UserError."""
    tree: dict[str, Any] = Scale().model_dump(mode="json")
    if actor == "smollm2-135m":
        _merge(tree, SMOLLM2)
    elif actor not in (None, "tiny-warm"):
        raise UserError(f"quickstart: --actor {actor} is not one of tiny-warm, smollm2-135m")
    if full:
        _merge(tree, FULL)
    if with_benchmarks:
        tree["benchmarks"]["enabled"] = True
    for text in overrides:
        set_dotted(tree, *parse_override(text))
    try:
        return Scale.model_validate(tree)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":
            raise UserError(f"quickstart: unknown scale key '{key}' (keys: {', '.join(_scale_keys())})") from None
        raise UserError(f"quickstart: bad value for '{key}': {first['msg']}") from None


def _scale_keys(model: type[BaseModel] = Scale, prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            keys += _scale_keys(field.annotation, f"{prefix}{name}.")
        else:
            keys.append(prefix + name)
    return keys


# ---------------------------------------------------------------------------------------------- layout
@dataclass(frozen=True)
class Layout:
    """Where each stage writes inside the quickstart directory."""

    root: Path

    @property
    def games(self) -> Path:
        return self.root / "games"

    def trajectories(self, split: str) -> Path:
        return self.root / "trajectories" / f"{split}.jsonl"

    @property
    def bank(self) -> Path:
        return self.root / "bank"

    def model(self, name: str) -> Path:
        return self.root / "models" / name

    def arm(self, name: str) -> Path:
        return self.root / "arms" / name

    @property
    def grpo(self) -> Path:
        return self.root / "grpo"

    @property
    def bench(self) -> Path:
        return self.root / "benchmarks"


def bank_memory(layout: Layout, **extra: Any) -> dict[str, Any]:
    return {"mode": "bank", "bank": str(layout.bank), **extra}


def policy_actor(scale: Scale, layout: Layout, name: str) -> dict[str, Any]:
    """The ``actor`` keys of a trained policy: a tiny-warm folder, or SmolLM2 with a LoRA adapter."""
    if name == "grpo-bank":
        checkpoint = trained_checkpoint(layout)
        if checkpoint is None:
            raise UserError(f"{layout.grpo} holds no checkpoint; the grpo stage did not finish")
        model = checkpoint / "model"
        return {"model": model} if scale.actor == "tiny-warm" else {"model": scale.actor, "adapter": model}
    if scale.actor == "tiny-warm":
        return {"model": layout.model(name)}
    return {"model": scale.actor, "adapter": layout.model(name) / "model"}


def arm_config(scale: Scale, layout: Layout, name: str) -> Config:
    """The run config of one reported arm."""
    policy, memory = {"sft-none": ("sft-none", {"mode": "none"}), "sft-bank": ("sft-bank", bank_memory(layout)),
                      "sft-bank-other": ("sft-bank", bank_memory(layout, rooms="other")),
                      "grpo-bank": ("grpo-bank", bank_memory(layout))}[name]
    tree = households.arm_tree(layout.games, policy_actor(scale, layout, policy), memory, scale.seed,
                               episodes_in_flight=scale.episodes_in_flight, render=scale.render(),
                               system=scale.system, max_new_tokens=scale.reply_tokens)
    tree["run"]["dir"] = str(layout.arm(name))
    return config_from_tree(tree, f"quickstart arm {name}")


def grpo_config(scale: Scale, layout: Layout) -> Config:
    """GRPO from ``sft-bank`` on the training households; ``train.steps`` is the cap with the extra steps."""
    train = {"split": "train", "steps": scale.grpo_steps + scale.grpo_extra_steps,
             "tasks_per_step": scale.tasks_per_step, "group_size": scale.group_size,
             "learning_rate": scale.grpo_learning_rate, "lora": {"enabled": scale.actor != "tiny-warm"},
             "micro_batch_size": 8, "max_length": 1536, "checkpoint": {"every": 1},
             "bank": {"update_every": 0}}  # every bank arm retrieves from the bank built before training
    tree = households.arm_tree(layout.games, policy_actor(scale, layout, "sft-bank"), bank_memory(layout),
                               scale.seed, scale.grpo_temperature, train, scale.episodes_in_flight, scale.render(),
                               scale.system, scale.reply_tokens)
    tree["run"]["dir"] = str(layout.grpo)
    return config_from_tree(tree, "quickstart grpo")


def trained_checkpoint(layout: Layout) -> Path | None:
    from expbank.training.rl.grpo import latest_checkpoint

    return latest_checkpoint(layout.grpo) if layout.grpo.exists() else None


def grpo_steps(layout: Layout) -> list[dict[str, Any]]:
    """The GRPO run's metrics, one dict per finished step."""
    path = layout.grpo / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


# ---------------------------------------------------------------------------------------------- stages
def games_stage(scale: Scale, layout: Layout) -> None:
    """The households games for ``seed`` (train, dev, valid_unseen and visits splits)."""
    write_households(layout.games, scale.recipe())


def collect_stage(scale: Scale, layout: Layout) -> None:
    """Expert walkthroughs of the visits split (the bank's source); SmolLM2 also needs train walkthroughs."""
    splits = ["visits"] + ([] if scale.actor == "tiny-warm" else ["train"])  # tiny-warm collects its own
    for split in splits:
        collect("alfworld", split, "expert", layout.trajectories(split), data_dir=str(layout.games),
                workers=scale.collect_workers, max_steps=STEP_LIMIT)


def bank_stage(scale: Scale, layout: Layout) -> None:
    """The bank from the visits (``expbank bank build``; built episodes are skipped on a re-run)."""
    bank = Bank.open_or_create(layout.bank)
    built = build(bank, [layout.trajectories("visits")], make_summariser("rule"))
    bank.save()
    print(f"bank: {built.episodes} episodes -> {built.added} entries added, {built.merged} merged, "
          f"{len(built.quarantined)} quarantined; {len(bank)} entries")


def sft_stage(scale: Scale, layout: Layout) -> None:
    """``sft-none`` and ``sft-bank``: the same steps, learning rate and training households."""
    for name, memory in (("sft-none", {"mode": "none"}), ("sft-bank", bank_memory(layout))):
        folder = layout.model(name)
        if scale.actor == "tiny-warm":
            households.tiny_policy(layout.games, memory, folder, scale.seed, scale.sft_steps,
                                   scale.sft_learning_rate, scale.render(), scale.system)
        elif not (folder / "model" / "adapter_config.json").exists():
            _lm_sft(scale, layout, memory, folder)


def _lm_sft(scale: Scale, layout: Layout, memory: dict[str, Any], folder: Path) -> None:
    """SmolLM2 + LoRA through ``expbank sft`` at most ``sft_steps`` optimiser steps (an epoch at most)."""
    from expbank.training.rl.sft import sft

    trajectories = layout.trajectories("train")
    records = sum(1 for line in trajectories.read_text().splitlines() if line.strip()) * 4.5  # ~turns a game
    tree = households.arm_tree(layout.games, {"model": scale.actor}, memory, scale.seed, render=scale.render(),
                               system=scale.system)
    tree["sft"] = {"trajectories": [str(trajectories)], "split": "train", "batch_size": scale.sft_batch_size,
                   "learning_rate": scale.sft_learning_rate, "max_length": 1536, "lora": True,
                   "epochs": min(1.0, scale.sft_steps * scale.sft_batch_size / records)}
    tree["run"]["dir"] = str(folder)
    config = config_from_tree(tree, f"quickstart sft {folder.name}")
    prepare_run_dir(folder, config)
    sft(config, config.sft.trajectories, folder)


def eval_sft_stage(scale: Scale, layout: Layout) -> None:
    for name in ARMS[:3]:
        evaluate(arm_config(scale, layout, name))


def grpo_stage(scale: Scale, layout: Layout) -> None:
    """``grpo_steps`` steps, then one more at a time while no row has been trained (at most the extra steps)."""
    from expbank.training.rl.grpo import train

    config = grpo_config(scale, layout)
    target = scale.grpo_steps
    while True:
        train(config, resume=True, stop_after=target)
        trained = sum(step["rows"] for step in grpo_steps(layout))
        if trained or target == config.train.steps:
            break
        print(f"grpo: steps 1-{target} trained no row (every group's episodes scored alike); sampling step "
              f"{target + 1}", flush=True)
        target += 1
    if not trained:
        print(f"grpo: {target} steps trained no row: grpo-bank is the sft-bank policy unchanged", flush=True)


def eval_grpo_stage(scale: Scale, layout: Layout) -> None:
    evaluate(arm_config(scale, layout, "grpo-bank"))


def report_stage(scale: Scale, layout: Layout) -> None:
    summary = report.join_runs({name: layout.arm(name) for name in ARMS}, COMPARISONS)
    recipe = scale.recipe()
    summary["households"] = {"recipe": dataclasses.asdict(recipe), "no_memory_ceiling": no_memory_ceiling(recipe),
                             "policy": scale.actor, "sft_steps": scale.sft_steps, "constructed_panel": True}
    summary["critique"] = {name: households.critique_diagnostic(layout.arm(name)) for name in ARMS[1:]}
    summary["grpo"] = {"steps": grpo_steps(layout)}
    write_json(layout.root / "summary.json", summary)
    households.plot(summary, layout.root / "success.png")
    bench = {env: report.write_report(layout.bench / "eval" / env) for env in BENCH_ENVS} \
        if scale.benchmarks.enabled else {}
    (layout.root / "report.md").write_text(render_report(scale, layout, summary, bench))


# --------------------------------------------------------------------------------- the benchmark stage
def bench_trajectories(layout: Layout, env: str, split: str, policy: str) -> Path:
    return layout.bench / "trajectories" / f"{env}-{split}-{policy}.jsonl"


def bench_config(scale: Scale, layout: Layout, env: str) -> Config:
    size: EnvScale = getattr(scale.benchmarks, env)
    bench = scale.benchmarks
    tree = {
        "env": {"name": env, "split": BENCH_HELD_OUT[env], "max_steps": size.max_steps},
        "panel": {"limit": size.panel, "seeds": [scale.seed]},
        "actor": {"backend": "hf", "model": bench.actor},
        "memory": {"mode": "bank", "k": bench.memory_k, "bank": str(layout.bench / "bank")},
        "prompt": {"history_length": bench.history_length},
        "decoding": {"temperature": 0.0, "max_new_tokens": bench.max_new_tokens},
        "report": {"splits": [BENCH_HELD_OUT[env]]},
        "run": {"seed": scale.seed, "episodes_in_flight": bench.episodes_in_flight,
                "dir": str(layout.bench / "eval" / env)},
        "ablate": {"arms": [{"memory.mode": mode} for mode in ("none", "raw", "bank")]},
    }
    return config_from_tree(tree, f"quickstart benchmark ({env})")


def bench_collect_stage(scale: Scale, layout: Layout) -> None:
    """Expert and random episodes of the bundled ``train`` splits (the benchmark bank's sources)."""
    for env in BENCH_ENVS:
        size: EnvScale = getattr(scale.benchmarks, env)
        for policy, episodes, max_steps in (("expert", size.expert, None), ("random", size.random,
                                                                            size.random_max_steps)):
            if episodes != 0:
                collect(env, "train", policy, bench_trajectories(layout, env, "train", policy), episodes=episodes,
                        workers=scale.benchmarks.collect_workers, max_steps=max_steps)


def bench_bank_stage(scale: Scale, layout: Layout) -> None:
    sources = [bench_trajectories(layout, env, "train", policy) for env in BENCH_ENVS for policy in ("expert", "random")]
    bank = Bank.open_or_create(layout.bench / "bank")
    build(bank, [p for p in sources if p.exists()], make_summariser("rule", excerpt_tokens=scale.benchmarks.excerpt_tokens))
    bank.save()


def bench_eval_stage(scale: Scale, layout: Layout) -> None:
    """The untrained actor with memory none, raw and bank on each bundled held-out panel (``expbank ablate``)."""
    for env in BENCH_ENVS:
        ablate(bench_config(scale, layout, env))


@dataclass(frozen=True)
class Stage:
    name: str
    title: str
    run: Callable[[Scale, Layout], None]
    benchmark: bool = False


STAGES = [
    Stage("games", "write the households games (ALFWorld engine)", games_stage),
    Stage("collect", "collect expert visits of the held-out and training households", collect_stage),
    Stage("bank", "build the experience bank from the visits (rule summariser, MiniLM)", bank_stage),
    Stage("sft", "train sft-none and sft-bank (same budget, training households)", sft_stage),
    Stage("eval-sft", "evaluate sft-none, sft-bank, sft-bank-other on the held-out households", eval_sft_stage),
    Stage("grpo", "GRPO from sft-bank with the bank (training households)", grpo_stage),
    Stage("eval-grpo", "evaluate grpo-bank on the held-out households", eval_grpo_stage),
    Stage("bench-collect", "benchmarks: collect bundled ALFWorld and WebShop trajectories", bench_collect_stage, True),
    Stage("bench-bank", "benchmarks: build their bank", bench_bank_stage, True),
    Stage("bench-eval", "benchmarks: the untrained actor with memory none, raw, bank", bench_eval_stage, True),
    Stage("report", "write summary.json, report.md and success.png", report_stage),
]


def stages_of(scale: Scale) -> list[Stage]:
    return [stage for stage in STAGES if scale.benchmarks.enabled or not stage.benchmark]


# ---------------------------------------------------------------------------------------------- runner
def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (env workers): the machine-independent cost."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def prepare_dir(root: Path, scale: Scale) -> dict[str, Any]:
    """Create the quickstart directory with its scale, or check a re-run uses the same scale.

    Returns the finished stages (``stages.json``).
    """
    if root.exists() and not root.is_dir():
        raise UserError(f"--out {root} is a file, not a directory")
    path = root / "scale.yaml"
    resolved = scale.model_dump(mode="json")
    if path.exists():
        existing = yaml.safe_load(path.read_text())
        if existing != resolved:
            changed = sorted(k for k in _scale_keys() if _get(existing, k) != _get(resolved, k))
            raise UserError(f"{root} holds a quickstart of another scale ({', '.join(changed[:5])}); "
                            "re-run with the same options or choose another --out")
    else:
        root.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(resolved, sort_keys=False))
    stages = root / "stages.json"
    return json.loads(stages.read_text()) if stages.exists() else {}


def _get(tree: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def quickstart(root: str | Path, scale: Scale) -> dict[str, Any]:
    """Run the stages not finished yet; returns ``stages.json`` (seconds, CPU seconds and the peak memory of
    the whole process tree, environment workers included, per stage, and ``total``)."""
    layout = Layout(Path(root))
    done = prepare_dir(layout.root, scale)
    stages = stages_of(scale)
    for number, stage in enumerate(stages, 1):
        header = f"[{number}/{len(stages)}] {stage.title}"
        if stage.name in done:
            print(f"== {header}: done earlier ({done[stage.name]['seconds']:.0f} s), skipped", flush=True)
            continue
        print(f"== {header}", flush=True)
        began, cpu = time.perf_counter(), _cpu_seconds()
        with PeakMemory() as peak:
            stage.run(scale, layout)
        done[stage.name] = {"seconds": round(time.perf_counter() - began, 1),
                            "cpu_seconds": round(_cpu_seconds() - cpu, 1),
                            "peak_memory_gib": round(peak.peak_gib, 2)}
        finished = [done[s.name] for s in stages if s.name in done]
        done["total"] = {"seconds": round(sum(s["seconds"] for s in finished), 1),
                         "peak_memory_gib": max(s["peak_memory_gib"] for s in finished)}
        write_json(layout.root / "stages.json", done)
        print(f"   {stage.name} finished in {done[stage.name]['seconds']:.0f} s, "
              f"peak memory {done[stage.name]['peak_memory_gib']:.2f} GiB", flush=True)
    return done


# ---------------------------------------------------------------------------------------------- report
def _demote(markdown: str) -> list[str]:
    """A run's report.md, its headings two levels down, to sit under a section of the joint report."""
    return [f"##{line}" if line.startswith("#") else line for line in markdown.splitlines()]


def headline(scale: Scale, summary: dict[str, Any]) -> list[str]:
    """The report's and the screen's first lines: what the panel is and what the numbers mean."""
    hh = summary["households"]
    n = summary["arms"]["sft-bank"]["n"]
    trained = "trained from scratch in this run (~1M parameters)" if scale.actor == "tiny-warm" else \
        "SmolLM2-135M-Instruct, LoRA-trained in this run"
    return [
        f"Households panel (constructed), seed {scale.seed}: {n} tasks in {scale.held_out_households} held-out "
        f"ALFWorld households the policy never trained in. A food's place there is known only from the bank, "
        f"built from expert visits of other tasks in those rooms before any training; the best policy without "
        f"memory computable from the training data wins {100 * hh['no_memory_ceiling']['rate']:.1f} %.",
        f"Policy: {scale.actor}, {trained}: sft-none and sft-bank get the same {scale.sft_steps} SFT steps on the "
        f"same {scale.train_households} training households; sft-bank-other is the bank policy shown only other "
        f"rooms' entries (same format, wrong facts); grpo-bank is sft-bank after GRPO with the same bank.",
        "Success is greedy, one episode per task; comparisons are paired on the same tasks (exact McNemar).",
    ]


def render_report(scale: Scale, layout: Layout, summary: dict[str, Any], bench: dict[str, dict[str, Any]]) -> str:
    """``DIR/report.md``: what the panel is, the arms and comparisons, GRPO, stages, then the benchmarks."""
    stages = json.loads((layout.root / "stages.json").read_text()) if (layout.root / "stages.json").exists() else {}
    lines = ["# expbank quickstart report", "", *headline(scale, summary), "", "## Households panel", "",
             "| arm | success % | 95% CI | n |", "|---|---|---|---|"]
    for name in ARMS:
        arm = summary["arms"][name]
        low, high = arm.get("success_ci95") or [None, None]
        ci = f"[{low:.1f}, {high:.1f}]" if low is not None else "n/a"
        lines.append(f"| {name} | {arm['success']:.1f} | {ci} | {arm['n']} |")
    lines += ["", *[f"- {report.comparison_line(c)}" for c in summary["comparisons"]], "",
              "Critique: share of turns before the food is taken whose `<reconstruct>` is NONE or whose `<critique>` "
              "rejects every item shown: "
              + "; ".join(f"{name} {d['none_share']:.2f} of {d['turns']}" for name, d in summary["critique"].items()),
              "", "![success per arm](success.png)", "",
              "## GRPO (training households, bank frozen)", "",
              "| step | episodes | reward | success | rows trained | zero-variance groups | loss |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['step']} | {r['episodes']} | {r['reward_mean']:.2f} | {r['success_rate']:.2f} | {r['rows']} | "
              f"{r['zero_variance_groups']} | {r['loss']:.4f} |" for r in summary["grpo"]["steps"]]
    lines += ["", "## Stages", "", "| stage | wall s | CPU s | peak memory GiB |", "|---|---|---|---|"]
    lines += [f"| {s.name} | {stages[s.name]['seconds']} | {stages[s.name]['cpu_seconds']} | "
              f"{stages[s.name]['peak_memory_gib']} |" for s in stages_of(scale) if s.name in stages]
    for env, env_summary in bench.items():
        folder = (layout.bench / "eval" / env).relative_to(layout.root)
        lines += ["", f"## Benchmark: {env} / {BENCH_HELD_OUT[env]}, untrained {scale.benchmarks.actor}", "",
                  f"Run directory `{folder}/`; plots: "
                  + ", ".join(f"[{p}]({folder}/{p})" for p in env_summary.get("plots", [])), ""]
        lines += _demote((layout.bench / "eval" / env / "report.md").read_text())
    return "\n".join(lines) + "\n"


def screen_summary(scale: Scale, layout: Layout) -> str:
    """What the command prints at the end: what the panel is, each arm, each paired comparison."""
    summary = json.loads((layout.root / "summary.json").read_text())
    lines = headline(scale, summary) + [""]
    for name in ARMS:
        arm = summary["arms"][name]
        lines.append(f"  {name:<15} n={arm['n']:<3} success {arm['success']:5.1f}%  errors {arm['errors']}")
    lines += [f"  {report.comparison_line(c)}" for c in summary["comparisons"]]
    rows = sum(step["rows"] for step in summary["grpo"]["steps"])
    steps = len(summary["grpo"]["steps"])
    lines.append(f"  GRPO: {steps} step{'s' if steps != 1 else ''}, {rows} rows trained")
    for env in BENCH_ENVS if scale.benchmarks.enabled else ():
        bench = json.loads((layout.bench / "eval" / env / "summary.json").read_text())
        lines.append(f"benchmark {env} / {bench['run']['split']} (untrained {scale.benchmarks.actor}, "
                     f"n={bench['run']['n_tasks']}): " + ", ".join(
                         f"{name} {bench['arms'][name]['success']:.1f}%" for name in bench["run"]["arm_order"]))
    lines.append(f"report: {layout.root / 'report.md'}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="runs/quickstart", help="quickstart directory (re-running resumes it)")
    parser.add_argument("--actor", choices=["tiny-warm", "smollm2-135m"], default=None,
                        help="the policy trained in the run (default tiny-warm; smollm2-135m is slow on a CPU)")
    parser.add_argument("--full", action="store_true", help="the benchmark's full recipe: 1200 SFT steps, "
                        "8 GRPO steps, every bundled benchmark task")
    parser.add_argument("--with-benchmarks", action="store_true",
                        help="also the bundled ALFWorld and WebShop ablation of the untrained SmolLM2 actor")
    parser.add_argument("overrides", nargs="*", metavar="key=value",
                        help="scale overrides, e.g. seed=1 sft_steps=300 (keys: docs/config-reference.md)")


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    scale = load_scale(args.full, args.overrides, args.actor, args.with_benchmarks)
    began = time.perf_counter()
    quickstart(args.out, scale)
    print(f"\n{screen_summary(scale, Layout(Path(args.out)))}\n(total {time.perf_counter() - began:.0f} s this run)")
    return 0
