"""The bank on disk and in memory: entry metadata plus faiss indexes for the ``task`` and ``situation`` keys.

Directory layout (docs/design.md §4)::

    BANK/manifest.json          format version, embedder, settings, counts, content hash, data dir, file hashes
    BANK/data-000007/entries.jsonl   one entry per faiss row, in row order; a deleted row is ``null``
                     task.faiss, situation.faiss   inner-product indexes (Flat, or HNSW above a size)
                     guidance.npy   guidance vectors, used only for dedup
                     episodes.txt   episode ids already summarised (re-building the same files is a no-op)
                     log.jsonl      prune / delete / pin / trust events with ids and reasons
                     counters.json  utility counters changed since entries.jsonl was written, and the episode
                                    ids already credited (only when there are any)

Saving is atomic: a new ``data-*`` directory is written and fsynced, then ``manifest.json`` is replaced with
``os.replace`` (atomic on POSIX). A kill at any point leaves a manifest naming a complete data directory.
Files that did not change are hard-linked into the new directory, and a save that changed only utility
counters writes ``counters.json`` and nothing else, so crediting an episode costs the same on a bank of
any size.

Other processes may be reading while one saves, so a save deletes only data directories beyond the newest
:data:`KEEP_DATA_DIRS` (never the one it replaced), and :meth:`Bank.open` starts again when the directory its
manifest named vanished meanwhile. Opening checks every file's size and the hashes of the small files
(``verify`` hashes the vectors too); a damaged bank is a :class:`BankError` naming the file.

Deletion marks rows as tombstones (HNSW cannot remove vectors); searches skip them, and the indexes are
rebuilt from the live rows when tombstones pass ``tombstone_fraction`` of the rows.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expbank.bank.embed import DEFAULT_EMBEDDER, Embedder, get_embedder
from expbank.bank.entry import Entry, Stats, merge_into, now_iso
from expbank.bank.gate import GateAction, gate_entries
from expbank.bank.keys import task_key_text
from expbank.bank.utility import utility
from expbank.errors import UserError
from expbank.trajectory import parse_episode_id

FORMAT_VERSION = 1
DEDUP_CHUNK = 1024  # entries deduplicated against each other at once (a chunk² similarity matrix)
KEYS = ("task", "situation")
MANIFEST = "manifest.json"
META_FILES = ("entries.jsonl", "episodes.txt", "log.jsonl")  # small enough to hash on every open
VECTOR_FILES = ("task.faiss", "situation.faiss", "guidance.npy")
COUNTERS = "counters.json"
KEEP_DATA_DIRS = 3  # the live data directory and the two before it stay for readers still opening them
OPEN_ATTEMPTS = 5  # times Bank.open starts again when a concurrent save removed the directory it was reading
_DATA = re.compile(r"^data-(\d+)(-[0-9a-z_]+)?$")
DAMAGED = "the bank is damaged; restore it from a copy or rebuild it"


def is_service_url(location: str) -> bool:
    """Whether a ``memory.bank`` value names an ``expbank serve`` service rather than a bank directory."""
    return location.startswith(("http://", "https://"))


def is_bank(path: str | Path) -> bool:
    """Whether ``path`` is a saved bank directory (it has a manifest)."""
    return (Path(path) / MANIFEST).is_file()


def content_hash(path: str | Path) -> str | None:
    """The content hash a saved bank's manifest records (what run fingerprints name), or None if not a bank."""
    return read_manifest(path).content_hash if is_bank(path) else None


def copy_bank(source: str | Path, dest: str | Path) -> None:
    """Copy a saved bank (its manifest and the data directory it names) to ``dest``, replacing it: a snapshot.

    Files are hard-linked where possible: a bank never rewrites a file in place (every save writes a new data
    directory), so a link is as safe as a copy and costs nothing. The manifest written is the one read, so
    a save by another process meanwhile cannot pair it with another data directory.
    """
    source, dest = Path(source), Path(dest)
    staging = dest.with_name(dest.name + ".partial")
    for attempt in itertools.count(1):
        raw = _manifest_bytes(source)
        manifest = _parse_manifest(source, raw)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            shutil.copytree(source / manifest.data, staging / manifest.data, copy_function=_link_or_copy)
        except (FileNotFoundError, shutil.Error):  # the data directory was replaced while we copied it
            if attempt == OPEN_ATTEMPTS or read_manifest(source).data == manifest.data:
                raise BankError(f"{source / manifest.data}: missing or incomplete; {DAMAGED}") from None
            continue
        (staging / MANIFEST).write_bytes(raw)
        shutil.rmtree(dest, ignore_errors=True)
        staging.rename(dest)
        return


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


class BankError(UserError):
    """A bank directory that cannot be used as asked (damaged, wrong format, other embedder, read-only)."""


def _damaged(where: object, err: ValidationError) -> BankError:
    """One line naming the file and the first bad key of a bank file that failed validation."""
    first = err.errors()[0]
    key = ".".join(str(part) for part in first["loc"])
    return BankError(f"{where}: bad '{key}': {first['msg']}; {DAMAGED}")


