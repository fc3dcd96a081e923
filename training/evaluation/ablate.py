"""``expbank ablate CONFIG [k=v ...]``: several arms on the same panel, one run directory, paired statistics.

Arms come from ``ablate.arms`` (a list of override mappings) or ``ablate.grid`` (a product over config
keys); with neither, the default matrix for the actor: ``none``, ``raw``, ``bank``, ``bank`` without
reconstruction, and ``bank`` shown random source observations. Each arm is an ``expbank eval`` run in
``RUN/arms/<arm>/`` (so a killed ablation resumes arm by arm, episode by episode); the top level holds the
ablation's config, fingerprint, ``summary.json``, ``report.md`` and plots.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from expbank.config import Config, config_from_tree, set_dotted, upgrade_key
from expbank.errors import UserError
from expbank.training.actors.backends import backend_for
from expbank.training.actors.models import with_default_bank
from expbank.training.evaluation.evaluate import evaluate
from expbank.training.evaluation.report import write_report
from expbank.training.runs import fingerprint, prepare_run_dir, write_json

DEFAULT_MATRIX: list[dict[str, Any]] = [
    {"memory.mode": "none"},
    {"memory.mode": "raw"},
    {"memory.mode": "bank"},
    {"memory.mode": "bank", "memory.reconstruct": False},
    {"memory.mode": "bank", "memory.source": "random"},
]
# Settings that mean nothing without memory: an arm with memory.mode=none and any of these changed from
# the default duplicates the plain `none` arm and is skipped.
MEMORY_ONLY_KEYS = {"memory.reconstruct": True, "memory.retrieval": "fixed", "memory.source": "matched"}




def arm_overrides(config: Config) -> tuple[list[dict[str, Any]], list[str]]:
    """The arms to run (override mappings) and the skipped combinations, with the reason for each."""
    if config.ablate.arms and config.ablate.grid:
        raise UserError("give ablate.arms or ablate.grid, not both")
    if config.ablate.grid:
        keys = list(config.ablate.grid)
        candidates = [dict(zip(keys, values, strict=True))
                      for values in itertools.product(*(config.ablate.grid[k] for k in keys))]
    else:
        candidates = [dict(arm) for arm in (config.ablate.arms or DEFAULT_MATRIX)]
    arms, skipped = [], []
    for arm in candidates:
        if arm.get("memory.mode", config.memory.mode) == "none":
            meaningless = [k for k, default in MEMORY_ONLY_KEYS.items() if k in arm and arm[k] != default]
            if meaningless:
                skipped.append(f"{arm}: {', '.join(meaningless)} means nothing with memory.mode=none")
                continue
        if arm in arms:
            skipped.append(f"{arm}: listed twice")
            continue
        arms.append(arm)
    return arms, skipped


def arm_config(base: Config, overrides: dict[str, Any], run_dir: Path, several_actors: bool) -> Config:
    """The eval config of one arm: the base config with the arm's overrides, in ``RUN/arms/<name>``."""
    tree = base.model_dump(mode="json")
    tree.pop("ablate")
    source = f"ablate arm {overrides}"
    for key, value in overrides.items():
        set_dotted(tree, upgrade_key(key, value, source), value)
    config = config_from_tree(tree, source)
    name = config.arm_name()
    if several_actors:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", config.actor.model).strip("_") + "-" + name
    config.run.arm = name
    config.run.dir = str(run_dir / "arms" / name)
    return config


def ablation_dir(config: Config) -> Path:
    return Path(config.run.dir or f"runs/ablate-{config.env.name}-{config.env.split}")


def ablate(config: Config, progress: bool = True) -> dict[str, Any]:
    """Run every arm (resuming finished work) and write the ablation report."""
    config = with_default_bank(config)
    run_dir = prepare_run_dir(ablation_dir(config), config)
    overrides, skipped = arm_overrides(config)
    actors = {arm.get("actor.model", config.actor.model) for arm in overrides}
    arms = [arm_config(config, arm, run_dir, len(actors) > 1) for arm in overrides]
    names = [arm.run.arm for arm in arms]
    if len(set(names)) != len(names):
        raise UserError(f"two arms share a name ({names}); set run.arm in ablate.arms")
    write_json(run_dir / "fingerprint.json", fingerprint(config, {"env": config.env.name, "split": config.env.split},
                                                         None, "see arms", {"arms": names, "skipped": skipped}))
    backends: dict[tuple, Any] = {}
    for arm in arms:
        key = (arm.actor.backend, arm.actor.model, arm.actor.adapter, arm.actor.base_url)
        if key not in backends:  # load each actor once and reuse it across its memory arms
            backends[key] = backend_for(arm.actor, cache_dir=run_dir / "cache")
        evaluate(arm, progress=progress, backend=backends[key])
    summary = write_report(run_dir)
    summary["skipped"] = skipped
    return summary
