"""Build or extend a bank from trajectory files (``expbank bank build``), plus export / import / merge.

Episodes already summarised into the bank (by ``episode_id``) are skipped, so building twice from the same
files changes nothing; new files extend the bank.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from expbank.bank.entry import Entry
from expbank.bank.store import AddReport, Bank
from expbank.errors import UserError
from expbank.trajectory import episodes_in_id_order


@dataclass
class BuildReport:
    episodes: int = 0
    skipped: int = 0
    candidates: int = 0
    added: int = 0
    merged: int = 0
    quarantined: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)

    def absorb(self, report: AddReport) -> None:
        self.added += len(report.added)
        self.merged += len(report.merged)
        self.quarantined += report.quarantined
        self.redacted += report.redacted


def build(bank: Bank, paths: Iterable[str | Path], summariser, batch_episodes: int = 64) -> BuildReport:
    """Summarise every new episode of ``paths`` and add the entries in batches (one embedding call each).

    Every path is checked before any work; a file without a single episode is an error (an empty bank
    built from it would look like success). Nothing is saved here, so a bad line leaves the bank as it was.
    Each file's episodes are summarised in id order: dedup keeps the first of near-duplicate entries, so a
    bank built in line order would depend on the order a collection's workers finished.
    """
    from tqdm import tqdm

    paths = [Path(path) for path in paths]
    for path in paths:
        if not path.is_file():
            raise UserError(f"{path}: no such trajectory file" if not path.exists() else f"{path}: not a file")
    report = BuildReport()
    pending: list[Entry] = []
    for path in paths:
        done_here: list[str] = []
        read = 0
        for episode in tqdm(episodes_in_id_order(path), desc=f"summarise {path.name}", unit="ep", leave=False):
            read += 1
            if episode.episode_id in bank.episodes or episode.episode_id in done_here:
                report.skipped += 1
                continue
            report.episodes += 1
            done_here.append(episode.episode_id)
            entries = summariser.summarise(episode)
            report.candidates += len(entries)
            pending.extend(entries)
            if len(done_here) % batch_episodes == 0:
                report.absorb(bank.add(pending))
                pending = []
        if not read:
            raise UserError(f"{path}: no episodes in the file; give a trajectory file with at least one record")
        report.absorb(bank.add(pending))
        pending = []
        bank.episodes.update(done_here)
    return report


def export_entries(bank: Bank, path: str | Path | TextIO, fmt: str = "jsonl") -> int:
    """Write every entry (trusted and quarantined) as JSONL (re-importable) or Markdown (for reading)."""
    entries = list(bank.entries(include_quarantined=True))
    with (open(path, "w", encoding="utf-8") if isinstance(path, (str, Path)) else nullcontext(path)) as handle:
        if fmt == "jsonl":
            for entry in entries:
                handle.write(entry.model_dump_json() + "\n")
        elif fmt == "markdown":
            handle.write(f"# Experience bank ({len(entries)} entries)\n")
            for entry in entries:
                handle.write(_markdown(entry))
        else:
            raise UserError(f"unknown export format '{fmt}' (jsonl or markdown)")
    return len(entries)


def _markdown(entry: Entry) -> str:
    prov, stats = entry.provenance, entry.stats
    trust = prov.trust + (f" ({prov.trust_reason})" if prov.trust_reason else "")
    actions = "".join(f"  - `{a}`\n" for a in entry.actions)
    return (f"\n## {entry.kind} `{entry.id[:12]}` — {entry.env} / {entry.task_type}\n\n"
            f"- **situation:** {entry.situation}\n- **guidance:** {entry.guidance}\n"
            f"- **actions:**\n{actions}- **task:** {entry.task} (`{entry.task_id}`)\n"
            f"- **outcome:** {'success' if entry.outcome.success else 'failure'} ({entry.outcome.score:.2f})\n"
            f"- **source:** {prov.source}, {prov.summariser}; episodes: {', '.join(prov.episodes)}\n"
            f"- **trust:** {trust}; pinned: {entry.pinned}\n"
            f"- **stats:** uses {stats.uses}, successes {stats.successes}, utility {stats.utility:.3f}\n")


def read_entries(path: str | Path) -> list[Entry]:
    """Entries of an exported (possibly hand-edited) JSONL file; ids are recomputed from the text."""
    entries = []
    with Path(path).open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entries.append(Entry.model_validate(json.loads(line)).with_content_id())
            except json.JSONDecodeError as err:
                raise UserError(f"{path}:{line_no}: not JSON ({err.msg})") from None
            except ValidationError as err:
                first = err.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise UserError(f"{path}:{line_no}: invalid entry at '{where}': {first['msg']}") from None
    return entries


def merge_banks(first: Bank, second: Bank, out: str | Path) -> Bank:
    """A new bank holding ``first`` then ``second`` (dedup applied); stored vectors are reused."""
    if first.settings.embedder != second.settings.embedder or first.dim != second.dim:
        raise UserError(f"cannot merge banks of different embedders ('{first.settings.embedder}' and "
                        f"'{second.settings.embedder}')")
    merged = Bank.create(out, first.settings.model_copy(), dim=first.dim)
    for source in (first, second):
        rows = [r for r in range(source.num_rows) if source.entry_at(r) is not None]
        if rows:
            vectors = {key: source.vectors(key, rows) for key in ("task", "situation", "guidance")}
            merged.add([source.entry_at(r) for r in rows], gate=False, vectors=vectors)
        merged.episodes |= source.episodes
    return merged


def import_entries(bank: Bank, entries: list[Entry], replace: bool = False) -> dict[str, int]:
    """Add entries from a file; an entry whose id (text) is already there takes the file's pins, stats,
    provenance and trust. ``replace`` also deletes bank entries the file no longer holds."""
    counts = {"updated": 0, "added": 0, "merged": 0, "quarantined": 0, "deleted": 0}
    new = []
    for entry in entries:
        if bank.get(entry.id) is None:
            new.append(entry)
            continue
        bank.update(entry.id, "import", stats=entry.stats, pinned=entry.pinned,
                    provenance=entry.provenance, outcome=entry.outcome)
        counts["updated"] += 1
    if replace:
        keep = {entry.id for entry in entries}
        gone = [e.id for e in bank.entries(include_quarantined=True) if e.id not in keep]
        counts["deleted"] = bank.delete(gone, event="import-replace", reasons=dict.fromkeys(gone, "not in file"))
    report = bank.add(new)
    counts["added"], counts["merged"] = len(report.added), len(report.merged)
    counts["quarantined"] = len(report.quarantined)
    return counts
