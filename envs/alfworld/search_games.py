"""The ``search`` game family: small ALFWorld rooms where the goal object must be looked for.

Every game is one room with five surfaces and a garbage can, none of them closed. The goal object (a food
item) lies on one surface, other objects on the rest, and the task is ``pick_and_place_simple``: put the
object on another surface or in the garbage can. The planner's walkthrough goes straight to the object,
because it knows where it lies; a policy does not, so imitating the walkthrough teaches a guess, and only
trying (go to a surface, look, go on) wins reliably. That gap is what a GRPO learning check needs: a skill
reinforcement learning can add on top of imitation, on the real engine, with short observations a tiny
model reads quickly.

:func:`write_search_games` writes the family in the official data layout (``<root>/<split>/<task>/<trial>/``
with ``game.tw-pddl``), so it loads through ``data_dir`` like ``alfworld-download``'s folder. Which
(object, place, target) triples go to which split is fixed by ``seed``; the held-out splits of
:func:`search_triples` share no triple with ``train``.

The ``homes`` variant (:func:`home_triples`) keeps every food on its own surface (``HOMES``, as a kitchen
keeps bread on the table) and, with ``searching``, stores walkthroughs that look at the surfaces in a random
order until they find the object. Demonstrations of it show how to search and recover from an empty surface
but not where each food is kept; with a step limit that allows a look or two, imitation wins by luck and a
policy that has learnt the homes from reward wins every game. It was built for the CPU GRPO learning check;
what a tiny model learns from it in minutes is in docs/training.md, "Learning on a CPU".
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

from expbank.envs.alfworld.authoring import Scene, Task
from expbank.envs.alfworld.families import FamilyGame, write_family

SURFACES = ("CoffeeTable", "CounterTop", "DiningTable", "Shelf", "SideTable")
TARGETS = SURFACES + ("GarbageCan",)
GOAL_OBJECTS = ("Apple", "Bread", "Egg", "Potato", "Tomato")
DISTRACTORS = ("Book", "Bowl", "Cup", "Mug", "Plate", "Vase")
SPLIT_SIZES = {"valid_unseen": 48, "dev": 12}  # the rest of the 125 triples is train
SCENE_NUMBER = 960
HOMES = {"Apple": "CounterTop", "Bread": "DiningTable", "Egg": "Shelf", "Potato": "SideTable",
         "Tomato": "CoffeeTable"}
MOVED_HOMES = {"Apple": "DiningTable", "Bread": "Shelf", "Egg": "SideTable", "Potato": "CoffeeTable",
               "Tomato": "CounterTop"}  # another kitchen: every food kept somewhere else


def search_triples(seed: int = 0) -> dict[str, list[tuple[str, str, str]]]:
    """(object, surface it lies on, target) triples per split, shuffled by ``seed``."""
    triples = [(obj, place, target) for obj, place, target in itertools.product(GOAL_OBJECTS, SURFACES, TARGETS)
               if target != place]
    random.Random(seed).shuffle(triples)
    splits, start = {}, 0
    for split, size in SPLIT_SIZES.items():
        splits[split] = sorted(triples[start:start + size])
        start += size
    splits["train"] = sorted(triples[start:])
    return splits


def home_triples(variants: dict[str, int], targets: tuple[str, ...] = TARGETS,
                 homes: dict[str, str] = HOMES) -> dict[str, list[tuple[str, str, str]]]:
    """Each (food, target) goal ``variants[split]`` times per split, the food on its home in ``homes``
    (``targets``: the places food is put; all six give 25 goals, ``("GarbageCan",)`` five)."""
    goals = [(obj, homes[obj], target) for obj in GOAL_OBJECTS for target in targets if target != homes[obj]]
    return {split: [goal for goal in goals for _ in range(count)] for split, count in variants.items()}


def search_game(obj: str, place: str, target: str, rng: random.Random) -> tuple[Scene, Task]:
    """One game: ``obj`` on ``place``, one or two distractors on each other surface."""
    objects: dict[str, tuple[int, ...]] = {obj: (TARGETS.index(place),)}
    for index, surface in enumerate(SURFACES):
        if surface != place:
            for distractor in rng.sample(DISTRACTORS, rng.randint(1, 2)):
                objects[distractor] = objects.get(distractor, ()) + (index,)
    return Scene(SCENE_NUMBER, TARGETS, objects), Task("pick_and_place_simple", obj, target)


def walkthrough(obj: str, place: str, target: str, search_order: tuple[str, ...] = ()) -> list[str]:
    """A win in ALFWorld 0.4's command vocabulary: the shortest, or with ``search_order`` one that looks at
    those surfaces in turn until it reaches ``place``."""
    looks = list(search_order[:search_order.index(place)]) if search_order else []
    obj, place, target = obj.lower(), place.lower(), target.lower()
    return ([f"go to {surface.lower()} 1" for surface in looks]
            + [f"go to {place} 1", f"take {obj} 1 from {place} 1", f"go to {target} 1", f"move {obj} 1 to {target} 1"])


def write_search_games(root: Path, seed: int = 0, train_variants: int = 1, progress: bool = False,
                       triples: dict[str, list[tuple[str, str, str]]] | None = None, searching: bool = False,
                       home_first: float = 0.0) -> Path:
    """Write the whole family under ``root`` (train, dev, valid_unseen) with :func:`write_family`.

    ``train_variants`` games per train triple, each with other distractors (more demonstrations to imitate);
    ``triples`` replaces :func:`search_triples` (a few games for tests, or :func:`home_triples`);
    ``searching`` stores walkthroughs that look at the surfaces in a random order (drawn per game), which
    starts at the object's place with probability ``home_first`` (demonstrations that know the homes a little).
    An existing complete folder is returned as it is.
    """
    if (Path(root) / "COMPLETE").exists():
        return Path(root)
    rng = random.Random(seed)
    rows = [(split, i, triple) for split, triples in (triples or search_triples(seed)).items()
            for i, triple in enumerate(t for t in triples for _ in range(train_variants if split == "train" else 1))]
    games = []
    for split, index, (obj, place, target) in rows:
        scene, task = search_game(obj, place, target, rng)
        order = tuple(rng.sample(SURFACES, len(SURFACES))) if searching else ()
        if home_first and rng.random() < home_first:
            order = (place,) + tuple(s for s in order if s != place)
        games.append(FamilyGame(split, f"trial_S{seed}_{split[:2]}{index:03d}", scene, task,
                                walkthrough(obj, place, target, order)))
    meta = {"seed": seed, "train_variants": train_variants, "searching": searching, "home_first": home_first}
    return write_family(Path(root), games, meta, progress, desc="search games")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="write the ALFWorld search game family (official data layout)")
    parser.add_argument("out", type=Path, help="folder to write; pass it as env.data_dir")
    parser.add_argument("--seed", type=int, default=0, help="which triples go to which split, and distractors")
    parser.add_argument("--train-variants", type=int, default=1, help="games per train triple")
    parser.add_argument("--homes", action="store_true",
                        help="the homes variant: every food on its own surface, searching walkthroughs "
                             "(train: --train-variants games per goal; dev: 1; valid_unseen: --held-out-variants)")
    parser.add_argument("--held-out-variants", type=int, default=2, help="with --homes: valid_unseen games per goal")
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS),
                        help="with --homes: where the food may have to go (GarbageCan alone: 5 goals)")
    args = parser.parse_args()
    if args.homes:
        triples = home_triples({"train": args.train_variants, "dev": 1, "valid_unseen": args.held_out_variants},
                               tuple(args.targets))
        root = write_search_games(args.out, args.seed, progress=True, triples=triples, searching=True)
    else:
        root = write_search_games(args.out, args.seed, args.train_variants, progress=True)
    print(f"{root}: {json.loads((root / 'COMPLETE').read_text())['games']} games")


if __name__ == "__main__":
    main()
