"""WebShop as an expbank ``TextEnv``: the original text environment's pages, actions and reward.

Data: the bundled catalog (``data_dir=None``) or a folder with the official files (``catalog="small"``:
``items_shuffle_1000.json`` + ``items_ins_v2_1000.json``; ``"full"``: ``items_shuffle.json`` +
``items_ins_v2.json``; both with ``items_human_ins.json``). Task id = goal index after the seed-233 shuffle.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Any

from ..base import TaskSpec, TextEnv, Transition, UnknownTaskError
from . import expert, search
from .catalog import load_catalog
from .goals import load_goals, split_indices
from .pages import DONE, SEARCH, SEARCH_ACTION, Shop, render_react, render_sep
from .reward import get_reward, noun_source

RENDERERS = {"sep": render_sep, "react": render_react}
_ACTION = re.compile(r"(.+)\[(.+)\]")  # the original's parse_action


@lru_cache(maxsize=4)
def _search_engine(data_dir: str | None, catalog: str, human_goals: bool) -> search.SearchEngine:
    """One index per catalog and process; official catalogs keep theirs under ``$EXPBANK_CACHE``."""
    products = load_catalog(data_dir, catalog, human_goals)
    cache_dir = (
        None if products.bundled else search.index_cache_dir(products.file_hashes[products.items_file])
    )
    return search.SearchEngine(products.products, cache_dir)


class WebShopEnv(TextEnv):
    """Shop for the product an instruction describes; the purchase reward is the score."""

    name = "webshop"

    def __init__(
        self,
        split: str = "train",
        data_dir: str | None = None,
        max_steps: int = 15,
        render: str = "sep",
        goals: str = "human",
        catalog: str = "small",
        show_attrs: bool = False,
    ):
        super().__init__(split, data_dir, max_steps)
        if render not in RENDERERS:
            raise ValueError(f"render must be one of {sorted(RENDERERS)}, got {render!r}")
        self.render_style, self.goal_kind, self.catalog_kind = render, goals, catalog
        self.show_attrs = show_attrs
        self.goals = load_goals(data_dir, catalog, goals)
        self.catalog = load_catalog(data_dir, catalog, goals == "human")
        self.engine = _search_engine(data_dir, catalog, goals == "human")
        self.split_range = split_indices(len(self.goals), split, self.catalog.bundled)
        self.nouns = noun_source()
        self.goal: dict[str, Any] | None = None
        self.shop: Shop | None = None
        self._rng = random.Random(0)

    @classmethod
    def list_task_ids(
        cls, split: str, data_dir: str | None = None, goals: str = "human", catalog: str = "small", **_: Any
    ) -> list[str]:
        n_goals = len(load_goals(data_dir, catalog, goals))
        return [str(i) for i in split_indices(n_goals, split, bundled=data_dir is None)]

    def task_ids(self) -> list[str]:
        if not self._order:
            self._order = [str(i) for i in self.split_range]
        return self._order

    # --- engine hooks ---------------------------------------------------------------------------
    def _load(self, task_id: str) -> tuple[TaskSpec, Transition]:
        if not task_id.isdigit() or int(task_id) not in self.split_range:
            raise UnknownTaskError(f"WebShop task {task_id!r} is not in split {self.split!r}")
        self.goal = self.goals[int(task_id)]
        self._rng = random.Random(int(self.np_random.integers(2**31)))
        self.shop = Shop(self.catalog.by_asin, self._search, self.show_attrs)
        spec = TaskSpec(task_id, self.goal["instruction_text"], self.goal["category"])
        return spec, self._transition()

    def _search(self, keywords: list[str]) -> list[str]:
        return self.engine.top_n(keywords, self._rng)

    def _apply(self, action: str) -> Transition:
        match = _ACTION.match(action.strip())
        name, arg = (match.group(1), match.group(2).lower()) if match else (action.strip(), None)
        clickables = self.shop.clickables()
        if name == "search" and arg:
            self.shop.search(arg)
        elif name == "click" and arg in clickables and arg != "search":
            clicked_option = clickables[arg][0] == "option"
            if self.shop.click(arg):
                return self._purchase()
            if clicked_option and self.render_style == "react":
                return self._transition(f"You have clicked {arg}.")
        elif name == "think" and self.render_style == "react":
            return self._transition("OK.")
        else:
            feedback = "Invalid action!" if self.render_style == "react" else None
            return self._transition(feedback, invalid=True)
        return self._transition()

    def _purchase(self) -> Transition:
        page = self.shop.page
        reward, reward_info = get_reward(
            self.shop.product, self.goal, self.catalog.prices[page.asin], page.options
        )
        page.reward = reward
        return self._transition(reward=reward, reward_info=reward_info)

    def _transition(
        self,
        observation: str | None = None,
        invalid: bool = False,
        reward: float = 0.0,
        reward_info: dict[str, Any] | None = None,
    ) -> Transition:
        page = self.shop.page
        if observation is None:
            observation = RENDERERS[self.render_style](self.shop, self.goal["instruction_text"])
        admissible = [SEARCH_ACTION] if page.kind == SEARCH else []
        admissible += [f"click[{text}]" for text in self.shop.clickables()]
        extra: dict[str, Any] = {"page": page.kind, "nouns": self.nouns}
        if reward_info is not None:
            extra["reward_info"] = reward_info
        done = page.kind == DONE
        return Transition(
            observation,
            admissible,
            reward=reward,
            done=done,
            won=done and reward == 1.0,
            score=reward,
            invalid=invalid,
            extra=extra,
        )

    # --- policies and fingerprint ---------------------------------------------------------------
    def expert_action(self) -> str | None:
        return expert.expert_action(self.shop, self.goal) if self.shop else None

    def random_action(self, rng: random.Random) -> str:
        admissible = self._last.admissible_actions if self._last else []
        return expert.random_action(admissible, self.goal["instruction_text"], rng)

    def env_fingerprint(self) -> dict[str, Any]:
        return {
            "env": self.name,
            "split": self.split,
            "data": "bundled" if self.catalog.bundled else str(self.catalog.data_dir),
            "catalog": "bundled" if self.catalog.bundled else self.catalog_kind,
            "goals": self.goal_kind,
            "files": dict(self.catalog.file_hashes),
            "num_products": len(self.catalog.products),
            "num_goals": len(self.goals),
            "render": self.render_style,
            "max_steps": self.max_steps,
            "nouns": self.nouns,
            "search": {
                "engine": "bm25s",
                "k1": search.K1,
                "b": search.B,
                "stemmer": search.STEMMER,
                "stopwords": "lucene-english-33",
                "top_n": search.SEARCH_RETURN_N,
            },
        }