class _DataGone(Exception):
    """A file of the data directory being opened is missing: damage, or a concurrent save removed it."""

    def __init__(self, file: Path):
        super().__init__(str(file))
        self.file = file


class BankSettings(BaseModel):
    """Per-bank settings, stored in the manifest so a bank keeps behaving the same when reopened."""

    model_config = ConfigDict(extra="forbid")

    embedder: str = DEFAULT_EMBEDDER
    dedup_threshold: float = Field(0.9, gt=0.0, le=1.0)
    hnsw_min_size: int = Field(50_000, ge=1)
    hnsw_m: int = Field(32, ge=4)
    ef_construction: int = Field(64, ge=8)
    ef_search: int = Field(64, ge=8)
    tombstone_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    gate_action: GateAction = "quarantine"
    utility_weight: float = Field(0.0, ge=0.0)


class FileRecord(BaseModel):
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class EmbedderRecord(BaseModel):
    name: str
    dim: int = Field(ge=1)


class Manifest(BaseModel):
    """What ``manifest.json`` must hold to be opened (other keys, such as ``counts``, are informative)."""

    format_version: int
    embedder: EmbedderRecord
    settings: BankSettings
    data: str = Field(pattern=_DATA.pattern)  # a folder name, never a path
    files: dict[Literal[META_FILES + VECTOR_FILES + (COUNTERS,)], FileRecord]
    content_hash: str | None = None


class _Counters(BaseModel):
    """``counters.json``: stats that changed since ``entries.jsonl`` was written, and credited episode ids."""

    model_config = ConfigDict(extra="forbid")

    stats: dict[str, Stats] = Field(default_factory=dict)
    credited: list[str] = Field(default_factory=list)


def read_manifest(path: str | Path) -> Manifest:
    """The validated manifest of the bank at ``path``; anything else is a one-line :class:`BankError`."""
    return _parse_manifest(Path(path), _manifest_bytes(Path(path)))


def _manifest_bytes(path: Path) -> bytes:
    if path.exists() and not path.is_dir():
        raise BankError(f"{path}: a file, not a bank directory")
    try:
        return (path / MANIFEST).read_bytes()
    except FileNotFoundError:
        raise BankError(f"{path}: not a bank (no {MANIFEST})") from None


def _parse_manifest(path: Path, raw: bytes) -> Manifest:
    where = path / MANIFEST
    try:
        record = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BankError(f"{where}: not valid JSON ({err}); {DAMAGED}") from None
    version = record.get("format_version") if isinstance(record, dict) else None
    if version != FORMAT_VERSION:
        raise BankError(f"{path}: bank format version {version!r}; this expbank reads version "
                        f"{FORMAT_VERSION} (re-build the bank or export/import it)")
    try:
        manifest = Manifest.model_validate(record)
    except ValidationError as err:
        raise _damaged(where, err) from None
    missing = [name for name in META_FILES + VECTOR_FILES if name not in manifest.files]
    if missing:
        raise BankError(f"{where}: bad 'files': no '{missing[0]}'; {DAMAGED}")
    return manifest


@dataclass
class AddReport:
    added: list[str] = field(default_factory=list)
    merged: dict[str, str] = field(default_factory=dict)  # new id -> existing id it merged into
    quarantined: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)


