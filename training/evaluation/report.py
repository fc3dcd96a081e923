"""``summary.json``, ``report.md`` and plots of a run directory, rebuilt from its episode rows alone.

Everything written here is a function of the episodes, the configs and the fingerprint: keys are sorted,
floats are rounded to 6 significant digits before anything is rendered, and no timestamp is written, so
re-running :func:`write_report` on a copy of a run directory reproduces every file byte for byte.
The schema and the comparison rules are documented in ``docs/reporting.md``.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expbank.config import Config, load_config
from expbank.errors import UserError
from expbank.training.evaluation import stats
from expbank.training.evaluation.published import render_published
from expbank.trajectory import read_episodes

SCHEMA_VERSION = 1
PLOTS = {"success": "plot_success.png", "per_type": "plot_per_type.png", "flips": "plot_flips.png",
         "stream": "plot_stream.png"}
STREAM_WINDOW = 24  # episodes in the moving success rate of an online run's stream plot


@dataclass
class Arm:
    """One arm: its episodes as rows, the config it ran with, and what the rows say about its steps."""

    name: str
    config: Config
    fingerprint: dict[str, Any]
    rows: list[stats.EpisodeOutcome]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def trained(self) -> bool:
        """A fine-tuned actor: an adapter on a base model, or a model whose fingerprint names its base."""
        return self.config.actor.adapter is not None or "base_model" in self.fingerprint

    @property
    def base_model(self) -> str | None:
        return self.fingerprint.get("base_model", self.config.actor.model) if self.trained else None


@dataclass
class Run:
    kind: str  # "eval", "ablation" or "compare"
    config: Config
    fingerprint: dict[str, Any]
    arms: list[Arm]


# ---------------------------------------------------------------------------------------------- loading
def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: not valid JSON: {err}") from None


def _load_config(run_dir: Path) -> Config:
    path = run_dir / "config.yaml"
    if not path.exists():
        raise UserError(f"{run_dir}: no config.yaml; is this a run directory?")
    return load_config(path)


def _row_diagnostics(episodes: list[Any]) -> dict[str, float]:
    """Diagnostics computable from the steps themselves (others are carried over from the run)."""
    steps = [step for ep in episodes for step in ep.steps]
    if not steps:
        return {}
    return {
        "invalid_action_rate": sum(ep.num_invalid for ep in episodes) / max(1, sum(ep.num_steps for ep in episodes)),
        "mean_steps": sum(ep.num_steps for ep in episodes) / len(episodes),
        "retrieval_rate": sum(bool(step.retrieved) for step in steps) / len(steps),
    }


def _recorded_diagnostics(run_dir: Path, arm: str) -> dict[str, Any]:
    """Diagnostics from the per-episode counters a rollout wrote to ``episode_stats.jsonl``.

    Each line holds one episode's turn counts (format violations, reconstruct blocks and how many were
    NONE, similarity of the observation to the shown entries' source observations), so the rates are
    rebuilt from rows, like every other number in the report.
    """
    path = run_dir / "episode_stats.jsonl"
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [row for row in rows if row.get("arm", arm) == arm]
    turns = sum(row["turns"] for row in rows)
    reconstructs = sum(row["reconstruct_turns"] for row in rows)
    similarities = [s for row in rows for s in row.get("source_similarities", [])]
    diagnostics: dict[str, Any] = {}
    if turns:
        diagnostics["format_violation_rate"] = sum(row["format_violations"] for row in rows) / turns
        rescored = sum(row.get("rescored_actions", 0) for row in rows)  # decoding.action=scored only
        if rescored:
            diagnostics["rescored_action_rate"] = rescored / turns
    if reconstructs:
        diagnostics["reconstruct_none_rate"] = sum(row["none_reconstructions"] for row in rows) / reconstructs
    if similarities:
        diagnostics["mean_source_similarity"] = sum(similarities) / len(similarities)
    return diagnostics


def _arms_of(run_dir: Path, config: Config, fingerprint: dict[str, Any], name: str | None = None) -> list[Arm]:
    """The arms of an eval run directory, by the ``arm`` field of its episodes (``name`` overrides it)."""
    path = run_dir / "episodes.jsonl"
    if not path.exists():
        raise UserError(f"{run_dir}: no episodes.jsonl; is this a run directory?")
    by_arm: dict[str, list[Any]] = {}
    for ep in read_episodes(path):
        by_arm.setdefault(name or ep.arm, []).append(ep)
    if not by_arm:
        raise UserError(f"{path}: no episodes yet; nothing to report")
    arms = []
    for arm_name, episodes in sorted(by_arm.items()):
        seen: set[tuple[str, int]] = set()
        for ep in episodes:
            if (ep.task_id, ep.seed) in seen:
                raise UserError(f"{path}: arm '{arm_name}' has task {ep.task_id} seed {ep.seed} twice")
            seen.add((ep.task_id, ep.seed))
        diagnostics = _recorded_diagnostics(run_dir, arm_name) | _row_diagnostics(episodes)
        arms.append(Arm(arm_name, config, fingerprint, stats.rows_from_episodes(episodes), diagnostics,
                        _usage(run_dir, config, episodes)))
    return arms


def _usage(run_dir: Path, config: Config, episodes: list[Any]) -> dict[str, Any]:
    """What the arm's replies cost, summed from its rows; the served model from ``usage.json``; the cost in
    US$ when ``actor.price`` is set."""
    totals = {key: sum(getattr(e, key) for e in episodes)
              for key in ("prompt_tokens", "completion_tokens", "requests", "retries")}
    path = run_dir / "usage.json"
    invocations = _read_json(path).get("invocations", [])
    served = [line["served_model"] for line in invocations if line.get("served_model")]
    totals["served_model"] = served[-1] if served else None
    price = config.actor.price
    if price.prompt is not None or price.completion is not None:
        totals["cost_usd"] = (totals["prompt_tokens"] * (price.prompt or 0.0)
                              + totals["completion_tokens"] * (price.completion or 0.0)) / 1e6
    return totals


def load_run(run_dir: str | Path) -> Run:
    """An eval run directory (``episodes.jsonl``) or an ablation (``arms/<name>/``, one eval run each)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"run directory not found: {run_dir}")
    config = _load_config(run_dir)
    fingerprint = _read_json(run_dir / "fingerprint.json")
    if (run_dir / "arms").is_dir():
        arms = []
        for arm_dir in sorted(p for p in (run_dir / "arms").iterdir() if (p / "episodes.jsonl").exists()):
            arms += _arms_of(arm_dir, _load_config(arm_dir), _read_json(arm_dir / "fingerprint.json"), arm_dir.name)
        if not arms:
            raise UserError(f"{run_dir}/arms holds no arm with an episodes.jsonl")
        return Run("ablation", config, fingerprint, sorted(arms, key=_arm_order))
    return Run("eval", config, fingerprint, sorted(_arms_of(run_dir, config, fingerprint), key=_arm_order))


