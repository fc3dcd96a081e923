"""WebShop environment: official-schema loading, page flow, determinism, splits, shoppers, bundled catalog."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
from pathlib import Path

import gymnasium
import pytest
from webshop_data import DEODORANT, PRODUCTS, TEA, write_official_dir

from expbank import envs
from expbank.envs.errors import EnvDataError
from expbank.envs.webshop.catalog import BUNDLED_DIR, load_catalog
from expbank.envs.webshop.goals import price_limit, split_indices
from expbank.envs.webshop.reward import get_reward
from expbank.envs.webshop.search import SearchEngine, index_cache_dir

REPO = Path(__file__).resolve().parent.parent


def play(env, actions):
    """Step through ``actions``; return the last (observation, reward, terminated, truncated, info)."""
    out = None
    for action in actions:
        out = env.step(action)
    return out


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    """Indexes of official-schema catalogs go to ``$EXPBANK_CACHE``: keep them out of the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPBANK_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def official_dir(tmp_path_factory):
    return str(write_official_dir(tmp_path_factory.mktemp("official")))


@pytest.fixture()
def bundled():
    return envs.make("webshop", split="test")


def official(data_dir, **options):
    """An environment on official-schema files; plays with the fallback noun rule where no spaCy pipeline is
    installed (the refusal itself is tested in test_webshop_nouns.py)."""
    return envs.make("webshop", data_dir=data_dir, allow_fallback_nouns=True, **{"split": "test", **options})


def task_of(env, asin):
    return next(str(i) for i, goal in enumerate(env.goals) if goal["asin"] == asin)


# --- official data -------------------------------------------------------------------------------
def test_official_files_load_as_the_original_loads_them(official_dir):
    catalog = load_catalog(official_dir, "small", True)
    assert [p["asin"] for p in catalog.products] == [
        p["asin"] for p in PRODUCTS[:9]
    ]  # nan/long/duplicate skipped
    deodorant = catalog.by_asin[DEODORANT]
    assert deodorant["options"] == {
        "color": ["navy blue", "forest green", "dark blue"],
        "size": ["2 ounce", "3 ounce | pack of 2"],
    }
    assert (deodorant["pricing"], deodorant["Price"]) == ([10.99], "$10.99")
    assert catalog.by_asin[TEA]["Price"] == "$35.0 to $59.99" and 35.0 <= catalog.prices[TEA] <= 59.99
    assert catalog.prices["B0NOPRICE1"] == 100.0 and catalog.by_asin["B0NOPRICE1"]["Price"] == "$100.0"
    assert catalog.by_asin["B0GIFTTIN1"]["Attributes"] == ["DUMMY_ATTR"]


def test_official_goals_price_limits_and_splits(official_dir):
    env = official(official_dir)
    assert len(env.goals) == 4  # the deodorant entry without attributes is skipped
    assert envs.task_ids("webshop", "test", data_dir=official_dir) == ["0", "1", "2", "3"]
    assert envs.task_ids("webshop", "dev", data_dir=official_dir) == []
    by_asin = {goal["asin"]: goal for goal in env.goals}
    deodorant = by_asin[DEODORANT]
    assert deodorant["price_upper"] in (30.0, 40.0, 50.0)  # larger of 2 drawn from $20, $30, $40, $50
    assert deodorant["instruction_text"] == (
        "i need a blue 2 ounce deodorant stick for sensitive skin that is aluminum free"
        f", and price lower than {deodorant['price_upper']:.2f} dollars"
    )
    assert by_asin["B0PRICEY01"]["price_upper"] == 1000000  # only $990 lies above $985: no limit
    assert by_asin["B0PRICEY01"]["instruction_text"] == "a piano bench"
    assert by_asin["B0NOPRICE1"]["price_upper"] in (120.0, 130.0, 140.0)


def test_official_data_plays_with_the_same_rewards(official_dir):
    env = official(official_dir)
    env.reset(options={"task_id": task_of(env, DEODORANT)})
    steps = ["search[deodorant stick sensitive skin]", f"click[{DEODORANT.lower()}]"]
    obs, reward, done, _, info = play(env, [*steps, "click[navy blue]", "click[2 ounce]", "click[buy now]"])
    assert (reward, done, info["won"], info["score"]) == (1.0, True, True, 1.0)
    env.reset(options={"task_id": task_of(env, DEODORANT)})
    obs, reward, done, _, info = play(env, [*steps, "click[forest green]", "click[buy now]"])
    assert reward == pytest.approx(0.6) and not info["won"]
    product = env.catalog.by_asin[DEODORANT]
    assert (
        reward == get_reward(product, env.goal, env.catalog.prices[DEODORANT], {"color": "forest green"})[0]
    )
    assert obs.endswith("Your score (min 0.0, max 1.0) [SEP] 0.6 [SEP] Reward Details [SEP] None")


