"""The ``openai`` chat backend: any OpenAI-compatible chat-completions endpoint (a hosted frontier model, a vLLM
server, ``expbank serve-model``, llama.cpp).

Usage::

    backend = OpenAICompatBackend("gpt-4o-mini")                       # $OPENAI_BASE_URL, key from $OPENAI_API_KEY
    backend = OpenAICompatBackend("tiny-random", base_url="http://127.0.0.1:8000/v1", cache_dir="runs/x/cache")
    replies = backend.generate(conversations, temperature=0.0, max_new_tokens=128, stop=["</action>"], seed=1)
    backend.usage, backend.last_usage, backend.served_model             # what was paid, per reply, who answered
    backend.latencies                                                   # seconds per paid request
    backend.retries                                                     # requests the client had to send again

Behaviour worth knowing:

- **Concurrency**: the conversations of one ``generate`` call are sent by at most ``concurrency`` threads.
- **Retries** are the ``openai`` client's own (``max_retries`` is passed to it): 408, 409, 429, 5xx, timeouts and
  connection errors are retried with exponential backoff (0.5 s doubling to 8 s, with jitter), or after the
  server's ``retry-after-ms`` / ``Retry-After`` when that is at most two minutes; a longer ``Retry-After`` fails
  at once, as do other 4xx. ``retries`` counts every request sent again (read from the ``x-stainless-retry-count``
  header the client puts on each attempt), whether it then succeeded or not.
- **Limits**: ``timeout`` bounds connecting and each read; ``deadline`` bounds one request as a whole, its
  retries included, so a server that trickles its reply byte by byte cannot hold a rollout. Every attempt's
  timeouts are cut to the time left, the body is read under the deadline, and a retry whose wait (the backoff
  or a ``Retry-After``) would end past it fails at once instead of sleeping (a server trickling its headers is
  bounded per read only). The body is capped at
  ``12 * max_reply_chars + 64 KiB`` bytes (room for JSON escapes) and the reply text cut to
  ``max_reply_chars``, so a runaway server cannot fill the trajectory file. A limit fails the request
  without a retry, with one line naming it.
- **Failures**: a request that fails for good raises ``BackendRequestError`` naming the attempts and the last
  error; ``generate`` lets every other conversation finish (and reach the cache) before raising, and the rollout
  records the error on the episode. A 200 reply without a usable choice (no choices, no content, not JSON) is
  not retried — the client never retries a 200, and a server that answers garbage tends to keep doing so — but
  fails at once with its status, content type and first bytes.
- **Stop strings**: servers strip the stop string from the reply, while the policy protocol (and the ``hf`` and
  ``vllm`` backends) keep it, e.g. the closing ``</action>``. When ``finish_reason`` is ``"stop"`` the string is
  appended back if the reply was cut by it: the server's ``stop_reason`` says so where it gives one (vLLM and
  ``expbank serve-model`` do; ``null`` there means end-of-sequence); otherwise (OpenAI) a closing-tag stop
  ``</t>`` is appended when the reply leaves ``<t>`` open, which is exactly when the tag protocol was cut.
- **Cache** (``cache_dir``): one JSON file per request, named by the sha256 of (model, messages, sampling). A hit
  costs nothing and does not count in ``usage``; ``last_usage`` still reports the tokens the reply cost when it
  was paid for, so a rebuilt report has the same figures. Sampled replies (temperature > 0) are cached too: a
  rebuild replays the same sample rather than drawing a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NoReturn

import httpx

from expbank.chat import UsageCounter


class BackendRequestError(RuntimeError):
    """A chat request that failed for good (non-retryable status, retries exhausted, or an unusable reply)."""


class _BoundedBody(httpx.SyncByteStream):
    """A reply body read under the request's deadline and a byte cap; ``refuse`` raises when one is passed."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float, max_bytes: int,
                 refuse: Callable[[str, int], NoReturn]):
        self._inner, self._deadline, self._max_bytes, self._refuse = inner, deadline, max_bytes, refuse

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        try:
            for chunk in self._inner:
                received += len(chunk)
                if received > self._max_bytes:
                    self._refuse("size", received)
                if time.monotonic() > self._deadline:
                    self._refuse("deadline", received)
                yield chunk
        except httpx.TimeoutException:  # a read cut short by the time left
            if time.monotonic() <= self._deadline:
                raise
            self._refuse("deadline", received)

    def close(self) -> None:
        self._inner.close()