def _arm_order(arm: Arm) -> tuple[str, str, int, str]:
    """Arms grouped by actor, then none, raw, bank, then by name: the order tables and plots use."""
    actor = arm.config.actor
    mode = {"none": 0, "raw": 1, "bank": 2}.get(arm.config.memory.mode, 3)
    return (actor.model, actor.adapter or "", mode, arm.name)


# ------------------------------------------------------------------------------------------ comparisons
def plan_comparisons(arms: list[Arm]) -> list[tuple[str, str, str]]:
    """``(a, b, kind)``: each arm against the ``none`` arm of the same actor (``vs_none``), and each trained
    actor against its base model in the same memory mode (``vs_base``). The first match by name is used."""
    plan = []
    for b in arms:
        actor = (b.config.actor.model, b.config.actor.adapter)
        if b.config.memory.mode != "none":
            nones = [a for a in arms if a.config.memory.mode == "none"
                     and (a.config.actor.model, a.config.actor.adapter) == actor]
            if nones:
                plan.append((nones[0].name, b.name, "vs_none"))
        if b.trained:
            bases = [a for a in arms if not a.trained and a.config.actor.model == b.base_model
                     and a.config.memory.mode == b.config.memory.mode]
            if bases:
                plan.append((bases[0].name, b.name, "vs_base"))
    return plan


# ---------------------------------------------------------------------------------------------- summary
def _clean(value: Any) -> Any:
    """JSON-ready and stable: floats to 6 significant digits, NaN to null, tuples to lists."""
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.6g}")
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _memory_label(config: Config) -> str:
    memory = config.memory.model_dump(mode="json")
    if memory.pop("mode") == "none":
        return "none"
    memory.pop("bank", None)
    values = (f"{k}={json.dumps(v) if isinstance(v, bool) or v is None else v}" for k, v in sorted(memory.items()))
    return f"{config.memory.mode} (" + ", ".join(values) + ")"


