"""Where expbank keeps caches (built game files, dequantised models, embeddings)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$EXPBANK_CACHE`` (default ``~/.cache/expbank``) joined with ``parts``, created on demand."""
    root = Path(os.environ.get("EXPBANK_CACHE") or Path.home() / ".cache" / "expbank")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
