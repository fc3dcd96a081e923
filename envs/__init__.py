"""Text environments behind one protocol (docs/design.md §2).

``import expbank.envs`` registers ``expbank/ALFWorld-v0`` and ``expbank/WebShop-v0`` with gymnasium.
Engines are imported only when an environment is made.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium

ENTRY_POINTS = {
    "alfworld": "expbank.envs.alfworld.env:ALFWorldEnv",
    "webshop": "expbank.envs.webshop.env:WebShopEnv",
}
GYM_IDS = {"alfworld": "expbank/ALFWorld-v0", "webshop": "expbank/WebShop-v0"}


def env_class(name: str):
    """The environment class registered under ``name`` (imported on first use)."""
    try:
        module_name, class_name = ENTRY_POINTS[name.lower()].split(":")
    except KeyError:
        raise ValueError(f"unknown environment {name!r}; choose one of {sorted(ENTRY_POINTS)}") from None
    return getattr(importlib.import_module(module_name), class_name)


def make(name: str, split: str = "train", data_dir: str | None = None, **options: Any):
    """Build environment ``name`` on ``split`` (bundled data unless ``data_dir`` is given)."""
    return env_class(name)(split=split, data_dir=data_dir, **options)


def task_ids(name: str, split: str, data_dir: str | None = None, **options: Any) -> list[str]:
    """The task ids of ``split`` in their fixed order."""
    return env_class(name).list_task_ids(split, data_dir, **options)


for _name, _gym_id in GYM_IDS.items():
    if _gym_id not in gymnasium.registry:
        gymnasium.register(id=_gym_id, entry_point=ENTRY_POINTS[_name], disable_env_checker=True)

__all__ = ["ENTRY_POINTS", "GYM_IDS", "env_class", "make", "task_ids"]
