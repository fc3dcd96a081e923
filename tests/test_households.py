"""The households family: rooms told apart by their receptacles, fixed placements per household, held-out rooms
whose facts only the visits carry, walkthroughs that win on the real engine, and a low no-memory ceiling."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from expbank.envs.alfworld.households import (
    CLOSED,
    FOODS,
    STEP_LIMIT,
    TARGET,
    Recipe,
    household_games,
    households,
    no_memory_ceiling,
    practice_games,
    practice_households,
    receptacle_names,
    search_order,
    training_frequency,
    walkthrough,
    write_households,
    write_practice,
)

SMALL = Recipe(seed=3, train_households=3, held_out_households=2, foods=2, dev_games=2, moved_rounds=1)


@pytest.fixture(scope="module")
def small_bank(tmp_path_factory):
    """The SMALL games and the bank the normal pipeline builds from their visits (collect, rule summariser)."""
    from expbank.bank.build import build
    from expbank.bank.store import Bank
    from expbank.bank.summarise import make_summariser
    from expbank.training.agent.collect import collect

    folder = tmp_path_factory.mktemp("households")
    root = write_households(folder / "games", SMALL)
    collect("alfworld", "visits", "expert", folder / "visits.jsonl", data_dir=str(root), workers=1,
            max_steps=STEP_LIMIT, progress=False)
    bank = Bank.create(folder / "bank")
    build(bank, [folder / "visits.jsonl"], make_summariser("rule"))
    bank.save()
    return root, folder / "bank"


def test_households_differ_in_layout_and_keep_each_food_in_one_place():
    recipe = Recipe()
    homes = households(recipe)
    assert len({h.scene.receptacles for h in homes}) == len(homes) == 32
    assert len({h.number for h in homes}) == 32
    games = household_games(recipe)
    assert Counter(g.split for g in games) == {"train": 144, "searches": 144, "warned": 144, "dev": 12,
                                               "valid_unseen": 48, "visits": 192, "stream": 4 * 48}
    by_number = {h.number: h for h in homes}
    for game in games:  # the walkthrough takes the food where its household keeps it, in every split
        home = by_number[game.scene.number]
        assert f"take {game.task.obj.lower()} 1 from {home.place(game.task.obj)}" in game.walkthrough
        assert len(game.walkthrough) <= STEP_LIMIT or game.split in ("searches", "warned")
        assert game.task.recep == TARGET or game.task.recep != home.scene.receptacles[home.places[game.task.obj]]
    held_out = {g.scene.number for g in games if g.split == "valid_unseen"}
    trained = {g.scene.number for g in games if g.split in ("train", "dev")}
    assert held_out and not held_out & trained  # the policy never trains in a held-out room
    assert held_out <= {g.scene.number for g in games if g.split == "visits"}
    visit_tasks = {(g.scene.number, g.task) for g in games if g.split == "visits"}
    assert not visit_tasks & {(g.scene.number, g.task) for g in games if g.split != "visits"}
    stream = [g for g in games if g.split == "stream"]  # the held-out tasks, each pair once per round
    rounds = [stream[i:i + 48] for i in range(0, len(stream), 48)]
    unseen = Counter((g.scene.number, g.task) for g in games if g.split == "valid_unseen")
    assert all(Counter((g.scene.number, g.task) for g in r) == unseen for r in rounds)
    assert len({(g.scene.number, g.task.obj, tuple(sorted(g.scene.objects.items()))) for g in stream}) > 48 * 3
    assert [g.scene.number for g in rounds[0]] != [g.scene.number for g in rounds[1]]  # each round reshuffled


def test_search_walks_look_in_the_no_memory_order_until_the_food_shows():
    """The ``searches`` split: the ``train`` tasks in the same order, each walked by looking at the room's
    receptacles in :func:`search_order` (from the training households' placements) until the food's place,
    opening closed ones, then the shortest walk's take, go and put; so some walks miss before they find."""
    recipe = Recipe()
    homes = {h.number: h for h in households(recipe)}
    games = household_games(recipe)
    train = [g for g in games if g.split == "train"]
    searches = [g for g in games if g.split == "searches"]
    frequency = training_frequency(list(homes.values())[:recipe.train_households], FOODS)
    misses = 0
    for straight, search in zip(train, searches, strict=True):
        assert (search.scene, search.task) == (straight.scene, straight.task)
        home, food = homes[search.scene.number], search.task.obj
        names = receptacle_names(home.scene)
        looked = [names[i] for i in search_order(home, food, frequency[food])]
        looked = looked[:looked.index(home.place(food))]
        assert [a.removeprefix("go to ") for a in search.walkthrough if a.startswith("go to ")][:-2] == looked
        assert search.walkthrough[-len(straight.walkthrough):] == straight.walkthrough
        assert all(f"open {place}" in search.walkthrough for place in looked if place.split()[0] in
                   {c.lower() for c in CLOSED})
        misses += bool(looked)
    assert 0.4 * len(train) < misses < len(train)  # most walks miss at least once; some find at once
    skipped = Counter()
    for search, warned in zip(searches, (g for g in games if g.split == "warned"), strict=True):
        assert (warned.scene, warned.task) == (search.scene, search.task)
        looks = [a for a in search.walkthrough if a.startswith("go to ")]
        again = [a for a in warned.walkthrough if a.startswith("go to ")]
        # the second attempt: the searching walk without its first one or two misses (none to skip: the same)
        skipped[len(looks) - len(again)] += 1
        assert looks[len(looks) - len(again):] == again and len(again) >= 2  # the food's place and the target
        assert search.walkthrough[-len(warned.walkthrough):] == warned.walkthrough
    assert skipped[1] and skipped[2] and set(skipped) <= {0, 1, 2}


def test_the_moved_stream_differs_from_the_unmoved_one_by_the_food_places_alone():
    """The stale-memory benchmark's splits: the same tasks, order and distractors; in ``moved`` every food of
    every held-out household lies elsewhere than it always did, in one new place for all rounds; writing them
    changes no other split."""
    recipe = Recipe(seed=1, moved_rounds=3)
    games = household_games(recipe)
    moved = [g for g in games if g.split == "moved"]
    unmoved = [g for g in games if g.split == "unmoved"]
    assert len(moved) == len(unmoved) == 3 * 48
    homes = {h.number: h for h in households(recipe)}
    new_place = {}
    for after, control in zip(moved, unmoved, strict=True):
        food, home = after.task.obj, homes[after.scene.number]
        assert (control.scene.number, control.task) == (after.scene.number, after.task)
        assert {k: v for k, v in after.scene.objects.items() if k not in home.places} == \
            {k: v for k, v in control.scene.objects.items() if k not in home.places}
        assert control.scene.objects[food] == (home.places[food],) != after.scene.objects[food]
        assert new_place.setdefault((home.number, food), after.scene.objects[food]) == after.scene.objects[food]
        assert control.walkthrough == walkthrough(home, food, TARGET) != after.walkthrough
    assert len(new_place) == 48
    without = household_games(Recipe(seed=1))
    assert [g for g in games if g.split not in ("moved", "unmoved")] == without


def test_practice_games_are_in_rooms_of_their_own_and_the_family_is_unchanged():
    """GRPO's games: rooms that are neither training nor held-out households (so only their visits say where
    a food is), with their own visits; drawing them changes none of the family's households."""
    recipe = Recipe(seed=2)
    homes = households(recipe)
    practice = practice_games(recipe)
    assert Counter(g.split for g in practice) == {"train": 96, "visits": 96}
    rooms = {g.scene.number for g in practice}
    assert len(rooms) == 16 and not rooms & {h.number for h in homes}
    assert not {g.scene.receptacles for g in practice} & {h.scene.receptacles for h in homes}
    assert households(recipe) == homes and practice_games(recipe) == practice  # seeded, family untouched
    visits = {(g.scene.number, g.task.obj): g for g in practice if g.split == "visits"}
    for game in (g for g in practice if g.split == "train"):  # a visit walks to where the game finds the food
        assert game.walkthrough[:-2] == visits[game.scene.number, game.task.obj].walkthrough[:-2]
    with_practice = no_memory_ceiling(recipe, practice=16)
    assert with_practice["games"] == 48 and with_practice["rate"] <= 0.40


def test_crowded_practice_rooms_keep_their_foods_in_few_places_beside_each_other():
    """``food_places``: each practice room keeps its foods in that many receptacles, so most goal foods share
    their place with another food; the rooms, their distractors and the family are those of the default draw,
    and the games' walkthroughs and visits follow the new places."""
    recipe = Recipe(seed=2)
    plain, crowded = practice_households(recipe), practice_households(recipe, food_places=2)
    assert [h.scene.receptacles for h in crowded] == [h.scene.receptacles for h in plain]
    for home, before in zip(crowded, plain, strict=True):
        assert len(set(home.places.values())) <= 2 and TARGET not in {home.scene.receptacles[i]
                                                                     for i in home.places.values()}
        assert {k: v for k, v in home.scene.objects.items() if k not in FOODS} == \
            {k: v for k, v in before.scene.objects.items() if k not in FOODS}
        assert all(home.scene.objects[food] == (where,) for food, where in home.places.items())
    beside = sum(list(h.places.values()).count(h.places[f]) > 1 for h in crowded for f in h.places)
    apart = sum(list(h.places.values()).count(h.places[f]) > 1 for h in plain for f in h.places)
    assert beside >= 90 and apart <= 48  # of 96 foods: nearly all share their place; by default about half
    games = practice_games(recipe, food_places=2)
    homes = {h.number: h for h in crowded}
    for game in games:
        assert game.walkthrough[0] == f"go to {homes[game.scene.number].place(game.task.obj)}"
    assert households(recipe) == households(Recipe(seed=2)) and practice_games(recipe) != games
    assert no_memory_ceiling(recipe, practice=16, food_places=2)["rate"] <= 0.40


@pytest.mark.parametrize("seed", range(5))
def test_the_best_no_memory_policy_stays_at_or_below_40_percent(seed):
    ceiling = no_memory_ceiling(Recipe(seed=seed))
    assert ceiling["games"] == 48 and ceiling["rate"] <= 0.40


def test_walkthroughs_win_on_the_real_engine_and_no_game_is_won_at_reset(tmp_path):
    from expbank import envs
    from expbank.training.agent.collect import collect
    from expbank.trajectory import read_episodes

    root = write_households(tmp_path / "games", SMALL)
    assert write_households(root, SMALL) == root  # a complete folder is reused
    for split in ("train", "dev", "valid_unseen", "visits", "stream", "moved", "unmoved"):
        env = envs.make("alfworld", split=split, data_dir=str(root), max_steps=STEP_LIMIT)
        for task_id in env.task_ids():
            observation, info = env.reset(options={"task_id": task_id})
            assert "you see a" in observation and "Your task is to:" in observation
            _, _, terminated, _, info = env.step("look")
            assert not terminated and not info["won"], f"{split}/{task_id} is won before any move"
        env.close()
        collect("alfworld", split, "expert", tmp_path / f"{split}.jsonl", data_dir=str(root), workers=1,
                max_steps=STEP_LIMIT, progress=False)
        episodes = list(read_episodes(tmp_path / f"{split}.jsonl"))
        assert episodes and all(e.success and e.num_steps <= STEP_LIMIT for e in episodes)
    collect("alfworld", "searches", "expert", tmp_path / "searches.jsonl", data_dir=str(root), workers=1,
            progress=False)  # search walks may run past the step limit: they are SFT records, not games
    searches = list(read_episodes(tmp_path / "searches.jsonl"))
    assert len(searches) == 3 * 2 and all(e.success for e in searches)
    practice = write_practice(tmp_path / "practice", SMALL, count=2)  # 2 rooms x 2 foods a split
    played = Counter()
    for split in ("train", "dev", "visits"):  # no dev folder: the loader keeps every DEV_EVERY-th train game
        collect("alfworld", split, "expert", tmp_path / f"practice-{split}.jsonl", data_dir=str(practice),
                workers=1, max_steps=STEP_LIMIT, progress=False)
        episodes = list(read_episodes(tmp_path / f"practice-{split}.jsonl"))
        assert all(e.success and e.num_steps <= STEP_LIMIT for e in episodes)
        played[split == "visits"] += len(episodes)
    assert played == {False: 4, True: 4}


def test_the_gate_quarantines_nothing_the_households_visits_write(small_bank):
    """The households family is clean environment text: its bank keeps every entry trusted."""
    from expbank.bank.store import Bank

    stats = Bank.open(small_bank[1]).stats()
    assert stats["entries"] > 0 and stats["by_trust"]["quarantined"] == 0


def test_critique_targets_name_the_own_rooms_entry_and_the_other_rooms_arm_never_shows_one(small_bank, tmp_path):
    """Built by the normal pipeline: visits collected, a rule-summarised bank, retrieval with the room filter."""
    from expbank.envs.alfworld.games import room_of
    from expbank.training.agent import protocol, targets
    from expbank.training.agent.collect import collect
    from expbank.training.agent.retrieve import Memory
    from expbank.trajectory import episodes_in_id_order

    root, bank = small_bank
    collect("alfworld", "valid_unseen", "expert", tmp_path / "valid_unseen.jsonl", data_dir=str(root), workers=1,
            max_steps=STEP_LIMIT, progress=False)
    spec = protocol.ProtocolSpec("bank")
    own, other = Memory("bank", str(bank), k=2), Memory("bank", str(bank), k=2, rooms="other")
    homes = {h.number: h for h in households(SMALL)}
    for episode in episodes_in_id_order(tmp_path / "valid_unseen.jsonl"):
        first = episode.steps[0]
        food = episode.task_id.split("-")[1]
        shown = own.retrieve(task=episode.task, observation=first.observation, task_id=episode.task_id)
        blocks = targets.target_blocks(spec, episode.task, first.observation, episode.task_type, first.action,
                                       shown, "alfworld", episode.task_id)
        place = homes[int(room_of(episode.task_id))].place(food)
        assert "applies: this room" in blocks["critique"]  # the own room's visit is retrieved
        assert blocks["reconstruct"] == f"take {food.lower()} 1 from {place}"
        assert first.action == f"go to {place}"
        elsewhere = other.retrieve(task=episode.task, observation=first.observation, task_id=episode.task_id)
        assert elsewhere and all(room_of(t) != room_of(episode.task_id) for e in elsewhere
                                 for t in e.provenance.task_ids)
        blocks = targets.target_blocks(spec, episode.task, first.observation, episode.task_type, first.action,
                                       elsewhere, "alfworld", episode.task_id)
        assert blocks["reconstruct"] == "NONE" and "applies" not in blocks["critique"].replace("does not apply", "")


def test_negative_records_show_other_rooms_or_nothing_and_are_taught_none(small_bank, tmp_path):
    """tiny-warm's negatives: the drawn episodes' records show only other rooms' entries (or the empty block)
    and their targets say NONE; without negatives the training rooms' own entries are shown and applied."""
    from expbank.config import MemoryConfig
    from expbank.training.actors.tiny_warm import Negatives, expert_conversations
    from expbank.training.agent.retrieve import NO_EXPERIENCE

    root, bank = small_bank
    memory = MemoryConfig(mode="bank", bank=str(bank), k=1)

    def replies(negatives: Negatives) -> list[tuple[str, str]]:
        conversations = expert_conversations("alfworld", 1, tmp_path, "train", str(root), memory, seed=0,
                                             negatives=negatives)
        return [(c[-2]["content"], c[-1]["content"]) for c in conversations]

    plain = replies(Negatives())
    assert sum("applies: this room" in reply for _, reply in plain) >= len(plain) // 3
    for prompt, reply in replies(Negatives(other_rooms=1.0)):
        assert NO_EXPERIENCE not in prompt and "another room" in reply and "<reconstruct>NONE</reconstruct>" in reply
    for prompt, reply in replies(Negatives(empty=1.0)):
        assert NO_EXPERIENCE in prompt and "<reconstruct>NONE</reconstruct>" in reply
    mixed = replies(Negatives(other_rooms=0.3, empty=0.3))
    assert mixed == replies(Negatives(other_rooms=0.3, empty=0.3))  # seeded
    assert any(NO_EXPERIENCE in p for p, _ in mixed) and any("another room" in r for _, r in mixed)
    assert any("applies: this room" in r for _, r in mixed)
    with pytest.raises(ValueError):
        Negatives(other_rooms=0.7, empty=0.7)
    # with searching walks the same draws show the `searches` split's walk of the same task: look, miss, look again
    searched = replies(Negatives(empty=1.0, search_split="searches"))
    walks = sorted((g for g in household_games(SMALL) if g.split == "searches"),
                   key=lambda g: g.task.folder_name(g.scene))
    assert [re.search(r"<action>(.*)</action>", r)[1] for _, r in searched] == [a for g in walks for a in g.walkthrough]
    assert all(NO_EXPERIENCE in p for p, _ in searched) and len(searched) > len(replies(Negatives(empty=1.0)))
    assert replies(Negatives(search_split="searches")) == plain  # no draw, no searching walk


def test_records_retrieving_with_the_first_observation_show_the_rooms_entry_at_every_step(small_bank, tmp_path):
    """``memory.observation: first`` in tiny-warm's records: every step is shown the block its first step was
    (the room's own entry), so the take step's reconstruction is the action it takes; with ``current`` later
    steps retrieve with one receptacle's observation and are shown entries that do not apply. Only a bank
    policy's recipe key changes."""
    from expbank.config import MemoryConfig
    from expbank.training.actors.tiny_warm import WarmRecipe, expert_conversations

    root, bank = small_bank

    def replies(observation: str) -> list[str]:
        memory = MemoryConfig(mode="bank", bank=str(bank), k=1, observation=observation)
        return [c[-1]["content"] for c in expert_conversations("alfworld", 1, tmp_path, "train", str(root), memory)]

    first, current = replies("first"), replies("current")
    assert len(first) == len(current) and all("applies: this room" in reply for reply in first)
    takes = [(re.search(r"<action>(.*)</action>", r)[1], re.search(r"<reconstruct>(.*)</reconstruct>", r)[1])
             for r in first]
    takes = [(action, reconstruction) for action, reconstruction in takes if action.startswith("take ")]
    assert takes and all(action == reconstruction for action, reconstruction in takes)
    assert any("does not apply" in reply for reply in current)
    assert WarmRecipe(memory="bank", observation="first").key() != WarmRecipe(memory="bank").key()
    assert WarmRecipe(observation="first").key() == WarmRecipe().key()  # without memory it changes nothing


def test_warned_records_show_the_first_attempts_warning_and_look_elsewhere(small_bank, tmp_path):
    """tiny-warm's warned draws: the block holds the not-found warning the rule summariser writes of the first
    attempt (the real searching episode cut after its misses), the critique applies it, and the answer is the
    second attempt's walk, which never goes to a place the warning names; without memory, the same walk."""
    from expbank.bank.summarise import not_found
    from expbank.config import MemoryConfig
    from expbank.training.actors.tiny_warm import Negatives, expert_conversations, first_attempt_warning
    from expbank.training.agent.collect import collect
    from expbank.trajectory import episodes_in_id_order

    root, bank = small_bank
    warned = Negatives(warned=1.0, warned_splits=("searches", "warned"))
    conversations = expert_conversations("alfworld", 1, tmp_path, "train", str(root),
                                         MemoryConfig(mode="bank", bank=str(bank), k=1), seed=0, negatives=warned)
    applied = 0
    for conversation in conversations:
        prompt, reply = conversation[-2]["content"], conversation[-1]["content"]
        named = re.search(r"The (\w+) was not in/on (.+?) here when looked at", prompt)
        action = re.search(r"<action>(.*)</action>", reply)[1]
        if named:
            applied += f"applies: not at {named[2]}" in reply and f"{named[1]}: not at {named[2]}" in reply
            assert all(action not in (f"go to {p}", f"open {p}") for p in named[2].split(", "))
    assert applied >= len(conversations) // 3
    blind = expert_conversations("alfworld", 1, tmp_path, "train", str(root), MemoryConfig(), seed=0, negatives=warned)
    walks = sorted((g for g in household_games(SMALL) if g.split == "warned"), key=lambda g: g.task.folder_name(g.scene))
    assert [re.search(r"<action>(.*)</action>", c[-1]["content"])[1] for c in blind] == \
        [a for g in walks for a in g.walkthrough]
    assert not any("experience>" in m["content"] for c in blind for m in c)
    for split in ("searches", "warned"):
        collect("alfworld", split, "expert", tmp_path / f"{split}.jsonl", data_dir=str(root), workers=1,
                progress=False)
    pairs = zip(*(episodes_in_id_order(tmp_path / f"{s}.jsonl") for s in ("searches", "warned")), strict=True)
    for search, second in pairs:
        warning = first_attempt_warning(search, second)
        skipped = len(search.steps) != len(second.steps)
        assert (warning is not None) == skipped
        if warning:  # grounded in the cut episode: the places it looked at and saw without the food
            what, places = not_found(warning)
            assert what in search.task and all(f"go to {p}" in [s.action for s in search.steps] for p in places)
            assert all(f"go to {p}" not in [s.action for s in second.steps] for p in places)
    with pytest.raises(ValueError):
        Negatives(warned=0.5)  # which splits?


def test_sighted_records_show_a_failed_walks_sighting_and_take_it(small_bank, tmp_path):
    """tiny-warm's sighted draws: the block holds the sighting the rule summariser writes of the expert's walk
    as a failed episode that saw the food and did not take it (``outcome: failure``, as an online bank's finds
    are), the critique applies it and the reconstruction is its take, which the answer then makes; without
    memory the draw changes nothing."""
    from expbank.config import MemoryConfig
    from expbank.training.actors.tiny_warm import Negatives, expert_conversations, sighting_before_take
    from expbank.training.agent.collect import collect
    from expbank.trajectory import episodes_in_id_order

    root, bank = small_bank
    memory = MemoryConfig(mode="bank", bank=str(bank), k=1)
    sighted = expert_conversations("alfworld", 1, tmp_path, "train", str(root), memory, seed=0,
                                   negatives=Negatives(sighted=1.0))
    own = expert_conversations("alfworld", 1, tmp_path, "train", str(root), memory, seed=0)
    assert len(sighted) == len(own)
    takes = 0
    for conversation in sighted:
        prompt, reply = conversation[-2]["content"], conversation[-1]["content"]
        assert "outcome: failure" in prompt and "outcome: success" not in prompt
        assert "applies: this room" in reply
        action, reconstruction = (re.search(rf"<{tag}>(.*)</{tag}>", reply)[1] for tag in ("action", "reconstruct"))
        if action.startswith("take "):
            takes += 1
            assert reconstruction == action
    assert all("outcome: success" in c[-2]["content"] for c in own)  # the visits' finds were won
    blind = Negatives(sighted=1.0)
    assert expert_conversations("alfworld", 1, tmp_path, "train", str(root), MemoryConfig(), seed=0,
                                negatives=blind) == expert_conversations("alfworld", 1, tmp_path, "train", str(root),
                                                                         MemoryConfig(), seed=0)
    collect("alfworld", "train", "expert", tmp_path / "train.jsonl", data_dir=str(root), workers=1, progress=False)
    episodes = list(episodes_in_id_order(tmp_path / "train.jsonl"))
    assert takes == len(episodes)  # every walk takes its food once, as the sighting said
    for episode in episodes:
        sighting = sighting_before_take(episode)
        take = next(s.action for s in episode.steps if s.action.startswith("take "))
        assert sighting is not None and sighting.actions[-1] == take and not sighting.outcome.success
        assert sighting.actions[0] == next(s.action for s in episode.steps if s.action.startswith("go to "))
        unwalked = episode.model_copy(update={"steps": [s for s in episode.steps if not s.action.startswith("take ")]})
        assert sighting_before_take(unwalked) is None


def test_critique_rows_show_each_step_with_its_room_and_another_and_train_the_verdict_alone(small_bank, tmp_path):
    """tiny-warm's critique rows (``critique_mix_batch_size``): every step of every won training walk twice, shown
    what retrieval finds and shown only other rooms' entries, the critique saying which applies; tokenised with
    ``tags=("critique",)`` only the verdict's tokens carry loss."""
    from expbank.config import MemoryConfig
    from expbank.training.actors.tiny_warm import (
        critique_conversations,
        expert_conversations,
        train_tokenizer,
    )
    from expbank.training.agent.rows import tokenize_conversation

    root, bank = small_bank
    memory = MemoryConfig(mode="bank", bank=str(bank), k=1, observation="first")
    records = expert_conversations("alfworld", 1, tmp_path, "train", str(root), memory, seed=0)
    rows = critique_conversations(1, tmp_path, "train", str(root), memory, seed=0)
    assert len(rows) == 2 * len(records)
    verdicts = [re.search(r"<critique>(.*)</critique>", c[-1]["content"])[1] for c in rows]
    steps = len(records)  # each walk's own-retrieval steps come before its other-rooms steps
    walks = [verdicts[i:i + 2 * n] for i, n in _walk_lengths(records, steps)]
    for walk in walks:
        half = len(walk) // 2
        assert all(v == "[1] does not apply: another room" for v in walk[half:])
        assert all(v == "[1] applies: this room" for v in walk[:half])  # training rooms retrieve their own entry
    tokenizer = train_tokenizer([m["content"] for c in rows for m in c], 1024)
    for conversation, verdict in zip(rows, verdicts, strict=True):
        ids, mask = tokenize_conversation(tokenizer, conversation, tags=("critique",))
        trained = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
        assert trained and verdict.endswith(trained) and len(trained) >= len(verdict) - 4  # the verdict, no more
        full = tokenize_conversation(tokenizer, conversation)
        assert full[0] == ids and sum(full[1]) > 2 * sum(mask)  # the same ids; the whole reply is more


def test_critique_diagnostic_splits_turns_by_whose_room_the_shown_entry_is(small_bank, tmp_path):
    """The critique's target is stated per what a turn shows: NONE (or a critique rejecting every item shown) is
    counted apart for turns shown an entry made in the episode's own room and turns shown only other rooms'
    entries; turns after the take, turns without a reconstruction and ids the bank does not hold stay out of the
    split."""
    from expbank.bank.store import Bank
    from expbank.envs.alfworld.games import room_of
    from expbank.training.evaluation.households import critique_diagnostic

    _, bank = small_bank
    bank = Bank.open(bank, writable=False)
    entries = list(bank.entries())
    own = entries[0]
    other = next(e for e in entries if room_of(e.provenance.task_ids[0]) != room_of(own.provenance.task_ids[0]))

    def step(shown: list[str], reconstruct: str | None, action: str = "go to shelf 1", critique: str = "x") -> dict:
        output = f"<critique>{critique}</critique><reconstruct>{reconstruct}</reconstruct>" if reconstruct else ""
        return {"action": action, "retrieved": shown, "output": f"{output}<action>{action}</action>"}

    rejected, half = "[1] does not apply: another room", "[1] does not apply: another room [2] applies: this room"
    steps = [step([own.id], "take apple 1 from shelf 1"), step([other.id], "NONE"), step([other.id], "NONE"),
             step([own.id, other.id], "NONE"), step([other.id], "take apple 1 from desk 1"), step([own.id], None),
             step(["not-in-this-bank"], "NONE"), step([other.id], "take apple 1 from desk 1", critique=rejected),
             step([other.id, own.id], "take apple 1 from shelf 1", critique=half),
             step([own.id], "NONE", "take apple 1 from shelf 1"), step([own.id], "NONE")]
    (tmp_path / "episodes.jsonl").write_text(json.dumps({"task_id": own.provenance.task_ids[0], "steps": steps}))
    split = critique_diagnostic(tmp_path, bank)
    assert split["turns"] == 8 and split["none_share"] == pytest.approx(5 / 8)
    assert split["shown"] == {"own": {"turns": 3, "none_share": pytest.approx(1 / 3)},
                              "other": {"turns": 4, "none_share": 0.75}}
    assert critique_diagnostic(tmp_path) == {"turns": 8, "none_share": pytest.approx(5 / 8)}


def test_loss_diagnostic_counts_lost_games_by_their_first_take(tmp_path):
    """A lost game is counted once, by its first take: another object where the observation listed the goal
    object, a take with the goal object not in view (an eggplant is not an egg), the goal object itself, or no
    take; won games are not counted."""
    from expbank.training.evaluation.households import LOSS_KINDS, loss_diagnostic

    def game(task: str, steps: list[tuple[str, str]], success: bool = False) -> str:
        return json.dumps({"task": task, "success": success,
                           "steps": [{"observation": o, "action": a} for o, a in steps]})

    start = "You are in the middle of a room. Looking quickly around you, you see a drawer 2, and a desk 1."
    drawer = "You open the drawer 2. The drawer 2 is open. In it, you see a apple 1, a bowl 1, a egg 1, and a tomato 1."
    rows = [game("put some egg on garbagecan.", [(start, "go to drawer 2"), (drawer, "take egg 1 from drawer 2")],
                 success=True),
            game("put some egg on garbagecan.", [(start, "go to drawer 2"), ("You arrive at drawer 2.", "open drawer 2"),
                                                 (drawer, "take apple 1 from drawer 2"),
                                                 ("You pick up the apple 1 from the drawer 2.", "take egg 1 from drawer 2")]),
            game("put a egg in garbagecan.", [(start, "go to desk 1"),
                                              ("On the desk 1, you see a eggplant 1, and a apple 1.", "take apple 1 from desk 1")]),
            game("put a bread in garbagecan.", [("You arrive at diningtable 1. On the diningtable 1, you see a tomato 1.",
                                                 "take bread 1 from diningtable 1")]),
            game("put a lettuce in garbagecan.", [(start, "go to desk 1"), ("Nothing happens.", "look")])]
    (tmp_path / "episodes.jsonl").write_text("\n".join(rows) + "\n")
    assert loss_diagnostic(tmp_path) == {"lost": 4, "other_object_beside_goal": 1, "goal_not_in_view": 1,
                                         "took_goal": 1, "no_take": 1}
    assert set(LOSS_KINDS) == set(loss_diagnostic(tmp_path)) - {"lost"}


def _walk_lengths(records: list[list[dict]], steps: int) -> list[tuple[int, int]]:
    """(offset into the critique rows, steps) of each walk: a walk's records start with no history."""
    starts = [i for i, c in enumerate(records) if "Recent history" not in c[-2]["content"]] + [steps]
    return [(2 * a, b - a) for a, b in zip(starts, starts[1:], strict=False)]


def test_a_pretrained_lms_reply_budget_fits_every_households_reply(small_bank, tmp_path):
    """SmolLM2's tokens for each reply the SFT records teach (observe, critique, reconstruct, action) fit the
    budget its arms decode with; at 64, the longest replies lost their action and counted as invalid."""
    from transformers import AutoTokenizer

    from expbank.commands import quickstart as qs
    from expbank.training.actors.models import smollm2_dir
    from expbank.training.agent import protocol, targets
    from expbank.training.agent.collect import collect
    from expbank.training.agent.retrieve import Memory
    from expbank.training.evaluation.households import LM_REPLY_TOKENS
    from expbank.trajectory import episodes_in_id_order

    root, bank = small_bank
    collect("alfworld", "valid_unseen", "expert", tmp_path / "walks.jsonl", data_dir=str(root), workers=1,
            max_steps=STEP_LIMIT, progress=False)
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir())
    memory = Memory("bank", str(bank), k=1)
    replies = [record[-1]["content"] for episode in episodes_in_id_order(tmp_path / "walks.jsonl")
               for record in targets.records_from_episode(episode, protocol.ProtocolSpec("bank"), memory, 1)]
    longest = max(len(tokenizer(reply, add_special_tokens=False).input_ids) for reply in replies)
    assert "<action>" in replies[0] and longest <= LM_REPLY_TOKENS
    scale = qs.load_scale(actor="smollm2-135m")
    layout = qs.Layout(tmp_path / "qs")
    assert qs.arm_config(scale, layout, "sft-bank").decoding.max_new_tokens == LM_REPLY_TOKENS
    assert qs.grpo_config(scale, layout).decoding.max_new_tokens == LM_REPLY_TOKENS