def test_search_index_is_cached_and_reloaded(official_dir):
    catalog = load_catalog(official_dir, "small", True)
    cache_dir = index_cache_dir(catalog.file_hashes["items_shuffle_1000.json"])
    built = SearchEngine(catalog.products, cache_dir)
    assert (cache_dir / "complete.json").is_file() and cache_dir.parent.parent == Path(
        os.environ["EXPBANK_CACHE"]
    )
    reloaded = SearchEngine(catalog.products, cache_dir)
    for query in ("deodorant stick", "herbal blends", "green tea gift", "piano", "nothing matches this"):
        assert reloaded.bm25(query) == built.bm25(query) == SearchEngine(catalog.products).bm25(query)
    assert set(built.bm25("herbal blends")) == {TEA, "B0KETTLE01", "B0TEAPOT01"}  # only documents with a term


def test_full_catalog_file_names(tmp_path):
    data_dir = str(write_official_dir(tmp_path, catalog="full"))
    assert len(official(data_dir, catalog="full").goals) == 4
    with pytest.raises(EnvDataError, match="items_shuffle_1000.json"):
        official(data_dir, catalog="small")


def test_malformed_record_names_file_and_index(tmp_path):
    broken = [*PRODUCTS[:3], {**PRODUCTS[3], "pricing": "$abc"}]
    with pytest.raises(EnvDataError, match=r"items_shuffle_1000\.json: record 3 \(asin B0CANDLE01\)"):
        load_catalog(str(write_official_dir(tmp_path / "a", products=broken)), "small", True)
    missing_name = [{k: v for k, v in PRODUCTS[0].items() if k != "name"}]
    with pytest.raises(EnvDataError, match="record 0"):
        load_catalog(str(write_official_dir(tmp_path / "b", products=missing_name)), "small", True)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "items_shuffle_1000.json").write_text("{not json")
    with pytest.raises(EnvDataError, match="items_shuffle_1000.json: not valid JSON"):
        load_catalog(str(tmp_path / "c"), "small", True)


def test_synthetic_goals_cross_option_values(official_dir):
    env = official(official_dir, goals="synthetic")
    deodorant = [g for g in env.goals if g["asin"] == DEODORANT]
    assert len(deodorant) == 3 * 2 and len(env.goals) == 6 + 1  # colour x size, plus the optionless tea
    assert {tuple(g["goal_options"].items()) for g in deodorant} >= {
        (("color", "dark blue"), ("size", "2 ounce"))
    }
    assert all(
        re.match(
            r"i need a deodorant stick with color: .+, and size: .+, and price lower", g["instruction_text"]
        )
        for g in deodorant
    )


# --- page flow ------------------------------------------------------------------------------------
LONG_QUERY = "search[designed for the bundled catalog]"  # every bundled description says so


def test_first_page_and_admissible_actions(bundled):
    obs, info = bundled.reset(options={"task_id": "0"})
    assert obs == f"WebShop [SEP] Instruction: [SEP] {info['task']} [SEP] Search"
    assert info["admissible_actions"] == ["search[<query>]"]
    assert {"task_id", "task", "task_type", "won", "score", "step", "invalid", "nouns"} <= set(info)


def test_pagination(bundled):
    bundled.reset(options={"task_id": "0"})
    obs, *_, info = bundled.step(LONG_QUERY)
    assert "Page 1 (Total results: 50) [SEP] Next >" in obs and "< Prev" not in obs
    first_page = [a for a in info["admissible_actions"] if re.fullmatch(r"click\[x\d{3}expb\w\w\]", a)]
    assert len(first_page) == 10
    obs, *_, info = bundled.step("click[next >]")
    assert "Page 2 (Total results: 50) [SEP] < Prev [SEP] Next >" in obs
    assert "click[< prev]" in info["admissible_actions"]
    assert not set(first_page) & set(info["admissible_actions"])
    obs, *_, info = bundled.step("click[< prev]")
    assert "Page 1 (Total results: 50)" in obs
    assert [a for a in info["admissible_actions"] if a in first_page] == first_page


