"""The ``openai`` backend over real HTTP on loopback: against ``expbank serve-model``'s app with the tiny-random
model behind it, and against a scripted server for the error paths (429, 500, timeouts, malformed bodies)."""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from loopback import serving

from expbank.training.actors.openai_compat import BackendRequestError, OpenAICompatBackend

CONVERSATION = [{"role": "system", "content": "You act in a house."}, {"role": "user", "content": "go"}]


@contextlib.contextmanager
def _serve(app):
    """``app`` on a free loopback port; yields the ``/v1`` base URL."""
    with serving(app) as url:
        yield f"{url}/v1"


# ------------------------------------------------------------------ a real model behind expbank serve-model
@pytest.fixture(scope="module")
def hf_backend():
    """tiny-random (a real model with SmolLM2's tokenizer), loaded once for this module."""
    from expbank.training.actors.backends import HFBackend

    return HFBackend("tiny-random")


@pytest.fixture(scope="module")
def model_server(hf_backend):
    from expbank.training.actors.serve_model import create_app

    with _serve(create_app(hf_backend, "tiny-random")) as url:
        yield url


def test_replies_usage_and_cache_against_serve_model(model_server, hf_backend, tmp_path):
    from expbank.training.actors.backends import make_backend

    backend = make_backend("openai", "tiny-random", base_url=model_server, cache_dir=tmp_path, concurrency=2)
    conversations = [CONVERSATION[:1] + [{"role": "user", "content": word}] for word in ("go", "look", "wait")]
    before = hf_backend.usage.calls
    replies = backend.generate(conversations, temperature=0.0, max_new_tokens=4, seed=0)

    assert len(replies) == 3 and all(isinstance(reply, str) for reply in replies)
    assert hf_backend.usage.calls == before + 3
    assert backend.usage.calls == 3 and backend.usage.prompt_tokens > 0
    assert 3 <= backend.usage.completion_tokens <= 12
    assert backend.served_model == "tiny-random" and len(backend.last_usage) == 3
    # greedy decoding through HTTP gives what the model gives in process
    direct = hf_backend.generate(conversations[:1], max_new_tokens=4, stop=[hf_backend.tokenizer.eos_token])
    assert replies[0] == direct[0]

    paid, per_reply = backend.usage.completion_tokens, backend.last_usage
    again = backend.generate(conversations, temperature=0.0, max_new_tokens=4, seed=0)
    assert again == replies and backend.cache_hits == 3
    assert hf_backend.usage.calls == before + 4  # the direct call above; the repeat never reached the server
    assert backend.usage.calls == 3 and backend.usage.completion_tokens == paid
    assert backend.last_usage == per_reply  # a rebuilt report records the same tokens


def test_serve_model_routes_and_bad_bodies(model_server):
    with httpx.Client(base_url=model_server, timeout=30) as client:
        assert client.get("/models").json()["data"][0]["id"] == "tiny-random"
        reply = client.post("/chat/completions", json={"messages": [{"role": "user", "content": "hi"}],
                                                       "max_tokens": 2, "temperature": 0, "stop": "\n"})
        body = reply.json()
        assert reply.status_code == 200 and body["model"] == "tiny-random"
        assert body["usage"]["completion_tokens"] <= 2 and body["choices"][0]["finish_reason"] in ("stop", "length")
        bad = {"not json": "{oops", "no messages": {"max_tokens": 3},
               "two choices": {"messages": [{"role": "user", "content": "hi"}], "n": 2},
               "streaming": {"messages": [{"role": "user", "content": "hi"}], "stream": True},
               "a tool role": {"messages": [{"role": "tool", "content": "hi"}]}}
        for case, payload in bad.items():
            if isinstance(payload, str):
                reply = client.post("/chat/completions", content=payload,
                                    headers={"content-type": "application/json"})
            else:
                reply = client.post("/chat/completions", json=payload)
            assert reply.status_code == 400, case
            assert reply.json()["error"]["message"], case


def test_serve_model_command_is_registered():
    from expbank.cli import build_parser

    args = build_parser("serve-model").parse_args(["serve-model", "tiny-random", "--adapter", "a/b", "--port", "9"])
    assert (args.model, args.adapter, args.host, args.port) == ("tiny-random", "a/b", "127.0.0.1", 9)


# ------------------------------------------------------------------ a scripted server for the error paths
def _completion(content, finish_reason: str = "stop", **choice: object) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "scripted-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish_reason, **choice}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}}


