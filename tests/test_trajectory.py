"""Trajectory records (docs/design.md §3): validation on read, resumable writing, datasets features."""

from __future__ import annotations

import json

import pytest

from expbank.trajectory import (
    EpisodeWriter,
    TrajectoryFormatError,
    drop_episodes,
    episode_features,
    make_episode_id,
    read_episode_ids,
    read_episodes,
    write_episodes,
)


def record(i: int, *, output=None, error=None, reconstruction=None, padding: str = "") -> dict:
    return {
        "episode_id": make_episode_id("alfworld", "train", f"task/{i}", "expert", "none", 0),
        "run_id": "collect", "arm": "none", "env": "alfworld", "split": "train", "task_id": f"task/{i}",
        "task_type": "pick_and_place_simple", "task": "put a apple in fridge.", "policy": "expert", "seed": 0,
        "steps": [{"t": 0, "observation": "You are in the middle of a room." + padding,
                   "admissible_actions": ["look", "go to fridge 1"], "output": output, "action": "go to fridge 1",
                   "reward": 0.0, "invalid": False, "retrieved": [], "reconstruction": reconstruction}],
        "success": False, "score": 0.0, "num_steps": 1, "num_invalid": 0, "error": error,
    }


def test_episode_ids_are_unique_across_arms_seeds_steps_and_group_members():
    ids = {make_episode_id("webshop", "test", "7", "m", arm, seed, step, g)
           for arm in ("none", "bank") for seed in (0, 1) for step in (None, 3) for g in (0, 1)}
    assert len(ids) == 12
    assert make_episode_id("alfworld", "dev", "a/b", "expert", "none", 2) == "alfworld-dev-a/b-expert-none-s2"
    assert make_episode_id("alfworld", "dev", "a/b", "p", "bank", 0, 5, 3).endswith("-s0-it5-g3")


def test_write_then_read_round_trips(tmp_path):
    path = tmp_path / "t.jsonl"
    with EpisodeWriter(path) as writer:
        for i in range(3):
            writer.write(record(i, output="<action>look</action>"))
    episodes = list(read_episodes(path))
    assert [e.task_id for e in episodes] == ["task/0", "task/1", "task/2"]
    assert episodes[0].steps[0].output == "<action>look</action>"
    assert read_episode_ids(path) == {e.episode_id for e in episodes}


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda r: r.pop("success"), "success"),
    (lambda r: r.update(score=1.5), "score"),
    (lambda r: r["steps"][0].pop("action"), "steps.0.action"),
    (lambda r: r.update(unknown_field=1), "unknown_field"),
])
def test_malformed_line_names_file_line_and_field(tmp_path, mutate, where):
    path = tmp_path / "bad.jsonl"
    bad = record(1)
    mutate(bad)
    path.write_text(json.dumps(record(0)) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(TrajectoryFormatError, match=rf"bad.jsonl:2: .*'{where}'"):
        list(read_episodes(path))


def test_not_json_is_reported_with_its_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record(0)) + "\n\n{not json\n")
    with pytest.raises(TrajectoryFormatError, match="bad.jsonl:3"):
        list(read_episodes(path))


def test_writer_rejects_invalid_records_and_keeps_what_was_written(tmp_path):
    path = tmp_path / "t.jsonl"
    with EpisodeWriter(path) as writer:
        writer.write(record(0))
        broken = record(1)
        broken["num_steps"] = -1
        with pytest.raises(ValueError):
            writer.write(broken)
    assert len(list(read_episodes(path))) == 1


def test_a_torn_last_line_is_dropped_on_resume(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record(0)) + "\n" + json.dumps(record(1))[:40])
    assert read_episode_ids(path) == {record(0)["episode_id"]}
    with EpisodeWriter(path) as writer:
        writer.write(record(1))
    assert [e.task_id for e in read_episodes(path)] == ["task/0", "task/1"]


def test_datasets_loads_a_large_file_whose_nullable_fields_turn_non_null_late(tmp_path):
    from datasets import load_dataset

    path = tmp_path / "big.jsonl"
    padding = " filler" * 300
    size, i = 0, 0
    with path.open("w") as handle:
        while size <= 10_500_000:  # > 10 MB of records whose nullable fields are all null
            line = json.dumps(record(i, padding=padding)) + "\n"
            handle.write(line)
            size += len(line)
            i += 1
        handle.write(json.dumps(record(i, output="<action>go to fridge 1</action>", error="backend timeout",
                                       reconstruction="Open the fridge first.")) + "\n")
    assert path.stat().st_size > 10_000_000
    dataset = load_dataset("json", data_files=str(path), features=episode_features(), split="train")
    last = dataset[-1]
    assert len(dataset) == i + 1
    assert last["error"] == "backend timeout"
    assert last["steps"][0]["output"] == "<action>go to fridge 1</action>"
    assert last["steps"][0]["reconstruction"] == "Open the fridge first."
    assert dataset[0]["error"] is None


def test_only_a_torn_last_line_is_skipped_and_with_a_warning(tmp_path, caplog):
    path = tmp_path / "t.jsonl"
    complete = json.dumps(record(0)) + "\n"
    path.write_text(complete + json.dumps(record(1))[:40])
    with caplog.at_level("WARNING", logger="expbank.trajectory"):
        assert [e.task_id for e in read_episodes(path)] == ["task/0"]
    assert [r.getMessage() for r in caplog.records] == [
        f"warning: {path}:2: skipped a torn last line (an interrupted write)"]
    path.write_text(json.dumps(record(1))[:40] + "\n" + complete)  # the same bytes inside the file: an error
    with pytest.raises(TrajectoryFormatError, match=r"t.jsonl:1: "):
        read_episode_ids(path)
    path.write_text(complete + json.dumps(record(1)))  # a valid last record without its newline is kept
    assert len(read_episode_ids(path)) == 2
    with EpisodeWriter(path) as writer:
        writer.write(record(2))
    assert [e.task_id for e in read_episodes(path)] == ["task/0", "task/1", "task/2"]


def test_resume_ids_are_validated_and_can_leave_out_errored_episodes(tmp_path):
    path = tmp_path / "t.jsonl"
    incomplete = record(1)
    incomplete.pop("num_steps")
    path.write_text(json.dumps(record(0)) + "\n" + json.dumps(incomplete) + "\n")
    with pytest.raises(TrajectoryFormatError, match=r"t.jsonl:2: .*'num_steps'"):
        read_episode_ids(path)  # a record with a missing field is never counted as done
    failed, replayed = record(1, error="backend error: HTTP 503"), record(2, error="backend error")
    write_episodes(path.with_name("u.jsonl"), [record(0), failed, replayed, {**replayed, "error": None}])
    ids = read_episode_ids(path.with_name("u.jsonl"), include_errored=False)
    assert ids == {record(0)["episode_id"], replayed["episode_id"]}  # the latest record of an id counts
    assert len(read_episode_ids(path.with_name("u.jsonl"))) == 3


def test_drop_episodes_rewrites_without_them(tmp_path):
    path = tmp_path / "t.jsonl"
    write_episodes(path, [record(i) for i in range(3)])
    drop_episodes(path, {record(1)["episode_id"]})
    assert [e.task_id for e in read_episodes(path)] == ["task/0", "task/2"]
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]
