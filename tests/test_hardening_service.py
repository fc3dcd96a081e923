"""The bank service against careless and hostile clients: tokens, Host headers, docs, feedback (real uvicorn on
loopback, real banks). The feedback timing on a large bank is printed (run with ``-s``), not asserted."""

from __future__ import annotations

import json
import socket
import statistics
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from bank_data import alf_place, alf_transform, web_success
from loopback import serving

from expbank.bank.entry import Entry, Outcome
from expbank.bank.service import LOOPBACK_HOSTS, create_app
from expbank.bank.store import Bank
from expbank.bank.summarise import RuleSummariser
from expbank.cli import main
from expbank.errors import UserError

TOKEN = {"Authorization": "Bearer s3cret"}


@pytest.fixture(scope="module")
def bank_path(tmp_path_factory, embedder) -> Path:
    """A small bank with one quarantined entry."""
    path = tmp_path_factory.mktemp("svc") / "bank"
    bank = Bank.create(path, embedder=embedder)
    for episode in (alf_transform("heat"), alf_transform("cool", task_id="c"), alf_place(), web_success()):
        bank.add(RuleSummariser().summarise(episode))
    held = next(bank.entries())
    bank.update(held.id, "quarantine", "test", provenance={"trust": "quarantined", "trust_reason": "test"})
    bank.save()
    return path


def _fresh(bank_path: Path, tmp_path: Path) -> Path:
    from expbank.bank.store import copy_bank

    copy_bank(bank_path, tmp_path / "bank")
    return tmp_path / "bank"