def test_prev_from_sub_pages_and_item_pages(bundled):
    bundled.reset(options={"task_id": "0"})
    play(bundled, [LONG_QUERY, "click[next >]"])
    asin = next(a for a in bundled.shop.page.shown() if bundled.catalog.by_asin[a]["options"])
    item_obs, *_ = bundled.step(f"click[{asin.lower()}]")
    name, values = next(iter(bundled.catalog.by_asin[asin]["options"].items()))
    assert bundled.step(f"click[{values[-1]}]")[0] == item_obs  # text mode: choosing an option keeps the page
    for sub_page in ("description", "features", "reviews"):
        obs, *_, info = bundled.step(f"click[{sub_page}]")
        assert info["page"] == "item_sub_page"
        assert info["admissible_actions"] == ["click[back to search]", "click[< prev]"]
        obs, *_, info = bundled.step("click[< prev]")
        assert obs == item_obs and info["page"] == "item"
    assert bundled.shop.page.options == {name: values[-1]}  # options survive visits to sub-pages
    obs, *_, info = bundled.step("click[< prev]")
    assert info["page"] == "results" and "Page 2 (Total results: 50)" in obs
    assert bundled.shop.page.options == {} and bundled.shop.page.asin is None


def test_back_to_search_and_search_from_item_page(bundled):
    bundled.reset(options={"task_id": "0"})
    play(bundled, [LONG_QUERY, "click[next >]"])
    bundled.step(f"click[{bundled.shop.page.shown()[0].lower()}]")
    obs, *_, info = bundled.step("search[yoga mat]")
    assert info["page"] == "results" and "Page 1 (Total results:" in obs
    assert bundled.shop.page.keywords == ["yoga", "mat"]
    obs, *_, info = bundled.step("click[back to search]")
    assert info["page"] == "search" and info["admissible_actions"] == ["search[<query>]"]
    assert obs.startswith("WebShop [SEP] Instruction:")


def test_invalid_actions_change_nothing_but_use_a_step(bundled):
    obs0, info0 = bundled.reset(options={"task_id": "0"})
    for action in ("click[search]", "click[buy now]", "search[]", "buy it", "think[hmm]"):
        obs, reward, done, truncated, info = bundled.step(action)
        assert (obs, reward, done, info["invalid"]) == (obs0, 0.0, False, True)
    assert info["step"] == 5 and bundled.shop.page.kind == "search"
    obs, *_, info = bundled.step("Search[Yoga Mat]")
    assert info["invalid"] and info["step"] == 6  # the action name is case sensitive, as in the original
    obs, *_, info = bundled.step("search[Yoga Mat]")
    assert not info["invalid"] and bundled.shop.page.keywords == ["yoga", "mat"]


def test_truncation_at_max_steps():
    env = envs.make("webshop", split="test", max_steps=3)
    env.reset(options={"task_id": "1"})
    outcomes = [env.step("click[nothing]")[2:4] for _ in range(3)]
    assert outcomes == [(False, False), (False, False), (False, True)]


def test_react_rendering():
    env = envs.make("webshop", split="test", render="react")
    obs, info = env.reset(options={"task_id": "0"})
    assert obs == f"WebShop\nInstruction:\n{info['task']}\n[Search]"
    obs, *_ = env.step(LONG_QUERY)
    assert obs.startswith("[Back to Search]\nPage 1 (Total results: 50)\n[Next >]\n[X")
    assert obs.count("\n[X") == 3  # ReAct shows the first three results
    obs, *_ = env.step(f"click[{env.shop.page.shown()[0]}]")
    assert obs.endswith("[Description]\n[Features]\n[Reviews]\n[Buy Now]") and "[< Prev]" in obs
    assert env.step("think[compare prices]")[0] == "OK."
    obs, *_, info = env.step("click[nowhere]")
    assert obs == "Invalid action!" and info["invalid"]


# --- determinism, splits, gymnasium ---------------------------------------------------------------
def test_same_task_id_same_goal_price_limit_and_first_page():
    a, b = envs.make("webshop", split="dev"), envs.make("webshop", split="dev")
    task_id = a.task_ids()[7]
    first_a = a.reset(options={"task_id": task_id})
    play(a, ["search[dog bed]", "click[next >]"])
    again = a.reset(seed=123, options={"task_id": task_id})
    first_b = b.reset(options={"task_id": task_id})
    assert first_a == again == first_b
    assert a.goal["price_upper"] == b.goal["price_upper"] and a.goal["instruction_text"] == first_a[1]["task"]


def test_bundled_splits():
    ids = {split: envs.task_ids("webshop", split) for split in ("test", "dev", "train")}
    assert ids["test"] == [str(i) for i in range(50)] and ids["dev"] == [str(i) for i in range(50, 70)]
    assert len(ids["train"]) >= 80 and ids["train"][0] == "70"
    for scheme in ("original", "expbank"):  # the bundled catalog keeps its own splits under any scheme
        assert split_indices(len(envs.make("webshop").goals), "dev", True, scheme) == range(50, 70)
    env = envs.make("webshop", split="test")
    with pytest.raises(KeyError):
        env.reset(options={"task_id": "60"})  # a dev task


