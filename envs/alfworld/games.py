"""Game files: finding ALFWorld games on disk and building the bundled ones into the cache.

Full data is enumerated the way ALFWorld's own ``AlfredTWEnv.collect_game_files`` does it: a folder
counts as a game when it holds ``traj_data.json`` beside a ``game.tw-pddl`` marked solvable, of one of
the six task types, and its path mentions neither ``movable`` nor ``Sliced``.

Bundled games ship only their sources (``initial_state.pddl`` and ``traj_data.json`` with the authored
walkthrough); their ``game.tw-pddl`` files are written on first use from the *installed* ALFWorld
domain and grammar into ``$EXPBANK_CACHE``, keyed by the ALFWorld version and the content hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

from expbank.envs.alfworld.authoring import TASK_TYPES
from expbank.envs.errors import EnvDataError

BUNDLED_ROOT = Path(__file__).resolve().parent.parent / "data" / "alfworld"
# `visits`, `stream`, `moved`, `unmoved`, `searches` and `warned` are splits of the project's own families only
# (envs/alfworld/households.py): episodes that feed a bank and are never trained on, the held-out tasks
# recurring for online evaluation, that stream continued after the rooms rearranged (or not), and the
# training tasks walked by searching (the SFT records of episodes shown no applicable entry) and walked again
# after a first attempt missed (the records of episodes shown a not-found warning).
SPLITS = ("train", "dev", "valid_seen", "valid_unseen", "visits", "stream", "moved", "unmoved", "searches",
          "warned")
# Full ALFWorld data has no dev split: every DEV_EVERY-th train game (sorted task ids, starting with
# the first) is held out as `dev` for model selection, and `train` is the rest.
DEV_EVERY = 25
DATA_VERSIONS = ("json_2.1.3", "json_2.1.2", "json_2.1.1")
ALFWORLD_DEFAULT_DATA = Path("~/.cache/alfworld").expanduser()
GETTING_DATA = (
    "Get the official games with `pip install alfworld && alfworld-download` (it fills $ALFWORLD_DATA, "
    "by default ~/.cache/alfworld) and pass that folder as data_dir or in $ALFWORLD_DATA; "
    "or leave data_dir unset (and $ALFWORLD_DATA unset) to use the bundled games."
)


def task_parts(task_id: str) -> dict[str, str] | None:
    """The fields of an ALFWorld task id's folder name, ``<task_type>-<Obj>-<MovableRecep>-<Recep>-<scene>``
    (official data and the project's families alike), or None for another name."""
    parts = task_id.split("/", 1)[0].split("-")
    if len(parts) != 5 or not parts[4].isdigit():
        return None
    return dict(zip(("task_type", "object", "movable", "receptacle", "room"), parts, strict=True))


def room_of(task_id: str) -> str | None:
    """The room (ALFRED scene number) a task plays in; None when the id does not name one."""
    parts = task_parts(task_id)
    return parts["room"] if parts else None


@dataclass(frozen=True)
class GameRef:
    """One playable game: its task id (``<task folder>/<trial folder>``) and its ``game.tw-pddl``."""

    task_id: str
    game_file: Path

    @property
    def task_type(self) -> str:
        return self.task_id.split("/", 1)[0].split("-", 1)[0]


def _data_from_environment() -> str | None:
    """``$ALFWORLD_DATA`` when the user set it.

    Importing ``alfworld.info`` sets the variable to ALFWorld's default folder (and creates it) when it
    was unset; an empty default folder therefore means "not set" rather than "no games".
    """
    value = os.environ.get("ALFWORLD_DATA") or None
    if value and Path(value).expanduser() == ALFWORLD_DEFAULT_DATA and not any(
        (ALFWORLD_DEFAULT_DATA / name).is_dir() for name in DATA_VERSIONS + SPLITS
    ):
        return None
    return value


def resolve_root(data_dir: str | os.PathLike | None) -> Path | None:
    """The full-data folder to use (``data_dir``, else ``$ALFWORLD_DATA``), or None for the bundled games."""
    if data_dir is None:
        data_dir = _data_from_environment()
    if data_dir in (None, "bundled"):
        return None
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise EnvDataError(f"ALFWorld data folder {root} does not exist. {GETTING_DATA}")
    return root


def _split_folder(root: Path, split: str) -> Path | None:
    for version in DATA_VERSIONS:
        if (root / version / split).is_dir():
            return root / version / split
    return root / split if (root / split).is_dir() else None


def collect_games(split_dir: Path) -> list[GameRef]:
    """Solvable games under ``split_dir``, filtered exactly as ALFWorld's loader filters them."""
    games = []
    for traj_path in split_dir.rglob("traj_data.json"):
        folder = traj_path.parent
        if "movable" in str(folder) or "Sliced" in str(folder):
            continue
        game_file = folder / "game.tw-pddl"
        if not game_file.exists():
            continue
        try:
            task_type = json.loads(traj_path.read_text())["task_type"]
            solvable = json.loads(game_file.read_text()).get("solvable")
        except (json.JSONDecodeError, KeyError) as err:
            raise EnvDataError(f"{traj_path.parent}: unreadable game files ({err})") from None
        if task_type in TASK_TYPES and solvable:
            games.append(GameRef(folder.relative_to(split_dir).as_posix(), game_file))
    return sorted(games, key=lambda g: g.task_id)


def list_games(split: str, data_dir: str | os.PathLike | None = None) -> list[GameRef]:
    """The games of ``split`` in fixed (sorted task id) order."""
    if split not in SPLITS:
        raise EnvDataError(f"unknown ALFWorld split {split!r}; choose one of {', '.join(SPLITS)}")
    root = resolve_root(data_dir)
    if root is None:
        return collect_games(build_bundled(split))
    folder = _split_folder(root, split)
    if folder is None and split == "dev":
        train = _split_folder(root, "train")
        if train is not None:
            return collect_games(train)[::DEV_EVERY]
    if folder is None:
        raise EnvDataError(f"no '{split}' games under {root} (looked for json_2.1.x/{split}). {GETTING_DATA}")
    games = collect_games(folder)
    if split == "train" and _split_folder(root, "dev") is None:
        held_out = {g.task_id for g in games[::DEV_EVERY]}
        games = [g for g in games if g.task_id not in held_out]
    if not games:
        raise EnvDataError(f"{folder} holds no solvable ALFWorld games. {GETTING_DATA}")
    return games


def _hash_files(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cache_root() -> Path:
    return Path(os.environ.get("EXPBANK_CACHE") or Path.home() / ".cache" / "expbank")


def goal_grammar(grammar: str, traj: dict, task_id: str) -> str:
    """The grammar with the goal text filled in, deterministically per task.

    ALFWorld picks among the goal templates with the global ``random``; we seed it from the task id
    (and restore its state) so a task always reads the same.
    """
    from alfworld.agents.utils.misc import add_task_to_grammar

    state = random.getstate()
    try:
        random.seed(int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16))
        return add_task_to_grammar(grammar, traj)
    finally:
        random.setstate(state)


def build_bundled(split: str) -> Path:
    """Write ``game.tw-pddl`` files for a bundled split into the cache (once) and return that folder."""
    from importlib.metadata import version

    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

    source = BUNDLED_ROOT / split
    sources = sorted(source.rglob("*.json")) + sorted(source.rglob("*.pddl"))
    if not sources:
        raise EnvDataError(f"bundled ALFWorld split {split!r} is missing from {source}; reinstall expbank")
    domain, grammar = Path(ALFRED_PDDL_PATH).read_text(), Path(ALFRED_TWL2_PATH).read_text()
    key = hashlib.sha256(f"{version('alfworld')}|{domain}|{grammar}|{_hash_files(sources)}".encode())
    out = _cache_root() / "alfworld-games" / f"{split}-{key.hexdigest()[:16]}"
    if (out / "COMPLETE").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{split}-", dir=out.parent))
    for traj_path in sorted(source.rglob("traj_data.json")):
        rel = traj_path.parent.relative_to(source)
        traj = json.loads(traj_path.read_text())
        game = {
            "pddl_domain": domain,
            "grammar": goal_grammar(grammar, traj, rel.as_posix()),
            "pddl_problem": (traj_path.parent / "initial_state.pddl").read_text(),
            "solvable": True,
            "walkthrough": traj["walkthrough"],
        }
        (staging / rel).mkdir(parents=True, exist_ok=True)
        (staging / rel / "traj_data.json").write_text(traj_path.read_text())
        (staging / rel / "game.tw-pddl").write_text(json.dumps(game))
    (staging / "COMPLETE").write_text("")
    try:
        staging.rename(out)
    except OSError:  # another process built the same split first; theirs is identical
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    return out


def game_set_hash(games: list[GameRef]) -> str:
    """A cheap fingerprint of a game set: task ids and game-file sizes."""
    digest = hashlib.sha256()
    for game in games:
        digest.update(f"{game.task_id}:{game.game_file.stat().st_size}\n".encode())
    return digest.hexdigest()[:16]