def test_lora_sft_critique_rows_show_other_rooms_before_the_take_and_train_critique_and_reconstruct(
        small_bank, tmp_path):
    """``sft.critique_share`` (the LoRA path): rows of the turns before each won walk takes its food, shown only
    other rooms' entries, teaching "another room" and NONE; with SmolLM2's tokenizer only those two tags carry
    loss. Without a bank the option is refused."""
    from transformers import AutoTokenizer

    from expbank.bank.summarise import goal_object, takes
    from expbank.config import Config
    from expbank.errors import UserError
    from expbank.training.actors.models import smollm2_dir
    from expbank.training.agent.collect import collect
    from expbank.training.agent.rows import tokenize_conversation
    from expbank.training.evaluation.households import arm_tree
    from expbank.training.rl.sft import build_records
    from expbank.trajectory import episodes_in_id_order

    root, bank = small_bank
    walks = tmp_path / "train.jsonl"
    collect("alfworld", "train", "expert", walks, data_dir=str(root), workers=1, max_steps=STEP_LIMIT,
            progress=False)
    tree = arm_tree(root, {"model": "smollm2-135m"}, {"mode": "bank", "bank": str(bank)}, seed=0, system="none")
    tree["sft"] = {"trajectories": [str(walks)], "critique_share": 0.5}
    records, rows = build_records(Config.model_validate(tree), [str(walks)])
    assert records and len(rows) == round(0.5 * len(records))
    before_take = sum(next(t for t, step in enumerate(e.steps) if takes(step.action, goal_object(e.task)))
                      for e in episodes_in_id_order(walks) if e.success)
    assert len({json.dumps(row) for row in rows}) == min(len(rows), before_take)  # no take turn, no repeat early
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir())
    for row in rows:
        reply = row[-1]["content"]
        verdicts = re.search(r"<critique>(.*)</critique><reconstruct>NONE</reconstruct>", reply)[1]
        assert re.fullmatch(r"(\[\d\] does not apply: another room ?)+", verdicts)
        assert not re.search(r"<action>take ", reply)
        ids, mask = tokenize_conversation(tokenizer, row, tags=("critique", "reconstruct"))
        trained = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
        assert "another room" in trained and "NONE" in trained and "action" not in trained
    tree["memory"] = {"mode": "none"}
    with pytest.raises(UserError, match="critique_share needs"):
        build_records(Config.model_validate(tree), [str(walks)])


