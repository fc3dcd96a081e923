"""The ``households`` game family: rooms where where a food is kept can only be known from past episodes.

Each household is one room (a scene number of its own) with its own receptacles, some closed (cabinets,
drawers, a fridge, a microwave), so the first observation ("you see a cabinet 2, a cabinet 1, a countertop
1, …") tells households apart the way a real room does. Households draw their receptacles from one small
pool, so many look alike and retrieval has to tell them apart. Each household keeps each food of
:data:`FOODS` in one fixed place, drawn uniformly from its receptacles: the egg is always in drawer 1 in one
household and on shelf 2 in another. Every task is ``pick_and_place_simple``. With the step limit of
:data:`STEP_LIMIT` actions, a food on an open surface allows one wrong look (go, take, go, move = 4) and a
food behind a door none (go, open, take, go, move = 5).

Splits (:func:`household_games`):

- ``train`` / ``dev``: the *training households* (the policy's SFT records, GRPO games and model selection);
  ``train`` puts each food in the garbage can, ``dev`` puts some foods on a surface.
- ``valid_unseen``: the *held-out households* (never trained in), each food into the garbage can.
- ``visits``: in every household, each food carried to a surface: the expert's walkthroughs of these other
  tasks are the bank's only source for the held-out households and are never trained on.
- ``searches``: the ``train`` tasks again, in the same order, walked as a policy without memory would have to
  (:func:`search_walkthrough`: look where training households most often keep the food, miss, look again).
  The SFT records of episodes shown no applicable entry come from these walks (``WarmRecipe.search_split``),
  so a policy learns to look again after a miss instead of taking a food that is not there.
- ``warned``: the ``train`` tasks again, in the same order, walked as a second attempt after a first one
  missed (:func:`search_walkthrough` with ``skipped``: the ``searches`` walk without its first one or two misses, a seeded draw;
  the straight walk where the first look finds the food). The SFT records of ``WarmRecipe``'s warned draws show
  the not-found warning the bank writes of the first attempt (the ``searches`` walk cut after those misses) and
  this walk as the answer, so a policy learns to look elsewhere than a warning of its room says.
- ``stream``: the held-out households' tasks again, ``stream_rounds`` times, for online evaluation (a bank that
  learns from the actor's own episodes): round r holds every (household, food) pair once, in a seeded order,
  with the distractors re-placed, so each occurrence is a game (and task id) of its own while the food stays
  where that household keeps it. Every pair first appears in round 1.
- ``moved`` / ``unmoved``: the stale-memory benchmark's stream after the ``stream`` split, ``moved_rounds``
  rounds of it drawn the same way. In ``moved`` every held-out household has rearranged its food: each food
  lies in another receptacle of its room than before (one new place per household and food, for all
  rounds); ``unmoved`` has the same tasks in the same order with the same distractors and every food where it
  always was, so the two splits differ by the move alone.

GRPO plays :func:`practice_games`, a data folder of its own: 16 more rooms, neither trained in by SFT nor
held out, with their own ``train`` and ``visits`` splits.

So a policy without memory cannot know a held-out household's placements, and a bank built from the visits
can. :func:`no_memory_ceiling` is the best any policy computable from the training households does on the
held-out panel (it ranks places by how often the food was kept there in training households). Everything is
fixed by ``seed``; docs/training.md ("The households panel") says why the family measures what it measures.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from expbank.envs.alfworld.authoring import Scene, Task
from expbank.envs.alfworld.families import FamilyGame, write_family

FOODS = ("Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato")
SURFACES = ("CoffeeTable", "CounterTop", "DiningTable", "Desk", "Shelf", "SideTable")
CLOSED = ("Cabinet", "Drawer", "Fridge", "Microwave")  # opened before their contents show
SINGLE = ("Fridge", "Microwave")  # at most one per room
DISTRACTORS = ("Book", "Bowl", "Cup", "Mug", "Plate", "Vase")
TARGET = "GarbageCan"
STEP_LIMIT = 5
FIRST_SCENE = 700  # household i is scene FIRST_SCENE + i


@dataclass(frozen=True)
class Recipe:
    """What determines a households build (its fields go into ``COMPLETE``)."""

    seed: int = 0
    train_households: int = 24
    held_out_households: int = 8
    foods: int = len(FOODS)
    dev_games: int = 12
    stream_rounds: int = 4
    moved_rounds: int = 0  # rounds of the ``moved`` and ``unmoved`` splits (0: neither is written)


@dataclass(frozen=True)
class Household:
    scene: Scene
    places: dict[str, int]  # food -> receptacle index in scene.receptacles

    @property
    def number(self) -> int:
        return self.scene.number

    def place(self, food: str) -> str:
        """``"drawer 1"``: the receptacle as ALFWorld names it."""
        return receptacle_names(self.scene)[self.places[food]]


def receptacle_names(scene: Scene) -> list[str]:
    """The names ALFWorld shows for ``scene.receptacles``, in order.

    ALFWorld's demangler numbers the instances of a class backwards (of ``Drawer_bar_1`` and ``Drawer_bar_2``,
    the first is "drawer 2"); under ten instances a class, sorted ids are in the authored order.
    """
    classes = [spec.rstrip("*") for spec in scene.receptacles]
    totals, seen = Counter(classes), Counter()
    names = []
    for cls in classes:
        seen[cls] += 1
        names.append(f"{cls.lower()} {totals[cls] - seen[cls] + 1}")
    return names


def _room(rng: random.Random) -> tuple[str, ...]:
    """3-4 kinds of surface (1-2 of each) and 2-3 kinds of closed receptacle, plus the garbage can."""
    receptacles = []
    for cls in sorted(rng.sample(SURFACES, rng.randint(3, 4))):
        receptacles += [cls] * rng.randint(1, 2)
    for cls in sorted(rng.sample(CLOSED, rng.randint(2, 3))):
        receptacles += [f"{cls}*"] * (1 if cls in SINGLE else rng.randint(1, 2))
    return (*receptacles, TARGET)


def households(recipe: Recipe) -> list[Household]:
    """Training households first, then held-out ones; no two share a receptacle layout."""
    rng = random.Random(recipe.seed)
    foods = FOODS[:recipe.foods]
    found: list[Household] = []
    layouts: set[tuple[str, ...]] = set()
    while len(found) < recipe.train_households + recipe.held_out_households:
        receptacles = _room(rng)
        if receptacles in layouts:
            continue
        layouts.add(receptacles)
        holders = [i for i, r in enumerate(receptacles) if r != TARGET]
        places = {food: rng.choice(holders) for food in foods}
        objects: dict[str, tuple[int, ...]] = {food: (place,) for food, place in places.items()}
        for distractor in rng.sample(DISTRACTORS, 3):
            objects[distractor] = (rng.choice(holders),)
        found.append(Household(Scene(FIRST_SCENE + len(found), receptacles, objects), places))
    return found


def walkthrough(household: Household, food: str, target: str) -> list[str]:
    """The shortest win: go to the food's place (open it if closed), take it, go to the target, put it there."""
    place, obj = household.place(food), f"{food.lower()} 1"
    return _look(household, household.places[food]) + [f"take {obj} from {place}", f"go to {target.lower()} 1",
                                                       f"move {obj} to {target.lower()} 1"]


