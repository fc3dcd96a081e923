"""The bundled ALFWorld games, described as scenes and tasks (authored for expbank, not ALFRED data).

Seen scenes (9xx numbers 901-905) serve ``train``, ``dev`` and ``valid_seen``; ``valid_unseen`` uses
scenes 951-953, whose room layouts and goal object/receptacle pairings occur in no ``train`` game.
``scripts/author_alfworld_games.py`` turns this file into ``envs/data/alfworld/`` (and plans each
game's walkthrough with the real planner at authoring time).
"""

from __future__ import annotations

from expbank.envs.alfworld.authoring import Scene, Task

KITCHEN_A = Scene(
    901,
    ("CounterTop", "CounterTop", "Cabinet*", "Cabinet*", "Cabinet*", "Drawer*", "Drawer*", "Fridge*",
     "Microwave*", "SinkBasin", "StoveBurner", "StoveBurner", "DiningTable", "GarbageCan"),
    {"Apple": (0, 13), "Mug": (2, 12), "Potato": (7,), "Tomato": (12,), "Egg": (7,), "Bread": (1,),
     "Plate": (3,), "Cup": (12,), "Knife": (5,), "Fork": (6,), "Spoon": (12,), "Pan": (10,), "Lettuce": (7,),
     "Bowl": (4,), "SaltShaker": (0,), "PepperShaker": (1,), "DishSponge": (9,)},
)
KITCHEN_B = Scene(
    902,
    ("CounterTop", "CounterTop", "CounterTop", "Cabinet*", "Cabinet*", "Cabinet*", "Cabinet*", "Drawer*",
     "Drawer*", "Drawer*", "Fridge*", "Microwave*", "SinkBasin", "StoveBurner", "Shelf", "Shelf", "GarbageCan"),
    {"Apple": (10,), "Mug": (14, 5), "Potato": (2,), "Tomato": (10, 1), "Egg": (0,), "Bread": (2,),
     "Plate": (6,), "Cup": (3,), "ButterKnife": (7,), "Spatula": (8,), "Pot": (13,), "Lettuce": (0,),
     "Bowl": (15,), "Kettle": (1,), "WineBottle": (4,), "SoapBottle": (12,), "Vase": (14,)},
)
LIVING_ROOM = Scene(
    903,
    ("Sofa", "ArmChair", "CoffeeTable", "SideTable", "SideTable", "Shelf", "Shelf", "Drawer*", "Drawer*",
     "Cabinet*", "TVStand", "GarbageCan"),
    {"DeskLamp": (3,), "Book": (2, 6), "Newspaper": (0,), "RemoteControl": (2, 10), "KeyChain": (7,),
     "CreditCard": (4,), "Pillow": (1,), "Laptop": (0,), "CellPhone": (8,), "Vase": (5,), "Statue": (5,),
     "Box": (9,)},
)
BEDROOM = Scene(
    904,
    ("Bed", "Desk", "SideTable", "SideTable", "Dresser", "Drawer*", "Drawer*", "Drawer*", "Shelf", "Shelf",
     "GarbageCan", "Safe*"),
    {"DeskLamp": (1,), "Pillow": (0,), "Book": (2, 8), "CD": (5,), "Pen": (1,), "Pencil": (4,),
     "AlarmClock": (3,), "CellPhone": (0, 6), "KeyChain": (11,), "Laptop": (1,), "Mug": (9,),
     "CreditCard": (7,)},
)
BATHROOM = Scene(
    905,
    ("SinkBasin", "SinkBasin", "CounterTop", "Cabinet*", "Cabinet*", "Cabinet*", "Drawer*", "Drawer*",
     "Toilet", "Shelf", "Shelf", "GarbageCan"),
    {"SoapBar": (2, 8), "Cloth": (3, 9), "SprayBottle": (10,), "ToiletPaper": (8,), "Candle": (2,),
     "DishSponge": (6,), "SoapBottle": (9,), "TissueBox": (10,)},
)

# Unseen rooms: layouts and goal pairings that no train game has.
KITCHENETTE = Scene(
    951,
    ("CounterTop", "Cabinet*", "Cabinet*", "Cabinet*", "Cabinet*", "Cabinet*", "Drawer*", "Drawer*",
     "Drawer*", "Drawer*", "Fridge*", "Microwave*", "SinkBasin", "StoveBurner", "StoveBurner", "StoveBurner",
     "StoveBurner", "DiningTable", "DiningTable", "Shelf", "GarbageCan"),
    {"Egg": (17,), "Cup": (4, 18), "Potato": (0,), "Apple": (10,), "Tomato": (19,), "Bread": (18,),
     "Plate": (1,), "Mug": (2,), "Pan": (14,), "Pot": (13,), "Lettuce": (10,), "Bowl": (5,),
     "Knife": (6,), "Fork": (7,), "Spoon": (8,), "SaltShaker": (17,), "Kettle": (15,)},
)
STUDY = Scene(
    952,
    ("Desk", "Desk", "Shelf", "Shelf", "Shelf", "Drawer*", "Drawer*", "Drawer*", "Drawer*", "Cabinet*",
     "Sofa", "SideTable", "GarbageCan", "Safe*"),
    {"DeskLamp": (1,), "CD": (2, 7), "Pen": (0,), "Pencil": (5,), "Book": (4,), "KeyChain": (11,),
     "CreditCard": (9, 13), "CellPhone": (10,), "Laptop": (0,), "AlarmClock": (3,), "Box": (12,),
     "Newspaper": (10,)},
)
UTILITY_ROOM = Scene(
    953,
    ("SinkBasin", "CounterTop", "CounterTop", "Cabinet*", "Cabinet*", "Drawer*", "Shelf", "Shelf", "Shelf",
     "GarbageCan", "Fridge*", "Microwave*", "SideTable"),
    {"Cloth": (6,), "SoapBar": (7, 1), "DishSponge": (2,), "SprayBottle": (8,), "Candle": (12,),
     "Mug": (3, 12), "Cup": (4,), "Plate": (1,), "Bowl": (8,), "Apple": (10,), "Potato": (2,),
     "WineBottle": (11,)},
)