def test_official_split_schemes(official_dir):
    n = 12087  # the original's human goals
    original = {split: split_indices(n, split, False) for split in ("test", "dev", "train")}
    assert original == {"test": range(0, 500), "dev": range(500, 1500), "train": range(1500, n)}  # the default
    assert original == {split: split_indices(n, split, False, "original") for split in original}
    expbank = {split: split_indices(n, split, False, "expbank") for split in original}
    assert expbank == {"test": range(0, 500), "dev": range(500, 1000), "train": range(1000, n)}
    with pytest.raises(ValueError, match="the original's 'eval' split is 'dev' here"):
        split_indices(n, "eval", False)
    with pytest.raises(ValueError, match="unknown WebShop split scheme 'paper'"):
        split_indices(n, "test", False, "paper")
    assert official(official_dir, split_scheme="expbank").env_fingerprint()["split_scheme"] == "expbank"
    assert official(official_dir).env_fingerprint()["split_scheme"] == "original"
    assert envs.task_ids("webshop", "test", data_dir=official_dir, split_scheme="expbank") == ["0", "1", "2", "3"]


def test_price_limit_rule():
    rng = random.Random(0)
    assert {price_limit(10.99, rng)[0] for _ in range(200)} == {30.0, 40.0, 50.0}
    assert price_limit(980.0, rng) == (1000000, "")  # only $990 lies above: fewer than 2 candidates
    assert price_limit(975.0, rng) == (990.0, ", and price lower than 990.00 dollars")


def test_gymnasium_make():
    env = gymnasium.make("expbank/WebShop-v0", split="test", render="react")
    obs, info = env.reset(options={"task_id": "2"})
    assert obs.startswith("WebShop\nInstruction:") and info["task_id"] == "2"


# --- shoppers and the bundled catalog --------------------------------------------------------------
def run_episode(env, task_id, policy):
    env.reset(options={"task_id": task_id})
    while True:
        *_, done, truncated, info = env.step(policy())
        if done or truncated:
            return info


def test_expert_scores_one_on_every_bundled_test_goal(bundled):
    for task_id in bundled.task_ids():
        info = run_episode(bundled, task_id, bundled.expert_action)
        assert info["score"] == 1.0 and info["won"], (task_id, info.get("reward_info"))
        assert info["step"] <= 6


def test_random_shopper_rarely_succeeds(bundled):
    rng = random.Random(0)
    infos = [
        run_episode(bundled, task_id, lambda: bundled.random_action(rng)) for task_id in bundled.task_ids()
    ]
    assert sum(info["won"] for info in infos) <= 0.3 * len(infos)
    bundled.reset(options={"task_id": "0"})  # on the search page the random shopper can only search
    searches = [bundled.random_action(rng) for _ in range(20)]
    words = set(re.findall(r"[\w'-]+", bundled.goal["instruction_text"].lower()))
    for search in searches:
        query = re.fullmatch(r"search\[(.+)\]", search).group(1).split()
        assert 1 <= len(query) <= 3 and set(query) <= words


def test_bundled_catalog_meets_its_brief():
    catalog = load_catalog(None, "small", True)
    products = catalog.products
    assert len(products) >= 60 and len({p["category"] for p in products}) >= 6
    assert any("color" in p["options"] and "size" in p["options"] for p in products)
    assert any(not p["options"] for p in products)
    assert any(len(p["pricing"]) == 2 for p in products) and any(len(p["pricing"]) == 1 for p in products)
    words = {p["asin"]: set(re.findall(r"[a-z]+", p["Title"].lower())) for p in products}
    assert any(
        a["category"] == b["category"] and not words[a["asin"]] & words[b["asin"]]
        for a in products
        for b in products
    )
    assert len(envs.make("webshop", split="train").goals) >= 150


def test_bundled_files_match_their_generator():
    spec = importlib.util.spec_from_file_location("author", REPO / "scripts" / "author_webshop_catalog.py")
    author = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(author)
    products, attributes, human = author.build()
    shipped = {
        name: json.loads((BUNDLED_DIR / name).read_text())
        for name in ("items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json")
    }
    assert shipped == {
        "items_shuffle_1000.json": products,
        "items_ins_v2_1000.json": attributes,
        "items_human_ins.json": human,
    }
    assert sum(path.stat().st_size for path in BUNDLED_DIR.iterdir()) < 1_000_000
