"""Title nouns of a whole catalog, tagged once in batch and kept on disk, so that a purchase is a lookup.

Tagging a title with spaCy costs milliseconds, so the type reward would make a purchase step a hundred
times dearer than any other. The catalog's distinct titles are tagged when an environment opens it and
saved under ``$EXPBANK_CACHE/webshop-nouns/``, keyed by the product file's content hash, the pipeline and
its version, and spaCy's version; other processes (the pool's workers) read that file and never import
spaCy. One process tags while the others wait on a lock beside the file. The fallback noun rule tags a
title in microseconds and needs no table.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path

from tqdm import tqdm

from .catalog import Catalog
from .reward import FALLBACK, is_pipeline_package, noun_source_fingerprint, nouns_in_batches
from .search import cache_root

TITLES_VERSION = 1  # bump when what is kept of a title's tags (``reward.nouns``) changes
PROGRESS_MIN = 10_000  # titles from which tagging shows a progress bar


def cache_path(items_hash: str, source: str) -> Path:
    """Where the title nouns of product file ``items_hash`` under spaCy noun source ``source`` are kept."""
    record = noun_source_fingerprint(source)
    name = source.removeprefix("spacy:")
    if not is_pipeline_package(name):  # a pipeline folder: its name, made unique by its path
        folder = Path(name).expanduser().resolve()
        name = f"{folder.name}-{hashlib.sha256(str(folder).encode()).hexdigest()[:8]}"
    key = f"{items_hash}-{name}-{record['version']}-spacy{record['spacy']}-v{TITLES_VERSION}"
    return cache_root() / "webshop-nouns" / f"{key}.json"


def title_nouns(catalog: Catalog, source: str) -> dict[str, tuple[str, ...]]:
    """Nouns of every title of ``catalog`` under ``source``: read from the cache, else tagged and saved."""
    if source == FALLBACK:
        return {}
    titles = list(dict.fromkeys(p["name"] for p in catalog.products))
    path = cache_path(catalog.file_hashes[catalog.items_file], source)
    tagged = _read(path)
    if tagged is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.with_name(f"{path.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when its process dies
            tagged = _read(path)  # another process may have saved it while this one waited
            if tagged is None:
                tagged = _tag(titles, source)
                _write(path, tagged)
    return dict(zip(titles, tagged, strict=True))


def _tag(titles: list[str], source: str) -> list[tuple[str, ...]]:
    progress = tqdm(
        nouns_in_batches(titles, source),
        total=len(titles),
        desc="tagging title nouns",
        unit="title",
        mininterval=1,  # a log, which is no terminal, keeps every refresh
        disable=len(titles) < PROGRESS_MIN,
    )
    return list(progress)


def _read(path: Path) -> list[tuple[str, ...]] | None:
    """The saved nouns of each title, or None if there is no readable file."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    words = saved["words"]
    return [tuple(words[i] for i in title) for title in saved["nouns"]]


def _write(path: Path, tagged: list[tuple[str, ...]]) -> None:
    """Save each title's nouns as indices into one word list (so a noun's string is shared in memory) to a
    staging file renamed into place, so that readers never see half of it."""
    words: dict[str, int] = {}
    indices = [[words.setdefault(word, len(words)) for word in title] for title in tagged]
    staging = path.with_name(f"{path.name}.tmp{os.getpid()}")
    staging.write_text(json.dumps({"words": list(words), "nouns": indices}))
    os.replace(staging, path)
