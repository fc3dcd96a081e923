"""``expbank quickstart [--out DIR] [--full] [key=value ...]``: the whole mission on the bundled data.

Six stages, each a resumable step in DIR (a finished stage is recorded in ``DIR/stages.json`` and skipped on a
re-run; an interrupted stage resumes through the command it wraps, which never replays finished episodes):

1. ``collect``: expert and random trajectories on the ALFWorld and WebShop ``train`` splits (the bank's
   sources) and expert walkthroughs of ``dev`` tasks (the SFT records: ``expbank sft`` refuses records from a
   split the bank was built from);
2. ``bank``: a bank from the train trajectories (rule summariser, offline MiniLM);
3. ``eval-untrained``: the untrained actor on held-out panels (ALFWorld ``valid_unseen``, WebShop ``test``)
   with memory ``none``, ``raw`` and ``bank`` (an ``expbank ablate`` run per environment);
4. ``train``: SFT cold start, then GRPO with LoRA and the bank, per trained environment;
5. ``eval-trained``: the trained policy (``none`` and ``bank``) on the same panels, as arms of the same
   ablations, so the reports pair them with the untrained arms;
6. ``report``: each ablation's ``report.md`` and plots, and ``DIR/report.md`` joining them.

The scale is a :class:`Scale`; the defaults are the smoke scale (about 15 minutes on 2 CPU cores), ``--full``
applies :data:`FULL`, and ``key=value`` overrides any field (e.g. ``webshop.panel=8``).
"""

from __future__ import annotations

import argparse
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
from expbank.errors import UserError
from expbank.peak_memory import PeakMemory
from expbank.training.actors.backends import make_backend
from expbank.training.agent.collect import collect
from expbank.training.evaluation.ablate import ablate, arm_config
from expbank.training.evaluation.evaluate import evaluate
from expbank.training.evaluation.report import comparison_line, write_report
from expbank.training.rl.sft import sft
from expbank.training.runs import prepare_run_dir, write_json

ENVS = ("alfworld", "webshop")
HELD_OUT = {"alfworld": "valid_unseen", "webshop": "test"}  # the panels reported
SFT_SPLIT = "dev"  # SFT records come from a split the bank does not hold
UNTRAINED_ARMS = ("none", "raw", "bank")
TRAINED_ARMS = ("none", "bank")


# ------------------------------------------------------------------------------------------------ scale
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EnvScale(_Strict):
    """How much of one environment the quickstart plays."""

    panel: int = Field(ge=1)  # held-out tasks evaluated: the first N of the split
    max_steps: int = Field(ge=1)  # step limit of evaluation and training episodes
    expert: int | None = Field(None, ge=1)  # train tasks played by the expert (None: all)
    random: int = Field(ge=0)  # train tasks played by the random policy
    random_max_steps: int = Field(ge=1)
    sft: int = Field(ge=1)  # dev tasks whose expert walkthroughs become SFT records


class Scale(_Strict):
    """Everything that sets the quickstart's size; the defaults are the smoke scale."""

    actor: str = "smollm2-135m"
    alfworld: EnvScale = EnvScale(panel=2, max_steps=3, expert=6, random=2, random_max_steps=5, sft=2)
    webshop: EnvScale = EnvScale(panel=4, max_steps=3, expert=30, random=20, random_max_steps=5, sft=2)
    train_envs: list[Literal["alfworld", "webshop"]] = Field(default_factory=lambda: ["webshop"])
    seeds: list[int] = Field(default_factory=lambda: [0])
    max_new_tokens: int = Field(24, ge=1)
    history_length: int = Field(1, ge=0)
    memory_k: int = Field(2, ge=1)
    excerpt_tokens: int = Field(96, ge=16)  # token cap of the raw arm's trajectory excerpts
    episodes_in_flight: int = Field(4, ge=1)
    collect_workers: int = Field(2, ge=1)
    sft_epochs: float = Field(1.0, gt=0)
    sft_learning_rate: float = Field(2e-4, gt=0)
    max_length: int = Field(1024, ge=16)  # token cap of SFT and GRPO rows
    grpo_steps: int = Field(1, ge=1)
    tasks_per_step: int = Field(1, ge=1)
    group_size: int = Field(2, ge=2)
    grpo_learning_rate: float = Field(1e-5, gt=0)


