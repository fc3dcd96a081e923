"""The ``openai`` backend over real HTTP on loopback: against ``expbank serve-model``'s app with the tiny-random
model behind it, and against a scripted server for the error paths (429, 5xx, 4xx, timeouts, malformed bodies).
The retries are the ``openai`` client's own, so these tests keep ``max_retries`` small and let the server's
``retry-after-ms`` / ``Retry-After`` set short waits where the client's backoff (0.5 s, then 1 s) would be slow."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
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
            if callable(step):  # a hand-made response
                return step()
            if isinstance(step, (int, float)) and not isinstance(step, bool):  # sleep past the client's timeout
                await asyncio.sleep(step)
            elif isinstance(step, tuple):  # (status, headers)
                return JSONResponse({"error": {"message": "scripted"}}, status_code=step[0], headers=step[1])
            elif isinstance(step, str):
                return PlainTextResponse(step)
            elif isinstance(step, bytes):  # a JSON content type over a body that is not JSON
                return Response(step, media_type="application/json")
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
    return OpenAICompatBackend("scripted", base_url=url, **options)


def test_retry_after_is_honoured(scripted):
    script, url = scripted
    script.steps = [(429, {"retry-after-ms": "200"}), (429, {"Retry-After": "0.2"})]
    backend = _backend(url, max_retries=2)
    assert backend.generate([CONVERSATION]) == ["go"]
    gaps = [later - earlier for earlier, later in itertools.pairwise(script.times)]
    # the client's own backoff would wait at least 0.375 s before the first retry, 0.75 s before the second
    assert len(gaps) == 2 and all(0.19 <= gap < 0.37 for gap in gaps), gaps
    assert backend.usage.calls == 1 and backend.retries == 2 and backend.served_model == "scripted-1"


def test_5xx_retried_then_success(scripted):
    script, url = scripted
    script.steps = [(500, {}), (503, {"retry-after-ms": "10"})]  # the client's backoff (~0.5 s), then the hint
    backend = _backend(url, max_retries=2)
    assert backend.generate([CONVERSATION]) == ["go"]
    assert len(script.times) == 3 and backend.retries == 2 and backend.usage.calls == 1


def test_timeout_finally_raises(scripted):
    script, url = scripted
    script.steps = [2.0, 2.0]
    start = time.monotonic()
    with pytest.raises(BackendRequestError, match="failed after 2 attempts: APITimeoutError"):
        _backend(url, max_retries=1, timeout=0.3).generate([CONVERSATION])
    assert len(script.times) == 2 and time.monotonic() - start < 1.8


def test_malformed_bodies_fail_at_once(scripted):
    script, url = scripted
    script.steps = [{"id": "x"}, _completion(None), "not json", b'{"choices": [']
    backend = _backend(url, max_retries=3)
    expected = ["""no choices: HTTP 200, application/json, body b'{"id":"x"}'""",
                """no message content: HTTP 200, application/json, body b'{"id":"x",""",
                "no choices: HTTP 200, text/plain; charset=utf-8, body b'not json'",
                """no choices: HTTP 200, application/json, body b'{"choices": ['"""]
    for message in expected:
        with pytest.raises(BackendRequestError, match=re.escape(message)) as failure:
            backend.generate([CONVERSATION])
        assert "\n" not in str(failure.value)  # one line, for the episode's error field
    assert len(script.times) == 4 and backend.retries == 0 and backend.usage.calls == 0


def test_client_errors_fail_at_once(scripted):
    script, url = scripted
    script.steps = [(401, {}), (400, {}), (429, {"Retry-After": "300"})]  # past the client's two-minute cap
    backend = _backend(url, max_retries=3)
    for name in ("AuthenticationError", "BadRequestError", "RateLimitError"):
        with pytest.raises(BackendRequestError, match=f"after 1 attempt: {name}: Error code: "):
            backend.generate([CONVERSATION])
    assert len(script.times) == 3 and backend.retries == 0


def test_concurrency_is_bounded_and_order_kept(scripted):
    script, url = scripted
    script.delay = 0.15
    conversations = [[{"role": "user", "content": f"turn {i}"}] for i in range(6)]
    replies = _backend(url, concurrency=2).generate(conversations)
    assert replies == [f"turn {i}" for i in range(6)] and script.peak == 2


def test_exhausted_retries_fail_the_call_after_the_others_finish(scripted, tmp_path):
    script, url = scripted
    script.steps = [(503, {"retry-after-ms": "10"})] * 2
    backend = _backend(url, concurrency=1, max_retries=1, cache_dir=tmp_path)
    conversations = [CONVERSATION, [{"role": "user", "content": "look"}]]
    with pytest.raises(BackendRequestError, match="1 of 2 requests failed.*after 2 attempts: InternalServerError"):
        backend.generate(conversations)
    assert backend.usage.calls == 1 and backend.retries == 1
    assert len(list(tmp_path.glob("*.json"))) == 1  # the success is cached
    served = len(script.times)
    assert backend.generate(conversations) == ["go", "look"]
    assert len(script.times) == served + 1 and backend.cache_hits == 1  # the cached reply cost nothing
    assert backend.usage.calls == 2 and backend.last_usage[1] == backend.last_usage[0]  # as when it was paid


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


def _trickle(seconds_per_byte: float) -> Response:
    """A 200 whose JSON body arrives one byte at a time: each read is quick, the reply never ends in time."""
    from fastapi.responses import StreamingResponse

    async def body():
        for byte in json.dumps(_completion("go")).encode():
            await asyncio.sleep(seconds_per_byte)
            yield bytes([byte])

    return StreamingResponse(body(), media_type="application/json")


