"""PNG curves: a GRPO run's, drawn from ``metrics.jsonl`` (and the final bank) when training ends, and
success per round of an online stream (the benchmarks' ``rounds.png``)."""

from __future__ import annotations

import json
from pathlib import Path

from expbank.bank.store import Bank

# metrics.jsonl key -> panel title; a panel is drawn when some step logged the key
CURVES = {"reward_mean": "reward", "success_rate": "success rate", "format_score": "format score",
          "kl": "KL to reference", "bank_size": "bank size", "dev_success": "dev success (greedy)",
          "dev_score": "dev score (greedy)"}


def write_curves(run_dir: Path, bank: Path | None = None) -> list[Path]:
    """``curves.png`` (one panel per logged metric) and, with a bank, ``utility.png``; returns the files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    path = run_dir / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    panels = [(key, title) for key, title in CURVES.items() if any(row.get(key) is not None for row in rows)]
    written = []
    if panels:
        fig, axes = plt.subplots(len(panels), 1, figsize=(6, 1.8 * len(panels)), sharex=True, squeeze=False)
        for ax, (key, title) in zip(axes[:, 0], panels, strict=True):
            points = [(row["step"], row[key]) for row in rows if row.get(key) is not None]
            ax.plot(*zip(*points, strict=True), marker="o" if len(points) < 30 else None, markersize=3)
            ax.set_ylabel(title, fontsize=8)
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel("step")
        axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
        fig.tight_layout()
        written.append(_save(fig, run_dir / "curves.png"))
    if bank is not None:
        written.append(_utility_histogram(bank, run_dir / "utility.png"))
    return written


def plot_rounds(series: dict[str, tuple[int, list[float]]], title: str, out: Path,
                divider: float | None = None) -> Path:
    """Success (%) per round of a stream, one line per series (its first round, its values); ``divider`` draws a
    dotted line between two rounds (where the world changed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(figsize=(7, 3.5))
    for name, (first, values) in series.items():
        axes.plot(range(first, first + len(values)), values, "-o", label=name)
    if divider is not None:
        axes.axvline(divider, color="grey", linestyle=":")
    axes.set(xlabel="round of the stream", ylabel="success (%)", ylim=(-3, 103))
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, out)


def _utility_histogram(bank_dir: Path, out: Path) -> Path:
    """Utility of the entries that were shown at least once (unused ones sit at 0.5 and are counted apart)."""
    import matplotlib.pyplot as plt

    entries = list(Bank.open(bank_dir, writable=False).entries())
    used = [entry.stats.utility for entry in entries if entry.stats.uses]
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.hist(used, bins=20, range=(0, 1))
    ax.set_xlabel("utility (successes + 1) / (uses + 2)")
    ax.set_ylabel("entries")
    ax.set_title(f"{len(used)} used entries; {len(entries) - len(used)} never shown", fontsize=9)
    fig.tight_layout()
    return _save(fig, out)


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