def test_a_killed_households_benchmark_stops_the_stage_it_was_running(tmp_path):
    """SIGTERM to ``scripts/bench_households.py`` (``kill``, ``pkill -f``) ends the ``expbank`` stage it waits on,
    and that stage's workers, as Ctrl-C does; before, the stage went on as an orphan and held the cores."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import psutil

    script = Path(__file__).resolve().parents[1] / "scripts" / "bench_households.py"
    process = subprocess.Popen([sys.executable, str(script), "--seed", "0", "--small", "--out", str(tmp_path / "run")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stages: list[psutil.Process] = []
    deadline = time.monotonic() + 240
    while not stages and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.5)
        stages = [child for child in psutil.Process(process.pid).children(recursive=True)
                  if "expbank" in " ".join(child.cmdline())]
    try:
        assert stages, "the benchmark never started an expbank stage"
        time.sleep(3)  # let the stage start its workers
        stages = psutil.Process(process.pid).children(recursive=True)  # the stage and its workers
        process.send_signal(signal.SIGTERM)
        _, alive = psutil.wait_procs(stages, timeout=30)
        assert not alive, [" ".join(child.cmdline()) for child in alive]
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        process.kill()
        for stage in stages:
            if stage.is_running():
                stage.kill()  # an orphan of a failed run


def test_the_room_match_probe_shows_each_walk_its_own_rooms_entry_and_another_rooms(small_bank, tmp_path):
    """``scripts/probe_room_match.py`` builds each walk's first-step prompt twice, as SFT does: shown the entry
    retrieval finds in the room (labelled own) and the one ``memory.rooms: other`` finds; the prompt holds that
    entry (not an empty block) and ends at the critique's verdict."""
    import sys
    from pathlib import Path

    from expbank.training.agent.collect import collect
    from expbank.training.agent.protocol import ProtocolSpec
    from expbank.trajectory import read_episodes

    sys.path.insert(0, str(Path(__file__).parents[1] / "scripts"))
    from probe_room_match import first_turns, receptacles

    root, bank = small_bank
    collect("alfworld", "train", "expert", tmp_path / "train.jsonl", data_dir=str(root), workers=1,
            max_steps=STEP_LIMIT, progress=False)
    episodes = [e for e in read_episodes(tmp_path / "train.jsonl") if e.success]
    turns = first_turns(episodes, bank, ProtocolSpec("bank", system="none"))
    own = [turn for turn in turns if turn["own"]]
    other = [turn for turn in turns if not turn["own"]]
    assert own and len(other) == len(episodes)
    for turn in turns:
        prompt = turn["messages"][-1]["content"]
        assert "<experience>\n[1] situation: You are in the middle of a room." in prompt
        assert turn["prefix"].endswith("<critique>[1] ")
        situation = prompt.split("[1] situation: ")[1]
        room = prompt.split("Current observation:\n")[1]
        assert (receptacles(situation) == receptacles(room)) == turn["own"] == (turn["jaccard"] == 1.0)