# --full: every held-out task, longer episodes and answers, both environments trained, 20 GRPO steps
FULL: dict[str, Any] = {
    "alfworld": {"panel": 12, "max_steps": 20, "expert": None, "random": 24, "random_max_steps": 20, "sft": 6},
    "webshop": {"panel": 50, "max_steps": 10, "expert": None, "random": 88, "random_max_steps": 10, "sft": 20},
    "train_envs": ["alfworld", "webshop"],
    "max_new_tokens": 96, "history_length": 2, "memory_k": 3, "excerpt_tokens": 256,
    "sft_epochs": 2.0, "grpo_steps": 20, "tasks_per_step": 2, "group_size": 4,
}


def load_scale(full: bool = False, overrides: list[str] = ()) -> Scale:
    """The smoke scale (or ``--full``) with ``key=value`` overrides; a bad key or value is a UserError."""
    tree: dict[str, Any] = Scale().model_dump(mode="json")
    for key, value in (FULL if full else {}).items():
        tree[key] = {**tree[key], **value} if isinstance(value, dict) else value
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

    def trajectories(self, env: str, split: str, policy: str) -> Path:
        return self.root / "trajectories" / f"{env}-{split}-{policy}.jsonl"

    @property
    def bank(self) -> Path:
        return self.root / "bank"

    def ablation(self, env: str) -> Path:
        return self.root / "eval" / env

    def sft(self, env: str) -> Path:
        return self.root / "train" / env / "sft"

    def grpo(self, env: str) -> Path:
        return self.root / "train" / env / "grpo"


def run_config(scale: Scale, layout: Layout, env: str) -> Config:
    """The run config every stage of ``env`` shares: panel, actor, bank, decoding, SFT and GRPO settings."""
    size: EnvScale = getattr(scale, env)
    tree = {
        "env": {"name": env, "split": HELD_OUT[env], "max_steps": size.max_steps},
        "panel": {"limit": size.panel, "seeds": scale.seeds},
        "actor": {"backend": "hf", "model": scale.actor},
        "memory": {"mode": "bank", "k": scale.memory_k, "bank": str(layout.bank)},
        "prompt": {"history_length": scale.history_length},
        "decoding": {"temperature": 0.0, "max_new_tokens": scale.max_new_tokens},
        "select": {"split": SFT_SPLIT},
        "report": {"splits": [HELD_OUT[env]]},
        "run": {"seed": scale.seeds[0], "episodes_in_flight": scale.episodes_in_flight},
        "sft": {"trajectories": [str(layout.trajectories(env, SFT_SPLIT, "expert"))], "split": SFT_SPLIT,
                "epochs": scale.sft_epochs, "learning_rate": scale.sft_learning_rate, "batch_size": 4,
                "max_length": scale.max_length, "lora": True},
        "train": {"steps": scale.grpo_steps, "tasks_per_step": scale.tasks_per_step, "group_size": scale.group_size,
                  "learning_rate": scale.grpo_learning_rate, "lora": {"enabled": True},
                  "max_length": scale.max_length, "micro_batch_size": 4},
    }
    return config_from_tree(tree, f"quickstart ({env})")


def trained_adapter(layout: Layout, env: str) -> Path | None:
    """The LoRA adapter of the last GRPO checkpoint, or None before training."""
    from expbank.training.rl.grpo import latest_checkpoint

    checkpoint = latest_checkpoint(layout.grpo(env)) if layout.grpo(env).exists() else None
    return checkpoint / "model" if checkpoint else None


# ---------------------------------------------------------------------------------------------- stages
def collect_stage(scale: Scale, layout: Layout) -> None:
    """Expert and random episodes of ``train`` (bank sources) and expert ones of ``dev`` (SFT records)."""
    for env in ENVS:
        size: EnvScale = getattr(scale, env)
        plays = [("train", "expert", size.expert, None), ("train", "random", size.random, size.random_max_steps)]
        if env in scale.train_envs:
            plays.append((SFT_SPLIT, "expert", size.sft, None))
        for split, policy, episodes, max_steps in plays:
            if episodes == 0:
                continue
            collect(env, split, policy, layout.trajectories(env, split, policy), episodes=episodes,
                    workers=scale.collect_workers, max_steps=max_steps)


