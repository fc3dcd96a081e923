"""The real ALFWorld engine: TextWorld's PDDL environment with ALFWorld's name demangler."""

from __future__ import annotations

from typing import Any


def tw_engine(policy_commands: bool = False) -> Any:
    """TextWorld's PDDL engine with ALFWorld's name demangler, as ``textworld.start`` builds it for
    ``alfworld-play-tw``; ``load(game_file)`` swaps its game (TextWorld's gym envs reuse one the same way).

    Keep one per player: every new engine maps its own copy of fast-downward's 34 MB library, which ctypes
    never unloads, so the unlinked copy holds its disk space until the process exits. An engine per game
    filled the disk during one GRPO run (about 2,800 games in 30 minutes).
    """
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    from textworld.envs import PddlEnv

    infos = textworld.EnvInfos(won=True, admissible_commands=True, policy_commands=policy_commands)
    return AlfredDemangler(PddlEnv(infos), shuffle=False)
