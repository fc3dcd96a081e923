"""The bank directory under concurrent readers, external saves, kills and damage (docs/design.md §4).

Real banks, real subprocesses, real SIGKILL. The reader/writer loop prints its counts (run with ``-s``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from bank_data import alf_failure, alf_place, alf_transform, web_success
from loopback import serving

from expbank.bank.service import create_app
from expbank.bank.store import Bank
from expbank.bank.summarise import RuleSummariser
from expbank.cli import main
from expbank.trajectory import write_episodes

WRITER = r"""
import sys, time
import numpy as np
from expbank.bank.entry import Entry, Outcome
from expbank.bank.store import Bank

path, stop = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
bank = Bank.open(path)
saves, i = 0, 0
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    try:
        open(stop).close()
        break
    except FileNotFoundError:
        pass
    batch = [Entry(env="alfworld", task_type="t", kind="strategy", task=f"task {i}-{j}", task_id=str(i),
                   situation=f"situation {i}-{j}", guidance=f"guidance {i}-{j}",
                   outcome=Outcome(success=True, score=1.0)) for j in range(2)]
    vectors = {k: rng.standard_normal((2, 384)).astype("float32") for k in ("task", "situation", "guidance")}
    bank.add(batch, gate=False, vectors={k: v / np.linalg.norm(v, axis=1, keepdims=True) for k, v in vectors.items()})
    bank.delete([e.id for e in bank.entries()][:2])  # the bank keeps its size; tombstones get compacted
    bank.save()
    entry = next(bank.entries())
    bank.set_stats(entry.id, entry.stats.uses + 1, entry.stats.successes, None)
    bank.save()  # a counter-only save
    saves += 2
    i += 1
print(saves, flush=True)
"""

READER = r"""
import json, sys, time
from expbank.bank.store import Bank

path, want = sys.argv[1], int(sys.argv[2])
opens = failures = 0
first = None
deadline = time.monotonic() + 240
while opens < want and time.monotonic() < deadline:
    try:
        bank = Bank.open(path, writable=False)
        assert len(bank) == 20, len(bank)
    except Exception as err:
        failures += 1
        first = first or f"{type(err).__name__}: {err}"
    opens += 1
print(json.dumps({"opens": opens, "failures": failures, "first": first}), flush=True)
"""


def _small_bank(path: Path, embedder) -> Bank:
    bank = Bank.create(path, embedder=embedder)
    for episode in (alf_transform("heat"), alf_transform("cool", task_id="c"), alf_place(), alf_failure(),
                    web_success()):
        bank.add(RuleSummariser().summarise(episode))
    bank.save()
    return bank


def _random_bank(path: Path, rows: int) -> None:
    import numpy as np

    from expbank.bank.entry import Entry, Outcome

    bank = Bank.create(path, dim=384)
    rng = np.random.default_rng(1)
    entries = [Entry(env="alfworld", task_type="t", kind="strategy", task=f"task {i}", task_id=str(i),
                     situation=f"situation {i}", guidance=f"guidance {i}", outcome=Outcome(success=True, score=1.0))
               for i in range(rows)]
    vectors = {k: rng.standard_normal((rows, 384)).astype("float32") for k in ("task", "situation", "guidance")}
    bank.add(entries, gate=False, vectors={k: v / np.linalg.norm(v, axis=1, keepdims=True) for k, v in vectors.items()})
    bank.save()


def test_readers_beside_a_writer_never_fail(tmp_path):
    path, stop = tmp_path / "bank", tmp_path / "stop"
    _random_bank(path, 20)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(stop)], stdout=subprocess.PIPE,
                              text=True)
    try:
        reader = subprocess.run([sys.executable, "-c", READER, str(path), "5000"], capture_output=True, text=True,
                                timeout=300)
    finally:
        stop.touch()
        saves = int(writer.communicate(timeout=60)[0].split()[-1])
    result = json.loads(reader.stdout)
    print(f"\nreader beside writer: {result['opens']} opens, {result['failures']} failures, "
          f"{saves} saves meanwhile")
    assert result["failures"] == 0, result["first"]
    assert result["opens"] >= 5000 and saves >= 100


def test_a_writable_service_keeps_working_after_external_saves(tmp_path, embedder):
    path = tmp_path / "bank"
    _small_bank(path, embedder)
    ids = [e.id for e in Bank.open(path).entries()][:3]
    app = create_app(Bank.open(path, writable=True, embedder=embedder), token="t", writable=True)
    with serving(app) as url, httpx.Client(base_url=url, timeout=60, headers={"X-API-Key": "t"}) as client:
        for round_, entry_id in enumerate(ids):
            reply = client.post("/feedback", json={"episode_id": f"ep{round_}", "entry_ids": ids[:2], "success": True})
            assert reply.status_code == 200 and reply.json()["credited"] == 2, reply.text
            subprocess.run(["expbank", "bank", "pin", str(path), entry_id], check=True, capture_output=True)
        reply = client.post("/feedback", json={"episode_id": "ep-last", "entry_ids": ids[:2], "success": False})
        assert reply.status_code == 200 and reply.json()["credited"] == 2
        subprocess.run(["expbank", "bank", "prune", str(path), "--capacity", "5"], check=True, capture_output=True)
        assert client.get("/stats").json()["entries"] == 5  # the service serves what the CLI saved
    bank = Bank.open(path, verify=True)
    assert all(bank.get(i).pinned for i in ids)  # every CLI save survived the service's saves
    assert [(bank.get(i).stats.uses, bank.get(i).stats.successes) for i in ids[:2]] == [(4, 3), (4, 3)]
    assert bank.credited == {"ep0", "ep1", "ep2", "ep-last"}


def _kill_when_saving(command: list[str], out: Path) -> bool:
    """Run ``command`` and SIGKILL it as soon as a data folder appears in ``out``; whether it died before
    writing the manifest (the state a kill during a first save leaves)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while process.poll() is None and time.monotonic() < deadline:
        if out.is_dir() and any(p.name.startswith("data-") for p in out.iterdir()):
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.0002)
    process.wait()
    return not (out / "manifest.json").exists() and out.is_dir()


