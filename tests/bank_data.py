"""Hand-written ALFWorld and WebShop episodes for the bank tests (docs/design.md §3 records)."""

from __future__ import annotations

from expbank.trajectory import Episode, Step

ROOM = ("-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, "
        "you see a cabinet 1, a countertop 1, a countertop 2, a fridge 1, a microwave 1, a sinkbasin 1, "
        "and a diningtable 1.\n\nYour task is to: {goal}")


def episode(env: str, task_type: str, goal: str, pairs: list[tuple[str, str]], success: bool,
            task_id: str = "t0", policy: str = "expert", seed: int = 0, invalid: tuple[int, ...] = (),
            split: str = "train", score: float | None = None) -> Episode:
    steps = [Step(t=t, observation=obs, action=act, invalid=t in invalid) for t, (obs, act) in enumerate(pairs)]
    return Episode(
        episode_id=f"{env}-{split}-{task_id}-{policy}-none-s{seed}", run_id="test", arm="none", env=env,
        split=split, task_id=task_id, task_type=task_type, task=goal, policy=policy, seed=seed, steps=steps,
        success=success, score=(1.0 if success else 0.0) if score is None else score, num_steps=len(steps),
        num_invalid=len(invalid))


def alf_transform(verb: str, obj: str = "apple", tool: str | None = None, dest: str = "diningtable 1",
                  task_id: str = "t0", seed: int = 0, where: str = "countertop 1") -> Episode:
    """A successful heat / cool / clean episode: find, take, transform, place."""
    tool = tool or {"heat": "microwave 1", "cool": "fridge 1", "clean": "sinkbasin 1"}[verb]
    task_type = {"heat": "pick_heat_then_place_in_recep", "cool": "pick_cool_then_place_in_recep",
                 "clean": "pick_clean_then_place_in_recep"}[verb]
    goal = f"{verb} some {obj} and put it in {dest.split()[0]}."
    pairs = [
        (ROOM.format(goal=goal), f"go to {where}"),
        (f"You arrive at {where}. On the {where}, you see a {obj} 1, and a mug 2.", f"take {obj} 1 from {where}"),
        (f"You pick up the {obj} 1 from the {where}.", f"go to {tool}"),
        (f"You arrive at {tool}. The {tool} is closed.", f"{verb} {obj} 1 with {tool}"),
        (f"You {verb} the {obj} 1 using the {tool}.", f"go to {dest}"),
        (f"You arrive at {dest}. On the {dest}, you see a fork 1.", f"move {obj} 1 to {dest}"),
    ]
    return episode("alfworld", task_type, goal, pairs, True, task_id=task_id, seed=seed)


def alf_place(obj: str = "mug", dest: str = "cabinet 1", task_id: str = "p0") -> Episode:
    goal = f"put some {obj} on {dest.split()[0]}."
    pairs = [
        (ROOM.format(goal=goal), "go to countertop 2"),
        (f"You arrive at countertop 2. On the countertop 2, you see a {obj} 1.", f"take {obj} 1 from countertop 2"),
        (f"You pick up the {obj} 1 from the countertop 2.", f"go to {dest}"),
        (f"You arrive at {dest}. The {dest} is open. In it, you see nothing.", f"move {obj} 1 to {dest}"),
    ]
    return episode("alfworld", "pick_and_place_simple", goal, pairs, True, task_id=task_id)


def alf_failure(task_id: str = "f0", seed: int = 0) -> Episode:
    goal = "put a clean mug in countertop."
    pairs = [(ROOM.format(goal=goal), "go to cabinet 1"),
             ("You arrive at cabinet 1. The cabinet 1 is closed.", "take mug 1 from cabinet 1"),
             ("Nothing happens.", "take mug 1 from cabinet 1"),
             ("Nothing happens.", "go to cabinet 1"),
             ("You arrive at cabinet 1. The cabinet 1 is closed.", "go to cabinet 1"),
             ("You arrive at cabinet 1. The cabinet 1 is closed.", "take fork 1 from cabinet 1"),
             ("You pick up the fork 1 from the cabinet 1.", "move fork 1 to sinkbasin 1")]
    return episode("alfworld", "pick_clean_then_place_in_recep", goal, pairs, False, task_id=task_id,
                   policy="random", seed=seed, invalid=(1, 2))


WEB_GOAL = "i need a long lasting 6.76 fl oz bottle of l'eau d'issey, and price lower than 100.00 dollars"


def web_success(task_id: str = "12") -> Episode:
    goal = WEB_GOAL
    pairs = [
        (f"WebShop [SEP] Instruction: [SEP] {goal} [SEP] Search", "search[l'eau d'issey 6.76 fl oz]"),
        (f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > "
         "[SEP] B000VOHH8I [SEP] L'eau D'issey By Issey Miyake for Men Eau De Toilette Spray, 6.7 Fl Oz "
         "[SEP] $64.98", "click[b000vohh8i]"),
        (f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] "
         "6.76 fl oz (pack of 1) [SEP] L'eau D'issey [SEP] Price: $64.98 [SEP] Rating: N.A. [SEP] "
         "Description [SEP] Features [SEP] Reviews [SEP] Buy Now", "click[6.76 fl oz (pack of 1)]"),
        (f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 2.5 fl oz [SEP] "
         "6.76 fl oz (pack of 1) [SEP] Buy Now", "click[buy now]"),
    ]
    return episode("webshop", "webshop", goal, pairs, True, task_id=task_id)


def web_failure(task_id: str = "13") -> Episode:
    goal = "i want a blue cotton t-shirt in size large, and price lower than 30.00 dollars"
    pairs = [
        (f"WebShop [SEP] Instruction: [SEP] {goal} [SEP] Search", "search[t-shirt]"),
        (f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > "
         "[SEP] B07XYZ1234 [SEP] Red Polyester Shirt [SEP] $12.00", "click[b07xyz1234]"),
        (f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] small [SEP] large "
         "[SEP] Buy Now", "click[buy now]"),
    ]
    return episode("webshop", "webshop", goal, pairs, False, task_id=task_id, policy="random", score=0.25)