def _look(household: Household, index: int) -> list[str]:
    """Go to the receptacle and, if it is closed, open it: what it takes to see what lies there."""
    name = receptacle_names(household.scene)[index]
    return [f"go to {name}"] + ([f"open {name}"] if household.scene.receptacles[index].endswith("*") else [])


def search_order(household: Household, food: str, frequency: Counter) -> list[int]:
    """The room's receptacles (indices; not the target) in the order a policy without memory looks: most often
    the food's place in the training households first (``frequency`` counts names such as ``"drawer 1"``),
    ties cheapest look first (open surfaces before closed receptacles), then by name."""
    names = receptacle_names(household.scene)
    return sorted((i for i, r in enumerate(household.scene.receptacles) if r != TARGET),
                  key=lambda i: (-frequency[names[i]], _look_cost(household.scene, i), names[i]))


def search_walkthrough(household: Household, food: str, target: str, frequency: Counter,
                       skipped: int = 0) -> list[str]:
    """A win without memory: go to the receptacles in :func:`search_order` (opening closed ones) until the food
    shows, then take it, go to the target and put it there. Longer than the step limit whenever the food is
    not among the first looks: the walk is for SFT records (each look and miss is a turn), not a panel game.
    ``skipped`` leaves out the first misses (fewer where it has fewer): the second attempt of a policy told that
    the food was not where the first attempt looked (the ``warned`` split)."""
    order = search_order(household, food, frequency)
    misses = order[:order.index(household.places[food])][skipped:]
    return [action for index in misses for action in _look(household, index)] + walkthrough(household, food, target)


def training_frequency(homes: list[Household], foods: tuple[str, ...]) -> dict[str, Counter]:
    """For each food, how often ``homes`` keep it in each receptacle (by name, ``"drawer 1"``)."""
    return {food: Counter(home.place(food) for home in homes) for food in foods}


def _surface_targets(household: Household, food: str) -> list[str]:
    """Surface classes of the room the food may be carried to (not the class it already lies on)."""
    here = household.scene.receptacles[household.places[food]]
    return sorted({r for r in household.scene.receptacles if r in SURFACES and r != here})