@pytest.mark.parametrize("command", ["build", "merge"])
def test_a_kill_during_a_first_save_does_not_block_the_rerun(tmp_path, embedder, command):
    trajectories = tmp_path / "t.jsonl"
    write_episodes(trajectories, [alf_transform("heat"), alf_place(), alf_failure(), web_success()])
    if command == "build":
        argv = ["bank", "build", str(trajectories)]
    else:
        _small_bank(tmp_path / "a", embedder)
        _random_bank(tmp_path / "b", 3000)  # a save long enough to be killed in
        argv = ["bank", "merge", str(tmp_path / "a"), str(tmp_path / "b")]
    out = tmp_path / "out"
    tries = 0
    while True:
        tries += 1
        shutil.rmtree(out, ignore_errors=True)
        if _kill_when_saving(["expbank", *argv, "--out", str(out)], out):
            break
        if tries == 5:
            pytest.fail("the command was never killed between creating its data folder and its manifest")
    leftovers = sorted(p.name for p in out.iterdir())
    print(f"\n{command}: SIGKILL mid-save on try {tries} left {leftovers} and no manifest")
    rerun = subprocess.run(["expbank", *argv, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    bank = Bank.open(out, verify=True)
    assert len(bank) > 0
    live = json.loads((out / "manifest.json").read_text())["data"]
    assert sorted(p.name for p in out.iterdir()) == [live, "manifest.json"], leftovers  # the killed save's is gone


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _flip_byte(file: Path, at: int) -> None:
    data = bytearray(file.read_bytes())
    data[at] ^= 0x01
    file.write_bytes(bytes(data))


def _data(path: Path) -> Path:
    return path / json.loads((path / "manifest.json").read_text())["data"]


DAMAGE = {
    "flipped byte in entries.jsonl": (lambda p: _flip_byte(_data(p) / "entries.jsonl", 40),
                                      "entries.jsonl: content does not match the manifest's sha256"),
    "flipped byte in counters.json": (lambda p: _flip_byte(_data(p) / "counters.json", 5),
                                      "counters.json: content does not match the manifest's sha256"),
    "missing manifest key": (lambda p: (p / "manifest.json").write_text(json.dumps(
        {k: v for k, v in json.loads((p / "manifest.json").read_text()).items() if k != "data"})),
        "manifest.json: bad 'data': Field required"),
    "manifest not JSON": (lambda p: (p / "manifest.json").write_text("{\"format_version\": 1,"),
                          "manifest.json: not valid JSON"),
    "garbage faiss file": (lambda p: (_data(p) / "task.faiss").write_bytes(
        os.urandom((_data(p) / "task.faiss").stat().st_size)), "task.faiss: not a readable faiss index"),
    "truncated faiss file": (lambda p: (_data(p) / "situation.faiss").write_bytes(
        (_data(p) / "situation.faiss").read_bytes()[:100]), "situation.faiss: 100 bytes, the manifest records"),
    "garbage guidance": (lambda p: (_data(p) / "guidance.npy").write_bytes(
        b"\0" * (_data(p) / "guidance.npy").stat().st_size), "guidance.npy: not a readable array"),
    "missing data folder": (lambda p: shutil.rmtree(_data(p)), "missing, though the manifest names it"),
}


@pytest.fixture(scope="module")
def good_bank(tmp_path_factory, embedder) -> Path:
    path = tmp_path_factory.mktemp("good") / "bank"
    bank = _small_bank(path, embedder)
    entry = next(bank.entries())
    bank.set_stats(entry.id, 1, 1, None)
    bank.save()  # so the bank has a counters.json
    return path


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_bank_is_one_line_naming_the_file(good_bank, tmp_path, capsys, damage):
    path = tmp_path / "bank"
    shutil.copytree(good_bank, path)
    harm, message = DAMAGE[damage]
    harm(path)
    before = _digest(path)
    for argv in (["bank", "stats", str(path)], ["bank", "pin", str(path), "x"]):
        capsys.readouterr()
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and str(path) in err, err
    assert _digest(path) == before  # nothing written


def test_a_file_given_as_a_bank_is_one_line(tmp_path, capsys):
    file = tmp_path / "bank.jsonl"
    file.write_text("{}\n")
    for argv in (["bank", "stats", str(file)], ["bank", "build", str(file), "--out", str(file)]):
        capsys.readouterr()
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "bank.jsonl: a file, not a bank directory" in err, err
    assert file.read_text() == "{}\n"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o755), (0o002, 0o775)])
def test_data_folders_follow_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        _random_bank(tmp_path / "bank", 3)
    finally:
        os.umask(old)
    assert _data(tmp_path / "bank").stat().st_mode & 0o777 == mode
