"""HTTP service for frozen actors (FastAPI): retrieval, optional feedback, stats; OpenAPI at ``/docs``.

* Read-only unless started ``--writable``: only then does ``POST /feedback`` exist, so an evaluation
  server can never change utility counters.
* With a token, every request needs ``Authorization: Bearer <token>`` (or ``X-API-Key``); compared in
  constant time.
* Request bodies over ``max_body_bytes`` are refused with 413 before they are read into memory.
* Feedback is saved atomically after each call, under a lock (one writer).
"""

from __future__ import annotations

import hmac
import threading
from typing import Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from expbank.bank.curation import credit
from expbank.bank.retrieval import format_experience, search
from expbank.bank.store import Bank

MAX_BODY_BYTES = 64 * 1024


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(None, max_length=8000)
    task: str | None = Field(None, max_length=8000)
    observation: str | None = Field(None, max_length=16000)
    k: int = Field(3, ge=1, le=50)
    kinds: list[Literal["strategy", "warning", "trajectory"]] | None = None
    key: Literal["both", "task", "situation"] = "both"
    exclude_task_ids: list[str] = Field(default_factory=list, max_length=1000)

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

    entry_ids: list[str] = Field(max_length=100)
    success: bool


def create_app(bank: Bank, token: str | None = None, writable: bool = False,
               max_body_bytes: int = MAX_BODY_BYTES) -> FastAPI:
    app = FastAPI(title="expbank experience bank", version="1",
                  description="Retrieve experience for a frozen actor (docs/design.md §4–5).")
    lock = threading.Lock()

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

    def check_token(request: Request) -> None:
        if token is None:
            return
        given = request.headers.get("x-api-key") or ""
        auth = request.headers.get("authorization") or ""
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(status_code=401, detail="missing or wrong token",
                                headers={"WWW-Authenticate": "Bearer"})

    @app.post("/retrieve", response_model=RetrieveResponse, dependencies=[Depends(check_token)])
    def retrieve(body: RetrieveRequest) -> RetrieveResponse:
        with lock:
            hits = search(bank, query=body.query, task=body.task, observation=body.observation, k=body.k,
                          key=body.key, kinds=body.kinds, exclude_task_ids=body.exclude_task_ids)
        return RetrieveResponse(entries=[hit.as_dict() for hit in hits],
                                experience=format_experience(hit.entry for hit in hits))

    @app.get("/stats", dependencies=[Depends(check_token)])
    def stats() -> dict:
        return {**bank.stats(), "content_hash": bank.content_hash, "writable": writable}

    if writable:
        @app.post("/feedback", dependencies=[Depends(check_token)])
        def feedback(body: FeedbackRequest) -> dict:
            with lock:
                found = credit(bank, body.entry_ids, body.success)
                bank.save()
            return {"credited": found, "unknown": len(set(body.entry_ids)) - found}

    return app
