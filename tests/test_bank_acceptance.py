"""Acceptance 1: a bank built from bundled ALFWorld train trajectories finds strategies of the right task
type for unseen tasks, through the real command line; building twice changes nothing."""

from __future__ import annotations

import json

import pytest

from expbank.cli import main
from expbank.trajectory import read_episodes

pytestmark = pytest.mark.slow


def _run(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _snapshot(bank) -> dict:
    from expbank.bank.store import Bank

    return {e.id: (e.provenance.model_dump(), e.stats.model_dump())
            for e in Bank.open(bank).entries(include_quarantined=True)}


def test_unseen_tasks_retrieve_strategies_of_their_task_type(alfworld_trajectories, tmp_path, capsys):
    bank = str(tmp_path / "bank")
    train = [str(alfworld_trajectories["expert"]), str(alfworld_trajectories["random"])]
    _run(capsys, "bank", "build", *train, "--out", bank)
    stats = json.loads(_run(capsys, "bank", "stats", bank, "--json"))
    assert stats["entries"] > 0 and stats["by_trust"]["quarantined"] == 0  # clean data: gate quiet
    assert stats["by_kind"]["strategy"] and stats["by_kind"]["warning"] and stats["by_kind"]["trajectory"]

    unseen = list(read_episodes(alfworld_trajectories["valid_unseen"]))
    assert len({e.task_type for e in unseen}) == 6
    correct = []
    for episode in unseen:
        hits = json.loads(_run(capsys, "bank", "query", bank, "--task", episode.task,
                               "--observation", episode.steps[0].observation, "-k", "3", "--json"))
        assert hits, episode.task
        assert {"id", "situation", "guidance", "provenance", "stats", "score"} <= set(hits[0])
        strategies = [hit for hit in hits if hit["kind"] == "strategy"]
        correct.append(bool(strategies) and strategies[0]["task_type"] == episode.task_type)
    assert sum(correct) / len(correct) >= 0.9, correct

    before = _snapshot(bank)
    out = _run(capsys, "bank", "build", *train, "--out", bank)
    assert "0 new episodes" in out
    assert _snapshot(bank) == before
    other = str(tmp_path / "again")  # a fresh build from the same files gives the same entries
    _run(capsys, "bank", "build", *train, "--out", other)
    assert _snapshot(other) == before


def test_gate_flags_nothing_in_clean_alfworld_trajectories(alfworld_trajectories):
    """Acceptance 3, clean side: every entry the rule summariser makes from the bundled ALFWorld and
    WebShop trajectories (expert and random) passes the write gate untouched."""
    from expbank.bank.gate import scan
    from expbank.bank.summarise import RuleSummariser

    summariser = RuleSummariser()
    envs, flagged, total = set(), [], 0
    for path in alfworld_trajectories.values():
        for episode in read_episodes(path):
            envs.add(episode.env)
            for entry in summariser.summarise(episode):
                total += 1
                flagged += [(entry.id, finding) for finding in scan(entry)]
    assert envs == {"alfworld", "webshop"} and total > 500
    assert flagged == []
