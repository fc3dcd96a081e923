"""Crash test (acceptance 4): SIGKILL during repeated saves never leaves a bank that fails to open."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time

import numpy as np

from expbank.bank.store import Bank

WRITER = r"""
import sys
import numpy as np
from expbank.bank.entry import Entry, Outcome
from expbank.bank.store import Bank, BankSettings

path = sys.argv[1]
rng = np.random.default_rng(int(sys.argv[2]))
try:
    bank = Bank.open(path)
except Exception:
    bank = Bank.create(path, BankSettings(tombstone_fraction=0.3), dim=384)
i = bank.num_rows
while True:
    batch = [Entry(env="alfworld", task_type="t", kind="strategy", task=f"task {i}-{j}", task_id=str(i),
                   situation=f"situation {i}-{j} " * 50, guidance=f"guidance {i}-{j}",
                   outcome=Outcome(success=True, score=1.0)) for j in range(20)]
    vectors = {k: rng.standard_normal((20, 384)).astype("float32") for k in ("task", "situation", "guidance")}
    for v in vectors.values():
        v /= np.linalg.norm(v, axis=1, keepdims=True)
    bank.add(batch, gate=False, vectors=vectors)
    live = [e.id for e in bank.entries()]
    bank.delete(live[:5])
    for entry_id in live[5:50]:
        entry = bank.get(entry_id)
        bank.set_stats(entry_id, entry.stats.uses + 1, entry.stats.successes, None)
    bank.save()
    for entry_id in live[5:50]:  # a counter-only save: indexes are linked, not rewritten
        entry = bank.get(entry_id)
        bank.set_stats(entry_id, entry.stats.uses + 1, entry.stats.successes + 1, None)
    bank.save()
    print(i, flush=True)
    i += 1
"""


def _check(path) -> None:
    """Opens with every file matching the manifest hashes, and entries, both indexes and the guidance
    vectors have the same number of rows (no half-written state)."""
    bank = Bank.open(path, verify=True)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["counts"]["entries"] == len(bank)
    assert bank.num_rows == bank._index["task"].ntotal == bank._index["situation"].ntotal == len(bank._guidance)


def test_kill_during_saves_leaves_a_readable_bank(tmp_path):
    path = tmp_path / "bank"
    rng = random.Random(0)
    saves_seen = 0
    for round_ in range(8):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(round_)],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(1.5, 3.0))  # import time ~1 s, then saves every few ms
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        saves_seen += len(out.split())
        if (path / "manifest.json").exists():
            _check(path)
    assert saves_seen >= 8, "the writer must have been killed mid-loop, after completed saves"
    bank = Bank.open(path, verify=True)
    assert len(bank) > 0
    assert np.isfinite(bank.vectors("task", range(min(5, bank.num_rows)))).all()
