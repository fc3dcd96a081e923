"""Online (streaming) evaluation: the bank learns from the actor's own episodes while it is evaluated.

With ``memory.online: true`` an evaluation plays its panel as a stream, in a fixed order (``stream_order``) and
in waves of ``memory.online_wave`` episodes. The run keeps its own copy of the bank, ``RUN/bank`` (copied from
``memory.bank``, or empty for ``memory.bank: empty``; the source is never written). After each wave, in stream
order, :meth:`OnlineBank.absorb`:

1. credits each finished episode to the entries it was shown (``curation.credit_episode``: one use per entry,
   a success if the environment says so; with ``memory.online_credit: followed`` only to the entries it
   acted on);
2. summarises it with the ``train.bank`` summariser and adds the entries through the bank's own write path
   (write gate, dedup), as ``expbank bank build`` does;
   with ``train.bank.retire_disproved``, retires the take facts it disproved (``curation.retire_disproved``:
   it went where an entry said an object lay and saw it was not there, or took it elsewhere);
3. every ``train.bank.prune_every`` waves prunes with the ``train.bank`` rule (utility threshold after
   ``prune_min_uses`` uses, capacity), and saves the bank atomically.

Later waves retrieve from that copy; an episode never retrieves entries made from its own task id (the
``Memory`` rule). Each wave's line in ``online.jsonl`` says what it changed, pruned entries with their
utility included. Absorbing is idempotent (the bank records the episodes it credited and summarised), so a
killed run resumes where it stopped with the bank it had; an errored episode replayed on resume retrieves from
the bank as it stands then. Writes from the evaluated split are the point here, so the guard that refuses a
bank built from that split checks the source bank only.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from expbank.bank.curation import credit_once, prune, retire_disproved
from expbank.bank.entry import Entry
from expbank.bank.store import Bank, copy_bank, is_bank
from expbank.bank.utility import Removal
from expbank.config import Config
from expbank.training.actors.backends import summariser_for
from expbank.training.agent.retrieve import Memory
from expbank.training.agent.rollout import RolloutJob
from expbank.trajectory import Episode

EMPTY = "empty"


def stream_order(jobs: list[RolloutJob], config: Config) -> list[RolloutJob]:
    """The stream: the panel's jobs in their own order, or shuffled with ``run.seed``."""
    if config.memory.online_order == "panel":
        return list(jobs)
    shuffled = list(jobs)
    random.Random(config.run.seed).shuffle(shuffled)
    return shuffled


def wave_size(config: Config) -> int:
    return config.memory.online_wave or config.run.episodes_in_flight


def waves(jobs: list[RolloutJob], size: int) -> list[list[RolloutJob]]:
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


class OnlineBank:
    """The run's copy of the bank: what the stream retrieves from (``memory``) and what each wave writes."""

    def __init__(self, config: Config, run_dir: Path):
        self.config, self.rule = config, config.train.bank
        self.path = run_dir / "bank"
        self.log_path = run_dir / "online.jsonl"
        if not is_bank(self.path):  # a resumed run goes on with the copy it has
            if config.memory.bank == EMPTY:
                Bank.create(self.path).save()
            else:
                copy_bank(config.memory.bank, self.path)
        self.bank = Bank.open(self.path, writable=True)
        self.memory = Memory.from_config(config.memory, config.run.seed, bank=str(self.path))
        self.memory.bank = self.bank  # retrieval sees every write at once
        self.summariser = summariser_for(self.rule, config.actor.model)

    def absorb(self, wave: int, episodes: list[Episode]) -> dict[str, Any]:
        """Credit, summarise, retire what was disproved and (on a pruning wave) prune after wave ``wave``
        (counted from 1); save."""
        usable = [e for e in episodes if e.error is None]
        credited = sum(credit_once(self.bank, episode, self.config.memory.online_credit) or 0 for episode in usable)
        fresh = [e for e in usable if e.episode_id not in self.bank.episodes]
        written = [self.summariser.summarise(episode) for episode in fresh]
        report = self.bank.add([entry for entries in written for entry in entries])
        self.bank.episodes.update(e.episode_id for e in fresh)
        pruning = bool(self.rule.prune_every) and wave % self.rule.prune_every == 0
        before = {entry.id: entry for entry in self.bank.entries(include_quarantined=True)} \
            if self.rule.retire_disproved or pruning else {}  # what retired entries said, for the log
        removals: list[Removal] = []
        if self.rule.retire_disproved:
            for episode, entries in zip(fresh, written, strict=True):
                removals += retire_disproved(self.bank, episode, entries, report)
        if pruning:
            removals += prune(self.bank, min_uses=self.rule.prune_min_uses, threshold=self.rule.prune_threshold,
                              capacity=self.rule.capacity, by=self.rule.prune_by)
        retired = [_retired(before[removal.id], removal) for removal in removals]
        self.bank.save()
        line = {"wave": wave, "episodes": len(episodes), "successes": sum(e.success for e in usable),
                "credited_entries": credited, "added": len(report.added), "merged": len(report.merged),
                "quarantined": len(report.quarantined), "retired": retired, "bank_size": len(self.bank)}
        self._log(line)
        return line

    def _log(self, line: dict[str, Any]) -> None:
        """One line per wave; a resumed run's repeat of a wave replaces its line."""
        lines = {}
        if self.log_path.exists():
            lines = {row["wave"]: row for row in map(json.loads, self.log_path.read_text().splitlines())}
        if line["wave"] in lines and not (line["added"] or line["credited_entries"] or line["retired"]):
            return  # a wave absorbed before a kill: its first line says what it did
        lines[line["wave"]] = line
        staging = self.log_path.with_suffix(".jsonl.tmp")
        staging.write_text("".join(json.dumps(lines[w]) + "\n" for w in sorted(lines)))
        staging.replace(self.log_path)


def _retired(entry: Entry, removal: Removal) -> dict[str, Any]:
    """An ``online.jsonl`` record of a retired entry: what it said and the credit it had."""
    stats = entry.stats
    return {"id": removal.id, "situation": entry.situation, "actions": entry.actions, "uses": stats.uses,
            "successes": stats.successes, "utility": round(stats.utility, 6), "recent": round(stats.recent, 6),
            "reason": removal.reason}