class Script:
    """Replies to successive requests from ``steps``; afterwards echoes the last user message."""

    def __init__(self) -> None:
        self.steps: list = []
        self.times: list[float] = []
        self.delay = 0.0
        self.in_flight = self.peak = 0

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request):
            body = await request.json()
            self.times.append(time.monotonic())
            step = self.steps.pop(0) if self.steps else None
            if isinstance(step, (int, float)) and not isinstance(step, bool):  # sleep past the client's timeout
                await asyncio.sleep(step)
            elif isinstance(step, tuple):  # (status, headers)
                return JSONResponse({"error": {"message": "scripted"}}, status_code=step[0], headers=step[1])
            elif isinstance(step, str):
                return PlainTextResponse(step)
            elif isinstance(step, dict):
                return JSONResponse(step)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            await asyncio.sleep(self.delay)
            self.in_flight -= 1
            return JSONResponse(_completion(body["messages"][-1]["content"]))

        return app


@pytest.fixture()
def scripted():
    script = Script()
    with _serve(script.app()) as url:
        yield script, url


def _backend(url: str, **options) -> OpenAICompatBackend:
    return OpenAICompatBackend("scripted", base_url=url, backoff=0.05, **options)


def test_429_waits_for_retry_after(scripted):
    script, url = scripted
    script.steps = [(429, {"Retry-After": "1"})]
    backend = _backend(url, max_retries=2)
    assert backend.generate([CONVERSATION]) == ["go"]
    assert len(script.times) == 2 and script.times[1] - script.times[0] >= 0.95
    assert backend.usage.calls == 1 and backend.served_model == "scripted-1"


def test_500_then_success(scripted):
    script, url = scripted
    script.steps = [(500, {}), (503, {})]
    assert _backend(url, max_retries=2).generate([CONVERSATION]) == ["go"]
    assert len(script.times) == 3


def test_timeout_finally_raises(scripted):
    script, url = scripted
    script.steps = [2.0, 2.0]
    start = time.monotonic()
    with pytest.raises(BackendRequestError, match="failed after 2 attempts.*Timeout"):
        _backend(url, max_retries=1, timeout=0.3).generate([CONVERSATION])
    assert len(script.times) == 2 and time.monotonic() - start < 1.8


def test_malformed_bodies_finally_raise(scripted):
    script, url = scripted
    script.steps = [{"id": "x"}, _completion(None), "not json"]
    with pytest.raises(BackendRequestError, match="failed after 3 attempts.*MalformedResponse"):
        _backend(url, max_retries=2).generate([CONVERSATION])
    assert len(script.times) == 3


def test_client_errors_fail_at_once(scripted):
    script, url = scripted
    script.steps = [(401, {})]
    with pytest.raises(BackendRequestError, match="HTTP 401"):
        _backend(url, max_retries=3).generate([CONVERSATION])
    assert len(script.times) == 1


def test_concurrency_is_bounded_and_order_kept(scripted):
    script, url = scripted
    script.delay = 0.15
    conversations = [[{"role": "user", "content": f"turn {i}"}] for i in range(6)]
    replies = _backend(url, concurrency=2).generate(conversations)
    assert replies == [f"turn {i}" for i in range(6)] and script.peak == 2


def test_one_failed_conversation_fails_the_call_after_the_others_finish(scripted, tmp_path):
    script, url = scripted
    script.steps = [(400, {})]
    backend = _backend(url, concurrency=1, cache_dir=tmp_path)
    with pytest.raises(BackendRequestError, match="1 of 2 requests failed"):
        backend.generate([CONVERSATION, [{"role": "user", "content": "look"}]])
    assert backend.usage.calls == 1 and len(list(tmp_path.glob("*.json"))) == 1  # the success is cached


@pytest.mark.parametrize(("content", "finish", "extra", "expected"), [
    ("<observe>x</observe><action>go north", "stop", {}, "<observe>x</observe><action>go north</action>"),
    ("<observe>x</observe> go north", "stop", {}, "<observe>x</observe> go north"),
    ("<action>go north", "length", {}, "<action>go north"),
    ("<action>go north", "stop", {"stop_reason": None}, "<action>go north"),  # vLLM: end of sequence
    ("go north", "stop", {"stop_reason": "</action>"}, "go north</action>"),
])
def test_stripped_stop_string_is_restored(scripted, content, finish, extra, expected):
    script, url = scripted
    script.steps = [_completion(content, finish, **extra)]
    assert _backend(url).generate([CONVERSATION], stop=["</action>"]) == [expected]
