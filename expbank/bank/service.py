"""HTTP service for frozen actors (FastAPI): retrieval, optional feedback, stats; OpenAPI at ``/docs``.

* Read-only unless started ``--writable``: only then does ``POST /feedback`` exist, so an evaluation
  server can never change utility counters. A writable service needs a token.
* With a token, every route (``/docs`` and ``/openapi.json`` too) needs ``Authorization: Bearer <token>``
  (or ``X-API-Key: <token>``), read by FastAPI's security dependencies (so the OpenAPI schema declares
  them) and compared in constant time; anything else is a 401.
* The ``Host`` header must name one of ``allowed_hosts`` (loopback names by default), else 400: a web page
  that rebinds its own DNS name to 127.0.0.1 cannot reach the service from a browser.
* Request bodies over ``max_body_bytes`` are refused with 413 before they are read into memory.
* ``POST /feedback`` credits one finished episode once: the bank records the credited episode ids and a
  repeat changes nothing. Only trusted entries are credited, and the save writes only the counters
  (docs/design.md §4), under a lock (one writer).
* A save of the bank by another process (a CLI command) is picked up at the next request: the service
  reopens the bank before using it, so it serves the new content and its own saves build on it.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable
from typing import Annotated, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, model_validator

from expbank.bank.curation import credit
from expbank.bank.retrieval import format_experience, search
from expbank.bank.store import Bank
from expbank.errors import UserError

MAX_BODY_BYTES = 64 * 1024
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# where a client may put the token; either may be absent (auto_error=False), check_token decides
BEARER = HTTPBearer(auto_error=False)
API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False)


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(None, max_length=8000)
    task: str | None = Field(None, max_length=8000)
    observation: str | None = Field(None, max_length=16000)
    k: int = Field(3, ge=1, le=50)
    kinds: list[Literal["strategy", "warning", "trajectory"]] | None = None
    key: Literal["both", "task", "situation"] = "both"
    exclude_task_ids: list[str] = Field(default_factory=list, max_length=1000)
    env: Literal["alfworld", "webshop"] | None = Field(None, description="only entries made in this environment")

    @model_validator(mode="after")
    def _one_query(self) -> RetrieveRequest:
        if (self.query is None) == (self.task is None):
            raise ValueError("give either 'query' or 'task' (with an optional 'observation')")
        return self


class RetrieveResponse(BaseModel):
    entries: list[dict]
    experience: str


class FeedbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episode_id: str = Field(min_length=1, max_length=512, description="credited once; a repeat is ignored")
    entry_ids: list[str] = Field(max_length=100)
    success: bool


class FeedbackResponse(BaseModel):
    credited: int
    unknown: int  # ids the bank does not hold (pruned meanwhile, or never there)
    quarantined: int  # held but not trusted: never credited
    repeat: bool  # the episode was credited before; nothing changed


def host_name(header: str) -> str:
    """The host part of a ``Host`` header (``name``, ``name:port``, ``[v6]`` or ``[v6]:port``), lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def create_app(bank: Bank, token: str | None = None, writable: bool = False,
               max_body_bytes: int = MAX_BODY_BYTES, allowed_hosts: Iterable[str] = LOOPBACK_HOSTS) -> FastAPI:
    """The service over ``bank``; ``allowed_hosts`` may hold ``*`` to accept any ``Host`` header."""
    if writable and not token:
        raise UserError("a writable service needs a token, since POST /feedback changes the bank: "
                        "pass --token TOKEN or set $EXPBANK_TOKEN")
    hosts = {host_name(host) for host in allowed_hosts}
    app = FastAPI(title="expbank experience bank", version="1", docs_url=None, redoc_url=None, openapi_url=None,
                  description="Retrieve experience for a frozen actor (docs/design.md §4–5).")
    lock = threading.Lock()
    state = {"bank": bank}  # replaced when another process saves the bank (see current)

    def current() -> Bank:
        """The bank as saved now, reopened if another process saved it since; call under the lock."""
        state["bank"] = state["bank"].latest()  # the embedder is cached
        return state["bank"]

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > max_body_bytes):
            return JSONResponse({"detail": f"request body over {max_body_bytes} bytes"}, status_code=413)
        if length is None and request.method in ("POST", "PUT", "PATCH"):
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_body_bytes:
                    return JSONResponse({"detail": f"request body over {max_body_bytes} bytes"}, status_code=413)
            request._body = body
        return await call_next(request)

    @app.middleware("http")  # added last, so it runs first
    async def check_host(request: Request, call_next):
        if "*" not in hosts and host_name(request.headers.get("host", "")) not in hosts:
            return JSONResponse({"detail": "unknown Host header; start the service with --allow-host NAME "
                                           "to accept requests addressed to NAME"}, status_code=400)
        return await call_next(request)

    def check_token(bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
                    api_key: Annotated[str | None, Depends(API_KEY)]) -> None:
        """401 unless the bearer token (or, without one, the ``X-API-Key``) is the service's token."""
        given = bearer.credentials if bearer is not None else api_key or ""
        if not secrets.compare_digest(given.encode(), token.encode()):
            raise HTTPException(status_code=401, detail="missing or wrong token",
                                headers={"WWW-Authenticate": "Bearer"})

    auth = [Depends(check_token)] if token else []

    @app.get("/openapi.json", include_in_schema=False, dependencies=auth)
    def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False, dependencies=auth)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=app.title)

    @app.post("/retrieve", response_model=RetrieveResponse, dependencies=auth)
    def retrieve(body: RetrieveRequest) -> RetrieveResponse:
        with lock:
            hits = search(current(), query=body.query, task=body.task, observation=body.observation, k=body.k,
                          key=body.key, kinds=body.kinds, exclude_task_ids=body.exclude_task_ids, env=body.env)
        return RetrieveResponse(entries=[hit.as_dict() for hit in hits],
                                experience=format_experience(hit.entry for hit in hits))

    @app.get("/stats", dependencies=auth)
    def stats() -> dict:
        """The ``bank stats`` counts, the content hash, and ``sources``: the (env, split) pairs the entries
        were made from, for the evaluation's split check (docs/design.md §8)."""
        with lock:
            live = current()
            return {**live.stats(), "content_hash": live.content_hash, "writable": writable,
                    "sources": sorted(list(pair) for pair in live.source_splits())}

    if writable:
        @app.post("/feedback", response_model=FeedbackResponse, dependencies=auth)
        def feedback(body: FeedbackRequest) -> FeedbackResponse:
            with lock:
                live = current()
                if body.episode_id in live.credited:
                    return FeedbackResponse(credited=0, unknown=0, quarantined=0, repeat=True)
                ids = list(dict.fromkeys(body.entry_ids))
                held = {i: entry for i in ids if (entry := live.get(i)) is not None}
                trusted = [i for i, entry in held.items() if entry.provenance.trust == "trusted"]
                try:
                    found = credit(live, trusted, body.success)
                    live.mark_credited(body.episode_id)
                    live.save()
                except Exception:  # drop the unsaved credit, so a retry of this request applies it
                    state["bank"] = Bank.open(live.path, writable=True)
                    raise
            return FeedbackResponse(credited=found, unknown=len(ids) - len(held),
                                    quarantined=len(held) - len(trusted), repeat=False)

    return app
