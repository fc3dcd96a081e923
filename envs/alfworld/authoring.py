"""Author ALFWorld games from a small Python description of scenes and tasks.

A :class:`Scene` lists receptacles (``"Fridge*"``: openable, closed at start) and where each object
lies; a :class:`Task` names the task type and its targets. :func:`write_game_source` turns the two into
the files ALFWorld's own data holds for a game (``initial_state.pddl`` + ``traj_data.json``), using the
goal formulas of the installed ``alfworld.gen.goal_library``, so a folder of authored games is laid out
exactly like ``alfworld-download``'s and can also be processed by ``alfworld-generate``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expbank.envs.alfworld.engine import tw_engine

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)

# Object properties, following ALFRED's object classes.
HEATABLE = {"Apple", "Bread", "Cup", "Egg", "Mug", "Plate", "Potato", "Tomato"}
COOLABLE = HEATABLE | {"Bowl", "Lettuce", "Pan", "Pot", "WineBottle"}
CLEANABLE = {"Apple", "Bowl", "ButterKnife", "Cloth", "Cup", "DishSponge", "Egg", "Fork", "Knife", "Ladle",
             "Lettuce", "Mug", "Pan", "Plate", "Pot", "Potato", "SoapBar", "Spatula", "Spoon", "Tomato"}
TOGGLEABLE = {"DeskLamp", "FloorLamp"}
FOOD = {"Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato"}
DISHES = {"Bowl", "Cup", "Mug", "Plate"}

# What each receptacle class may hold (canContain); surfaces and storage take any pickupable object.
RESTRICTED_RECEPTACLES = {
    "Fridge": FOOD | DISHES | {"Pan", "Pot", "WineBottle"},
    "Microwave": FOOD | DISHES,
    "SinkBasin": CLEANABLE,
    "StoveBurner": {"Pan", "Pot", "Kettle"},
    "GarbageCan": FOOD | {"SoapBar", "Cloth", "DishSponge", "CreditCard", "Pencil", "Pen", "CD", "Newspaper",
                          "ToiletPaper", "SprayBottle", "Candle"},
    "Bed": {"Pillow", "Book", "Laptop", "CellPhone", "KeyChain", "CreditCard", "Newspaper", "RemoteControl"},
    "Sofa": {"Pillow", "Book", "Laptop", "CellPhone", "KeyChain", "CreditCard", "Newspaper", "RemoteControl"},
    "ArmChair": {"Pillow", "Book", "Laptop", "CellPhone", "KeyChain", "CreditCard", "Newspaper", "RemoteControl"},
    "Toilet": {"SoapBar", "SprayBottle", "ToiletPaper", "Candle", "Cloth"},
}
# Types the domain's actions refer to; real ALFWorld problems always declare them.
ALWAYS_DECLARED_OTYPES = ("KnifeType", "ButterKnifeType")
ALWAYS_DECLARED_RTYPES = ("SinkBasinType", "MicrowaveType", "FridgeType")


@dataclass(frozen=True)
class Scene:
    """A room: receptacle classes in order (``"Cabinet*"`` opens and starts closed) and object placements.

    ``objects`` maps an object class to the receptacle indices it lies in, one entry per instance.
    """

    number: int
    receptacles: tuple[str, ...]
    objects: dict[str, tuple[int, ...]] = field(hash=False)

    def layout(self) -> tuple[str, ...]:
        return tuple(sorted(r.rstrip("*") for r in self.receptacles))


@dataclass(frozen=True)
class Task:
    """One goal in a scene; ``recep`` is the target receptacle class, ``toggle`` the lamp for look tasks."""

    task_type: str
    obj: str
    recep: str = ""
    toggle: str = ""

    def folder_name(self, scene: Scene) -> str:
        """ALFWorld's folder naming: ``<task_type>-<Obj>-<MovableRecep>-<Recep>-<scene>``."""
        target = self.toggle if self.task_type == "look_at_obj_in_light" else self.recep
        return f"{self.task_type}-{self.obj}-None-{target}-{scene.number}"


def _receptacle_ids(scene: Scene) -> list[str]:
    counts: dict[str, int] = {}
    ids = []
    for spec in scene.receptacles:
        cls = spec.rstrip("*")
        counts[cls] = counts.get(cls, 0) + 1
        # A sink basin's id must contain "SinkBasin" (and "basin") to show as "sinkbasin N".
        ids.append(f"Sink_bar_{counts[cls]}_bar_SinkBasin" if cls == "SinkBasin" else f"{cls}_bar_{counts[cls]}")
    return ids


def _can_contain(recep_cls: str, obj_cls: str) -> bool:
    if obj_cls in TOGGLEABLE:
        return False
    allowed = RESTRICTED_RECEPTACLES.get(recep_cls)
    return allowed is None or obj_cls in allowed


def _goal(task: Task) -> str:
    """The task's PDDL goal, taken from the installed ALFWorld goal library (it also closes the problem)."""
    from alfworld.gen import goal_library

    template = goal_library.gdict[task.task_type]["pddl"]
    text = template.format(obj=task.obj, recep=task.recep, toggle=task.toggle, mrecep="")
    return text.replace("#", "-").strip()