def bank_stage(scale: Scale, layout: Layout) -> None:
    """Summarise the train trajectories into the bank (``expbank bank build``; built episodes are skipped)."""
    sources = [layout.trajectories(env, "train", policy) for env in ENVS for policy in ("expert", "random")]
    bank = Bank.open_or_create(layout.bank)
    report = build(bank, [p for p in sources if p.exists()], make_summariser("rule",
                                                                              excerpt_tokens=scale.excerpt_tokens))
    bank.save()
    print(f"bank: {report.episodes} episodes -> {report.added} entries added, {report.merged} merged, "
          f"{len(report.quarantined)} quarantined; {len(bank)} entries")


def eval_untrained_stage(scale: Scale, layout: Layout) -> None:
    """The untrained actor with memory none, raw and bank on each held-out panel (``expbank ablate``)."""
    for env in ENVS:
        config = run_config(scale, layout, env)
        config.run.dir = str(layout.ablation(env))
        config.ablate.arms = [{"memory.mode": mode} for mode in UNTRAINED_ARMS]
        ablate(config)


def train_stage(scale: Scale, layout: Layout) -> None:
    """SFT cold start on dev walkthroughs, then GRPO on train (LoRA, bank memory, resumable)."""
    from expbank.training.rl.grpo import train

    for env in scale.train_envs:
        config = run_config(scale, layout, env)
        adapter = layout.sft(env) / "model"
        if not (adapter / "adapter_config.json").exists():
            config.run.dir = str(layout.sft(env))
            prepare_run_dir(layout.sft(env), config)
            sft(config, config.sft.trajectories, layout.sft(env))
        config.actor.adapter = str(adapter)
        config.run.dir = str(layout.grpo(env))
        train(config, resume=True)


def eval_trained_stage(scale: Scale, layout: Layout) -> None:
    """The trained policy with memory none and bank, as arms of the untrained actor's ablation."""
    for env in scale.train_envs:
        adapter = trained_adapter(layout, env)
        if adapter is None:
            raise UserError(f"{layout.grpo(env)} holds no checkpoint; the train stage did not finish")
        base = run_config(scale, layout, env)
        backend = make_backend("hf", scale.actor, adapter=str(adapter))
        for mode in TRAINED_ARMS:
            overrides = {"actor.adapter": str(adapter), "memory.mode": mode, "run.arm": f"trained-{mode}"}
            evaluate(arm_config(base, overrides, layout.ablation(env), several_actors=False), backend=backend)


def report_stage(scale: Scale, layout: Layout) -> None:
    """Each ablation's report and plots, then ``DIR/report.md`` joining them."""
    summaries = {env: write_report(layout.ablation(env)) for env in ENVS}
    (layout.root / "report.md").write_text(render_report(scale, layout, summaries))


@dataclass(frozen=True)
class Stage:
    name: str
    title: str
    run: Callable[[Scale, Layout], None]


STAGES = [
    Stage("collect", "collect expert and random trajectories (ALFWorld, WebShop)", collect_stage),
    Stage("bank", "build the experience bank (rule summariser, MiniLM)", bank_stage),
    Stage("eval-untrained", "evaluate the untrained actor: memory none, raw, bank", eval_untrained_stage),
    Stage("train", "SFT cold start + GRPO (LoRA, bank memory)", train_stage),
    Stage("eval-trained", "evaluate the trained policy: memory none, bank", eval_trained_stage),
    Stage("report", "write report.md and plots", report_stage),
]


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
    the whole process tree, environment workers included, per stage)."""
    layout = Layout(Path(root))
    done = prepare_dir(layout.root, scale)
    for number, stage in enumerate(STAGES, 1):
        header = f"[{number}/{len(STAGES)}] {stage.title}"
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
        write_json(layout.root / "stages.json", done)
        print(f"   {stage.name} finished in {done[stage.name]['seconds']:.0f} s, "
              f"peak memory {done[stage.name]['peak_memory_gib']:.2f} GiB", flush=True)
    return done


# ---------------------------------------------------------------------------------------------- report
def _demote(markdown: str) -> list[str]:
    """A run's report.md, its headings one level down, to sit under a section of the joint report."""
    return [f"#{line}" if line.startswith("#") else line for line in markdown.splitlines()]


