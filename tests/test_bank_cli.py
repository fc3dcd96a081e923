"""``expbank bank ...`` end to end on hand-written trajectories (in-process, sharing the loaded model)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from bank_data import alf_failure, alf_place, alf_transform, web_success

from expbank.cli import main
from expbank.trajectory import write_episodes


def _run(capsys, *argv: str, status: int = 0) -> str:
    capsys.readouterr()
    assert main(list(argv)) == status
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.fixture()
def built(tmp_path, capsys, embedder):
    trajectories = tmp_path / "t.jsonl"
    write_episodes(trajectories, [alf_transform("heat"), alf_transform("cool", task_id="c"), alf_place(),
                                  alf_failure(), web_success()])
    bank = str(tmp_path / "bank")
    out = _run(capsys, "bank", "build", str(trajectories), "--out", bank)
    assert "5 new episodes" in out
    return bank, trajectories


def test_build_query_stats(built, capsys):
    bank, _ = built
    out = _run(capsys, "bank", "query", bank, "--query", "holding the apple, it must be cooled", "-k", "2")
    assert "<experience>" in out and "pick_cool_then_place_in_recep" in out
    hits = json.loads(_run(capsys, "bank", "query", bank, "--task", "put some mug on cabinet.", "--json",
                           "--kinds", "trajectory", "-k", "1"))
    assert hits[0]["kind"] == "trajectory" and hits[0]["task_id"] == "p0" and "score" in hits[0]
    stats = json.loads(_run(capsys, "bank", "stats", bank, "--json"))
    assert stats["entries"] == sum(stats["by_kind"].values()) == sum(stats["by_trust"].values())
    assert stats["episodes"] == 5 and stats["index"] == "flat"


def test_curation_commands(built, capsys, tmp_path):
    bank, trajectories = built
    entries = [json.loads(line) for line in _run(capsys, "bank", "export", bank).splitlines()]
    first = entries[0]["id"]
    assert "pinned" in _run(capsys, "bank", "pin", bank, first[:10])
    out = _run(capsys, "bank", "prune", bank, "--capacity", "1", "--dry-run")
    assert first not in out and f"{len(entries) - 1} entries would be removed" in out
    assert "unpinned" in _run(capsys, "bank", "unpin", bank, first)
    assert "quarantined" in _run(capsys, "bank", "quarantine", bank, "--add", first, "--reason", "looks odd")
    listed = json.loads(_run(capsys, "bank", "quarantine", bank, "--json"))
    assert [e["id"] for e in listed] == [first] and listed[0]["provenance"]["trust_reason"] == "looks odd"
    assert "promoted" in _run(capsys, "bank", "quarantine", bank, "--promote", first)
    assert "deleted" in _run(capsys, "bank", "quarantine", bank, "--delete", first)
    stats = json.loads(_run(capsys, "bank", "stats", bank, "--json"))
    assert stats["entries"] == len(entries) - 1

    md = tmp_path / "bank.md"
    _run(capsys, "bank", "export", bank, "--format", "markdown", "--out", str(md))
    assert md.read_text().startswith("# Experience bank")
    exported = tmp_path / "bank.jsonl"
    _run(capsys, "bank", "export", bank, "--out", str(exported))
    other = str(tmp_path / "other")
    _run(capsys, "bank", "build", str(trajectories), "--out", other)
    assert f"{len(entries) - 1} updated, 0 added" in _run(capsys, "bank", "import", other, str(exported))
    merged = str(tmp_path / "merged")
    assert f"{len(entries)} entries" in _run(capsys, "bank", "merge", bank, other, "--out", merged)
    out = _run(capsys, "bank", "prune", merged, "--capacity", "3")
    assert "over capacity 3" in out and "3 remain" in out


def test_bad_input_is_one_line(tmp_path, capsys):
    out = _run(capsys, "bank", "build", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "b"), status=1)
    assert out.strip().count("\n") == 0 and "missing.jsonl: no such trajectory file" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"episode_id": 1}\n')
    out = _run(capsys, "bank", "build", str(bad), "--out", str(tmp_path / "b"), status=1)
    assert "bad.jsonl:1: invalid trajectory record" in out
    out = _run(capsys, "bank", "stats", str(tmp_path), status=1)
    assert "not a bank (no manifest.json)" in out


def test_bank_commands_load_no_heavy_library_until_a_subcommand_runs():
    code = ("import sys, expbank.cli, expbank.commands.bank, expbank.commands.serve; "
            "heavy = {'faiss', 'torch', 'sentence_transformers', 'fastapi'} & set(sys.modules); "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_bank_does_not_depend_on_the_order_a_collection_wrote_its_episodes(tmp_path, embedder):
    """Dedup keeps the first of near-duplicate entries: built in line order, two files holding the same episodes
    in the order two workers happened to finish them gave banks with other source observations."""
    from expbank.bank.build import build, export_entries
    from expbank.bank.store import Bank
    from expbank.bank.summarise import make_summariser

    episodes = [alf_transform("heat", task_id="a", where="countertop 1"),
                alf_transform("heat", task_id="b", where="cabinet 1")]
    exports = []
    for name, order in (("forward", episodes), ("reversed", episodes[::-1])):
        write_episodes(tmp_path / f"{name}.jsonl", order)
        bank = Bank.open_or_create(tmp_path / name)
        build(bank, [tmp_path / f"{name}.jsonl"], make_summariser("rule"))
        export_entries(bank, tmp_path / f"{name}-entries.jsonl")
        exports.append(sorted((e["id"], e["source_observation"], e["guidance"]) for e in map(
            json.loads, (tmp_path / f"{name}-entries.jsonl").read_text().splitlines())))
    assert exports[0] == exports[1]