def problem_pddl(scene: Scene, task: Task, name: str) -> str:
    """The ``initial_state.pddl`` text of ``task`` in ``scene``."""
    recep_ids = _receptacle_ids(scene)
    recep_classes = [r.rstrip("*") for r in scene.receptacles]
    otypes = sorted(set(scene.objects) | {task.obj} | ({task.toggle} if task.toggle else set()))
    rtypes = sorted(set(recep_classes) | ({task.recep} if task.recep else set()))
    decl_otypes = sorted({f"{o}Type" for o in otypes} | set(ALWAYS_DECLARED_OTYPES))
    decl_rtypes = sorted({f"{r}Type" for r in rtypes} | set(ALWAYS_DECLARED_RTYPES))

    objects = ["agent1 - agent"]
    objects += [f"{t} - otype" for t in decl_otypes] + [f"{t} - rtype" for t in decl_rtypes]
    init = ["(atLocation agent1 loc_bar_0)"]
    # Location 0 is the agent's start in the middle of the room; receptacle i sits at location i + 1.
    for i, (rid, spec) in enumerate(zip(recep_ids, scene.receptacles, strict=True)):
        objects.append(f"{rid} - receptacle")
        init.append(f"(receptacleType {rid} {spec.rstrip('*')}Type)")
        init.append(f"(receptacleAtLocation {rid} loc_bar_{i + 1})")
        if spec.endswith("*"):
            init.append(f"(openable {rid})")
    for cls, places in sorted(scene.objects.items()):
        for n, recep_index in enumerate(places, start=1):
            oid = f"{cls}_bar_{n}"
            objects.append(f"{oid} - object")
            init.append(f"(objectType {oid} {cls}Type)")
            init.append(f"(inReceptacle {oid} {recep_ids[recep_index]})")
            init.append(f"(objectAtLocation {oid} loc_bar_{recep_index + 1})")
            if cls in TOGGLEABLE:
                init.append(f"(toggleable {oid})")
                continue
            init.append(f"(pickupable {oid})")
            for prop, members in (("heatable", HEATABLE), ("coolable", COOLABLE), ("cleanable", CLEANABLE)):
                if cls in members:
                    init.append(f"({prop} {oid})")
    objects += [f"loc_bar_{i} - location" for i in range(len(recep_ids) + 1)]
    for rcls in sorted(set(recep_classes)):
        for ocls in otypes:
            if _can_contain(rcls, ocls):
                init.append(f"(canContain {rcls}Type {ocls}Type)")
    body = "\n".join(
        [f"(define (problem {name})", "(:domain alfred)", "(:objects", *[f"  {o}" for o in objects], ")",
         "(:init", *[f"  {f}" for f in init], ")", _goal(task)]
    )
    return body + "\n"


def traj_data(scene: Scene, task: Task, trial: str, walkthrough: list[str] | None = None) -> dict:
    """The ``traj_data.json`` fields ALFWorld's text side reads (plus the authored walkthrough)."""
    data = {
        "task_id": trial,
        "task_type": task.task_type,
        "scene": {"floor_plan": f"expbank_scene_{scene.number}", "scene_num": scene.number},
        "pddl_params": {
            "object_target": task.obj,
            "parent_target": task.recep,
            "toggle_target": task.toggle,
            "mrecep_target": "",
            "object_sliced": False,
        },
        "turk_annotations": {"anns": []},
    }
    if walkthrough is not None:
        data["walkthrough"] = walkthrough
    return data


def write_game_source(root: Path, scene: Scene, task: Task, trial: str,
                      walkthrough: list[str] | None = None) -> Path:
    """Write ``<root>/<task folder>/<trial>/{initial_state.pddl, traj_data.json}``; return the game folder."""
    folder = root / task.folder_name(scene) / trial
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "initial_state.pddl").write_text(problem_pddl(scene, task, f"plan_{trial}"))
    (folder / "traj_data.json").write_text(json.dumps(traj_data(scene, task, trial, walkthrough), indent=1) + "\n")
    return folder


def plan_walkthrough(game_file: Path) -> list[str]:
    """Solve a game with ALFWorld's planner (fast-downward) and check that the plan wins.

    Used when games are authored, never at play time: planning costs seconds on real-size scenes.
    """
    env = _engine(policy_commands=True)
    env.load(str(game_file))
    plan = list(env.reset().policy_commands)
    check_walkthrough(game_file, plan)
    return plan


def check_walkthrough(game_file: Path, plan: list[str]) -> None:
    """Play ``plan`` on the real engine; raise unless every action is admissible and the last one wins."""
    env = _engine(policy_commands=False)
    env.load(str(game_file))
    state = env.reset()
    for command in plan:
        if command not in state.admissible_commands:
            raise RuntimeError(f"{game_file}: planned action {command!r} is not admissible")
        state, _, _ = env.step(command)
    if not state.won:
        raise RuntimeError(f"{game_file}: the planned walkthrough does not win")


@functools.cache
def _engine(policy_commands: bool) -> Any:
    """This process's engine of each kind, reloaded per game (an engine per game costs 34 MB of disk each:
    ``tw_engine``); with ``policy_commands`` every state is planned, which costs seconds."""
    return tw_engine(policy_commands)
