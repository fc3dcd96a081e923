"""``expbank quickstart`` at a reduced scale, its resumption and errors; the README and config reference.

The reduced run plays every stage for real (bundled ALFWorld and WebShop, the offline MiniLM bank, SFT and one
GRPO step) with the 3M-parameter ``tiny-random`` actor, so it checks the plumbing, not what a model learns.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from expbank.cli import main
from expbank.commands import quickstart as qs

ROOT = Path(__file__).resolve().parent.parent
REDUCED = ["actor=tiny-random", "alfworld.panel=1", "alfworld.expert=1", "alfworld.random=0", "alfworld.max_steps=2",
           "webshop.panel=2", "webshop.expert=3", "webshop.random=1", "webshop.max_steps=2", "webshop.sft=1",
           "max_new_tokens=8", "max_length=512", "episodes_in_flight=2", "collect_workers=1"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A reduced quickstart, run once for the module through the command line."""
    out = tmp_path_factory.mktemp("quickstart") / "run"
    assert main(["quickstart", "--out", str(out), *REDUCED]) == 0
    return out


def test_report_holds_every_arm_with_its_counts(finished: Path) -> None:
    expected = {"alfworld": ({"none", "raw", "bank"}, 1), "webshop": ({"none", "raw", "bank", "trained-none",
                                                                      "trained-bank"}, 2)}
    report = (finished / "report.md").read_text()
    assert "too small for the tests to mean much" in report
    for env, (arms, n) in expected.items():
        summary = json.loads((finished / "eval" / env / "summary.json").read_text())
        assert set(summary["arms"]) == arms
        assert all(summary["arms"][arm]["n"] == n for arm in arms)
        kinds = {(c["b"], c["a"], c["kind"]) for c in summary["comparisons"]}
        assert ("bank", "none", "vs_none") in kinds and ("raw", "none", "vs_none") in kinds
        if env == "webshop":  # trained arms are paired with the untrained actor in the same memory mode
            assert ("trained-bank", "bank", "vs_base") in kinds and ("trained-none", "none", "vs_base") in kinds
        for arm in arms:  # the arms table row: name, actor, memory, n
            assert re.search(rf"^\| {arm} \| [^|]+ \| [^|]+ \| {n} \| 0 \|", report, re.M), (env, arm)
        assert (finished / "eval" / env / "plot_success.png").exists()
    metrics = (finished / "train" / "webshop" / "grpo" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in metrics] == [1]
    stages = json.loads((finished / "stages.json").read_text())
    # every stage records the peak memory of its process tree (a Python with its imports at least), under 4 GiB
    assert all(0.05 < stage["peak_memory_gib"] < 4 for stage in stages.values()), stages


def test_rerun_resumes_without_redoing_stages(finished: Path, monkeypatch, capsys) -> None:
    def must_not_run(scale, layout) -> None:
        raise AssertionError("a finished stage ran again")

    monkeypatch.setattr(qs, "STAGES", [qs.Stage(s.name, s.title, must_not_run) for s in qs.STAGES])
    assert main(["quickstart", "--out", str(finished), *REDUCED]) == 0
    out = capsys.readouterr().out
    assert out.count("done earlier") == len(qs.STAGES)
    assert "webshop / test" in out and "trained-bank" in out


def test_an_interrupted_stage_replays_no_finished_episode(finished: Path) -> None:
    """Forget that the last two stages finished: they run again, but every episode is already there."""
    episodes = finished / "eval" / "webshop" / "arms" / "trained-bank" / "episodes.jsonl"
    before = episodes.read_bytes()
    stages_file = finished / "stages.json"
    stages = json.loads(stages_file.read_text())
    stages_file.write_text(json.dumps({k: v for k, v in stages.items() if k not in ("eval-trained", "report")}))
    qs.quickstart(finished, qs.load_scale(False, REDUCED))
    assert episodes.read_bytes() == before
    assert set(json.loads(stages_file.read_text())) == {s.name for s in qs.STAGES}


def test_bad_input_is_one_line(finished: Path, capsys) -> None:
    assert main(["quickstart", "--out", str(finished), "webshop.panle=3"]) == 1
    assert "unknown scale key 'webshop.panle'" in capsys.readouterr().err
    assert main(["quickstart", "--out", str(finished), "webshop.panel=0"]) == 1
    assert "bad value for 'webshop.panel'" in capsys.readouterr().err
    assert main(["quickstart", "--out", str(finished), *REDUCED, "webshop.panel=3"]) == 1
    assert "another scale (webshop.panel)" in capsys.readouterr().err


def test_full_scale_is_larger_everywhere_it_matters() -> None:
    smoke, full = qs.load_scale(False), qs.load_scale(True)
    assert full.webshop.panel > smoke.webshop.panel and full.alfworld.panel > smoke.alfworld.panel
    assert full.grpo_steps > smoke.grpo_steps and set(full.train_envs) == {"alfworld", "webshop"}


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