PICK, LOOK, CLEAN, HEAT, COOL, TWO = (
    "pick_and_place_simple", "look_at_obj_in_light", "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep", "pick_two_obj_and_place",
)

# split -> list of (scene, task); trial ids are assigned in this order.
BUNDLED_GAMES: dict[str, list[tuple[Scene, Task]]] = {
    "train": [
        (KITCHEN_A, Task(PICK, "Apple", "Fridge")),
        (KITCHEN_B, Task(PICK, "Bread", "Shelf")),
        (LIVING_ROOM, Task(PICK, "KeyChain", "Sofa")),
        (BEDROOM, Task(PICK, "CellPhone", "Dresser")),
        (LIVING_ROOM, Task(LOOK, "Book", toggle="DeskLamp")),
        (LIVING_ROOM, Task(LOOK, "CreditCard", toggle="DeskLamp")),
        (BEDROOM, Task(LOOK, "Pencil", toggle="DeskLamp")),
        (BEDROOM, Task(LOOK, "AlarmClock", toggle="DeskLamp")),
        (KITCHEN_A, Task(CLEAN, "Mug", "CounterTop")),
        (KITCHEN_B, Task(CLEAN, "Plate", "Cabinet")),
        (BATHROOM, Task(CLEAN, "Cloth", "Shelf")),
        (KITCHEN_A, Task(CLEAN, "Fork", "DiningTable")),
        (KITCHEN_A, Task(HEAT, "Potato", "DiningTable")),
        (KITCHEN_B, Task(HEAT, "Mug", "CounterTop")),
        (KITCHEN_A, Task(HEAT, "Bread", "CounterTop")),
        (KITCHEN_B, Task(HEAT, "Tomato", "Shelf")),
        (KITCHEN_A, Task(COOL, "Tomato", "CounterTop")),
        (KITCHEN_B, Task(COOL, "Cup", "Shelf")),
        (KITCHEN_A, Task(COOL, "Bowl", "DiningTable")),
        (KITCHEN_B, Task(COOL, "WineBottle", "CounterTop")),
        (KITCHEN_A, Task(TWO, "Apple", "CounterTop")),
        (LIVING_ROOM, Task(TWO, "RemoteControl", "Sofa")),
        (BEDROOM, Task(TWO, "Book", "Desk")),
        (BATHROOM, Task(TWO, "SoapBar", "Cabinet")),
    ],
    "dev": [
        (KITCHEN_B, Task(PICK, "Lettuce", "Shelf")),  # on a countertop at reset: "in countertop" was won there
        (BEDROOM, Task(LOOK, "CD", toggle="DeskLamp")),
        (BATHROOM, Task(CLEAN, "SoapBar", "CounterTop")),
        (KITCHEN_A, Task(HEAT, "Egg", "CounterTop")),
        (KITCHEN_B, Task(COOL, "Potato", "CounterTop")),
        (KITCHEN_B, Task(TWO, "Tomato", "Fridge")),
    ],
    "valid_seen": [
        (KITCHEN_A, Task(PICK, "Spoon", "Drawer")),
        (LIVING_ROOM, Task(PICK, "Vase", "CoffeeTable")),
        (LIVING_ROOM, Task(LOOK, "RemoteControl", toggle="DeskLamp")),
        (BEDROOM, Task(LOOK, "Book", toggle="DeskLamp")),
        (KITCHEN_B, Task(CLEAN, "Bowl", "Shelf")),
        (BATHROOM, Task(CLEAN, "Cloth", "CounterTop")),
        (KITCHEN_A, Task(HEAT, "Apple", "Fridge")),
        (KITCHEN_B, Task(HEAT, "Egg", "Shelf")),
        (KITCHEN_A, Task(COOL, "Mug", "Cabinet")),
        (KITCHEN_B, Task(COOL, "Lettuce", "Shelf")),
        (KITCHEN_A, Task(TWO, "Mug", "CounterTop")),
        (BEDROOM, Task(TWO, "CellPhone", "Bed")),
    ],
    "valid_unseen": [
        (KITCHENETTE, Task(PICK, "Kettle", "DiningTable")),
        (STUDY, Task(PICK, "Newspaper", "SideTable")),
        (STUDY, Task(LOOK, "CD", toggle="DeskLamp")),
        (STUDY, Task(LOOK, "KeyChain", toggle="DeskLamp")),
        (KITCHENETTE, Task(CLEAN, "Spoon", "DiningTable")),
        (UTILITY_ROOM, Task(CLEAN, "DishSponge", "Shelf")),
        (KITCHENETTE, Task(HEAT, "Plate", "Shelf")),
        (UTILITY_ROOM, Task(HEAT, "Cup", "SideTable")),
        (KITCHENETTE, Task(COOL, "Pan", "StoveBurner")),
        (UTILITY_ROOM, Task(COOL, "Apple", "Shelf")),
        (KITCHENETTE, Task(TWO, "Cup", "Cabinet")),
        (STUDY, Task(TWO, "CreditCard", "Drawer")),
    ],
}