class Bank:
    """An experience bank; open with :meth:`open`, :meth:`create` or :meth:`open_or_create`."""

    def __init__(self, settings: BankSettings, path: str | Path | None = None, writable: bool = True,
                 embedder: Embedder | None = None, dim: int | None = None):
        self.settings = settings
        self.path = Path(path) if path is not None else None
        self.writable = writable
        self._embedder = embedder
        self._dim: int | None = embedder.dim if embedder else dim
        self._rows: list[Entry | None] = []
        self._row_of: dict[str, int] = {}
        self._index: dict[str, object] = {}
        self._guidance = np.zeros((0, self._dim or 0), dtype=np.float32)
        self.episodes: set[str] = set()
        self.credited: set[str] = set()  # episode ids whose feedback was applied (the service's idempotency)
        self._log: list[dict] = []
        self._stats_changed: set[str] = set()  # ids whose stats differ from the saved entries.jsonl
        self._dirty_vectors = True
        self._dirty_meta = True
        self._files: dict[str, FileRecord] = {}
        self._content_hash: str | None = None
        self._data_dir: Path | None = None

    # ----------------------------------------------------------------- opening
    @classmethod
    def create(cls, path: str | Path | None, settings: BankSettings | None = None,
               embedder: Embedder | None = None, dim: int | None = None) -> Bank:
        """A new empty bank; ``dim`` without ``embedder`` lets callers that bring their own vectors
        (merge, benchmarks) avoid loading the model.

        A directory holding only what a killed first save left (``data-*`` folders, no manifest) counts as
        empty: the first save here removes those leftovers.
        """
        if path is not None and Path(path).exists():
            if not Path(path).is_dir():
                raise BankError(f"{path}: a file, not a bank directory")
            if any(not _DATA.match(p.name) and not p.name.startswith(".manifest-") for p in Path(path).iterdir()):
                raise BankError(f"{path}: exists and is not empty; pass an existing bank or a new directory")
        return cls(settings or BankSettings(), path, embedder=embedder, dim=dim)

    @classmethod
    def open_or_create(cls, path: str | Path, settings: BankSettings | None = None,
                       embedder: Embedder | None = None) -> Bank:
        if is_bank(path):
            bank = cls.open(path, embedder=embedder)
            if settings is not None and settings.embedder != bank.settings.embedder:
                raise BankError(f"{path}: made with embedder '{bank.settings.embedder}', "
                                f"not '{settings.embedder}'")
            return bank
        return cls.create(path, settings, embedder)

    @classmethod
    def open(cls, path: str | Path, writable: bool = True, embedder: Embedder | None = None,
             verify: bool = False) -> Bank:
        """Load a bank; a foreign format version or embedder is a :class:`BankError`.

        Sizes and the hashes of the small files are always checked; ``verify`` hashes the vector files too
        (slow on huge banks). A save by another process that removes the data directory while it is being
        read makes the open start again from the new manifest.
        """
        path = Path(path)
        for attempt in itertools.count(1):
            manifest = read_manifest(path)
            stored = manifest.embedder
            if embedder is not None and (embedder.name != stored.name or embedder.dim != stored.dim):
                raise BankError(f"{path}: made with embedder '{stored.name}' ({stored.dim}-d), "
                                f"not '{embedder.name}' ({embedder.dim}-d)")
            bank = cls(manifest.settings, path, writable=writable, embedder=embedder)
            bank._dim = stored.dim
            try:
                bank._load_data(path / manifest.data, manifest, verify)
                return bank
            except _DataGone as gone:
                if attempt == OPEN_ATTEMPTS or read_manifest(path).data == manifest.data:
                    raise BankError(f"{gone.file}: missing, though the manifest names it; {DAMAGED}") from None

    def _load_data(self, data: Path, manifest: Manifest, verify: bool) -> None:
        """Read and check every file of ``data``; a missing file raises :class:`_DataGone`."""
        import faiss

        raw = {name: _read_checked(data / name, record, verify or name not in VECTOR_FILES)
               for name, record in manifest.files.items()}
        self._rows = [_parse_entry(data / "entries.jsonl", line_no, line)
                      for line_no, line in enumerate(_lines(data / "entries.jsonl", raw["entries.jsonl"]), start=1)]
        self._row_of = {entry.id: row for row, entry in enumerate(self._rows) if entry is not None}
        for key in KEYS:
            file = data / f"{key}.faiss"
            try:
                self._index[key] = faiss.deserialize_index(np.frombuffer(raw[f"{key}.faiss"], dtype=np.uint8))
            except RuntimeError as err:
                raise BankError(f"{file}: not a readable faiss index ({_first_line(err)}); {DAMAGED}") from None
        try:
            self._guidance = np.load(io.BytesIO(raw["guidance.npy"]))
        except (ValueError, OSError, EOFError) as err:
            raise BankError(f"{data / 'guidance.npy'}: not a readable array ({err}); {DAMAGED}") from None
        shapes = {"entries.jsonl": len(self._rows), "guidance.npy": len(self._guidance),
                  **{f"{key}.faiss": self._index[key].ntotal for key in KEYS}}
        for name, rows in shapes.items():
            if rows != len(self._rows):
                raise BankError(f"{data / name}: {rows} rows, entries.jsonl has {len(self._rows)}; {DAMAGED}")
        if self._guidance.ndim != 2 or self._guidance.shape[1] != self._dim or \
                any(self._index[key].d != self._dim for key in KEYS):
            raise BankError(f"{data}: vectors are not {self._dim}-d as the manifest records; {DAMAGED}")
        self.episodes = set(_text(data / "episodes.txt", raw["episodes.txt"]).split())
        self._log = [_parse_json_line(data / "log.jsonl", line_no, line)
                     for line_no, line in enumerate(_lines(data / "log.jsonl", raw["log.jsonl"]), start=1)
                     if line.strip()]
        if COUNTERS in raw:
            self._apply_counters(data / COUNTERS, raw[COUNTERS])
        self._files = dict(manifest.files)
        self._content_hash = manifest.content_hash
        self._data_dir = data
        self._dirty_vectors = self._dirty_meta = False

    def _apply_counters(self, file: Path, raw: bytes) -> None:
        try:
            counters = _Counters.model_validate_json(raw)
        except ValidationError as err:
            raise _damaged(file, err) from None
        for entry_id, stats in counters.stats.items():
            row = self._row_of.get(entry_id)
            if row is None:
                raise BankError(f"{file}: counters of '{entry_id}', which entries.jsonl lacks; {DAMAGED}")
            self._rows[row] = self._rows[row].model_copy(update={"stats": stats})
        self._stats_changed = set(counters.stats)
        self.credited = set(counters.credited)

    def saved_elsewhere(self) -> bool:
        """Whether another process saved this bank since it was opened or last saved here (then reopen it:
        this object's next save would overwrite that save)."""
        if self.path is None or self._data_dir is None:
            return False
        live = _live_data(self.path)
        return live is not None and live != self._data_dir.name

    def latest(self) -> Bank:
        """This bank, or the same path opened again (same mode) if another process saved it since: what a
        long-lived server calls before each use, so it serves that save and its own saves build on it."""
        return Bank.open(self.path, writable=self.writable) if self.saved_elsewhere() else self

    # ----------------------------------------------------------------- reading
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.settings.embedder)
            if self._dim is not None and self._embedder.dim != self._dim:
                raise BankError(f"embedder '{self.settings.embedder}' gives {self._embedder.dim}-d vectors, "
                                f"the bank holds {self._dim}-d")
            self._dim = self._embedder.dim
        return self._embedder

    @property
    def dim(self) -> int:
        return self._dim if self._dim is not None else self.embedder.dim

    @property
    def index_kind(self) -> Literal["flat", "hnsw"]:
        index = self._index.get("task")
        return "hnsw" if index is not None and hasattr(index, "hnsw") else "flat"

    @property
    def content_hash(self) -> str | None:
        """The manifest's ``content_hash`` (see :func:`_content_hash`); None before a save."""
        return self._content_hash

    def source_splits(self) -> set[tuple[str, str]]:
        """The (env, split) pairs of the episodes the entries were made from (``?`` where an id names no
        known split): what the split check of docs/design.md §8 compares with the split being played."""
        pairs = set()
        for entry in self.entries(include_quarantined=True):
            for episode_id in entry.provenance.episodes:
                parts = parse_episode_id(episode_id)
                pairs.add((parts.env, parts.split or "?"))
        return pairs

    def __len__(self) -> int:
        return len(self._row_of)

    def get(self, entry_id: str) -> Entry | None:
        row = self._row_of.get(entry_id)
        return None if row is None else self._rows[row]

    def entries(self, include_quarantined: bool = False) -> Iterator[Entry]:
        for entry in self._rows:
            if entry is not None and (include_quarantined or entry.provenance.trust == "trusted"):
                yield entry

    def entry_at(self, row: int) -> Entry | None:
        return self._rows[row]

    @property
    def num_rows(self) -> int:
        return len(self._rows)

    def log(self) -> list[dict]:
        return list(self._log)

    def stats(self) -> dict:
        """Counts for ``bank stats`` and the manifest: ``entries`` = trusted + quarantined."""
        by_kind: dict[str, int] = {}
        by_trust: dict[str, int] = {"trusted": 0, "quarantined": 0}
        by_env: dict[str, int] = {}
        pinned = used = 0
        for entry in self.entries(include_quarantined=True):
            by_kind[entry.kind] = by_kind.get(entry.kind, 0) + 1
            by_trust[entry.provenance.trust] += 1
            by_env[entry.env] = by_env.get(entry.env, 0) + 1
            pinned += entry.pinned
            used += entry.stats.uses > 0
        return {"entries": len(self), "by_kind": by_kind, "by_trust": by_trust, "by_env": by_env,
                "pinned": pinned, "used": used, "episodes": len(self.episodes),
                "rows": self.num_rows, "tombstones": self.num_rows - len(self),
                "index": self.index_kind, "embedder": {"name": self.settings.embedder, "dim": self.dim}}

    def search_key(self, key: str, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Raw faiss search of one key: (scores, rows), rows -1 where fewer than ``k`` exist."""
        index = self._index.get(key)
        if index is None or index.ntotal == 0:
            empty = np.full((len(vectors), 0), -1)
            return empty.astype(np.float32), empty
        k = min(k, index.ntotal)
        if hasattr(index, "hnsw"):
            index.hnsw.efSearch = max(self.settings.ef_search, k)
        return index.search(np.ascontiguousarray(vectors, dtype=np.float32), k)

    def vectors(self, key: str, rows: Iterable[int]) -> np.ndarray:
        """Stored vectors of ``rows`` for ``key`` (``task``, ``situation`` or ``guidance``)."""
        rows = np.asarray(list(rows), dtype=np.int64)
        if key == "guidance":
            return self._guidance[rows]
        if len(rows) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._index[key].reconstruct_batch(rows)

    # ----------------------------------------------------------------- writing
    def require_writable(self, what: str) -> None:
        if not self.writable:
            raise BankError(f"{what}: the bank is open read-only (evaluation never changes a bank)")

    def add(self, entries: Iterable[Entry], gate: bool = True,
            vectors: dict[str, np.ndarray] | None = None, dedup: bool = True) -> AddReport:
        """Gate, dedup and insert entries (docs/design.md §4 dedup); embeddings are computed in one batch.

        ``vectors`` (``task``, ``situation``, ``guidance`` arrays aligned with ``entries``) skips embedding:
        imports and merges reuse stored vectors, so stored entries are never re-embedded. ``dedup=False``
        merges only identical ids (bulk loads of entries known to be distinct, e.g. benchmarks).
        """
        self.require_writable("add")
        report = AddReport()
        entries = list(entries)
        staged = [entry if entry.id else entry.with_content_id() for entry in entries]
        if gate:  # one batched gate call: the detector embeds every window of the batch at once
            checked = gate_entries(staged, self.settings.gate_action)
            for before, after in zip(staged, checked, strict=True):
                if after.provenance.trust == "quarantined":
                    report.quarantined.append(after.id)
                elif after.provenance.redactions != before.provenance.redactions:
                    report.redacted.append(after.id)
            staged = checked
        if not staged:
            return report
        if vectors is None:
            vectors = self._embed(staged)
        self._ensure_indexes()
        for lo in range(0, len(staged), DEDUP_CHUNK):
            chunk = {key: np.ascontiguousarray(v[lo:lo + DEDUP_CHUNK], dtype=np.float32)
                     for key, v in vectors.items()}
            self._insert(staged[lo:lo + DEDUP_CHUNK], chunk, report, dedup)
        return report

    def _insert(self, staged: list[Entry], vectors: dict[str, np.ndarray], report: AddReport,
                dedup: bool = True) -> None:
        """Dedup one chunk against the bank (via the situation index) and within itself, then index it.

        An entry merges into the row with the same id (a quarantined one never into a trusted row), else into
        the same-group row (env, task_type, kind,
        trust, actions) whose situation and guidance cosines both reach the threshold, best sum first.
        """
        th = self.settings.dedup_threshold if dedup else 2.0  # cosines never reach 2: only ids merge
        existing = self._existing_matches(vectors["situation"], vectors["guidance"]) if dedup else \
            [[] for _ in staged]
        within = np.tril((vectors["situation"] @ vectors["situation"].T >= th)
                         & (vectors["guidance"] @ vectors["guidance"].T >= th), k=-1)
        earlier: dict[int, list[int]] = {}
        for i, j in np.argwhere(within):
            earlier.setdefault(int(i), []).append(int(j))
        added_row: dict[int, int] = {}
        keep: list[int] = []
        for i, entry in enumerate(staged):
            target = self._row_of.get(entry.id)
            if target is not None and entry.provenance.trust == "quarantined" != self._rows[target].provenance.trust:
                continue  # the same text, quarantined for what it was cut from: it lends a trusted row nothing
            if target is None:
                options = [(score, row) for row, score in existing[i] if _same_group(self._rows[row], entry)]
                options += [(float(vectors["situation"][i] @ vectors["situation"][j]
                                   + vectors["guidance"][i] @ vectors["guidance"][j]), added_row[j])
                            for j in earlier.get(i, ())
                            if j in added_row and _same_group(self._rows[added_row[j]], entry)]
                target = max(options)[1] if options else None
            if target is None:
                added_row[i] = self.num_rows
                self._row_of[entry.id] = self.num_rows
                self._rows.append(entry)
                keep.append(i)
                report.added.append(entry.id)
            else:
                self._rows[target] = merge_into(self._rows[target], entry)
                report.merged[entry.id] = self._rows[target].id
        self._dirty_meta = True
        if keep:
            for key in KEYS:
                self._index[key].add(vectors[key][keep])
            self._guidance = np.concatenate([self._guidance, vectors["guidance"][keep]])
            self._dirty_vectors = True
            self._maybe_switch_to_hnsw()

    def _embed(self, entries: list[Entry]) -> dict[str, np.ndarray]:
        texts = {"task": [task_key_text(e.task) for e in entries], "situation": [e.situation for e in entries],
                 "guidance": [e.guidance for e in entries]}
        unique = list(dict.fromkeys(t for values in texts.values() for t in values))
        encoded = self.embedder.encode(unique)
        where = {text: i for i, text in enumerate(unique)}
        return {key: encoded[[where[t] for t in values]] for key, values in texts.items()}

    def _existing_matches(self, situations: np.ndarray, guidance: np.ndarray,
                          k: int = 32) -> list[list[tuple[int, float]]]:
        """Per new vector, (row, situation + guidance cosine) of stored rows passing the threshold.

        Candidates are the ``k`` nearest situations: a duplicate needs a situation cosine >= the threshold,
        so it is among them unless ``k`` other rows (of any group) are even closer.
        """
        if not self._row_of:
            return [[] for _ in range(len(situations))]
        if self.index_kind == "flat":  # exact: every stored row above the threshold, via one matmul
            return self._flat_matches(situations, guidance)
        sit, rows = self.search_key("situation", situations, k)
        gui = np.einsum("bkd,bd->bk", self._guidance[np.maximum(rows, 0)], guidance)
        ok = (rows >= 0) & (sit >= self.settings.dedup_threshold) & (gui >= self.settings.dedup_threshold)
        return [[(int(rows[i, j]), float(sit[i, j] + gui[i, j])) for j in np.flatnonzero(ok[i])]
                for i in range(len(situations))]

    def _flat_matches(self, situations: np.ndarray, guidance: np.ndarray) -> list[list[tuple[int, float]]]:
        import faiss

        index = self._index["situation"]
        stored = faiss.rev_swig_ptr(index.get_xb(), index.ntotal * self.dim).reshape(index.ntotal, self.dim)
        th = self.settings.dedup_threshold
        sit = situations @ stored.T
        out: list[list[tuple[int, float]]] = [[] for _ in range(len(situations))]
        for i, row in zip(*np.nonzero(sit >= th), strict=True):
            g = float(self._guidance[row] @ guidance[i])
            if g >= th:
                out[i].append((int(row), float(sit[i, row]) + g))
        return out

    def same_situation(self, a_id: str, b_id: str) -> bool:
        """Whether two stored entries are for the same situation: the dedup's test without the actions (same
        env, task type, kind, trust and numbered names, situation cosine >= ``dedup_threshold``)."""
        a, b = self.get(a_id), self.get(b_id)
        if a is None or b is None or not _same_kind_of_situation(a, b):
            return False
        va, vb = self.vectors("situation", [self._row_of[a_id], self._row_of[b_id]])
        return float(va @ vb) >= self.settings.dedup_threshold

    def set_stats(self, entry_id: str, uses: int, successes: int, last_used: str | None,
                  recent: float | None = None) -> None:
        """Set one entry's counters (``recent`` kept unless given); saved in ``counters.json`` until the next
        save that rewrites entries."""
        row = self._row_of[entry_id]
        entry = self._rows[row]
        stats = entry.stats.model_copy(update={
            "uses": uses, "successes": successes, "utility": utility(successes, uses), "last_used": last_used,
            "recent": entry.stats.recent if recent is None else recent})
        self._rows[row] = entry.model_copy(update={"stats": stats})
        self._stats_changed.add(entry_id)

    def mark_credited(self, episode_id: str) -> None:
        """Record that ``episode_id``'s feedback was applied, so a repeat of it can be refused."""
        self.require_writable("credit")
        self.credited.add(episode_id)

    def update(self, entry_id: str, event: str, reason: str | None = None, **changes) -> Entry:
        """Change non-text fields of one entry (pin, trust) and log it."""
        self.require_writable(event)
        row = self._row_of.get(entry_id)
        if row is None:
            raise BankError(f"no entry with id '{entry_id}'")
        entry = self._rows[row]
        if isinstance(changes.get("provenance"), dict):
            changes["provenance"] = entry.provenance.model_copy(update=changes["provenance"])
        self._rows[row] = entry.model_copy(update=changes)
        self._log.append({"time": now_iso(), "event": event, "id": entry_id, "reason": reason})
        self._dirty_meta = True
        return self._rows[row]

    def delete(self, ids: Iterable[str], event: str = "delete", reasons: dict[str, str] | None = None) -> int:
        """Tombstone entries; rebuild the indexes when tombstones pass ``tombstone_fraction``."""
        self.require_writable(event)
        reasons = reasons or {}
        count = 0
        for entry_id in ids:
            row = self._row_of.pop(entry_id, None)
            if row is None:
                continue
            self._rows[row] = None
            self._log.append({"time": now_iso(), "event": event, "id": entry_id,
                              "reason": reasons.get(entry_id)})
            count += 1
        if count:
            self._dirty_meta = True
            if self.num_rows - len(self) > self.settings.tombstone_fraction * self.num_rows:
                self.compact()
        return count

    def compact(self) -> None:
        """Rebuild indexes and rows from the live entries (drops tombstones)."""
        live = [row for row, entry in enumerate(self._rows) if entry is not None]
        task, situation = self.vectors("task", live), self.vectors("situation", live)
        self._guidance = self._guidance[live] if live else self._guidance[:0]
        self._rows = [self._rows[row] for row in live]
        self._row_of = {entry.id: row for row, entry in enumerate(self._rows)}
        self._build_indexes({"task": task, "situation": situation})
        self._dirty_vectors = self._dirty_meta = True

    def _ensure_indexes(self) -> None:
        if not self._index:
            self._guidance = np.zeros((0, self.dim), dtype=np.float32)
            self._build_indexes({key: np.zeros((0, self.dim), dtype=np.float32) for key in KEYS})

    def _build_indexes(self, vectors: dict[str, np.ndarray]) -> None:
        import faiss

        hnsw = len(vectors["task"]) >= self.settings.hnsw_min_size
        for key in KEYS:
            if hnsw:
                index = faiss.IndexHNSWFlat(self.dim, self.settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efConstruction = self.settings.ef_construction
                index.hnsw.efSearch = self.settings.ef_search
            else:
                index = faiss.IndexFlatIP(self.dim)
            if len(vectors[key]):
                index.add(np.ascontiguousarray(vectors[key], dtype=np.float32))
            self._index[key] = index

    def _maybe_switch_to_hnsw(self) -> None:
        if self.index_kind == "flat" and self.num_rows >= self.settings.hnsw_min_size:
            self.compact()

    # ----------------------------------------------------------------- saving
    def save(self, path: str | Path | None = None) -> Path:
        """Write atomically (see the module docstring); returns the bank directory."""
        self.require_writable("save")
        if path is not None:
            if Path(path) != self.path:
                self._files, self._data_dir, self._dirty_vectors, self._dirty_meta = {}, None, True, True
            self.path = Path(path)
        if self.path is None:
            raise BankError("this bank has no directory; pass a path to save()")
        self.path.mkdir(parents=True, exist_ok=True)
        self._ensure_indexes()
        previous = self._data_dir
        data = self._new_data_dir()
        files = (self._carry(previous, data, META_FILES) if not self._dirty_meta else None) \
            or self._write_meta(data)
        files |= (self._carry(previous, data, VECTOR_FILES) if not self._dirty_vectors else None) \
            or self._write_vectors(data)
        files |= self._write_counters(data)
        _fsync_dir(data)
        manifest = {
            "format_version": FORMAT_VERSION,
            "embedder": {"name": self.settings.embedder, "dim": self.dim},
            "settings": self.settings.model_dump(),
            "index": self.index_kind,
            "counts": {k: v for k, v in self.stats().items() if k not in ("embedder", "index")},
            "content_hash": _content_hash(files),
            "data": data.name,
            "files": {name: record.model_dump() for name, record in files.items()},
            "saved": now_iso(),
        }
        replaced = _live_data(self.path)
        tmp = self.path / f".manifest-{os.getpid()}.tmp"
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path / MANIFEST)
        _fsync_dir(self.path)
        self._files, self._content_hash, self._data_dir = files, manifest["content_hash"], data
        self._dirty_vectors = self._dirty_meta = False
        self._remove_stale(data, replaced)
        return self.path

    def _new_data_dir(self) -> Path:
        """A new folder numbered after every existing one; ``mkdir`` applies the umask (``mkdtemp`` would not)."""
        seq = max((_seq(p.name) for p in self.path.iterdir() if _DATA.match(p.name)), default=0) + 1
        while True:
            data = self.path / f"data-{seq:06d}-{secrets.token_hex(4)}"
            try:
                data.mkdir()
                return data
            except FileExistsError:
                continue

    def _remove_stale(self, live: Path, replaced: str | None) -> None:
        """Delete the data folders readers can no longer be opening, and manifest temporaries.

        Kept: the newest :data:`KEEP_DATA_DIRS` and the one this save replaced. Removed besides: folders newer
        than the replaced one (or any, on a first save), which only a killed save can have left.
        """
        folders = sorted((p for p in self.path.iterdir() if _DATA.match(p.name) and p != live),
                         key=lambda p: (_seq(p.name), p.name), reverse=True)
        for rank, folder in enumerate(folders, start=1):
            if folder.name == replaced:
                continue
            unfinished = replaced is None or _seq(folder.name) > _seq(replaced)
            if unfinished or rank >= KEEP_DATA_DIRS:
                shutil.rmtree(folder, ignore_errors=True)
        for tmp in self.path.glob(".manifest-*.tmp"):
            tmp.unlink(missing_ok=True)

    def _write_meta(self, data: Path) -> dict[str, FileRecord]:
        """Write the entries (with their current counters), the summarised episodes and the log."""
        lines = [("null" if e is None else e.model_dump_json()) for e in self._rows]
        _write(data / "entries.jsonl", "".join(line + "\n" for line in lines).encode("utf-8"))
        _write(data / "episodes.txt", "".join(e + "\n" for e in sorted(self.episodes)).encode("utf-8"))
        _write(data / "log.jsonl", "".join(json.dumps(r) + "\n" for r in self._log).encode("utf-8"))
        self._stats_changed.clear()
        return {name: _describe(data / name) for name in META_FILES}

    def _write_vectors(self, data: Path) -> dict[str, FileRecord]:
        import faiss

        for key in KEYS:
            faiss.write_index(self._index[key], str(data / f"{key}.faiss"))
        with (data / "guidance.npy").open("wb") as handle:
            np.save(handle, self._guidance)
        for name in VECTOR_FILES:
            _fsync_file(data / name)
        return {name: _describe(data / name) for name in VECTOR_FILES}

    def _write_counters(self, data: Path) -> dict[str, FileRecord]:
        """``counters.json`` when some counters are newer than ``entries.jsonl`` or episodes were credited."""
        if not self._stats_changed and not self.credited:
            return {}
        counters = {"stats": {i: self._rows[self._row_of[i]].stats.model_dump() for i in sorted(self._stats_changed)
                              if i in self._row_of},
                    "credited": sorted(self.credited)}
        _write(data / COUNTERS, json.dumps(counters).encode("utf-8"))
        return {COUNTERS: _describe(data / COUNTERS)}

    def _carry(self, previous: Path | None, data: Path, names: tuple[str, ...]) -> dict[str, FileRecord] | None:
        """Hard-link unchanged files from the previous data folder; None when there is none or another
        process's save removed it (the caller then writes the files afresh)."""
        if previous is None:
            return None
        try:
            for name in names:
                try:
                    os.link(previous / name, data / name)
                except FileNotFoundError:
                    raise
                except OSError:  # a filesystem without hard links
                    shutil.copy2(previous / name, data / name)
        except FileNotFoundError:
            for name in names:  # never write through a link: it would change the previous folder's file
                (data / name).unlink(missing_ok=True)
            return None
        return {name: self._files[name] for name in names}