@dataclass
class _Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str
    retries: int = 0  # of the request that was paid for (a cache hit repeats it, like its tokens)


class OpenAICompatBackend:
    """Chat completions from an OpenAI-compatible server; implements ``expbank.chat.ChatBackend``."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 4, timeout: float = 60.0, max_retries: int = 5,
                 cache_dir: str | os.PathLike | None = None, deadline: float = 300.0, max_reply_chars: int = 32_000):
        from openai import DefaultHttpxClient, OpenAI

        self.name = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.concurrency = max(1, concurrency)
        self.max_retries = max(0, max_retries)
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.deadline = deadline
        self.max_reply_chars = max_reply_chars
        self.max_body_bytes = 12 * max_reply_chars + 65_536
        # the request this thread is sending: its retry count, its deadline, and the limit that ended it
        self._attempt = threading.local()
        # local servers take any key; a hosted API without one answers 401, which fails at once
        hooks = {"request": [self._on_send], "response": [self._on_response]}
        self._client = OpenAI(base_url=self.base_url, api_key=os.environ.get(api_key_env) or "unused",
                              timeout=timeout, max_retries=self.max_retries,
                              http_client=DefaultHttpxClient(event_hooks=hooks))
        # the client has no hook between a failed attempt and its retry's sleep; wrapping the method that
        # computes the wait (on this instance only) lets a wait that would pass the deadline fail at once
        wait_for = self._client._calculate_retry_timeout
        self._client._calculate_retry_timeout = lambda *args, **kwargs: self._retry_wait(wait_for(*args, **kwargs))
        self._lock = threading.Lock()
        self.usage = UsageCounter()  # paid requests only
        self.cache_hits = 0
        self.retries = 0  # requests sent again, over all calls (failed ones included)
        self.last_usage: list[UsageCounter] = []  # per conversation of the last generate call (cached ones too)
        self.served_model: str | None = None  # the model string of the last reply
        self.latencies: list[float] = []  # seconds of each paid request, retries included

    def generate(self, messages: list[list[dict]], temperature: float = 0.0, max_new_tokens: int = 128,
                 stop: list[str] | None = None, seed: int | None = None, **_: Any) -> list[str]:
        """One reply per conversation, in order; raises ``BackendRequestError`` if any request failed for good."""
        sampling = {"temperature": temperature, "max_tokens": max_new_tokens, "stop": list(stop or []) or None,
                    "seed": seed}
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(messages)))) as pool:
            futures = [pool.submit(self._reply, conversation, sampling) for conversation in messages]
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            message = f"{len(errors)} of {len(messages)} requests failed; first: {errors[0]}"
            raise BackendRequestError(message) from errors[0]
        replies = [f.result() for f in futures]
        self.last_usage = [UsageCounter(r.prompt_tokens, r.completion_tokens, 1, r.retries) for r in replies]
        if replies:
            self.served_model = replies[-1].model
        return [r.text for r in replies]

    # ------------------------------------------------------------------ one conversation
    def _reply(self, conversation: list[dict], sampling: dict) -> _Reply:
        path = self._cache_path(conversation, sampling)
        if path is not None and path.exists():
            with self._lock:
                self.cache_hits += 1
            return _Reply(**json.loads(path.read_text()))
        start = time.monotonic()
        reply = self._request(conversation, sampling)
        with self._lock:
            self.latencies.append(time.monotonic() - start)
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            self.usage.calls += 1
            self.usage.retries += reply.retries
        if path is not None:
            staging = path.with_name(f"{path.name}.{threading.get_ident()}.partial")
            staging.write_text(json.dumps(asdict(reply)))
            staging.replace(path)
        return reply

    def _cache_path(self, conversation: list[dict], sampling: dict) -> Path | None:
        if self.cache_dir is None:
            return None
        key = json.dumps({"model": self.name, "messages": conversation, "sampling": sampling}, sort_keys=True)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        return self.cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()}.json"

    def _request(self, conversation: list[dict], sampling: dict) -> _Reply:
        """One request, retried by the client; every way it can fail becomes a ``BackendRequestError``."""
        import openai

        args = {k: v for k, v in sampling.items() if v is not None}
        self._attempt.retries = 0
        self._attempt.deadline = time.monotonic() + self.deadline
        self._attempt.limit = None
        try:
            raw = self._client.chat.completions.with_raw_response.create(model=self.name, messages=conversation,
                                                                         **args)
        except openai.APIError as err:  # status errors, timeouts, connection errors and our limits
            attempts = f"{self._attempt.retries + 1} attempt" + ("s" if self._attempt.retries else "")
            if self._attempt.limit:
                raise BackendRequestError(f"{self._where()}: {self._attempt.limit}, after {attempts}") from err
            raise BackendRequestError(f"{self._where()}: failed after {attempts}: {type(err).__name__}: {err}") from err
        finally:
            with self._lock:
                self.retries += self._attempt.retries
        try:
            response = raw.parse()  # a non-JSON body parses to its text
        except ValueError:  # a JSON content type over a body that is not JSON
            response = None
        choices = getattr(response, "choices", None)
        choice = choices[0] if isinstance(choices, list) and choices else None
        content = getattr(getattr(choice, "message", None), "content", None)
        if not isinstance(content, str):
            missing = "no choices" if choice is None else "no message content"
            raise BackendRequestError(f"{self._where()}: unusable reply, {missing}: {_describe(raw.http_response)}")
        usage = getattr(response, "usage", None)
        text = _restore_stop(content, choice, sampling["stop"] or [])[: self.max_reply_chars]
        return _Reply(text=text, prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                      completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                      model=getattr(response, "model", None) or self.name, retries=self._attempt.retries)

    def _on_send(self, request: httpx.Request) -> None:
        """httpx request hook, run in the sending thread before each attempt: read the attempt's number (the
        client puts it in a header), refuse to start past the deadline, cut its timeouts to the time left."""
        self._attempt.retries = int(request.headers.get("x-stainless-retry-count", 0))
        self._attempt.request = request
        left = self._attempt.deadline - time.monotonic()
        if left <= 0:
            self._refuse(request, "deadline", 0)
        timeouts = request.extensions.get("timeout", {})
        request.extensions["timeout"] = {k: left if v is None else min(v, left) for k, v in timeouts.items()}

    def _retry_wait(self, wait: float) -> float:
        """The client's wait before a retry, or the deadline's refusal when the retry would start past it."""
        if time.monotonic() + wait >= self._attempt.deadline:
            self._refuse(self._attempt.request, "deadline", 0, f"the next retry waits {wait:.1f} s")
        return wait

    def _on_response(self, response: httpx.Response) -> None:
        """httpx response hook, run once the headers are in: the body is then read under the limits."""
        request = response.request
        response.stream = _BoundedBody(response.stream, self._attempt.deadline, self.max_body_bytes,
                                       lambda limit, received: self._refuse(request, limit, received))

    def _refuse(self, request: httpx.Request, limit: str, received: int, why: str = "") -> NoReturn:
        """End the request for a ``deadline`` or ``size`` limit, ``received`` bytes into the body: the client
        re-raises an ``OpenAIError`` as it is, without a retry, and ``_request`` reports the limit."""
        import openai

        self._attempt.limit = (
            f"no complete reply within actor.deadline_s={self.deadline:g} s ({why or f'{received} bytes received'})"
            if limit == "deadline" else
            f"reply body over {self.max_body_bytes} bytes, the cap for actor.max_reply_chars={self.max_reply_chars}")
        raise openai.APITimeoutError(request=request)

    def _where(self) -> str:
        return f"openai backend ({self.name} at {self.base_url or 'the default endpoint'})"


def _describe(response: httpx.Response) -> str:
    """Status, content type and the first bytes of a reply, on one line."""
    content_type = response.headers.get("content-type", "no content type")
    return f"HTTP {response.status_code}, {content_type}, body {response.content[:120]!r}"


def _restore_stop(text: str, choice: Any, stop: list[str]) -> str:
    """Append the stop string the server stripped, if the reply was cut by one (see the module docstring)."""
    if getattr(choice, "finish_reason", None) != "stop" or not stop:
        return text
    extra = getattr(choice, "model_extra", None) or {}
    if "stop_reason" in extra:
        reason = extra["stop_reason"]
        return text + reason if isinstance(reason, str) and reason in stop else text
    for string in stop:
        if string.startswith("</") and string.endswith(">") and not text.endswith(string):
            opening = "<" + string[2:]
            if text.rfind(opening) > text.rfind(string):
                return text + string
    return text
