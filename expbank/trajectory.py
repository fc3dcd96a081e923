"""Trajectory records (docs/design.md §3): one episode per JSON line, validated on read.

The writer appends one complete line per episode and flushes it, so an interrupted run loses at most
the episodes in flight and a re-run can resume by skipping the ``episode_id``s already present (and, when
asked, playing again those that ended with an error). A torn last line, what a kill during a write leaves,
is skipped with a warning by every reader; any other bad line is an error naming the file and line.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expbank.errors import UserError

log = logging.getLogger(__name__)


class TrajectoryFormatError(UserError, ValueError):
    """A trajectory file holds a line that is not a valid trajectory record (docs/design.md §3)."""


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: int = Field(ge=0)
    observation: str
    admissible_actions: list[str] = Field(default_factory=list)
    output: str | None = None
    action: str
    reward: float = 0.0
    invalid: bool = False
    retrieved: list[str] = Field(default_factory=list)
    reconstruction: str | None = None


class Episode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episode_id: str
    run_id: str
    arm: str
    env: str
    split: str
    task_id: str
    task_type: str
    task: str
    policy: str
    seed: int
    steps: list[Step]
    success: bool
    score: float = Field(ge=0.0, le=1.0)
    num_steps: int = Field(ge=0)
    num_invalid: int = Field(ge=0)
    error: str | None = None
    # what the policy's replies cost (0 where nobody counted: expert and random episodes, older files)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    requests: int = Field(0, ge=0)
    retries: int = Field(0, ge=0)


# longer names first where one is a prefix of another, so a prefix test picks right
SPLIT_NAMES = ("valid_unseen", "valid_seen", "visits", "stream", "moved", "unmoved", "searches", "warned", "train",
               "dev", "test")
_TRAINING_SUFFIX = re.compile(r"-it(\d+)-g(\d+)$")


def make_episode_id(env: str, split: str, task_id: str, policy: str, arm: str, seed: int,
                    train_step: int | None = None, group_index: int | None = None) -> str:
    """The unique id of docs/design.md §3: ``<env>-<split>-<task_id>-<policy>-<arm>-s<seed>[-it<step>-g<i>]``."""
    episode_id = f"{env}-{split}-{task_id}-{policy}-{arm}-s{seed}"
    if train_step is not None:
        episode_id += f"-it{train_step}-g{group_index or 0}"
    return episode_id


@dataclass(frozen=True)
class EpisodeIdParts:
    """What can be read back from an episode id without ambiguity (task ids and policies may hold ``-``)."""

    env: str
    split: str | None  # None when the split is not one of SPLIT_NAMES
    train_step: int | None  # GRPO episodes only
    group_index: int | None


def parse_episode_id(episode_id: str) -> EpisodeIdParts:
    """The inverse of :func:`make_episode_id` for the parts that are unambiguous."""
    env, _, rest = episode_id.partition("-")
    split = next((s for s in SPLIT_NAMES if rest.startswith(s + "-")), None)
    training = _TRAINING_SUFFIX.search(episode_id)
    step, group = (int(training[1]), int(training[2])) if training else (None, None)
    return EpisodeIdParts(env, split, step, group)


def episodes_in_id_order(path: str | Path) -> list[Episode]:
    """Every episode of ``path`` sorted by id. A collection writes episodes in the order its workers finish
    them, so whatever is trained from a file must not depend on its line order."""
    return sorted(read_episodes(path), key=lambda episode: episode.episode_id)


def read_episodes(path: str | Path) -> Iterator[Episode]:
    """Yield validated episodes; a malformed line raises an error naming the file, line and field.

    A last line that lacks its newline and does not parse is a write a kill interrupted: it is skipped with
    a warning naming the file and line (:class:`EpisodeWriter` cuts it before appending). Any other bad line
    is an error.
    """
    path = Path(path)
    with path.open("rb") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield Episode.model_validate_json(line)
            except ValidationError as err:
                if not line.endswith(b"\n"):  # only the last line can lack it
                    log.warning("warning: %s:%d: skipped a torn last line (an interrupted write)", path, line_no)
                    return
                first = err.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "record"
                raise TrajectoryFormatError(
                    f"{path}:{line_no}: invalid trajectory record at '{where}': {first['msg']}"
                ) from None


def read_episode_ids(path: str | Path, include_errored: bool = True) -> set[str]:
    """The ``episode_id``s of the records in ``path`` (a missing file holds none), validated as
    :func:`read_episodes` does, so a resume never counts a malformed record as done.

    ``include_errored=False`` leaves out episodes whose latest record has ``error`` set: what a resume
    plays again (the new record then replaces the old one).
    """
    path = Path(path)
    if not path.exists():
        return set()
    errored = {episode.episode_id: episode.error is not None for episode in read_episodes(path)}
    return {episode_id for episode_id, failed in errored.items() if include_errored or not failed}


def drop_episodes(path: str | Path, episode_ids: set[str]) -> None:
    """Rewrite ``path`` without the records of ``episode_ids``, atomically: a resume that plays errored
    episodes again appends their new records, so the old ones must go first."""
    path = Path(path)
    kept = [episode.model_dump_json() + "\n" for episode in read_episodes(path) if episode.episode_id not in episode_ids]
    staging = path.with_name(path.name + ".partial")
    staging.write_text("".join(kept), encoding="utf-8")
    os.replace(staging, path)


def cut_torn_tail(path: str | Path) -> None:
    """Cut a last line that lacks its newline (a write a kill interrupted), so appending starts a new line."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        with path.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


