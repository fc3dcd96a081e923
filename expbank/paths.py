"""Where expbank keeps caches (built game files, dequantised models, embeddings), and how an entry is written."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$EXPBANK_CACHE`` (default ``~/.cache/expbank``) joined with ``parts``, created on demand."""
    root = Path(os.environ.get("EXPBANK_CACHE") or Path.home() / ".cache" / "expbank")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def staging_path(out: Path) -> Path:
    """A name beside ``out`` to build it under, this process's alone: two runs that start at once may build
    the same cache entry."""
    return out.with_name(f".{out.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.partial")


def staging_dir(out: Path) -> Path:
    """A new folder at :func:`staging_path` (``mkdir`` applies the umask, as the finished entry should)."""
    staging = staging_path(out)
    staging.mkdir(parents=True)
    return staging


def publish(staging: Path, out: Path) -> Path:
    """Rename a built ``staging`` file or folder to ``out``; where another process published a folder first,
    theirs is kept (a cache entry is the same whoever builds it) and this one is removed (a file replaces)."""
    try:
        staging.rename(out)
    except OSError:
        if not out.exists():
            raise
        shutil.rmtree(staging, ignore_errors=True)
    return out