def test_a_trickling_server_hits_the_deadline(scripted):
    script, url = scripted
    script.steps = [lambda: _trickle(0.05)]  # ~250 bytes: 12 s in all, 0.05 s per read
    backend = _backend(url, max_retries=2, timeout=1.0, deadline=1.5)
    start = time.monotonic()
    with pytest.raises(BackendRequestError, match=r"no complete reply within actor.deadline_s=1.5 s "
                                                  r"\(\d+ bytes received\), after 1 attempt$") as failure:
        backend.generate([CONVERSATION])
    took = time.monotonic() - start
    assert 1.5 <= took < 4 and len(script.times) == 1, took  # about 1.5 s where the body takes 12 s; no retry
    assert "\n" not in str(failure.value)


def test_a_silent_server_is_cut_at_the_deadline_across_retries(scripted):
    script, url = scripted
    script.steps = [5.0, 5.0, 5.0]  # per read, each attempt would wait its full 4 s timeout
    start = time.monotonic()
    with pytest.raises(BackendRequestError, match="no complete reply within actor.deadline_s"):
        _backend(url, max_retries=2, timeout=4.0, deadline=1.0).generate([CONVERSATION])
    assert time.monotonic() - start < 2.5  # the first attempt's read is cut to the second left


def test_a_retry_that_would_start_past_the_deadline_fails_without_waiting(scripted):
    script, url = scripted
    script.steps = [(503, {"Retry-After": "5"}), (503, {"retry-after-ms": "100"})]
    start = time.monotonic()
    with pytest.raises(BackendRequestError, match=r"no complete reply within actor.deadline_s=2 s "
                                                  r"\(the next retry waits 5.0 s\), after 1 attempt$"):
        _backend(url, max_retries=3, deadline=2.0).generate([CONVERSATION])
    assert time.monotonic() - start < 1.0 and len(script.times) == 1  # no 5 s sleep, no second attempt
    assert _backend(url, max_retries=3, deadline=2.0).generate([CONVERSATION]) == ["go"]  # a short wait: retried


def test_the_reply_cap_holds(scripted):
    script, url = scripted
    script.steps = [_completion("x" * 20_000_000), _completion("y" * 200_000)]  # a runaway reply of 20 MB
    backend = _backend(url, max_retries=2, max_reply_chars=100_000)
    with pytest.raises(BackendRequestError, match=r"reply body over 1265536 bytes, the cap for actor.max_reply_chars=100000, after 1 attempt"):
        backend.generate([CONVERSATION])
    assert backend.generate([CONVERSATION]) == ["y" * 100_000]  # under the byte cap: kept, cut to the cap
    assert len(script.times) == 2 and backend.retries == 0


def test_make_backend_passes_the_actor_limits():
    from expbank.training.actors.backends import make_backend

    backend = make_backend("openai", "m", base_url="http://127.0.0.1:9/v1", timeout_s=7.0, deadline_s=9.0,
                           max_reply_chars=50)
    assert (backend.deadline, backend.max_reply_chars, backend._client.timeout) == (9.0, 50, 7.0)
    default = make_backend("openai", "m", base_url="http://127.0.0.1:9/v1")
    assert (default.deadline, default.max_reply_chars) == (300.0, 32_000)


def test_an_openai_runs_rows_and_summary_carry_its_cost(model_server, hf_backend, tmp_path):
    """``expbank eval`` with the openai actor against serve-model: tokens per episode in the rows, totals,
    the served model and the cost in summary.json, latency in usage.json only, the cache from the config."""
    import yaml

    from expbank.config import load_config
    from expbank.training.evaluation.evaluate import evaluate
    from expbank.trajectory import read_episodes

    run = tmp_path / "run"
    config = tmp_path / "eval.yaml"
    config.write_text(yaml.safe_dump({
        "env": {"name": "alfworld", "split": "valid_unseen", "max_steps": 2}, "panel": {"limit": 2},
        "actor": {"backend": "openai", "model": "tiny-random", "base_url": model_server, "concurrency": 2,
                  "max_retries": 1, "cache": True, "price": {"prompt": 0.15, "completion": 0.6}},
        "decoding": {"max_new_tokens": 8}, "run": {"dir": str(run), "episodes_in_flight": 2}}))
    before = hf_backend.usage.calls
    summary = evaluate(load_config(config), progress=False)
    episodes = list(read_episodes(run / "episodes.jsonl"))
    assert all(e.prompt_tokens > 0 and 0 < e.completion_tokens <= 8 * e.num_steps and e.requests == e.num_steps
               and e.retries == 0 for e in episodes)
    usage = summary["arms"]["none"]["usage"]
    assert usage["prompt_tokens"] == sum(e.prompt_tokens for e in episodes)
    assert usage["requests"] == hf_backend.usage.calls - before == sum(e.num_steps for e in episodes)
    assert usage["served_model"] == "tiny-random"
    assert usage["cost_usd"] == pytest.approx((usage["prompt_tokens"] * 0.15 + usage["completion_tokens"] * 0.6) / 1e6)
    assert "## Usage" in (run / "report.md").read_text()
    line = json.loads((run / "usage.json").read_text())["invocations"][0]
    assert line["requests"] == usage["requests"] and line["latency_s"]["p50"] > 0 and line["cache_hits"] == 0
    assert "latency" not in (run / "episodes.jsonl").read_text()
    assert len(list((run / "cache").glob("*.json"))) == usage["requests"]

    rows = (run / "episodes.jsonl").read_text()
    (run / "episodes.jsonl").unlink()  # played again: every reply comes from the cache, the rows are the same
    evaluate(load_config(config), progress=False)
    assert hf_backend.usage.calls - before == usage["requests"]
    assert (run / "episodes.jsonl").read_text() == rows
    assert json.loads((run / "usage.json").read_text())["invocations"][1]["cache_hits"] == usage["requests"]