def _actor_label(config: Config) -> str:
    actor = config.actor
    return actor.model + (f" + adapter {actor.adapter}" if actor.adapter else "")


def _run_verdict(arms: dict[str, Any], comparisons: list[dict[str, Any]]) -> dict[str, Any]:
    """One plain sentence on whether this run is large enough for its tests to mean anything."""
    if comparisons:
        small = [c for c in comparisons if not c["sample"]["ok"]]
        if not small:
            which = "the comparison" if len(comparisons) == 1 else f"all {len(comparisons)} comparisons"
            return {"ok": True, "text": f"large enough for the tests in {which} (each has >= {stats.MIN_PAIRS} "
                                        f"pairs and >= {stats.MIN_DISCORDANT} discordant pairs)"}
        return {"ok": False, "text": f"too small for the tests to mean much in {len(small)} of {len(comparisons)} "
                                     "comparisons (see the sample column)"}
    n = min(arm["n"] for arm in arms.values())
    verdict = stats.sample_verdict(n)
    return {"ok": verdict["ok"], "text": f"no comparisons in this run; {n} episodes per arm is "
                                         + ("large enough for a CI" if verdict["ok"] else
                                            f"too small for the CI to mean much (< {stats.MIN_PAIRS})")}


def build_summary(run: Run, plan: list[tuple[str, str, str]] | None = None,
                  resamples: int = stats.BOOTSTRAP_RESAMPLES) -> dict[str, Any]:
    """The ``summary.json`` of a run; ``plan`` defaults to :func:`plan_comparisons`."""
    env, seed = run.config.env.name, run.config.run.seed
    by_name = {arm.name: arm for arm in run.arms}
    arms = {}
    for arm in run.arms:
        arms[arm.name] = stats.arm_metrics(arm.rows, env, seed, resamples) | {
            "actor": _actor_label(arm.config), "memory": _memory_label(arm.config),
            "trained": arm.trained, "base_model": arm.base_model, "diagnostics": arm.diagnostics,
            "usage": arm.usage,
        }
        if arm.config.memory.online:  # rows are in stream order
            arms[arm.name]["online"] = stats.stream_halves(arm.rows) | {
                "stream": [int(row.success) for row in arm.rows]}
    comparisons = []
    for a, b, kind in plan_comparisons(run.arms) if plan is None else plan:
        result = stats.compare_arms(by_name[a].rows, by_name[b].rows, env, seed, resamples)
        comparisons.append({"a": a, "b": b, "kind": kind} | result)
    tasks = sorted({row.task_id for arm in run.arms for row in arm.rows})
    seeds = sorted({row.seed for arm in run.arms for row in arm.rows})
    summary = {
        "schema": SCHEMA_VERSION,
        "run": {
            "kind": run.kind, "env": env, "split": run.config.env.split, "max_steps": run.config.env.max_steps,
            "n_tasks": len(tasks), "task_ids_sha256": hashlib.sha256("\n".join(tasks).encode()).hexdigest()[:16],
            "seeds": seeds, "arm_order": [arm.name for arm in run.arms], "decoding": run.config.decoding.model_dump(mode="json"),
            "bootstrap": {"seed": seed, "resamples": resamples, "unit": "task", "interval": "percentile 95%"},
            "sample": _run_verdict(arms, comparisons),
        },
        "arms": arms,
        "comparisons": comparisons,
        "fingerprint": run.fingerprint,
    }
    return _clean(summary)