def test_a_verdict_head_fitted_by_sft_decides_each_verdict_and_the_policy_writes_the_rest(small_bank, tmp_path):
    """``sft.verdict_head``: ``expbank sft`` fits a linear head on the trained policy's hidden state at each
    critiqued item's verdict (rows of both verdicts, the other rooms' turns included) and saves it beside the
    adapter; the fit reproduces its own rows (a head reading the wrong position sees one state for all).
    ``decoding.verdict: head`` on the real engine: a head that always rejects makes every item's verdict "does not
    apply" and one that always accepts "applies", the policy writing what follows; a policy without a head file
    is refused. A policy trained without ``expbank sft`` (tiny-warm) gets its head in its own folder."""
    import dataclasses

    import numpy as np

    from expbank import envs
    from expbank.config import Config
    from expbank.envs.alfworld.games import room_of
    from expbank.envs.pool import EnvPool
    from expbank.errors import UserError
    from expbank.training.actors.backends import HFBackend
    from expbank.training.agent.collect import collect
    from expbank.training.agent.protocol import ProtocolSpec
    from expbank.training.agent.retrieve import Memory
    from expbank.training.agent.rollout import RolloutJob, RolloutSettings, rollout
    from expbank.training.agent.verdict import VerdictHead, verdict_prefix, written_verdict
    from expbank.training.evaluation.evaluate import verdict_head
    from expbank.training.evaluation.households import arm_tree, tiny_policy
    from expbank.training.rl.sft import fit_policy_verdict_head, sft, verdict_rows

    root, bank = small_bank
    walks = tmp_path / "train.jsonl"
    collect("alfworld", "train", "expert", walks, data_dir=str(root), workers=1, max_steps=STEP_LIMIT,
            progress=False)
    memory = {"mode": "bank", "bank": str(bank)}
    render = {"k": 1, "source_chars": 0, "guidance_tokens": 48}
    warm = tiny_policy(root, memory, tmp_path / "warm", seed=0, steps=60, learning_rate=1e-3, render=render,
                       system="none", progress=False)
    tree = arm_tree(root, {"model": str(warm)}, memory, seed=0, system="none", render=render)
    tree["sft"] = {"trajectories": [str(walks)], "verdict_head": True, "verdict_head_rows": 16, "epochs": 0.2}
    config = Config.model_validate(tree)
    rows = verdict_rows(config, [str(walks)])
    assert len(rows.labels) == 16 and sum(rows.labels) == 8, "half of each verdict"
    assert all(prefix.endswith("<critique>[1]") for prefix in rows.prefixes)
    assert set(rows.rooms) == {room_of(task_id) for task_id in envs.task_ids("alfworld", "train", data_dir=str(root))}
    turns = {}  # a turn's prompt without its block: the same turn is shown its room's entry and another's
    for messages, label in zip(rows.conversations, rows.labels, strict=True):
        text = messages[-1]["content"]
        turns.setdefault(re.sub(r"<experience>.*</experience>", "", text, flags=re.S), set()).add(label)
    assert sum(labels == {True, False} for labels in turns.values()) >= 4
    one_room = tmp_path / "one-room.jsonl"  # the folds hold out whole rooms: one room cannot be cross-validated
    records = [(line, json.loads(line)) for line in walks.read_text().splitlines()]
    room = next(room_of(record["task_id"]) for _, record in records if record["success"])
    one_room.write_text("".join(f"{line}\n" for line, record in records if room_of(record["task_id"]) == room))
    with pytest.raises(UserError, match="fewer than two rooms"):
        verdict_rows(config, [str(one_room)])
    adapter = sft(config, [str(walks)], tmp_path / "sft", progress=False)
    head = VerdictHead.load(adapter)
    assert 0 <= head.layer <= 4 and head.cv_balanced_accuracy is not None  # chosen by room-grouped folds
    backend = HFBackend(str(warm), adapter=str(adapter))
    states = backend.hidden_states(rows.conversations, rows.prefixes, head.layer, base=head.base)
    fitted = head.applies(states)
    assert np.mean(fitted == np.array(rows.labels)) >= 0.9
    assert np.isfinite(head.threshold)  # the out-of-fold equal-error point, which the verdicts are read against
    assert not dataclasses.replace(head, threshold=1e9).applies(states).any()

    spec = ProtocolSpec("bank", system="none")
    bank_memory = Memory.from_config(Config.model_validate(tree).memory, seed=0)
    jobs = [RolloutJob(f"head-{i}", task_id, 0)
            for i, task_id in enumerate(envs.task_ids("alfworld", "valid_unseen", data_dir=str(root)))]

    def play(verdict_head: VerdictHead | None) -> tuple[list, list[str]]:
        settings = RolloutSettings(env="alfworld", spec=spec, history_length=1, max_new_tokens=64,
                                   split="valid_unseen", verdict_head=verdict_head)
        with EnvPool("alfworld", "valid_unseen", str(root), workers=2, max_steps=STEP_LIMIT) as pool:
            results = list(rollout(backend, pool, jobs, settings, bank_memory))
        return results, [step["output"] for result in results for step in result.record["steps"]]

    def whole(outputs: list[str]) -> float:  # among the outputs that critique, those that reach </action>
        critiqued = [output for output in outputs if verdict_prefix(output, 1) is not None]
        return sum("</action>" in output for output in critiqued) / len(critiqued)

    _, free = play(None)  # the policy's own verdicts: what a forced one is measured against
    for intercept, words in ((-5.0, "does not apply"), (5.0, "applies")):
        results, outputs = play(dataclasses.replace(head, coef=[0.0] * len(head.coef), intercept=intercept,
                                                    threshold=0.0))
        judged = [(output, prefix) for output in outputs if (prefix := verdict_prefix(output, 1)) is not None]
        assert len(judged) >= len(outputs) // 2, "the warmed policy writes a critique"
        assert all(written_verdict(output, prefix) == words for output, prefix in judged)
        assert all(len(output) > len(f"{prefix} {words}") for output, prefix in judged), "the policy wrote on"
        # a 60-step policy ends about half its own outputs in a whole action; a verdict it did not choose may
        # lengthen what follows (64 tokens) but must not derail it
        assert whole(outputs) >= whole(free) / 2 > 0, (words, whole(outputs), whole(free))
        if words == "does not apply":
            assert sum(result.stats.head_verdicts for result in results) > 0

    tree["actor"]["adapter"] = str(warm)  # a folder with no head in it
    tree["decoding"]["verdict"] = "head"
    with pytest.raises(UserError, match="verdict_head.json: not found"):
        verdict_head(Config.model_validate(tree))
    (warm / "verdict_head.json").write_text('{"layer": 1, "mean": [0.0]}')
    with pytest.raises(UserError, match="verdict_head.json: not a verdict head"):
        verdict_head(Config.model_validate(tree))

    del tree["actor"]["adapter"]  # a tiny-warm policy trained without expbank sft: its head goes in its folder
    written = fit_policy_verdict_head(Config.model_validate(tree), [str(walks)], progress=False)
    loaded = verdict_head(Config.model_validate(tree))
    assert written == warm / "verdict_head.json" and not loaded.base and np.isfinite(loaded.threshold)
    states = HFBackend(str(warm)).hidden_states(rows.conversations, rows.prefixes, loaded.layer)
    assert np.mean(loaded.applies(states) == np.array(rows.labels)) >= 0.9