def _add_game(games: list[FamilyGame], split: str, home: Household, food: str, target: str,
              steps: list[str] | None = None) -> None:
    """Append the game of carrying ``food`` to ``target`` in ``home``, its trial named by room, split and count;
    its walkthrough ``steps`` (default: the shortest, :func:`walkthrough`)."""
    trial = f"trial_H{home.number}_{split[:2]}{sum(g.split == split for g in games):03d}"
    games.append(FamilyGame(split, trial, home.scene, Task("pick_and_place_simple", food, target),
                            steps or walkthrough(home, food, target)))


def household_games(recipe: Recipe) -> list[FamilyGame]:
    """Every game of the family (see the module docstring for the splits)."""
    rng = random.Random(recipe.seed + 1)
    homes = households(recipe)
    foods = FOODS[:recipe.foods]
    training = homes[:recipe.train_households]
    games: list[FamilyGame] = []

    visit_targets = {}
    for home in homes:
        for food in foods:
            visit_targets[home.number, food] = rng.choice(_surface_targets(home, food))
    frequency = training_frequency(training, foods)
    warned_rng = random.Random(recipe.seed + 5)  # its own draws: the other splits stay as they were
    for home in training:
        for food in foods:
            _add_game(games, "train", home, food, TARGET)
            _add_game(games, "searches", home, food, TARGET, search_walkthrough(home, food, TARGET, frequency[food]))
            _add_game(games, "warned", home, food, TARGET,
                      search_walkthrough(home, food, TARGET, frequency[food], warned_rng.randint(1, 2)))
    pairs = [(home, food) for home in training for food in foods]
    for home, food in rng.sample(pairs, min(recipe.dev_games, len(pairs))):
        others = [t for t in _surface_targets(home, food) if t != visit_targets[home.number, food]]
        _add_game(games, "dev", home, food, rng.choice(others or _surface_targets(home, food)))
    for home in homes[recipe.train_households:]:
        for food in foods:
            _add_game(games, "valid_unseen", home, food, TARGET)
    for home in homes:
        for food in foods:
            _add_game(games, "visits", home, food, visit_targets[home.number, food])
    stream_rng = random.Random(recipe.seed + 2)  # its own draws: the other splits stay as they were
    held_out = [(home, food) for home in homes[recipe.train_households:] for food in foods]
    for _ in range(recipe.stream_rounds):
        for home, food in stream_rng.sample(held_out, len(held_out)):
            _add_game(games, "stream", _rearranged(home, stream_rng), food, TARGET)
    move_rng = random.Random(recipe.seed + 3)  # its own draws again
    new_places = {home.number: _moved_places(home, move_rng)
                  for home in homes[recipe.train_households:]} if recipe.moved_rounds else {}
    for _ in range(recipe.moved_rounds):
        for home, food in move_rng.sample(held_out, len(held_out)):
            shown = _rearranged(home, move_rng)
            _add_game(games, "unmoved", shown, food, TARGET)
            _add_game(games, "moved", _with_places(shown, new_places[home.number]), food, TARGET)
    return games


PRACTICE_HOUSEHOLDS = 16


def practice_households(recipe: Recipe, count: int = PRACTICE_HOUSEHOLDS, food_places: int = 0) -> list[Household]:
    """``count`` more rooms, drawn after the family's own (the same draws continued, so the family's households
    are unchanged and every practice room's layout differs from theirs).

    With ``food_places`` each room keeps all its foods in only that many of its receptacles (its own draws),
    so a food mostly lies beside other foods, often listed before it: a bank policy that rejects the entry
    retrieved at the place and takes the first food it sees loses there, a mistake GRPO seldom meets in rooms
    whose foods lie apart (docs/benchmarks.md, "GRPO at seed 2")."""
    family = recipe.train_households + recipe.held_out_households
    homes = households(replace(recipe, held_out_households=recipe.held_out_households + count))[family:]
    if not food_places:
        return homes
    rng = random.Random(recipe.seed + 6)  # its own draws: the rooms and their distractors stay as they were
    crowded = []
    for home in homes:
        holders = [i for i, r in enumerate(home.scene.receptacles) if r != TARGET]
        shared = rng.sample(holders, min(food_places, len(holders)))
        crowded.append(_with_places(home, {food: rng.choice(shared) for food in home.places}))
    return crowded


