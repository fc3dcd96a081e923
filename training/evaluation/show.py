"""``expbank show RUN --episode ID``: one episode as a readable transcript, with the entries it was shown."""

from __future__ import annotations

import textwrap
from pathlib import Path

from expbank.bank.store import Bank, is_bank, is_service_url
from expbank.config import load_config
from expbank.errors import UserError


def episode_files(run_dir: Path) -> list[Path]:
    files = sorted(run_dir.glob("episodes.jsonl")) + sorted(run_dir.glob("arms/*/episodes.jsonl"))
    if not files:
        raise UserError(f"{run_dir}: no episodes.jsonl; is this a run directory?")
    return files


def bank_for(episodes_file: Path):
    """The bank the run retrieved from (a local directory named in its config), or None."""
    config_path = episodes_file.parent / "config.yaml"
    if not config_path.exists():
        return None
    bank = load_config(config_path).memory.bank
    if not bank or is_service_url(bank) or not is_bank(bank):
        return None
    return Bank.open(bank, writable=False)


def transcript(episode, bank=None, width: int = 100) -> str:
    """The episode step by step: observation, entries shown, model output, action and its result."""
    def block(label: str, text: str) -> list[str]:
        wrapped = textwrap.wrap(" ".join(str(text).split()), width - 4) or [""]
        return [f"  {label}:"] + [f"    {line}" for line in wrapped]

    lines = [f"episode {episode.episode_id}", f"task: {episode.task}  ({episode.task_type}, {episode.env}/"
             f"{episode.split}, policy {episode.policy}, arm {episode.arm}, seed {episode.seed})", ""]
    for step in episode.steps:
        lines.append(f"step {step.t}")
        lines += block("observation", step.observation)
        for entry_id in step.retrieved:
            entry = bank.get(entry_id) if bank is not None else None
            text = f"{entry.kind}: {entry.guidance} (situation: {entry.situation}; from task: {entry.task})" \
                if entry else entry_id
            lines += block(f"shown {entry_id[:12]}", text)
        if step.output is not None:
            lines += block("model output", step.output)
        if step.reconstruction:
            lines += block("reconstruction", step.reconstruction)
        result = "invalid" if step.invalid else f"reward {step.reward:g}"
        lines.append(f"  action: {step.action}  -> {result}")
        lines.append("")
    outcome = "success" if episode.success else "failure"
    lines.append(f"outcome: {outcome}, score {episode.score:g}, {episode.num_steps} steps, "
                 f"{episode.num_invalid} invalid" + (f", error: {episode.error}" if episode.error else ""))
    return "\n".join(lines)
