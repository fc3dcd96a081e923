"""``expbank quickstart`` at a test scale, its resumption (after a SIGKILL too) and errors; the README and config
reference.

The test scale plays every stage for real: households games on the ALFWorld engine, expert visits, the
offline MiniLM bank, two tiny-warm policies trained from scratch (60 steps: the format, not yet the bank),
GRPO and four evaluated arms. It checks the chain and its records, not the effect (README, "Quickstart").
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from expbank.cli import main
from expbank.commands import quickstart as qs

ROOT = Path(__file__).resolve().parent.parent
TEST_SCALE = ["train_households=2", "held_out_households=1", "sft_steps=60", "grpo_steps=1", "grpo_extra_steps=3",
              "tasks_per_step=2", "group_size=4", "episodes_in_flight=2", "collect_workers=1"]
COMPARISON = r"[+-]\d+\.\d pts \[[+-]\d+\.\d, [+-]\d+\.\d\], McNemar p=[\d.e+-]+, n=6"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A test-scale quickstart, run once for the module through the command line."""
    out = tmp_path_factory.mktemp("quickstart") / "run"
    assert main(["quickstart", "--out", str(out), *TEST_SCALE]) == 0
    return out


def test_report_says_what_the_panel_is_and_pairs_every_arm(finished: Path) -> None:
    summary = json.loads((finished / "summary.json").read_text())
    assert list(summary["run"]["arm_order"]) == list(qs.ARMS)
    assert all(summary["arms"][arm]["n"] == 6 and summary["arms"][arm]["errors"] == 0 for arm in qs.ARMS)
    assert summary["households"]["constructed_panel"] and summary["households"]["policy"] == "tiny-warm"
    report = (finished / "report.md").read_text()
    first = report.split("## Households panel")[0]
    assert "Households panel (constructed), seed 0: 6 tasks in 1 held-out" in first
    assert "trained from scratch in this run" in first and "paired on the same tasks" in first
    for b, a in (("sft-bank", "sft-none"), ("sft-bank", "sft-bank-other"), ("grpo-bank", "sft-bank")):
        assert re.search(rf"^- {b} vs {a}: {COMPARISON}$", report, re.M), (b, a)
    for arm in qs.ARMS:
        assert re.search(rf"^\| {arm} \| \d+\.\d \| ", report, re.M), arm
    assert (finished / "success.png").stat().st_size > 1000
    # every arm plays the held-out households with what it was trained with
    bank_arm = json.loads((finished / "arms" / "sft-bank" / "episodes.jsonl").read_text().splitlines()[0])
    none_arm = json.loads((finished / "arms" / "sft-none" / "episodes.jsonl").read_text().splitlines()[0])
    assert bank_arm["steps"][0]["retrieved"] and not none_arm["steps"][0]["retrieved"]


def test_stages_record_time_and_the_process_trees_peak_memory(finished: Path) -> None:
    stages = json.loads((finished / "stages.json").read_text())
    assert set(stages) == {s.name for s in qs.stages_of(qs.load_scale(False, TEST_SCALE))} | {"total"}
    assert all(0.05 < stage["peak_memory_gib"] < 4 for stage in stages.values()), stages
    assert stages["total"]["seconds"] == pytest.approx(sum(s["seconds"] for k, s in stages.items() if k != "total"),
                                                       abs=0.5)


def test_grpo_trains_rows_and_the_report_shows_them(finished: Path) -> None:
    steps = [json.loads(line) for line in (finished / "grpo" / "metrics.jsonl").read_text().splitlines()]
    assert sum(step["rows"] for step in steps) > 0
    # steps past grpo_steps are sampled only while no row has been trained
    assert all(step["rows"] == 0 for step in steps[:-1]) or len(steps) == 1
    report = (finished / "report.md").read_text()
    last = steps[-1]
    assert f"| {last['step']} | {last['episodes']} | " in report and f" | {last['rows']} | " in report
    assert qs.trained_checkpoint(qs.Layout(finished)).name == f"step-{len(steps):05d}"


def test_rerun_resumes_without_redoing_stages(finished: Path, monkeypatch, capsys) -> None:
    def must_not_run(scale, layout) -> None:
        raise AssertionError("a finished stage ran again")

    monkeypatch.setattr(qs, "STAGES", [qs.Stage(s.name, s.title, must_not_run, s.benchmark) for s in qs.STAGES])
    assert main(["quickstart", "--out", str(finished), *TEST_SCALE]) == 0
    out = capsys.readouterr().out
    assert out.count("done earlier") == len(qs.stages_of(qs.load_scale(False, TEST_SCALE)))
    assert re.search(rf"sft-bank vs sft-none: {COMPARISON}", out)


def test_a_sigkill_in_a_stage_then_a_rerun_gives_the_same_summary(finished: Path, tmp_path: Path) -> None:
    """Kill the command mid-GRPO (after its first step's checkpoint), run it again: the same summary."""
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    shutil.rmtree(copy / "grpo")
    shutil.rmtree(copy / "arms" / "grpo-bank")
    (copy / "summary.json").unlink()
    stages = json.loads((copy / "stages.json").read_text())
    (copy / "stages.json").write_text(json.dumps({k: v for k, v in stages.items()
                                                  if k not in ("grpo", "eval-grpo", "report", "total")}))
    command = [sys.executable, "-m", "expbank.cli", "quickstart", "--out", str(copy), *TEST_SCALE]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                               env={**os.environ, "HF_HUB_OFFLINE": "1"})
    metrics, began = copy / "grpo" / "metrics.jsonl", time.monotonic()
    while not (metrics.exists() and metrics.read_text().strip()) and process.poll() is None:
        assert time.monotonic() - began < 300, "no GRPO step finished in 5 minutes"
        time.sleep(0.2)
    assert process.poll() is None, "the quickstart ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert main(["quickstart", "--out", str(copy), *TEST_SCALE]) == 0
    expected, got = (json.loads((root / "summary.json").read_text()) for root in (finished, copy))
    def outcomes(summary: dict) -> dict:  # all but the policy's path, which names the folder
        return {name: {k: v for k, v in arm.items() if k != "actor"} for name, arm in summary["arms"].items()}

    assert outcomes(got) == outcomes(expected) and got["comparisons"] == expected["comparisons"]
    assert [s["rows"] for s in got["grpo"]["steps"]] == [s["rows"] for s in expected["grpo"]["steps"]]


