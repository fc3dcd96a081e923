"""Shared pytest fixtures."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Tests share one cache across sessions (entries are keyed by content hashes, so a stale entry is never
# reused); it keeps the dequantised SmolLM2 and built games between runs. $ALFWORLD_DATA is cleared so
# the bundled games are what tests play.
os.environ.setdefault("EXPBANK_CACHE", os.path.join(tempfile.gettempdir(), "expbank-test-cache"))
os.environ.pop("ALFWORLD_DATA", None)


# ------------------------------------------------------------------ experience bank (tests/test_bank_*.py)
@pytest.fixture(scope="session")
def embedder():
    """The real offline MiniLM, loaded once per session (the bank caches it per process too)."""
    from expbank.bank.embed import get_embedder

    return get_embedder()


@pytest.fixture()
def new_bank(embedder, tmp_path):
    """An empty bank in a temporary directory, using the session's embedder."""
    from expbank.bank.store import Bank

    def make(**settings):
        from expbank.bank.store import BankSettings

        return Bank.create(tmp_path / f"bank{len(list(tmp_path.iterdir()))}", BankSettings(**settings),
                           embedder=embedder)

    return make


# ------------------------------------------------------------------ ALFWorld (tests/test_alfworld_*.py)
@pytest.fixture(scope="session")
def alfworld_valid_unseen():
    """A real ALFWorld env on the bundled valid_unseen games, shared by the tests of one session."""
    from expbank import envs

    env = envs.make("alfworld", split="valid_unseen")
    yield env
    env.close()


@pytest.fixture(scope="session")
def alfworld_trajectories():
    """Expert + random trajectories of the bundled ALFWorld ``train`` games, expert ones of
    ``valid_unseen``, and expert + random ones of the bundled WebShop ``train`` goals (``expbank collect``).

    Collection takes ~2.5 min on 2 CPUs, so the files are kept in ``<tmp>/expbank-test-trajectories/``
    (not ``$EXPBANK_CACHE``, which is fresh per session) keyed by a hash of the environment package, its
    bundled data and the collect command: any change re-collects.
    """
    import hashlib
    import subprocess
    import sys
    from pathlib import Path

    import expbank.envs
    import expbank.training.agent.collect

    digest = hashlib.sha256()
    sources = sorted(Path(expbank.envs.__file__).parent.rglob("*"))
    for path in sources + [Path(expbank.training.agent.collect.__file__)]:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(path.anchor)).encode() + path.read_bytes())
    folder = Path(tempfile.gettempdir()) / "expbank-test-trajectories" / digest.hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    runs = {"expert": ("train", "expert", []), "random": ("train", "random", ["--max-steps", "15"]),
            "valid_unseen": ("valid_unseen", "expert", []),
            "webshop_expert": ("train", "expert", ["--env", "webshop"]),
            "webshop_random": ("train", "random", ["--env", "webshop"])}
    files = {}
    for name, (split, policy, extra) in runs.items():
        out = folder / f"{name}.jsonl"
        done = folder / f"{name}.done"
        if not done.exists():
            out.unlink(missing_ok=True)
            env = [] if "--env" in extra else ["--env", "alfworld"]
            subprocess.run([sys.executable, "-m", "expbank.cli", "collect", *env, "--split", split,
                            "--policy", policy, "--out", str(out), *extra], check=True, capture_output=True)
            done.touch()
        files[name] = out
    return files


@pytest.fixture(scope="session")
def tiny_warm() -> Path:
    """A quick ``tiny-warm`` (WebShop transcripts, 40 warm-up steps; about a minute the first time): it writes
    well-formed but uneven answers, so GRPO groups differ in reward and every step really updates."""
    from expbank.training.actors.tiny_warm import WarmRecipe, build_tiny_warm

    return build_tiny_warm(WarmRecipe(envs=("webshop",), steps=40))
