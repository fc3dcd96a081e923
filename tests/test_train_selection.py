"""Model selection during GRPO: periodic greedy dev evaluations, best.json, best and last checkpoints kept,
and the refusal of a config that would select on a reported split."""

from __future__ import annotations

import json

from expbank.config import config_from_tree


def test_selecting_on_a_reported_split_is_refused(capsys):
    from expbank.cli import main

    code = main(["train", "configs/train-cpu-smoke.yaml", "select.split=valid_unseen", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert "select.split 'valid_unseen'" in err and "report.splits" in err
    assert len(err.strip().splitlines()) == 1


def test_dev_evaluations_choose_and_keep_the_best_checkpoint(tmp_path):
    from expbank.training.rl.grpo import train

    config = config_from_tree({
        "env": {"name": "webshop", "split": "test", "max_steps": 3},
        "actor": {"backend": "hf", "model": "tiny-random"},
        "decoding": {"temperature": 1.0, "max_new_tokens": 16},
        "report": {"splits": ["test"]},
        "train": {"steps": 3, "tasks_per_step": 1, "group_size": 2, "learning_rate": 1e-3,
                  "lora": {"enabled": False}, "max_length": 256, "checkpoint": {"keep": 1}},
        "select": {"every": 2, "tasks": 2},
        "run": {"seed": 0, "dir": str(tmp_path / "run"), "episodes_in_flight": 2},
    })
    run_dir = train(config, progress=False)

    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [("dev_success" in row, "dev_score" in row) for row in metrics] == \
        [(False, False), (True, True), (True, True)]  # every 2 steps and at the end
    for step in (2, 3):
        summary = json.loads((run_dir / "selection" / f"step-{step:05d}" / "summary.json").read_text())
        assert summary["run"]["split"] == "dev" and summary["run"]["n_tasks"] == 2
        assert summary["run"]["decoding"]["temperature"] == 0.0

    best = json.loads((run_dir / "checkpoints" / "best.json").read_text())
    by_step = {row["step"]: row for row in metrics}
    assert best["split"] == "dev" and best["metric"] == "score" and best["step"] in (2, 3)
    assert best["value"] == max(by_step[2]["dev_score"], by_step[3]["dev_score"])
    # train.checkpoint.keep=1 keeps the last checkpoint, and the best one whatever its age
    kept = sorted(path.name for path in (run_dir / "checkpoints").glob("step-*"))
    assert kept == sorted({f"step-{best['step']:05d}", "step-00003"})
    assert (run_dir / "curves.png").exists()