# ----------------------------------------------------------------------------------------------- report
def _num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ci(ci: list[float | None] | None) -> str:
    return "—" if not ci or ci[0] is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _sd(spread: dict[str, Any] | None, key: str) -> str:
    if not spread:
        return "—"
    return f"{spread[key + '_mean']:.1f} ± {spread[key + '_sd']:.1f} ({spread['n_seeds']} seeds)"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def render_report(summary: dict[str, Any], published: str | None = None) -> str:
    """``report.md`` from a summary (and, when asked, a separately labelled table of published numbers)."""
    run, comparisons = summary["run"], summary["comparisons"]
    arms = {name: summary["arms"][name] for name in run["arm_order"]}
    webshop = run["env"] == "webshop"
    decoding = ", ".join(f"{k}={v}" for k, v in sorted(run["decoding"].items()))
    title = {"eval": "Evaluation report", "ablation": "Ablation report", "compare": "Comparison of two runs"}
    lines = [
        f"# {title[run['kind']]}: {run['env']} / {run['split']}",
        "",
        f"**Panel:** {run['env']} split `{run['split']}`, {run['n_tasks']} tasks (task-id sha256 "
        f"`{run['task_ids_sha256']}`), seeds {run['seeds']}, max_steps {run['max_steps']}. "
        f"**Decoding:** {decoding}.",
        "",
        f"**Sample size:** {run['sample']['text']}.",
        "",
        "## Arms",
        "",
        "Rates in %; n counts every episode, and errored episodes count as failures.",
        "",
    ]
    header = ["arm", "actor", "memory", "n", "errors"]
    header += ["score [95% CI]", "success % [95% CI]"] if webshop else ["success % [95% CI]", "macro % (types)"]
    header += ["success across seeds (mean ± sd)"]
    table = []
    for name, arm in arms.items():
        row = [name, arm["actor"], arm["memory"], str(arm["n"]), str(arm["errors"])]
        success = f"{_num(arm['success'])} {_ci(arm['success_ci95'])}"
        if webshop:
            row += [f"{_num(arm['score'])} {_ci(arm['score_ci95'])}", success]
        else:
            row += [success, f"{_num(arm['macro'])} ({arm['macro_types']})"]
        table.append(row + [_sd(arm["seeds"], "success")])
    lines += _table(header, table) + ["", "### Success by task type", "", "Success % (episodes)."]
    types = sorted({t for arm in arms.values() for t in arm["per_type"]})
    lines += [""] + _table(["task type", *arms], [
        [t] + [f"{_num(arm['per_type'][t]['success'])} ({arm['per_type'][t]['n']})" if t in arm["per_type"]
               else "—" for arm in arms.values()] for t in types])
    lines += ["", "## Comparisons", ""]
    if not comparisons:
        lines.append("No comparisons: no arm has a `none` arm of the same actor or a base model to compare with.")
    else:
        boot = run["bootstrap"]
        lines += [f"diff = b − a in percentage points over the episodes paired by (task, seed). CI: {boot['interval']} "
                  f"bootstrap resampling {boot['unit']}s, {boot['resamples']} resamples, seed {boot['seed']}. "
                  f"Success test: {stats.SUCCESS_TEST}."
                  + (f" Score test: {stats.SCORE_TEST}." if webshop else ""), ""]
        header = ["b", "a", "kind", "pairs (unpaired a/b)", "b fails→succeeds / succeeds→fails",
                  "success diff [95% CI]", "McNemar p"]
        header += ["score diff [95% CI]", "Wilcoxon p"] if webshop else []
        header += ["diff across seeds (mean ± sd)", "sample"]
        table = []
        for c in comparisons:
            row = [c["b"], c["a"], c["kind"], f"{c['n_pairs']} ({c['unpaired_a']}/{c['unpaired_b']})",
                   f"{c['flips']['b_only']} / {c['flips']['a_only']}", f"{_num(c['diff'])} {_ci(c['ci95'])}",
                   _p(c["mcnemar_p"])]
            if webshop:
                row += [f"{_num(c['score_diff'])} {_ci(c['score_ci95'])}", _p(c["score_p"])]
            table.append(row + [_sd(c["seeds"], "diff"), c["sample"]["text"]])
        lines += _table(header, table)
    paid = {name: arm["usage"] for name, arm in arms.items() if arm.get("usage", {}).get("requests")}
    if paid:
        lines += ["", "## Usage", "", "Summed over each arm's episodes (a cached reply counts what it cost when paid "
                  "for); latency per invocation is in the arm's `usage.json`.", ""]
        lines += _table(["arm", "served model", "requests", "retries", "prompt tokens", "completion tokens",
                         "cost US$"], [
            [name, u["served_model"] or "—", str(u["requests"]), str(u["retries"]), str(u["prompt_tokens"]),
             str(u["completion_tokens"]), f"{u['cost_usd']:.4f}" if u.get("cost_usd") is not None else "—"]
            for name, u in paid.items()])
    streams = {name: arm["online"] for name, arm in arms.items() if arm.get("online")}
    if streams:
        lines += ["", "## Online arms", "",
                  "These arms learnt while they were evaluated: the bank they retrieve from grows from their own "
                  "earlier episodes (the run's `bank/`, one line per wave in `online.jsonl`). Their success is "
                  "that of a stream, not of a fixed bank. Halves of the stream, in stream order; Fisher's exact "
                  "test, two-sided.", ""]
        lines += _table(["arm", "first half % (n)", "second half % (n)", "diff", "Fisher p"], [
            [name, f"{_num(o['first_half']['success'])} ({o['first_half']['n']})",
             f"{_num(o['second_half']['success'])} ({o['second_half']['n']})", _num(o["diff"]), _p(o["fisher_p"])]
            for name, o in streams.items()])
    keys = sorted({k for arm in arms.values() for k in arm["diagnostics"]})
    if keys:
        lines += ["", "## Diagnostics", ""]
        lines += _table(["arm", *keys], [
            [name] + [_diagnostic(arm["diagnostics"].get(k)) for k in keys] for name, arm in arms.items()])
    lines += ["", "## Fingerprint", "", "```json", json.dumps(summary["fingerprint"], indent=2, sort_keys=True), "```"]
    if published:
        lines += ["", published]
    return "\n".join(lines) + "\n"


