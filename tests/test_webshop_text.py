"""What the original text environment shows and accepts: sub-pages, the done page, button-versus-option
clicks, action parsing, the ``text_rich`` mode and the observation history of its IL/RL baselines.

Expected strings follow the original's templates and text conversion (visible text nodes in document
order; ``text`` strips each and joins them with `` [SEP] ``; ``text_rich`` tags clickables).
"""

from __future__ import annotations

import pytest
from webshop_data import DEODORANT, PRODUCTS, values, write_official_dir

from expbank import envs

PATH = "Beauty & Personal Care › Personal Care › Deodorants"
TRICKY_DEODORANT = {
    **PRODUCTS[0],
    "name": "  Meadow Deodorant Stick ",
    "small_description": [],
    "customization_options": {
        "Color": values("Navy Blue", "Description", "Rock & Roll"),
        "Size": values("<3> O'Clock", "Buy Now"),
    },
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return str(write_official_dir(tmp_path_factory.mktemp("tricky"), products=[TRICKY_DEODORANT, *PRODUCTS[1:]]))


def on_item_page(data_dir, **options):
    """An environment on the deodorant's item page, and the goal's instruction."""
    env = envs.make("webshop", split="test", data_dir=data_dir, allow_fallback_nouns=True, **options)
    task = next(str(i) for i, goal in enumerate(env.goals) if goal["asin"] == DEODORANT)
    env.reset(options={"task_id": task})
    env.step("search[meadow deodorant stick]")
    env.step(f"click[{DEODORANT.lower()}]")
    return env, env.goal["instruction_text"]


def test_sub_pages_show_the_products_text_and_nothing_else(data_dir):
    env, instruction = on_item_page(data_dir, show_attrs=True)
    head = f"Instruction: [SEP] {instruction} [SEP] Back to Search [SEP] < Prev"
    shown = {}
    for sub_page in ("description", "features", "reviews", "attributes"):
        shown[sub_page] = env.step(f"click[{sub_page}]")[0]
        env.step("click[< prev]")
    assert shown["description"] == f"{head} [SEP] A gentle stick, aluminum free and kind to skin."
    assert shown["features"] == head  # no bullet points: no "No Features"
    assert shown["reviews"] == head  # no reviews: no "No reviews found"
    assert shown["attributes"] == f"{head} [SEP] sensitive skin [SEP] cruelty free [SEP] beauty [SEP] deodorant [SEP] {PATH}"


def test_text_mode_strips_each_text_node(data_dir):
    env, instruction = on_item_page(data_dir)
    obs = env.step("click[< prev]")[0]
    assert f"[SEP] {DEODORANT} [SEP] Meadow Deodorant Stick [SEP] $10.99" in obs
    obs = env.step(f"click[{DEODORANT.lower()}]")[0]
    assert obs == (
        f"Instruction: [SEP] {instruction} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] navy blue [SEP] "
        "description [SEP] rock & roll [SEP] size [SEP] <3> o'clock [SEP] buy now [SEP] Meadow Deodorant Stick "
        "[SEP] Price: $10.99 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
    )


def test_done_page_ends_with_reward_details_and_escapes_options_as_tojson(data_dir):
    env, _ = on_item_page(data_dir)
    env.step("click[<3> o'clock]")
    env.step("click[rock & roll]")
    obs, reward, done, _, _ = env.step("click[buy now]")
    assert done
    assert obs == (
        "Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] (Paste it in your MTurk interface.) "
        f"[SEP] Purchased [SEP] asin [SEP] {DEODORANT} [SEP] options [SEP] "
        '{"color": "rock \\u0026 roll", "size": "\\u003c3\\u003e o\\u0027clock"} [SEP] attrs [SEP] None [SEP] '
        "category [SEP] None [SEP] query [SEP] None [SEP] product category [SEP] None [SEP] Target [SEP] asin "
        "[SEP] options [SEP] attrs [SEP] price upper [SEP] instuction text [SEP] category [SEP] product category "
        "[SEP] query [SEP] Goal [SEP] None [SEP] Reward [SEP] Your score (min 0.0, max 1.0) "
        f"[SEP] {reward} [SEP] Reward Details [SEP] None"
    )


def test_a_button_label_wins_over_an_option_value(data_dir):
    env, _ = on_item_page(data_dir)
    *_, info = env.step("click[navy blue]")
    assert info["admissible_actions"] == [
        "click[back to search]", "click[< prev]", "click[description]", "click[features]", "click[reviews]",
        "click[buy now]", "click[navy blue]", "click[rock & roll]", "click[<3> o'clock]",
    ]
    obs, *_, info = env.step("click[description]")
    assert info["page"] == "item_sub_page" and obs.endswith("A gentle stick, aluminum free and kind to skin.")
    env.step("click[< prev]")
    *_, done, _, info = env.step("click[buy now]")
    assert done and env.shop.page.options == {"color": "navy blue"}


def test_actions_with_leading_whitespace_are_invalid(data_dir):
    env, _ = on_item_page(data_dir)
    for action in (" click[< prev]", "\tsearch[tea]", " search[tea]"):
        *_, info = env.step(action)
        assert info["invalid"] and info["page"] == "item", action
    *_, info = env.step("search[tea] ")  # the original matches from the start only: trailing text is ignored
    assert not info["invalid"] and env.shop.page.keywords == ["tea"]


def test_text_rich_tags_clickables_and_announces_chosen_options(data_dir):
    env, instruction = on_item_page(data_dir, render="text_rich")
    env.reset(options={"task_id": env.spec_task.task_id})
    assert env.render_style == "text_rich"
    first = env.step("click[nothing]")[0]
    assert first == f"WebShop\nInstruction: \n{instruction}\n[button] Search [button_]\n"
    results = env.step("search[meadow deodorant stick]")[0]
    assert results.startswith(
        f"Instruction:\n{instruction}\n[button] Back to Search [button_]\n"
        f"Page 1 (Total results: {len(env.shop.page.results)})\n[button] Next > [button_]\n\n[button] "
    )
    assert f"\n[button] {DEODORANT} [button_]\n  Meadow Deodorant Stick \n$10.99\n" in results
    env.step(f"click[{DEODORANT.lower()}]")
    env.step("click[<3> o'clock]")
    item = env.step("click[rock & roll]")[0]
    assert item.startswith("You have clicked <3> o'clock.\nYou have clicked rock & roll.\nInstruction:\n")
    assert (
        "color\n  [button] navy blue [button_]\n  [button] description [button_]\n"
        "  [clicked button] rock & roll [clicked button_]\nsize\n  [clicked button] <3> o'clock [clicked button_]\n"
        "  [button] buy now [button_]\n  Meadow Deodorant Stick \nPrice: $10.99\nRating: N.A.\n"
        "[button] Description [button_]\n[button] Features [button_]\n[button] Reviews [button_]\n"
        "[button] Buy Now [button_]\n"
    ) in item
    back = env.step("click[< prev]")[0]
    assert f"\n[clicked button] {DEODORANT} [clicked button_]\n" in back  # a visited product
    env.step("click[back to search]")
    again = env.step("search[meadow deodorant stick]")[0]
    assert f"\n[button] {DEODORANT} [button_]\n" in again  # "back to search" starts a new session


def test_history_prepends_earlier_observations_and_actions():
    plain = envs.make("webshop", split="test")
    first, _ = plain.reset(options={"task_id": "3"})
    second = plain.step("search[yoga mat]")[0]
    third = plain.step("click[next >]")[0]
    env = envs.make("webshop", split="test", num_prev_obs=1, num_prev_actions=1)
    assert env.reset(options={"task_id": "3"})[0] == first  # the first observation stands alone
    assert env.step("search[yoga mat]")[0] == f"{first} [SEP] search[yoga mat] [SEP] {second}"
    assert env.step("click[next >]")[0] == f"{second} [SEP] click[next >] [SEP] {third}"
    env = envs.make("webshop", split="test", num_prev_obs=2)
    env.reset(options={"task_id": "3"})
    env.step("search[yoga mat]")
    assert env.step("click[next >]")[0] == f"{first} [SEP] {second} [SEP] {third}"
    env = envs.make("webshop", split="test", num_prev_actions=2)
    env.reset(options={"task_id": "3"})
    env.step("buy it")  # invalid actions are history too
    assert env.step("search[yoga mat]")[0] == f"buy it [SEP] search[yoga mat] [SEP] {second}"
