"""``expbank serve-model MODEL [--adapter DIR] [--host H] [--port N]``: an OpenAI-compatible server over the
``hf`` backend, so a trained policy can be evaluated by any harness and tests have a real server.

Usage::

    expbank serve-model smollm2-135m --adapter runs/grpo/adapter --port 8000
    # then, e.g.: actor.backend=openai actor.base_url=http://127.0.0.1:8000/v1 actor.model=smollm2-135m

Endpoints: ``POST /v1/chat/completions`` (``messages``, ``max_tokens`` or ``max_completion_tokens``,
``temperature``, ``stop``, ``seed``, ``n=1``; no streaming, no tools; other fields are ignored) and
``GET /v1/models``. Bad bodies get HTTP 400 with an OpenAI-style ``{"error": {...}}``.

- One model, so requests are served one at a time (batching across clients is vLLM's job).
- Like OpenAI, the reply leaves out the stop string that ended it; like vLLM, the choice's ``stop_reason`` names
  that string (``null`` for end-of-sequence), which the ``openai`` backend uses to put it back.
- Defaults follow OpenAI: ``temperature`` 1.0; ``max_tokens`` defaults to ``DEFAULT_MAX_TOKENS``.
- The reply's ``model`` is MODEL, or ``MODEL+ADAPTER-DIR-NAME`` with an adapter, so runs record what answered.
- Loopback by default and no authentication: bind another host only on a trusted network.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

DEFAULT_MAX_TOKENS = 256
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _TextPart(BaseModel):
    type: Literal["text"]
    text: str


class _Message(BaseModel):
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[_TextPart]

    def as_chat(self) -> dict:
        text = self.content if isinstance(self.content, str) else "".join(p.text for p in self.content)
        return {"role": "system" if self.role == "developer" else self.role, "content": text}


class ChatRequest(BaseModel):
    """The subset of the chat-completions request this server honours."""

    model: str | None = None
    messages: list[_Message] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    stop: str | list[str] | None = None
    seed: int | None = None
    n: Literal[1] = 1
    stream: Literal[False] = False


_HINTS = {"n": "only n=1 is supported", "stream": "streaming is not supported"}


def _describe(error: dict) -> tuple[str, str | None]:
    """A one-line message and the offending parameter for a pydantic validation error."""
    if error.get("type") == "json_invalid":
        return f"the body is not valid JSON ({error.get('ctx', {}).get('error', 'decode error')})", None
    param = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
    if not param:
        return "the body must be a JSON object with 'messages' (Content-Type: application/json)", None
    return f"{param}: {_HINTS.get(param, error.get('msg', 'invalid value'))}", param


def served_name(model: str, adapter: str | None) -> str:
    return f"{model}+{Path(adapter).name}" if adapter else model


def create_app(backend: Any, name: str):
    """The FastAPI app over ``backend`` (an ``HFBackend``, whose ``generate_tokens`` gives token counts)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    app = FastAPI(title="expbank serve-model", version="1")
    lock = threading.Lock()
    eos_ids = {backend.tokenizer.eos_token_id, backend.tokenizer.pad_token_id}

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, err: RequestValidationError) -> JSONResponse:
        message, param = _describe(err.errors()[0] if err.errors() else {})
        return JSONResponse(status_code=400, content={"error": {
            "message": message, "type": "invalid_request_error", "param": param, "code": None}})

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "expbank"}]}

    @app.post("/v1/chat/completions")
    def chat_completions(request: ChatRequest) -> dict:
        stop = [request.stop] if isinstance(request.stop, str) else list(request.stop or [])
        max_tokens = request.max_completion_tokens or request.max_tokens or DEFAULT_MAX_TOKENS
        conversation = [message.as_chat() for message in request.messages]
        # an empty stop list makes HFBackend fall back to the protocol's stop; end-of-sequence is a no-op stop
        stop_strings = stop or [backend.tokenizer.eos_token]
        with lock:
            generation = backend.generate_tokens([conversation], temperature=request.temperature,
                                                 max_new_tokens=max_tokens, stop=stop_strings,
                                                 seed=request.seed)[0]
        text, stop_reason = generation.text, None
        hit = next((s for s in stop if text.endswith(s)), None)
        if hit is not None:
            text, stop_reason = text[: -len(hit)], hit
        ended = hit is not None or (generation.completion_ids and generation.completion_ids[-1] in eos_ids)
        prompt, completion = len(generation.prompt_ids), len(generation.completion_ids)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop" if ended or completion < max_tokens else "length",
                         "stop_reason": stop_reason, "logprobs": None}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }

    return app


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(app) -> Iterator[str]:
    """Serve the ASGI ``app`` on a free 127.0.0.1 port in a thread (uvicorn); yield ``http://127.0.0.1:PORT``
    and stop the server afterwards. For a scripted actor in a benchmark, and for tests' real servers."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the loopback server did not start in 20 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