class EpisodeWriter:
    """Append-only JSONL writer that validates each record and flushes it to disk at once."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._end_last_line()
        self._handle = self.path.open("a", encoding="utf-8")

    def _end_last_line(self) -> None:
        """A last line without its newline is completed when it is a valid record (readers count it) and
        cut otherwise: it is an episode a killed run did not finish writing."""
        data = self.path.read_bytes() if self.path.exists() else b""
        if not data or data.endswith(b"\n"):
            return
        try:
            Episode.model_validate_json(data.rsplit(b"\n", 1)[-1])
        except ValidationError:
            cut_torn_tail(self.path)
            return
        with self.path.open("ab") as handle:
            handle.write(b"\n")

    def write(self, episode: Episode | dict[str, Any]) -> None:
        record = episode if isinstance(episode, Episode) else Episode.model_validate(episode)
        self._handle.write(record.model_dump_json() + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_episodes(path: str | Path, episodes: Iterable[Episode | dict[str, Any]]) -> None:
    with EpisodeWriter(path) as writer:
        for episode in episodes:
            writer.write(episode)


def episode_features():
    """The ``datasets.Features`` of a trajectory record.

    Pass it to ``load_dataset("json", data_files=..., features=episode_features())`` so nullable fields
    (``error``, ``output``, ``reconstruction``) keep their string type even when they first turn
    non-null deep inside a large file, where type inference from the first chunk would fail.
    """
    from datasets import Features, List, Value

    step = {
        "t": Value("int64"),
        "observation": Value("string"),
        "admissible_actions": List(Value("string")),
        "output": Value("string"),
        "action": Value("string"),
        "reward": Value("float64"),
        "invalid": Value("bool"),
        "retrieved": List(Value("string")),
        "reconstruction": Value("string"),
    }
    return Features({
        "episode_id": Value("string"),
        "run_id": Value("string"),
        "arm": Value("string"),
        "env": Value("string"),
        "split": Value("string"),
        "task_id": Value("string"),
        "task_type": Value("string"),
        "task": Value("string"),
        "policy": Value("string"),
        "seed": Value("int64"),
        "steps": List(step),
        "success": Value("bool"),
        "score": Value("float64"),
        "num_steps": Value("int64"),
        "num_invalid": Value("int64"),
        "error": Value("string"),
        "prompt_tokens": Value("int64"),
        "completion_tokens": Value("int64"),
        "requests": Value("int64"),
        "retries": Value("int64"),
    })