def practice_games(recipe: Recipe, count: int = PRACTICE_HOUSEHOLDS, food_places: int = 0) -> list[FamilyGame]:
    """GRPO's games, a family of their own (``write_practice``): ``count`` rooms no SFT record was made in
    (:func:`practice_households`, with its ``food_places``), in ``train`` (each food into the garbage can) and
    ``visits`` (each food carried to a surface: the practice bank's source). The folder has no ``dev`` split,
    so ALFWorld's loader keeps every ``DEV_EVERY``-th ``train`` game as ``dev`` (``envs/alfworld/games.list_games``).

    In the training households a bank policy can win from what it remembers of the room (it was trained there),
    so GRPO would reward ignoring the block; in rooms it never saw only the retrieved entry says where the food
    is, as on the held-out panel, so the reward credits reading it. No held-out household appears.
    """
    rng = random.Random(recipe.seed + 4)  # its own draws: the households family stays as it was
    games: list[FamilyGame] = []
    for home in practice_households(recipe, count, food_places):
        for food in FOODS[:recipe.foods]:
            _add_game(games, "train", home, food, TARGET)
            _add_game(games, "visits", home, food, rng.choice(_surface_targets(home, food)))
    return games


def write_practice(root: Path, recipe: Recipe = Recipe(), count: int = PRACTICE_HOUSEHOLDS,
                   progress: bool = False, food_places: int = 0) -> Path:
    """Write :func:`practice_games` under ``root`` (a data folder of its own)."""
    return write_family(Path(root), practice_games(recipe, count, food_places),
                        {"family": "households-practice", "rooms": count, "food_places": food_places,
                         **asdict(recipe)}, progress, desc="practice games")


def stream_task_ids(recipe: Recipe, split: str = "stream") -> list[str]:
    """A stream split's task ids in stream order (round by round: ``stream``, ``moved`` or ``unmoved``), for
    ``panel.task_ids`` of an online evaluation with ``memory.online_order: panel`` (a split lists its task ids
    sorted, which loses the rounds)."""
    return [f"{g.task.folder_name(g.scene)}/{g.trial}" for g in household_games(recipe) if g.split == split]


def _rearranged(home: Household, rng: random.Random) -> Household:
    """The household with its distractors put elsewhere; every food stays where the household keeps it."""
    holders = [i for i, r in enumerate(home.scene.receptacles) if r != TARGET]
    objects = {name: (rng.choice(holders),) if name in DISTRACTORS else where
               for name, where in home.scene.objects.items()}
    return Household(Scene(home.number, home.scene.receptacles, objects), home.places)


def _moved_places(home: Household, rng: random.Random) -> dict[str, int]:
    """A new place for each food of ``home``: another receptacle of the room (not the garbage can)."""
    holders = [i for i, r in enumerate(home.scene.receptacles) if r != TARGET]
    return {food: rng.choice([i for i in holders if i != where]) for food, where in home.places.items()}


def _with_places(home: Household, places: dict[str, int]) -> Household:
    """The household with its foods at ``places`` (distractors where they are)."""
    objects = {name: (places[name],) if name in places else where for name, where in home.scene.objects.items()}
    return Household(Scene(home.number, home.scene.receptacles, objects), places)


def write_households(root: Path, recipe: Recipe = Recipe(), progress: bool = False) -> Path:
    """Write the family under ``root`` (official data layout; pass it as ``env.data_dir``)."""
    return write_family(Path(root), household_games(recipe), {"family": "households", **asdict(recipe)},
                        progress, desc="households games")


def _look_cost(scene: Scene, index: int) -> int:
    return 2 if scene.receptacles[index].endswith("*") else 1


def no_memory_ceiling(recipe: Recipe, practice: int = 0, food_places: int = 0) -> dict:
    """The best no-memory policy computable from the training households, played out on the held-out panel.

    For each food it ranks the receptacles (``"drawer 1"``) by how often the training households kept that
    food there (:func:`search_order`); in a held-out room it looks at the room's receptacles in that order
    while the step limit still leaves the three steps a find needs (take, go, put). The returned
    ``rate`` is the share of held-out games it wins: no policy trained only on training households can know
    more about a held-out room than these frequencies. ``practice``: count that many practice rooms
    (:func:`practice_households`, GRPO's, with their ``food_places``) as training households too.
    """
    homes = households(recipe)
    foods = FOODS[:recipe.foods]
    training, held_out = homes[:recipe.train_households], homes[recipe.train_households:]
    training += practice_households(recipe, practice, food_places) if practice else []
    frequency = training_frequency(training, foods)
    won = 0
    for home in held_out:
        for food in foods:
            steps = 0
            for index in search_order(home, food, frequency[food]):
                steps += _look_cost(home.scene, index)
                if steps + 3 > STEP_LIMIT:
                    break
                if index == home.places[food]:
                    won += 1
                    break
    games = len(held_out) * len(foods)
    return {"won": won, "games": games, "rate": won / games if games else 0.0}