def test_an_interrupted_stage_replays_no_finished_episode(finished: Path) -> None:
    """Forget that the last two stages finished: they run again, but every episode is already there."""
    episodes = finished / "arms" / "grpo-bank" / "episodes.jsonl"
    before = episodes.read_bytes()
    stages_file = finished / "stages.json"
    stages = json.loads(stages_file.read_text())
    stages_file.write_text(json.dumps({k: v for k, v in stages.items() if k not in ("eval-grpo", "report")}))
    qs.quickstart(finished, qs.load_scale(False, TEST_SCALE))
    assert episodes.read_bytes() == before
    assert set(json.loads(stages_file.read_text())) == {s.name for s in qs.STAGES if not s.benchmark} | {"total"}


def test_bad_input_is_one_line(finished: Path, capsys) -> None:
    assert main(["quickstart", "--out", str(finished), "sft_stpes=3"]) == 1
    assert "unknown scale key 'sft_stpes'" in capsys.readouterr().err
    assert main(["quickstart", "--out", str(finished), "sft_steps=0"]) == 1
    assert "bad value for 'sft_steps'" in capsys.readouterr().err
    assert main(["quickstart", "--out", str(finished), *TEST_SCALE, "seed=3"]) == 1
    assert "another scale (seed)" in capsys.readouterr().err


def test_presets_change_what_they_say() -> None:
    default, full = qs.load_scale(), qs.load_scale(full=True)
    assert full.sft_steps > default.sft_steps and full.grpo_steps > default.grpo_steps
    assert full.benchmarks.webshop.panel > default.benchmarks.webshop.panel and not full.benchmarks.enabled
    lm = qs.load_scale(actor="smollm2-135m")
    assert lm.actor == "smollm2-135m" and lm.system == "full" and lm.held_out_households < default.held_out_households
    assert qs.load_scale(with_benchmarks=True).benchmarks.enabled
    names = [s.name for s in qs.stages_of(qs.load_scale(with_benchmarks=True))]
    assert names[-1] == "report" and {"bench-collect", "bench-bank", "bench-eval"} <= set(names)


def test_the_benchmark_stage_ablates_an_untrained_actor_on_the_bundled_data(tmp_path: Path) -> None:
    """``--with-benchmarks``, its own stages run alone (the households stages marked done are not reached)."""
    scale = qs.load_scale(False, ["benchmarks.actor=tiny-random", "benchmarks.alfworld.panel=1",
                                  "benchmarks.alfworld.expert=1", "benchmarks.alfworld.random=0",
                                  "benchmarks.alfworld.max_steps=2", "benchmarks.webshop.panel=2",
                                  "benchmarks.webshop.expert=3", "benchmarks.webshop.random=1",
                                  "benchmarks.webshop.max_steps=2", "benchmarks.max_new_tokens=8",
                                  "benchmarks.episodes_in_flight=2", "benchmarks.collect_workers=1"],
                          with_benchmarks=True)
    layout = qs.Layout(tmp_path)
    for stage in qs.stages_of(scale):
        if stage.benchmark:
            stage.run(scale, layout)
    for env, n in (("alfworld", 1), ("webshop", 2)):
        summary = json.loads((layout.bench / "eval" / env / "summary.json").read_text())
        assert set(summary["arms"]) == {"none", "raw", "bank"} and all(a["n"] == n for a in summary["arms"].values())
        kinds = {(c["b"], c["a"]) for c in summary["comparisons"]}
        assert ("bank", "none") in kinds and ("raw", "none") in kinds


# ------------------------------------------------------------------------------- README and config reference
def test_config_reference_names_every_key() -> None:
    from expbank.config import valid_keys

    text = (ROOT / "docs" / "config-reference.md").read_text()
    missing = [key for key in valid_keys() + qs._scale_keys() if f"| `{key}` |" not in text]
    assert not missing, f"docs/config-reference.md lacks {missing}"


def test_readme_keeps_the_setup_blocks_and_published_numbers() -> None:
    from expbank.training.evaluation.published import PUBLISHED

    readme = (ROOT / "README.md").read_text()
    for block in ("quickstart-command", "test-command", "quickstart-output"):
        assert readme.count(f"<!-- {block} -->") == 1 and readme.count(f"<!-- /{block} -->") == 1
    quickstart = readme.split("<!-- quickstart-command -->")[1].split("<!-- /quickstart-command -->")[0]
    assert "pip install" in quickstart and quickstart.rstrip("`\n ").endswith("expbank quickstart")
    for rows in PUBLISHED.values():  # their numbers, as training/evaluation/published.py holds them
        for row in rows:
            assert f"| {row.system} | {row.model} | {row.success} | {row.score} |" in readme, row.system