def render_report(scale: Scale, layout: Layout, summaries: dict[str, dict[str, Any]]) -> str:
    """``DIR/report.md``: the sample-size warning, the stages, the GRPO curve, then each ablation's report."""
    stages = json.loads((layout.root / "stages.json").read_text()) if (layout.root / "stages.json").exists() else {}
    panels = ", ".join(f"{env} `{HELD_OUT[env]}` {summaries[env]['run']['n_tasks']} tasks" for env in ENVS)
    lines = [
        "# expbank quickstart report",
        "",
        f"Actor `{scale.actor}`; panels: {panels}; seeds {scale.seeds}. The full scale is in `scale.yaml`.",
        "",
        "**At this scale the sample is far too small for the tests to mean much.** Each panel has a handful "
        "of episodes per arm (a comparison needs at least 30 pairs and 10 discordant pairs); the numbers show "
        "that every stage runs end to end and what the report holds, not whether the bank or training helps. "
        "Use `--full`, or the GPU recipes, for numbers to read.",
        "",
        "## Stages",
        "",
        "| stage | wall s | CPU s |",
        "|---|---|---|",
    ]
    lines += [f"| {s.name} | {stages[s.name]['seconds']} | {stages[s.name]['cpu_seconds']} |"
              for s in STAGES if s.name in stages]
    for env in scale.train_envs:
        metrics = layout.grpo(env) / "metrics.jsonl"
        rows = [json.loads(line) for line in metrics.read_text().splitlines()] if metrics.exists() else []
        lines += ["", f"## GRPO on {env} `train` (SFT cold start on `{SFT_SPLIT}` walkthroughs first)", "",
                  "| step | episodes | reward | success | format score | rows | loss |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['step']} | {r['episodes']} | {r['reward_mean']:.2f} | {r['success_rate']:.2f} | "
                  f"{r['format_score']:.2f} | {r['rows']} | {r['loss']:.4f} |" for r in rows]
    for env in ENVS:
        folder = layout.ablation(env).relative_to(layout.root)
        lines += ["", f"## {env} / {HELD_OUT[env]}", "",
                  f"Run directory `{folder}/` (one eval run per arm in `arms/`); plots: "
                  + ", ".join(f"[{p}]({folder}/{p})" for p in summaries[env].get("plots", [])), ""]
        lines += _demote((layout.ablation(env) / "report.md").read_text())
    return "\n".join(lines) + "\n"


def screen_summary(layout: Layout) -> str:
    """What the command prints at the end: per panel, each arm and each paired comparison, on one screen."""
    lines = []
    for env in ENVS:
        summary = json.loads((layout.ablation(env) / "summary.json").read_text())
        run = summary["run"]
        lines.append(f"{env} / {run['split']} ({run['n_tasks']} tasks x seeds {run['seeds']}, "
                     f"max_steps {run['max_steps']})")
        for name in run["arm_order"]:
            arm = summary["arms"][name]
            score = f"  score {arm['score']:5.1f}" if arm.get("score") is not None else ""
            lines.append(f"  {name:<16} n={arm['n']:<3} success {arm['success']:5.1f}%{score}"
                         f"  errors {arm['errors']}")
        lines += [f"  {comparison_line(c)}" for c in summary["comparisons"]]
        lines.append(f"  sample: {run['sample']['text']}")
    lines.append(f"report: {layout.root / 'report.md'}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="runs/quickstart", help="quickstart directory (re-running resumes it)")
    parser.add_argument("--full", action="store_true", help="every held-out task, both envs trained, 20 GRPO steps")
    parser.add_argument("overrides", nargs="*", metavar="key=value",
                        help="scale overrides, e.g. webshop.panel=8 grpo_steps=2 (keys: docs/config-reference.md)")


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    scale = load_scale(args.full, args.overrides)
    began = time.perf_counter()
    quickstart(args.out, scale)
    print(f"\n{screen_summary(Layout(Path(args.out)))}\n(total {time.perf_counter() - began:.0f} s this run)")
    return 0
