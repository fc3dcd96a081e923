"""The experience bank as it lives through a GRPO run.

A run trains with its own copy of the bank, ``RUN/bank`` (the user's bank is never written). After every step
rank 0, holding every rank's episodes:

1. credits each episode to the entries it was shown (``expbank.bank.curation.credit_episode``: one use per entry per
   episode, a success if the episode succeeded);
2. keeps a success/failure-balanced subset of each group's episodes, and every ``train.bank.update_every`` steps
   summarises the kept episodes with the bank's summariser and adds the entries through the bank's own
   insertion path (write gate, dedup), as ``expbank bank build`` does; provenance names the training episodes;
3. every ``train.bank.prune_every`` steps prunes with the bank's utility threshold and capacity;
4. saves the bank atomically. The other ranks reopen that snapshot, so every rank retrieves from the same bank
   at the next step.

Each checkpoint holds the snapshot it was saved with (``checkpoints/step-N/bank``); ``--resume`` restores it.
Errored episodes (environment or backend failures) neither credit entries nor become entries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expbank.bank.curation import credit_episode, prune, retire_disproved
from expbank.bank.store import Bank, content_hash, copy_bank, is_service_url
from expbank.config import Config
from expbank.errors import UserError
from expbank.training.actors.backends import summariser_for
from expbank.training.agent.retrieve import Memory
from expbank.training.rl.distributed import Distributed
from expbank.trajectory import Episode, parse_episode_id


def wanted(config: Config) -> bool:
    """Whether this run keeps a living bank: bank memory from a local directory, write-back switched on."""
    if config.memory.mode != "bank" or not config.memory.bank or config.train.bank.update_every == 0:
        return False
    if is_service_url(config.memory.bank):
        raise UserError(f"memory.bank={config.memory.bank} is a service; a living bank needs a local bank "
                        "directory (or set train.bank.update_every=0 to train against the service read-only)")
    return True


def source_hash(config: Config) -> str | None:
    """The content hash of the user's bank the run started from (recorded in the fingerprint)."""
    return content_hash(config.memory.bank)


def balanced_subset(group: list[Episode], size: int) -> list[Episode]:
    """Up to ``size`` episodes of one group, half successes and half failures where both exist.

    Successes are taken best score first and failures worst score first, the clearest examples of each; a
    side with too few episodes leaves its places to the other.
    """
    successes = sorted((e for e in group if e.success), key=lambda e: (-e.score, e.episode_id))
    failures = sorted((e for e in group if not e.success), key=lambda e: (e.score, e.episode_id))
    take_successes = min(len(successes), max(size // 2, size - len(failures)))
    return successes[:take_successes] + failures[: size - take_successes]


class LivingBank:
    """The run's bank: retrieval for this rank (``memory``), credit, growth and pruning on rank 0."""

    def __init__(self, config: Config, run_dir: Path, dist: Distributed, checkpoint: Path | None, start: int):
        self.config, self.cfg, self.dist = config, config.train.bank, dist
        self.path = run_dir / "bank"
        if dist.is_main:
            copy_bank(checkpoint / "bank" if checkpoint else Path(config.memory.bank), self.path)
        dist.barrier()
        self.memory = self._open_memory()
        self.bank = None
        self.pending: list[Episode] = []  # kept episodes not summarised yet
        if dist.is_main:
            self.bank = Bank.open(self.path, writable=True)
            self.memory.bank = self.bank  # rank 0 retrieves from the copy it writes
            self.summariser = summariser_for(self.cfg, config.actor.model)
            self.pending = self._pending_after_resume(run_dir / "episodes.jsonl", start)

    def _open_memory(self) -> Memory:
        return Memory.from_config(self.config.memory.model_copy(update={"mode": "bank"}), self.config.run.seed,
                                  bank=str(self.path))

    def _pending_after_resume(self, episodes_path: Path, start: int) -> list[Episode]:
        """The kept episodes of the steps after the last summarising step up to ``start`` (a resumed run
        summarises them at its next summarising step, as the uninterrupted run would have)."""
        first = start - start % self.cfg.update_every + 1
        if start < first or not episodes_path.exists():
            return []
        groups: dict[tuple[int, str], list[Episode]] = {}
        for line in episodes_path.read_text().splitlines():
            episode = Episode.model_validate_json(line)
            step = parse_episode_id(episode.episode_id).train_step
            if first <= step <= start:
                groups.setdefault((step, episode.task_id), []).append(episode)
        return self._keep(groups)

    def _keep(self, groups: dict[Any, list[Episode]]) -> list[Episode]:
        kept = []
        for key in sorted(groups):
            usable = [e for e in groups[key] if e.error is None]
            kept += balanced_subset(usable, self.cfg.episodes_per_group)
        return kept

    def after_step(self, step: int, episodes: list[Episode]) -> dict[str, float]:
        """Credit, grow and prune (rank 0), save, and let every other rank reopen the snapshot.

        ``episodes`` are every rank's episodes of the step. Returns the bank metrics (rank 0; empty elsewhere).
        """
        metrics: dict[str, float] = {}
        if self.dist.is_main:
            metrics = self._write(step, episodes)
        self.dist.barrier()
        if not self.dist.is_main:
            self.memory = self._open_memory()
        return metrics

    def _write(self, step: int, episodes: list[Episode]) -> dict[str, float]:
        credits = 0
        for episode in episodes:
            if episode.error is None:
                credits += credit_episode(self.bank, episode)
        groups: dict[str, list[Episode]] = {}
        for episode in episodes:
            groups.setdefault(episode.task_id, []).append(episode)
        self.pending += self._keep(groups)
        added = merged = quarantined = disproved = pruned = 0
        if step % self.cfg.update_every == 0:
            added, merged, quarantined, disproved = self._grow()
        if self.cfg.prune_every and step % self.cfg.prune_every == 0:
            pruned = len(prune(self.bank, min_uses=self.cfg.prune_min_uses, threshold=self.cfg.prune_threshold,
                               capacity=self.cfg.capacity, by=self.cfg.prune_by))
        self.bank.save()
        utilities = [entry.stats.utility for entry in self.bank.entries()]
        return {"bank_size": len(self.bank), "bank_inserts": added, "bank_merges": merged,
                "bank_quarantined": quarantined, "bank_disproved": disproved, "bank_prunes": pruned,
                "bank_credits": credits,
                "bank_utility_mean": sum(utilities) / len(utilities) if utilities else None}

    def _grow(self) -> tuple[int, int, int, int]:
        """Summarise the pending episodes into the bank (the steps of ``expbank.bank.build.build``) and, with
        ``retire_disproved``, retire the take facts they disproved; returns added, merged, quarantined and
        disproved counts."""
        fresh = [e for e in self.pending if e.episode_id not in self.bank.episodes]
        written = [self.summariser.summarise(episode) for episode in fresh]
        report = self.bank.add([entry for entries in written for entry in entries])
        self.bank.episodes.update(e.episode_id for e in fresh)
        disproved = 0
        if self.cfg.retire_disproved:
            for episode, entries in zip(fresh, written, strict=True):
                disproved += len(retire_disproved(self.bank, episode, entries, report))
        self.pending = []
        return len(report.added), len(report.merged), len(report.quarantined), disproved
