"""Statistics for evaluation runs and ablations (docs/design.md §8): pure functions over episode rows.

Conventions, chosen so a number read from ``summary.json`` or ``report.md`` means one thing:

- Rates, scores and differences are percentages (0–100); a difference is in percentage points, ``b − a``.
- An episode with ``error`` set is a failure (success False, score 0) and is counted, never dropped.
- Episodes pair across arms by ``(task_id, seed)``. Confidence intervals come from a percentile bootstrap
  that resamples *tasks* (all seeds of a task move together, since they share the task's difficulty),
  drawn with a seeded ``numpy.random.Generator`` so every rerun gives the same interval.
- Tests come from scipy/statsmodels: exact McNemar on success, Wilcoxon signed-rank on WebShop score, and
  Fisher's exact test between the two halves of an online run's stream (different episodes: unpaired).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

# Below either threshold the report says plainly that the tests mean little. 30 pairs: the bootstrap's
# percentile interval is poorly calibrated on fewer tasks. 10 discordant pairs: McNemar looks only at the
# pairs that flip, and with fewer than 10 a single flip moves the p-value by a large factor.
MIN_PAIRS = 30
MIN_DISCORDANT = 10
BOOTSTRAP_RESAMPLES = 10_000
SCORE_TEST = "wilcoxon signed-rank (scipy.stats.wilcoxon, two-sided, zero differences dropped)"
SUCCESS_TEST = "exact McNemar (statsmodels mcnemar, exact=True)"


class EpisodeOutcome(NamedTuple):
    """What the statistics need from one episode."""

    task_id: str
    seed: int
    task_type: str
    success: bool
    score: float  # the environment's reward in [0, 1]
    error: bool


def rows_from_episodes(episodes: Iterable[Any]) -> list[EpisodeOutcome]:
    """Rows from ``Episode`` records; an errored episode becomes a failure with score 0."""
    rows = []
    for ep in episodes:
        failed = ep.error is not None
        rows.append(EpisodeOutcome(ep.task_id, ep.seed, ep.task_type, bool(ep.success) and not failed,
                        0.0 if failed else float(ep.score), failed))
    return rows


def _pct(values: Sequence[float]) -> float:
    return 100.0 * float(np.mean(values)) if len(values) else float("nan")


def macro_mean(per_type: dict[str, dict[str, float]]) -> float | None:
    """Unweighted mean of per-type success (ALFWorld's "Avg." over its six task types)."""
    rates = [cell["success"] for cell in per_type.values()]
    return float(np.mean(rates)) if rates else None


def bootstrap_ci(values: Sequence[float], tasks: Sequence[str], seed: int,
                 resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """Percentile 95 % CI (in %) of the mean of ``values``, resampling tasks with replacement.

    ``values`` are per-episode numbers (a success, or a paired difference ``b − a``) and ``tasks`` their
    task ids. Each resample draws ``T`` task indices, ``rng.integers(0, T, size=T)``, from
    ``numpy.random.default_rng(seed)`` (tasks in sorted order) and takes the mean over the episodes of
    the drawn tasks; the CI is the 2.5th and 97.5th percentiles (numpy's linear interpolation).
    """
    if not len(values):
        return (float("nan"), float("nan"))
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for value, task in zip(values, tasks, strict=True):
        sums[task] += float(value)
        counts[task] += 1
    order = sorted(sums)
    task_sums = np.array([sums[t] for t in order])
    task_counts = np.array([counts[t] for t in order])
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(order), size=(resamples, len(order)))
    means = task_sums[draws].sum(axis=1) / task_counts[draws].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return (100.0 * float(low), 100.0 * float(high))


def seed_spread(rows: Sequence[EpisodeOutcome], webshop: bool = False) -> dict[str, Any] | None:
    """Mean ± sd (sample sd, ddof=1) of per-seed success (and WebShop score); None for one seed."""
    by_seed: dict[int, list[EpisodeOutcome]] = defaultdict(list)
    for row in rows:
        by_seed[row.seed].append(row)
    if len(by_seed) < 2:
        return None
    success = {s: _pct([r.success for r in by_seed[s]]) for s in sorted(by_seed)}
    spread: dict[str, Any] = {
        "n_seeds": len(by_seed), "per_seed": {str(s): v for s, v in success.items()},
        "success_mean": statistics.mean(success.values()), "success_sd": statistics.stdev(success.values()),
    }
    if webshop:
        scores = [_pct([r.score for r in by_seed[s]]) for s in sorted(by_seed)]
        spread |= {"score_mean": statistics.mean(scores), "score_sd": statistics.stdev(scores)}
    return spread


def arm_metrics(rows: Sequence[EpisodeOutcome], env: str, seed: int,
                resamples: int = BOOTSTRAP_RESAMPLES) -> dict[str, Any]:
    """Per-arm metrics: n, errors, success (with task-bootstrap CI), per type, macro, WebShop score, seeds.

    ``macro`` (ALFWorld only) is the unweighted mean over the task types present; ``macro_types`` says how
    many there were, so a panel missing a type is visible. ``score`` (WebShop only) is mean reward × 100.
    """
    by_type: dict[str, list[EpisodeOutcome]] = defaultdict(list)
    for row in rows:
        by_type[row.task_type].append(row)
    per_type = {t: {"n": len(rs), "success": _pct([r.success for r in rs])} for t, rs in sorted(by_type.items())}
    webshop = env == "webshop"
    return {
        "n": len(rows),
        "errors": sum(r.error for r in rows),
        "success": _pct([r.success for r in rows]),
        "success_ci95": list(bootstrap_ci([r.success for r in rows], [r.task_id for r in rows], seed, resamples)),
        "score": _pct([r.score for r in rows]) if webshop else None,
        "score_ci95": list(bootstrap_ci([r.score for r in rows], [r.task_id for r in rows], seed, resamples))
        if webshop else None,
        "per_type": per_type,
        "macro": macro_mean(per_type) if env == "alfworld" else None,
        "macro_types": len(per_type) if env == "alfworld" else None,
        "seeds": seed_spread(rows, webshop),
    }


def pair_rows(rows_a: Sequence[EpisodeOutcome], rows_b: Sequence[EpisodeOutcome]) -> tuple[list[tuple[EpisodeOutcome, EpisodeOutcome]], int, int]:
    """Pairs on ``(task_id, seed)`` in sorted key order, plus the counts left unpaired in a and in b."""
    index_a = {(r.task_id, r.seed): r for r in rows_a}
    index_b = {(r.task_id, r.seed): r for r in rows_b}
    keys = sorted(index_a.keys() & index_b.keys())
    return [(index_a[k], index_b[k]) for k in keys], len(index_a) - len(keys), len(index_b) - len(keys)


def mcnemar_exact_p(a_only: int, b_only: int, alternative: str = "two-sided") -> float:
    """Exact McNemar p-value from the discordant counts (1.0 when nothing flips): two-sided, or with
    ``alternative="greater"`` one-sided for "b wins more often than a" (a binomial test on the flips)."""
    from scipy.stats import binomtest
    from statsmodels.stats.contingency_tables import mcnemar

    if a_only + b_only == 0:
        return 1.0
    if alternative == "greater":
        return float(binomtest(b_only, a_only + b_only, 0.5, alternative="greater").pvalue)
    return float(mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue)


def stream_halves(rows: Sequence[EpisodeOutcome]) -> dict[str, Any]:
    """An online run's stream (rows in stream order) cut in two: success of each half and the two-sided
    Fisher exact p of second vs first (the halves hold different episodes, so the test is unpaired)."""
    from scipy.stats import fisher_exact

    half = len(rows) // 2
    first, second = rows[:half], rows[half:]
    won = [sum(r.success for r in part) for part in (first, second)]
    p = float(fisher_exact([[won[1], len(second) - won[1]], [won[0], len(first) - won[0]]]).pvalue) \
        if first and second else None
    return {"first_half": {"n": len(first), "success": _pct([r.success for r in first]) if first else None},
            "second_half": {"n": len(second), "success": _pct([r.success for r in second]) if second else None},
            "diff": _pct([r.success for r in second]) - _pct([r.success for r in first]) if first and second
            else None, "fisher_p": p}


def wilcoxon_p(differences: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences (1.0 when all are zero)."""
    from scipy.stats import wilcoxon

    if not any(differences):
        return 1.0
    return float(wilcoxon(differences, zero_method="wilcox", alternative="two-sided").pvalue)


def sample_verdict(n_pairs: int, discordant: int | None = None) -> dict[str, Any]:
    """Whether a sample is large enough for the tests to mean much, in one plain sentence."""
    reasons = []
    if n_pairs < MIN_PAIRS:
        reasons.append(f"{n_pairs} pairs < {MIN_PAIRS}")
    if discordant is not None and discordant < MIN_DISCORDANT:
        reasons.append(f"{discordant} discordant pairs < {MIN_DISCORDANT}")
    if reasons:
        return {"ok": False, "text": "too small for the tests to mean much (" + "; ".join(reasons) + ")"}
    return {"ok": True, "text": f"large enough (at least {MIN_PAIRS} pairs and {MIN_DISCORDANT} discordant pairs)"}


def compare_arms(rows_a: Sequence[EpisodeOutcome], rows_b: Sequence[EpisodeOutcome], env: str, seed: int,
                 resamples: int = BOOTSTRAP_RESAMPLES) -> dict[str, Any]:
    """Paired comparison of arm b against arm a on their common ``(task_id, seed)`` episodes.

    ``flips`` counts the 2×2 table; ``diff`` is b − a success in points with a task-bootstrap ``ci95``;
    ``mcnemar_p`` is exact. For WebShop the score gets the same treatment plus a Wilcoxon p-value.
    With several seeds, ``seeds`` holds the per-seed differences as mean ± sd.
    """
    pairs, unpaired_a, unpaired_b = pair_rows(rows_a, rows_b)
    a_only = sum(a.success and not b.success for a, b in pairs)
    b_only = sum(b.success and not a.success for a, b in pairs)
    tasks = [a.task_id for a, _ in pairs]
    success_diff = [int(b.success) - int(a.success) for a, b in pairs]
    result: dict[str, Any] = {
        "n_pairs": len(pairs), "unpaired_a": unpaired_a, "unpaired_b": unpaired_b,
        "flips": {"both": sum(a.success and b.success for a, b in pairs), "a_only": a_only, "b_only": b_only,
                  "neither": sum(not a.success and not b.success for a, b in pairs)},
        "success_test": SUCCESS_TEST,
        "mcnemar_p": mcnemar_exact_p(a_only, b_only),
        "diff": _pct(success_diff),
        "ci95": list(bootstrap_ci(success_diff, tasks, seed, resamples)),
        "score_diff": None, "score_ci95": None, "score_test": None, "score_p": None,
        "seeds": None,
        "sample": sample_verdict(len(pairs), a_only + b_only),
    }
    if env == "webshop":
        score_diff = [b.score - a.score for a, b in pairs]
        result |= {"score_diff": _pct(score_diff), "score_ci95": list(bootstrap_ci(score_diff, tasks, seed, resamples)),
                   "score_test": SCORE_TEST, "score_p": wilcoxon_p(score_diff)}
    by_seed: dict[int, list[int]] = defaultdict(list)
    for (a, _), d in zip(pairs, success_diff, strict=True):
        by_seed[a.seed].append(d)
    if len(by_seed) > 1:
        per_seed = {s: _pct(ds) for s, ds in sorted(by_seed.items())}
        result["seeds"] = {"n_seeds": len(per_seed), "per_seed": {str(s): v for s, v in per_seed.items()},
                           "diff_mean": statistics.mean(per_seed.values()),
                           "diff_sd": statistics.stdev(per_seed.values())}
    return result