def _diagnostic(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


# ------------------------------------------------------------------------------------------------ plots
def write_plots(summary: dict[str, Any], out_dir: Path) -> list[str]:
    """Per-arm success with CIs, success per task type, and paired flip counts (PNG, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    arms, comparisons = summary["arms"], summary["comparisons"]
    names = summary["run"]["arm_order"]
    written = []

    def save(fig: Any, key: str) -> None:
        fig.tight_layout()
        fig.savefig(out_dir / PLOTS[key], dpi=100, metadata={"Software": None})
        plt.close(fig)
        written.append(PLOTS[key])

    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(names) + 2), 4))
    values = np.array([arms[n]["success"] or 0.0 for n in names])
    cis = np.array([[c if c is not None else v for c in arms[n]["success_ci95"]] for n, v in zip(names, values, strict=True)])
    ax.bar(names, values, yerr=[values - cis[:, 0], cis[:, 1] - values], capsize=4, color="tab:blue")
    ax.set_ylabel("success % (95% CI, bootstrap over tasks)")
    ax.set_ylim(0, 100)
    ax.tick_params(axis="x", rotation=30)
    save(fig, "success")

    types = sorted({t for arm in arms.values() for t in arm["per_type"]})
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(types) * max(1, len(names)) / 2 + 3), 4))
    width = 0.8 / max(1, len(names))
    for i, name in enumerate(names):
        heights = [arms[name]["per_type"].get(t, {}).get("success") or 0.0 for t in types]
        ax.bar(np.arange(len(types)) + i * width, heights, width, label=name)
    ax.set_xticks(np.arange(len(types)) + width * (len(names) - 1) / 2, types, rotation=30, ha="right")
    ax.set_ylabel("success %")
    ax.set_ylim(0, 100)
    ax.legend(fontsize="small")
    save(fig, "per_type")

    if comparisons:
        labels = [f"{c['b']} vs {c['a']}" for c in comparisons]
        fig, ax = plt.subplots(figsize=(6, 0.6 * len(labels) + 1.5))
        y = np.arange(len(labels))
        ax.barh(y - 0.2, [c["flips"]["b_only"] for c in comparisons], 0.4, color="tab:green",
                label="a fails, b succeeds")
        ax.barh(y + 0.2, [c["flips"]["a_only"] for c in comparisons], 0.4, color="tab:red",
                label="a succeeds, b fails")
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        ax.set_xlabel("paired episodes")
        ax.legend(fontsize="small")
        save(fig, "flips")

    streams = {name: arms[name]["online"]["stream"] for name in names if arms[name].get("online")}
    if streams:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for name, outcomes in streams.items():
            window = min(STREAM_WINDOW, len(outcomes))
            moving = np.convolve(outcomes, np.ones(window) / window, mode="valid") * 100
            ax.plot(np.arange(window, len(outcomes) + 1), moving, label=name)
        ax.set_xlabel("episodes played (stream order)")
        ax.set_ylabel(f"success % (last {STREAM_WINDOW} episodes)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        save(fig, "stream")
    return written


# ------------------------------------------------------------------------------------------- entrypoint
def write_report(run_dir: str | Path, with_published: bool = False,
                 resamples: int = stats.BOOTSTRAP_RESAMPLES) -> dict[str, Any]:
    """Rebuild ``summary.json``, ``report.md`` and the plots of a run directory; returns the summary."""
    run_dir = Path(run_dir)
    summary = build_summary(load_run(run_dir), resamples=resamples)
    published = None
    if with_published:
        published = render_published(summary["run"]["env"])
    summary["plots"] = write_plots(summary, run_dir)
    for stale in set(PLOTS.values()) - set(summary["plots"]):
        (run_dir / stale).unlink(missing_ok=True)  # e.g. flips of a comparison this run no longer has
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    (run_dir / "report.md").write_text(render_report(summary, published))
    return summary


def _panel(run: Run) -> dict[str, Any]:
    rows = [row for arm in run.arms for row in arm.rows]
    env = run.config.env
    return {"env.name": env.name, "env.split": env.split, "env.max_steps": env.max_steps,
            "seeds": sorted({r.seed for r in rows}), "tasks": {r.task_id for r in rows}}


def _listed(ids: set[str], limit: int = 5) -> str:
    shown = sorted(ids)[:limit]
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return ", ".join(shown) + more


def panel_differences(run_a: Run, run_b: Run) -> list[str]:
    """How the panels of two runs differ (env, split, step limit, seeds, task ids); empty when they match."""
    pa, pb = _panel(run_a), _panel(run_b)
    diffs = [f"different {key}: A has {pa[key]}, B has {pb[key]}" for key in pa if key != "tasks" and pa[key] != pb[key]]
    for side, only in (("A", pa["tasks"] - pb["tasks"]), ("B", pb["tasks"] - pa["tasks"])):
        if only:
            diffs.append(f"task ids only in {side} ({len(only)}): {_listed(only)}")
    return diffs


def join_runs(named: dict[str, str | Path], plan: list[tuple[str, str]],
              resamples: int = stats.BOOTSTRAP_RESAMPLES) -> dict[str, Any]:
    """One summary of several one-arm eval runs on the same panel, arms named by ``named``'s keys, with the
    comparisons ``plan`` lists as (a, b): b against a. Refuses runs on differing panels."""
    runs = {}
    for name, path in named.items():
        run = load_run(Path(path))
        if run.kind != "eval" or len(run.arms) != 1:
            raise UserError(f"{path}: compare takes one-arm eval runs; for an ablation pass arms/<name>")
        runs[name] = run
    first_name, first = next(iter(runs.items()))
    for name, run in runs.items():
        diffs = panel_differences(first, run)
        if diffs:
            raise UserError(f"{named[first_name]} and {named[name]} were not run on the same panel: "
                            + "; ".join(diffs))
    arms = [Arm(name, run.arms[0].config, run.arms[0].fingerprint, run.arms[0].rows, run.arms[0].diagnostics)
            for name, run in runs.items()]
    fingerprint = {name: run.fingerprint for name, run in runs.items()}
    joined = Run("compare", first.config, fingerprint, arms)
    return build_summary(joined, plan=[(a, b, "compare") for a, b in plan], resamples=resamples)


def compare_runs(dir_a: str | Path, dir_b: str | Path,
                 resamples: int = stats.BOOTSTRAP_RESAMPLES) -> dict[str, Any]:
    """Summary of b against a for two one-arm eval runs on the same panel; refuses differing panels."""
    names = [Path(dir_a).resolve().name, Path(dir_b).resolve().name]
    if names[0] == names[1]:
        names = [f"A:{names[0]}", f"B:{names[1]}"]
    summary = join_runs(dict(zip(names, (dir_a, dir_b), strict=True)), [(names[0], names[1])], resamples)
    summary["fingerprint"] = {"a": summary["fingerprint"][names[0]], "b": summary["fingerprint"][names[1]]}
    return summary


def comparison_line(comparison: dict[str, Any]) -> str:
    """``b vs a: +X pts [lo, hi], McNemar p=…, n=…``: one paired comparison of a summary, on one line."""
    low, high = (f"{v:+.1f}" if v is not None else "n/a" for v in (comparison.get("ci95") or [None, None]))
    return (f"{comparison['b']} vs {comparison['a']}: {comparison['diff']:+.1f} pts [{low}, {high}], "
            f"McNemar p={comparison['mcnemar_p']:.3g}, n={comparison['n_pairs']}")
