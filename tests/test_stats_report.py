"""Statistics and reports: numbers checked against independent computations on fixed tables,
byte-for-byte re-rendering, refusal of mismatched panels, and the summary.json schema.

Run directories are written here directly from ``Episode`` records and configs: what is under test is the
arithmetic and the files, not the actor that would have produced the episodes.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from expbank.cli import main
from expbank.config import Config, dump_config
from expbank.training.evaluation import report, stats
from expbank.trajectory import EpisodeWriter, make_episode_id

TYPES = ["pick_and_place_simple", "look_at_obj_in_light", "pick_clean_then_place_in_recep",
         "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep", "pick_two_obj_and_place"]


def row(task: str, success: bool, seed: int = 0, task_type: str = "t", score: float | None = None,
        error: bool = False) -> stats.EpisodeOutcome:
    return stats.EpisodeOutcome(task, seed, task_type, success, float(success) if score is None else score, error)


def write_arm(run_dir: Path, arm: str, outcomes: dict[tuple[str, int], bool | tuple[bool, float] | str],
              env: str = "alfworld", split: str = "valid_unseen", fingerprint: dict | None = None,
              **settings) -> None:
    """An eval run directory: config.yaml, fingerprint.json and one episode per (task, seed).

    An outcome is a success flag, ``(success, score)`` for WebShop, or ``"error"`` for an errored episode.
    """
    config = Config()
    config.env.name, config.env.split = env, split
    for key, value in settings.items():
        section, name = key.split("__")
        setattr(getattr(config, section), name, value)
    run_dir.mkdir(parents=True, exist_ok=True)
    dump_config(config, run_dir / "config.yaml")
    (run_dir / "fingerprint.json").write_text(json.dumps(fingerprint or {"git_commit": "0" * 40}))
    with EpisodeWriter(run_dir / "episodes.jsonl") as writer:
        for (task, seed), outcome in sorted(outcomes.items()):
            error = "backend crashed" if outcome == "error" else None
            success, score = (outcome, float(outcome)) if isinstance(outcome, bool) else (
                (False, 0.7) if error else outcome)
            writer.write({
                "episode_id": make_episode_id(env, split, task, config.actor.model, arm, seed),
                "run_id": run_dir.name, "arm": arm, "env": env, "split": split, "task_id": task,
                "task_type": TYPES[int(task[1:]) % 6], "task": "put a clean mug in the cabinet.",
                "policy": config.actor.model, "seed": seed,
                "steps": [{"t": 0, "observation": "You are in a room.", "action": "look",
                           "invalid": task.endswith("3"), "retrieved": ["e1"] if config.memory.mode != "none" else []}],
                "success": success, "score": score, "num_steps": 1, "num_invalid": int(task.endswith("3")),
                "error": error,
            })


def outcomes(pattern: str, seeds: tuple[int, ...] = (0,), tasks: int | None = None) -> dict:
    """``"1100..."`` -> {(t00, 0): True, (t01, 0): True, ...}, repeated for each seed (seed s shifts by s)."""
    tasks = tasks or len(pattern)
    return {(f"t{i:02d}", s): pattern[(i + s) % len(pattern)] == "1" for s in seeds for i in range(tasks)}


@pytest.fixture()
def ablation(tmp_path: Path) -> Path:
    """An ablation directory: none / bank / bank-no-reconstruct / a trained adapter in bank mode."""
    run = tmp_path / "abl"
    run.mkdir()
    dump_config(Config(), run / "config.yaml")
    (run / "fingerprint.json").write_text(json.dumps({"git_commit": "f" * 40, "prompt_template": "v1"}))
    rng = np.random.default_rng(7)
    rates = {"none": 0.3, "bank": 0.6, "bank-norecon": 0.5, "trained-bank": 0.7}
    for arm, rate in rates.items():
        results = {(f"t{i:02d}", s): bool(rng.random() < rate) for s in (0, 1) for i in range(36)}
        results[("t05", 1)] = "error"
        mode = "none" if arm == "none" else "bank"
        extra = {"actor__adapter": "runs/sft/adapter"} if arm == "trained-bank" else {}
        if arm == "bank-norecon":
            extra["memory__reconstruct"] = False
        write_arm(run / "arms" / arm, arm, results, memory__mode=mode, panel__seeds=[0, 1], **extra)
    return run


# ------------------------------------------------------------------------------------------- statistics
def test_mcnemar_exact_p_is_the_two_sided_binomial_of_the_discordant_pairs():
    # 20 pairs: 7 both succeed, 2 only a, 9 only b, 2 neither.
    a = [row(f"t{i}", s) for i, s in enumerate([1] * 7 + [1] * 2 + [0] * 9 + [0] * 2)]
    b = [row(f"t{i}", s) for i, s in enumerate([1] * 7 + [0] * 2 + [1] * 9 + [0] * 2)]
    result = stats.compare_arms(a, b, "alfworld", seed=0, resamples=100)
    by_hand = 2 * sum(math.comb(11, k) for k in range(3)) / 2**11  # P(X <= 2), X ~ Bin(11, 1/2), doubled
    assert result["mcnemar_p"] == pytest.approx(by_hand) == pytest.approx(0.0654296875)
    assert result["flips"] == {"both": 7, "a_only": 2, "b_only": 9, "neither": 2}
    assert result["n_pairs"] == 20 and result["diff"] == pytest.approx(100 * (9 - 2) / 20)
    assert stats.mcnemar_exact_p(3, 3) == 1.0 and stats.mcnemar_exact_p(0, 0) == 1.0


def test_one_sided_mcnemar_is_the_upper_binomial_tail_of_b_only():
    assert stats.mcnemar_exact_p(0, 10, alternative="greater") == pytest.approx(0.5 ** 10)
    assert stats.mcnemar_exact_p(1, 7, alternative="greater") == pytest.approx(9 / 256)  # P(X >= 7 | n = 8)
    assert stats.mcnemar_exact_p(7, 1, alternative="greater") > 0.99  # a better than b is not evidence for b


def test_paired_bootstrap_ci_matches_an_independent_resampling_of_tasks():
    # 12 tasks x 2 seeds; differences b - a per episode, resampled by task.
    rng_data = np.random.default_rng(3)
    a = [row(f"t{i:02d}", bool(rng_data.random() < 0.4), seed=s) for s in (0, 1) for i in range(12)]
    b = [row(f"t{i:02d}", bool(rng_data.random() < 0.6), seed=s) for s in (0, 1) for i in range(12)]
    result = stats.compare_arms(a, b, "alfworld", seed=11, resamples=2000)

    by_task: dict[str, list[int]] = {}
    for ra, rb in zip(a, b, strict=True):
        by_task.setdefault(ra.task_id, []).append(int(rb.success) - int(ra.success))
    tasks = sorted(by_task)
    rng = np.random.default_rng(11)
    means = []
    for _ in range(2000):
        drawn = [tasks[j] for j in rng.integers(0, len(tasks), size=len(tasks))]
        values = [d for t in drawn for d in by_task[t]]
        means.append(sum(values) / len(values))
    means.sort()

    def percentile(q: float) -> float:  # linear interpolation between order statistics
        pos = q * (len(means) - 1)
        low = int(pos)
        return means[low] + (means[min(low + 1, len(means) - 1)] - means[low]) * (pos - low)

    assert result["ci95"] == pytest.approx([100 * percentile(0.025), 100 * percentile(0.975)])
    assert result["ci95"] == stats.compare_arms(a, b, "alfworld", seed=11, resamples=2000)["ci95"]  # seeded


def test_macro_mean_is_unweighted_over_task_types_and_errors_count_as_failures():
    rows = ([row(f"a{i}", i < 3, task_type="pick") for i in range(4)]       # 75 %
            + [row(f"b{i}", i < 1, task_type="look") for i in range(2)]     # 50 %
            + [row("c0", False, task_type="heat", error=True), row("c1", True, task_type="heat")])  # 50 %
    metrics = stats.arm_metrics(rows, "alfworld", seed=0, resamples=100)
    assert metrics["macro"] == pytest.approx((75 + 50 + 50) / 3)
    assert metrics["success"] == pytest.approx(100 * 5 / 8)  # overall is weighted by episodes
    assert metrics["per_type"]["pick"] == {"n": 4, "success": 75.0}
    assert metrics["n"] == 8 and metrics["errors"] == 1 and metrics["macro_types"] == 3
    assert metrics["score"] is None


def test_webshop_score_is_mean_reward_times_100_with_errors_scored_zero(tmp_path):
    write_arm(tmp_path / "ws", "none", {("t00", 0): (True, 1.0), ("t01", 0): (False, 0.5),
                                         ("t02", 0): (False, 0.25), ("t03", 0): "error"}, env="webshop", split="test")
    arm = report.load_run(tmp_path / "ws").arms[0]
    metrics = stats.arm_metrics(arm.rows, "webshop", seed=0, resamples=100)
    assert metrics["score"] == pytest.approx(100 * (1.0 + 0.5 + 0.25 + 0.0) / 4)  # the error's 0.7 counts as 0
    assert metrics["success"] == 25.0 and metrics["errors"] == 1 and metrics["macro"] is None


def test_wilcoxon_on_scores_and_seed_spread():
    a = [row(f"t{i}", False, score=0.0) for i in range(5)]
    b = [row(f"t{i}", False, score=0.1 * (i + 1)) for i in range(5)]
    result = stats.compare_arms(a, b, "webshop", seed=0, resamples=100)
    assert result["score_p"] == pytest.approx(2 / 2**5)  # exact: all 5 differences positive
    assert result["score_diff"] == pytest.approx(30.0) and "wilcoxon" in result["score_test"]

    rows = [row(f"t{i}", i < 2, seed=0) for i in range(4)] + [row(f"t{i}", i < 3, seed=1) for i in range(4)]
    spread = stats.seed_spread(rows)
    assert spread["per_seed"] == {"0": 50.0, "1": 75.0}
    assert spread["success_mean"] == 62.5 and spread["success_sd"] == pytest.approx(25 / math.sqrt(2))
    assert stats.seed_spread(rows[:4]) is None


def test_sample_verdict_says_plainly_when_too_small():
    assert "too small for the tests to mean much" in stats.sample_verdict(12, 3)["text"]
    assert not stats.sample_verdict(100, 5)["ok"]
    assert stats.sample_verdict(stats.MIN_PAIRS, stats.MIN_DISCORDANT)["ok"]


# ------------------------------------------------------------------------------------------------ reports
def test_summary_schema_and_comparison_plan(ablation):
    summary = report.write_report(ablation, resamples=500)
    on_disk = json.loads((ablation / "summary.json").read_text())
    assert on_disk == summary
    assert set(summary) >= {"arms", "comparisons", "fingerprint", "run", "schema"}
    assert summary["run"]["arm_order"] == ["none", "bank", "bank-norecon", "trained-bank"]
    for arm in summary["arms"].values():
        assert set(arm) >= {"n", "success", "score", "per_type", "macro", "diagnostics", "errors"}
        assert arm["n"] == 72 and arm["errors"] == 1
        assert arm["diagnostics"]["invalid_action_rate"] == pytest.approx(8 / 72)  # t03, t13, ... x 2 seeds
    assert [(c["a"], c["b"], c["kind"]) for c in summary["comparisons"]] == [
        ("none", "bank", "vs_none"), ("none", "bank-norecon", "vs_none"), ("bank", "trained-bank", "vs_base")]
    for comparison in summary["comparisons"]:
        assert set(comparison) >= {"a", "b", "n_pairs", "mcnemar_p", "diff", "ci95", "flips", "seeds", "sample"}
        assert comparison["n_pairs"] == 72 and comparison["seeds"]["n_seeds"] == 2
    assert summary["fingerprint"]["prompt_template"] == "v1"
    assert summary["plots"] == ["plot_success.png", "plot_per_type.png", "plot_flips.png"]


def test_trained_model_path_is_compared_with_the_base_named_in_its_fingerprint(tmp_path):
    run = tmp_path / "abl"
    run.mkdir()
    dump_config(Config(), run / "config.yaml")
    results = outcomes("1010")
    write_arm(run / "arms" / "base", "base", results)
    write_arm(run / "arms" / "grpo", "grpo", results, actor__model="runs/grpo1/model",
              fingerprint={"base_model": "smollm2-135m"})
    plan = report.plan_comparisons(report.load_run(run).arms)
    assert plan == [("base", "grpo", "vs_base")]


def test_report_on_a_copied_run_reproduces_every_file_byte_for_byte(ablation, tmp_path, capsys):
    assert main(["report", str(ablation), "--with-published"]) == 0
    assert "vs_none" in capsys.readouterr().out
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(ablation, copy)
    written = ["summary.json", "report.md", *json.loads((ablation / "summary.json").read_text())["plots"]]
    assert {"plot_success.png", "plot_flips.png"} <= set(written)
    for name in written:
        (copy / name).unlink()  # rebuilt from the rows alone
    assert main(["report", str(copy), "--with-published"]) == 0
    for name in written:
        assert (copy / name).read_bytes() == (ablation / name).read_bytes(), name

    text = (ablation / "report.md").read_text()
    ours, theirs = text.split("## Published results of other systems (theirs, not ours)")
    assert "GiGPO" in theirs and "GiGPO" not in ours and "protocol" in theirs
    assert "**Sample size:**" in ours and "**Decoding:**" in ours and "seeds [0, 1]" in ours


def test_small_eval_run_says_it_is_too_small_and_rebuilds_turn_diagnostics(tmp_path):
    run = tmp_path / "eval"
    write_arm(run, "bank", outcomes("110"), memory__mode="bank")
    counters = [{"episode_id": f"e{i}", "arm": "bank", "turns": 4, "format_violations": i, "reconstruct_turns": 2,
                 "none_reconstructions": 1, "source_similarities": [0.5, 0.7], "rescored_actions": 3 - i}
                for i in range(3)]
    (run / "episode_stats.jsonl").write_text("".join(json.dumps(c) + "\n" for c in counters))
    summary = report.write_report(run, resamples=100)
    diagnostics = summary["arms"]["bank"]["diagnostics"]
    assert diagnostics["format_violation_rate"] == pytest.approx((0 + 1 + 2) / 12)
    assert diagnostics["rescored_action_rate"] == pytest.approx((3 + 2 + 1) / 12)
    assert diagnostics["reconstruct_none_rate"] == pytest.approx(0.5)
    assert diagnostics["mean_source_similarity"] == pytest.approx(0.6)
    assert summary["comparisons"] == [] and not summary["run"]["sample"]["ok"]
    text = (run / "report.md").read_text()
    assert "too small" in text and "format_violation_rate" in text
    assert not (run / "plot_flips.png").exists()
    before = text
    report.write_report(run, resamples=100)
    assert (run / "report.md").read_text() == before


# ------------------------------------------------------------------------------------------------ compare
def test_compare_pairs_two_runs_on_the_same_panel(tmp_path, capsys):
    write_arm(tmp_path / "a", "none", outcomes("1000", seeds=(0, 1)))
    write_arm(tmp_path / "b", "bank", outcomes("1101", seeds=(0, 1)), memory__mode="bank")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "--resamples", "200"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (comparison,) = summary["comparisons"]
    assert (comparison["a"], comparison["b"], comparison["n_pairs"]) == ("a", "b", 8)
    assert comparison["diff"] == pytest.approx(50.0)


@pytest.mark.parametrize(("change", "named"), [
    ({"tasks": 5}, "task ids only in A (1): t05"),
    ({"extra": True}, "task ids only in B (2): t90, t91"),
    ({"seeds": (0, 1)}, "different seeds: A has [0], B has [0, 1]"),
    ({"split": "valid_seen"}, "different env.split: A has valid_unseen, B has valid_seen"),
])
def test_compare_refuses_different_panels_and_names_the_difference(tmp_path, capsys, change, named):
    write_arm(tmp_path / "a", "none", outcomes("100110"))
    results = outcomes("110100", seeds=change.get("seeds", (0,)), tasks=change.get("tasks"))
    if change.get("extra"):
        results |= {("t90", 0): True, ("t91", 0): False}
    write_arm(tmp_path / "b", "bank", results, split=change.get("split", "valid_unseen"), memory__mode="bank")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err
    assert "not run on the same panel" in err and named in err and len(err.strip().splitlines()) == 1
