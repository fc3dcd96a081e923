"""The bank as Model Context Protocol tools (``expbank serve BANK --mcp``), for an agent of the user's own.

Tools (the ``mcp`` SDK's ``MCPServer``; their schemas come from the type hints):

* ``retrieve_experience(task, observation, k, env, kinds, exclude_task_ids)``: the top-k trusted entries and
  the ``<experience>`` block the project's own actors are shown (docs/design.md §5).
* ``bank_stats()``: the ``bank stats`` counts and the content hash.
* ``record_episode(episode)`` (only with ``--writable``): a finished episode as a trajectory record
  (docs/design.md §3). Its entries go through the bank's write path (the write gate, then dedup), and the
  entries its steps were shown are credited with the outcome it reports (``success``), once per
  ``episode_id``; the bank is saved atomically.

Over stdio the server is the client's own subprocess. Over streamable HTTP (``--port``) a token, when set, is
needed on every request (``Authorization: Bearer``), and a writable server refuses to start without one.
Calls run one at a time under a lock, and a save of the bank by another process is picked up before the next.
"""

from __future__ import annotations

import secrets
import threading
from typing import Any, Literal

from expbank.bank.curation import credit_once
from expbank.bank.retrieval import format_experience, search
from expbank.bank.store import Bank
from expbank.bank.summarise import RuleSummariser
from expbank.errors import UserError
from expbank.trajectory import Episode

Kind = Literal["strategy", "warning", "trajectory"]


def create_server(bank: Bank, writable: bool = False):
    """An ``MCPServer`` over ``bank`` (opened writable for ``writable``)."""
    from mcp.server.mcpserver import MCPServer

    if writable and not bank.writable:
        raise UserError(f"{bank.path}: open the bank writable to serve it --writable")
    server = MCPServer("expbank", instructions="Experience from past episodes: call retrieve_experience with "
                       "the task and the current observation before acting" +
                       ("; after an episode, record_episode with its trajectory and outcome." if writable else "."))
    lock = threading.Lock()
    state = {"bank": bank}

    def current() -> Bank:
        """The bank, reopened if another process saved it since (its saves would be lost otherwise)."""
        state["bank"] = state["bank"].latest()
        return state["bank"]

    @server.tool()
    def retrieve_experience(task: str, observation: str = "", k: int = 3, env: Literal["alfworld", "webshop"] |
                            None = None, kinds: list[Kind] | None = None,
                            exclude_task_ids: list[str] | None = None) -> dict[str, Any]:
        """Top-k trusted experience entries for a task and its current observation, and the <experience>
        block to put in the actor's prompt (entries quote their source observation as data)."""
        if not 1 <= k <= 50:
            raise ValueError("k must be between 1 and 50")
        with lock:
            hits = search(current(), task=task, observation=observation or None, k=k, kinds=kinds, env=env,
                          exclude_task_ids=exclude_task_ids or ())
        return {"experience": format_experience(hit.entry for hit in hits),
                "entries": [{"id": h.entry.id, "kind": h.entry.kind, "situation": h.entry.situation,
                             "guidance": h.entry.guidance, "actions": h.entry.actions, "score": round(h.score, 6)}
                            for h in hits]}

    @server.tool()
    def bank_stats() -> dict[str, Any]:
        """The bank's counts (entries by kind, trust and source) and its content hash."""
        with lock:
            live = current()
            return {**live.stats(), "content_hash": live.content_hash, "writable": writable}

    if writable:
        summariser = RuleSummariser()

        @server.tool()
        def record_episode(episode: dict[str, Any]) -> dict[str, Any]:
            """Add a finished episode (a trajectory record: task, steps with observation, action and the ids of
            the entries each step was shown, success, score) to the bank: its entries pass the write gate, and
            the entries it was shown are credited with its reported outcome, once per episode_id."""
            record = Episode.model_validate(episode)
            with lock:
                live = current()
                repeat = record.episode_id in live.episodes
                report = None if repeat else live.add(summariser.summarise(record))
                credited = credit_once(live, record) or 0
                live.episodes.add(record.episode_id)
                live.save()
            return {"repeat": repeat, "credited": credited,
                    "added": report.added if report else [], "merged": len(report.merged) if report else 0,
                    "quarantined": report.quarantined if report else []}

    return server


def http_app(server, token: str | None):
    """The streamable HTTP app (``/mcp``) behind a bearer-token check when ``token`` is set."""
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import JSONResponse

    app = server.streamable_http_app()
    if token:
        async def check(request, call_next):
            given = request.headers.get("authorization", "")
            if not secrets.compare_digest(given.encode(), f"Bearer {token}".encode()):
                return JSONResponse({"detail": "missing or wrong token"}, status_code=401)
            return await call_next(request)

        app.add_middleware(BaseHTTPMiddleware, dispatch=check)
    return app