def _same_group(existing: Entry | None, new: Entry) -> bool:
    """Entries that may merge: same env, task type, kind and trust, the same actions and the same numbered
    names in their situations. Entries that read alike but name other things are other facts: "take egg 1
    from drawer 1" is not "take egg 1 from shelf 2", and a room with "a drawer 2, a drawer 1" is not one
    with "a drawer 1" (MiniLM puts both pairs above 0.9)."""
    return (existing is not None and _same_kind_of_situation(existing, new)
            and _action_key(existing) == _action_key(new))


def _same_kind_of_situation(a: Entry, b: Entry) -> bool:
    return (a.env == b.env and a.task_type == b.task_type and a.kind == b.kind
            and a.provenance.trust == b.provenance.trust
            and named_things(a.situation) == named_things(b.situation))


_NUMBERED = re.compile(r"[a-z]+ \d+")


def named_things(text: str) -> list[str]:
    """The numbered things a text names, in order ("drawer 1", "apple 2"): an ALFWorld room's first
    observation names its receptacles, so two texts that name the same things are of the same room."""
    return _NUMBERED.findall(text.lower())


def _action_key(entry: Entry) -> tuple[str, ...]:
    return tuple(" ".join(action.lower().split()) for action in entry.actions)


def _write(path: Path, payload: bytes) -> None:
    with path.open("wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    _fsync_file(path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _describe(path: Path) -> FileRecord:
    return FileRecord(size=path.stat().st_size, sha256=_sha256(path))


def _content_hash(files: dict[str, FileRecord]) -> str:
    """sha256 of ``entries.jsonl``, combined with that of ``counters.json`` when there is one, so a counter
    update changes the hash as it did when counters lived only in the entries."""
    entries = files["entries.jsonl"].sha256
    if COUNTERS not in files:
        return entries
    return hashlib.sha256(f"{entries}:{files[COUNTERS].sha256}".encode()).hexdigest()


def _seq(name: str) -> int:
    return int(_DATA.match(name).group(1))


def _live_data(path: Path) -> str | None:
    """The data folder the manifest names now, or None when there is no readable manifest."""
    try:
        return json.loads((path / MANIFEST).read_bytes()).get("data")
    except (OSError, ValueError, AttributeError):
        return None


def _read_checked(file: Path, record: FileRecord, check_hash: bool) -> bytes:
    """The bytes of one data file, checked against its manifest record."""
    try:
        payload = file.read_bytes()
    except FileNotFoundError:
        raise _DataGone(file) from None
    if len(payload) != record.size:
        raise BankError(f"{file}: {len(payload)} bytes, the manifest records {record.size}; {DAMAGED}")
    if check_hash and hashlib.sha256(payload).hexdigest() != record.sha256:
        raise BankError(f"{file}: content does not match the manifest's sha256; {DAMAGED}")
    return payload


def _text(file: Path, payload: bytes) -> str:
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BankError(f"{file}: not UTF-8 text ({err.reason} at byte {err.start}); {DAMAGED}") from None


def _lines(file: Path, payload: bytes) -> list[str]:
    """Lines split on newlines only (``str.splitlines`` would also split at characters JSON keeps raw)."""
    lines = _text(file, payload).split("\n")
    if lines[-1] == "":  # after the last newline, or an empty file
        lines.pop()
    return lines


def _parse_json_line(file: Path, line_no: int, line: str):
    try:
        return json.loads(line)
    except json.JSONDecodeError as err:
        raise BankError(f"{file}:{line_no}: not JSON ({err.msg}); {DAMAGED}") from None


def _parse_entry(file: Path, line_no: int, line: str) -> Entry | None:
    record = _parse_json_line(file, line_no, line)
    if record is None:
        return None
    try:
        return Entry.model_validate(record)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "entry"
        raise BankError(f"{file}:{line_no}: bad '{key}': {first['msg']}; {DAMAGED}") from None


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]