def test_no_writable_service_without_a_token(bank_path, capsys, monkeypatch):
    bank = Bank.open(bank_path, writable=True)
    for token in (None, ""):
        with pytest.raises(UserError, match="a writable service needs a token.*--token TOKEN or set \\$EXPBANK_TOKEN"):
            create_app(bank, token=token, writable=True)
    monkeypatch.delenv("EXPBANK_TOKEN", raising=False)
    cases = {("--writable",): "a writable service needs a token",
             ("--token", ""): "the token is empty",
             ("--host", "0.0.0.0"): "name the host names clients use with --allow-host NAME"}
    for flags, message in cases.items():
        capsys.readouterr()
        assert main(["serve", str(bank_path), *flags]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    monkeypatch.setenv("EXPBANK_TOKEN", " ")
    assert main(["serve", str(bank_path), "--writable"]) == 1
    assert "the token is empty" in capsys.readouterr().err


def _raw_get(url: str, host_line: str) -> int:
    """The status of ``GET /stats`` sent by hand, so the Host header is exactly ``host_line`` (or absent)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET /stats HTTP/1.0\r\n{host_line}\r\n".encode())
        return int(sock.recv(64).split()[1])


def test_an_unknown_host_header_is_refused(bank_path):
    app = create_app(Bank.open(bank_path, writable=False), allowed_hosts=(*LOOPBACK_HOSTS, "bank.internal"))
    with serving(app) as url:
        port = url.rsplit(":", 1)[1]
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/stats").status_code == 200
            for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "localhost.", ""):
                reply = client.get("/stats", headers={"Host": host})
                assert reply.status_code == 400 and "--allow-host" in reply.json()["detail"], host
            for host in (f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", "bank.internal:8765"):
                assert client.get("/stats", headers={"Host": host}).status_code == 200, host
        assert _raw_get(url, "") == 400  # HTTP/1.0 without a Host header
        assert _raw_get(url, f"Host: 127.0.0.1:{port}\r\n") == 200


def test_docs_and_schema_are_behind_the_token(bank_path):
    with serving(create_app(Bank.open(bank_path, writable=False), token="s3cret")) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        for route in ("/docs", "/openapi.json", "/stats"):
            assert client.get(route).status_code == 401, route
        assert "swagger" in client.get("/docs", headers=TOKEN).text.lower()
        schema = client.get("/openapi.json", headers=TOKEN).json()
        assert {"/retrieve", "/stats"} <= set(schema["paths"]) and "/docs" not in schema["paths"]
        assert client.get("/redoc", headers=TOKEN).status_code == 404
    with serving(create_app(Bank.open(bank_path, writable=False))) as url:  # no token: docs open, as before
        assert httpx.get(f"{url}/docs", timeout=30).status_code == 200


def test_feedback_counts_an_episode_once_and_never_credits_quarantined_entries(bank_path, tmp_path):
    path = _fresh(bank_path, tmp_path)
    bank = Bank.open(path, writable=True)
    trusted = [e.id for e in bank.entries()][:2]
    held = next(e.id for e in bank.entries(include_quarantined=True) if e.provenance.trust == "quarantined")
    body = {"episode_id": "alfworld-dev-x-m-bank-s0", "entry_ids": [*trusted, held, "gone"], "success": True}
    with serving(create_app(bank, token="s3cret", writable=True)) as url, \
            httpx.Client(base_url=url, timeout=30, headers=TOKEN) as client:
        first = client.post("/feedback", json=body).json()
        replies = [client.post("/feedback", json=body).json() for _ in range(99)]
    assert first == {"credited": 2, "unknown": 1, "quarantined": 1, "repeat": False}
    assert all(reply == {"credited": 0, "unknown": 0, "quarantined": 0, "repeat": True} for reply in replies)
    saved = Bank.open(path)
    utilities = [saved.get(i).stats.utility for i in trusted]
    print(f"\n100 identical feedback calls: utility 0.5 -> {utilities} (one credit)")
    assert utilities == [2 / 3, 2 / 3] and saved.get(held).stats.uses == 0
    # the ledger is on disk: a restarted service still refuses the repeat
    with serving(create_app(Bank.open(path, writable=True), token="s3cret", writable=True)) as url:
        reply = httpx.post(f"{url}/feedback", json=body, headers=TOKEN, timeout=30).json()
        assert reply["repeat"] is True
        other = httpx.post(f"{url}/feedback", json={**body, "episode_id": "another"}, headers=TOKEN, timeout=30)
        assert other.json()["credited"] == 2
    assert Bank.open(path).get(trusted[0]).stats.uses == 2


def test_feedback_saves_only_the_counters(tmp_path):
    rows = 17_700
    path = tmp_path / "big"
    bank = Bank.create(path, dim=384)
    rng = np.random.default_rng(0)
    vectors = {k: rng.standard_normal((rows, 384)).astype("float32") for k in ("task", "situation", "guidance")}
    entries = [Entry(env="alfworld", task_type="t", kind="strategy", task=f"task {i}", task_id=str(i),
                     situation=f"when the {i}th thing is seen " * 4, guidance=f"do the {i}th thing " * 6,
                     outcome=Outcome(success=True, score=1.0)) for i in range(rows)]
    bank.add(entries, gate=False, dedup=False,
             vectors={k: v / np.linalg.norm(v, axis=1, keepdims=True) for k, v in vectors.items()})
    bank.save()
    ids = [e.id for e in bank.entries()]
    times = []
    with serving(create_app(Bank.open(path, writable=True), token="s3cret", writable=True)) as url, \
            httpx.Client(base_url=url, timeout=60, headers=TOKEN) as client:
        for call in range(21):
            manifest = json.loads((path / "manifest.json").read_text())
            before = {name: (path / manifest["data"] / name).stat().st_ino for name in manifest["files"]}
            start = time.perf_counter()
            reply = client.post("/feedback", json={"episode_id": f"ep{call}", "entry_ids": ids[call * 3:call * 3 + 3],
                                                   "success": call % 2 == 0})
            times.append(time.perf_counter() - start)
            assert reply.status_code == 200 and reply.json()["credited"] == 3
            manifest = json.loads((path / "manifest.json").read_text())
            after = {name: (path / manifest["data"] / name).stat().st_ino for name in manifest["files"]}
            assert {n for n in after if after[n] != before.get(n)} == {"counters.json"}  # the rest is linked
    size = (path / manifest["data"] / "counters.json").stat().st_size
    entries_size = (path / manifest["data"] / "entries.jsonl").stat().st_size
    print(f"\n/feedback on {rows} entries: p50 {statistics.median(times) * 1000:.0f} ms; each save writes "
          f"counters.json ({size} bytes) and links entries.jsonl ({entries_size} bytes) and the indexes")
    saved = Bank.open(path, verify=True)
    assert saved.get(ids[0]).stats.uses == 1 and len(saved.credited) == 21


def test_stats_reports_the_source_splits(bank_path):
    with serving(create_app(Bank.open(bank_path, writable=False), token="s3cret")) as url:
        stats = httpx.get(f"{url}/stats", headers=TOKEN, timeout=30).json()
    assert stats["sources"] == [["alfworld", "train"], ["webshop", "train"]]
