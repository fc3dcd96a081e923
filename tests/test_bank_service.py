"""The HTTP service on loopback with a real client (acceptance 5)."""

from __future__ import annotations

import contextlib
import json

import httpx
import pytest
from bank_data import alf_place, alf_transform, web_success
from loopback import serving

from expbank.bank.service import create_app
from expbank.bank.store import Bank
from expbank.bank.summarise import RuleSummariser


@pytest.fixture()
def serve(new_bank):
    servers = contextlib.ExitStack()

    def start(token=None, writable=False, max_body_bytes=4096):
        bank = new_bank()
        for episode in (alf_transform("heat"), alf_transform("cool", task_id="c"), alf_place(), web_success()):
            bank.add(RuleSummariser().summarise(episode))
        bank.save()
        bank = Bank.open(bank.path, writable=writable, embedder=bank.embedder)
        app = create_app(bank, token=token, writable=writable, max_body_bytes=max_body_bytes)
        return servers.enter_context(serving(app)), bank

    with servers:
        yield start


def test_retrieve_stats_and_docs(serve):
    url, bank = serve()
    with httpx.Client(base_url=url, timeout=30) as client:
        goal = "cool some tomato and put it in countertop."
        reply = client.post("/retrieve", json={"task": goal, "observation": f"Your task is to: {goal}", "k": 2})
        assert reply.status_code == 200
        body = reply.json()
        assert len(body["entries"]) == 2 and body["entries"][0]["task_type"] == "pick_cool_then_place_in_recep"
        assert body["experience"].startswith("<experience>\n[1] situation: ")
        assert set(body["entries"][0]) >= {"id", "situation", "guidance", "provenance", "stats", "score"}
        reply = client.post("/retrieve", json={"query": "holding the mug, it must go in the cabinet",
                                               "kinds": ["trajectory"], "k": 1})
        assert reply.json()["entries"][0]["kind"] == "trajectory"
        stats = client.get("/stats").json()
        assert stats["entries"] == len(bank) and stats["writable"] is False
        manifest = json.loads((bank.path / "manifest.json").read_text())
        assert stats["content_hash"] == manifest["content_hash"]
        assert client.post("/retrieve", json={"task": "x", "query": "y"}).status_code == 422
        assert client.post("/feedback", json={"entry_ids": [], "success": True}).status_code in (404, 405)
        assert client.get("/openapi.json").json()["paths"].keys() >= {"/retrieve", "/stats"}


def test_token_required_when_set(serve):
    url, _ = serve(token="s3cret")
    with httpx.Client(base_url=url, timeout=30) as client:
        refused = client.get("/stats")
        assert refused.status_code == 401 and refused.json() == {"detail": "missing or wrong token"}
        assert refused.headers["www-authenticate"] == "Bearer"
        assert client.post("/retrieve", json={"query": "apple"}).status_code == 401
        for headers in ({"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}, {"X-API-Key": "wrong"},
                        {"Authorization": "Bearer wrong", "X-API-Key": "s3cret"}):  # a given bearer is the one checked
            assert client.get("/stats", headers=headers).status_code == 401, headers
        assert client.get("/stats", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.post("/retrieve", json={"query": "apple"}, headers={"X-API-Key": "s3cret"}).status_code == 200


def test_oversized_bodies_refused(serve):
    url, _ = serve(max_body_bytes=4096)
    with httpx.Client(base_url=url, timeout=30) as client:
        big = {"query": "apple " * 2000}
        assert client.post("/retrieve", json=big).status_code == 413

        def chunks():  # no Content-Length: the server counts while reading
            for _ in range(10):
                yield b"x" * 1000

        assert client.post("/retrieve", content=chunks(),
                           headers={"Content-Type": "application/json"}).status_code == 413


def test_feedback_only_when_writable_and_persisted(serve):
    url, bank = serve(token="t", writable=True)
    with httpx.Client(base_url=url, timeout=30, headers={"Authorization": "Bearer t"}) as client:
        hits = client.post("/retrieve", json={"query": "heat the apple", "k": 2}).json()["entries"]
        ids = [hit["id"] for hit in hits]
        body = {"episode_id": "ep-1", "entry_ids": ids + [ids[0], "nope"], "success": True}
        reply = client.post("/feedback", json=body)
        assert reply.json() == {"credited": 2, "unknown": 1, "quarantined": 0, "repeat": False}
        assert client.post("/feedback", json=body).json()["repeat"] is True
        assert client.post("/feedback", json={"entry_ids": ids, "success": True}).status_code == 422  # no id
    reopened = Bank.open(bank.path)
    assert all((reopened.get(i).stats.uses, reopened.get(i).stats.successes) == (1, 1) for i in ids)
    assert reopened.credited == {"ep-1"}
