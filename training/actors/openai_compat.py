"""The ``openai`` chat backend: any OpenAI-compatible chat-completions endpoint (a hosted frontier model, a vLLM
server, ``expbank serve-model``, llama.cpp).

Usage::

    backend = OpenAICompatBackend("gpt-4o-mini")                       # $OPENAI_BASE_URL, key from $OPENAI_API_KEY
    backend = OpenAICompatBackend("tiny-random", base_url="http://127.0.0.1:8000/v1", cache_dir="runs/x/cache")
    replies = backend.generate(conversations, temperature=0.0, max_new_tokens=128, stop=["</action>"], seed=1)
    backend.usage, backend.last_usage, backend.served_model             # what was paid, per reply, who answered

Behaviour worth knowing:

- **Concurrency**: the conversations of one ``generate`` call are sent by at most ``concurrency`` threads.
- **Retries** are ours, not the client's (its ``max_retries`` is 0): HTTP 429 waits for ``Retry-After`` (or
  ``retry-after-ms``; capped at ``MAX_RETRY_AFTER`` seconds), while 408/409/5xx, timeouts, connection errors and
  malformed bodies (no choices, no content) back off exponentially with jitter. Other 4xx fail at once. A request
  still failing after ``max_retries`` retries raises ``BackendRequestError``; ``generate`` lets every other
  conversation finish (and reach the cache) before raising, and the rollout records the error on the episode.
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

import email.utils
import hashlib
import json
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from expbank.chat import UsageCounter

MAX_RETRY_AFTER = 60.0  # seconds; a longer Retry-After is cut to this (the request is retried regardless)
MAX_BACKOFF = 30.0
RETRYABLE_STATUS = {408, 409, 429}  # and every 5xx


class BackendRequestError(RuntimeError):
    """A chat request that failed for good (non-retryable status, or retries exhausted)."""


class MalformedResponse(ValueError):
    """A 200 reply without a usable choice; retried like a server error."""




@dataclass
class _Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str


class OpenAICompatBackend:
    """Chat completions from an OpenAI-compatible server; implements ``expbank.chat.ChatBackend``."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 4, timeout: float = 60.0, max_retries: int = 5,
                 cache_dir: str | os.PathLike | None = None, backoff: float = 1.0):
        from openai import OpenAI

        self.name = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.concurrency = max(1, concurrency)
        self.max_retries = max(0, max_retries)
        self.backoff = backoff
        self.cache_dir = Path(cache_dir) if cache_dir else None
        # local servers take any key; a hosted API without one answers 401, which fails at once
        self._client = OpenAI(base_url=self.base_url, api_key=os.environ.get(api_key_env) or "unused",
                              timeout=timeout, max_retries=0)
        self._lock = threading.Lock()
        self.usage = UsageCounter()  # paid requests only
        self.cache_hits = 0
        self.last_usage: list[UsageCounter] = []  # per conversation of the last generate call (cached ones too)
        self.served_model: str | None = None  # the model string of the last reply

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
        self.last_usage = [UsageCounter(r.prompt_tokens, r.completion_tokens, 1) for r in replies]
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
        reply = self._request_with_retries(conversation, sampling)
        with self._lock:
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            self.usage.calls += 1
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

    def _request_with_retries(self, conversation: list[dict], sampling: dict) -> _Reply:
        import openai

        for attempt in range(self.max_retries + 1):
            try:
                return self._request(conversation, sampling)
            except openai.APIStatusError as err:
                status = err.status_code
                if status not in RETRYABLE_STATUS and status < 500:
                    raise BackendRequestError(f"{self._where()}: HTTP {status}: {err.message}") from err
                wait = _retry_after(err.response.headers) if status == 429 else None
                last: Exception = err
            except (openai.APIConnectionError, MalformedResponse) as err:  # timeouts are connection errors
                wait, last = None, err
            if attempt == self.max_retries:
                break
            if wait is None:
                wait = min(MAX_BACKOFF, self.backoff * 2 ** attempt) * random.uniform(0.5, 1.0)
            time.sleep(wait)
        raise BackendRequestError(f"{self._where()}: failed after {self.max_retries + 1} attempts: "
                                  f"{type(last).__name__}: {last}") from last

    def _request(self, conversation: list[dict], sampling: dict) -> _Reply:
        args = {k: v for k, v in sampling.items() if v is not None}
        response = self._client.chat.completions.create(model=self.name, messages=conversation, **args)
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise MalformedResponse(f"no choices in the reply: {str(response)[:200]}")
        choice = choices[0]
        content = getattr(getattr(choice, "message", None), "content", None)
        if not isinstance(content, str):
            raise MalformedResponse(f"no message content in the reply: {str(response)[:200]}")
        usage = getattr(response, "usage", None)
        return _Reply(text=_restore_stop(content, choice, sampling["stop"] or []),
                      prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                      completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                      model=getattr(response, "model", None) or self.name)

    def _where(self) -> str:
        return f"openai backend ({self.name} at {self.base_url or 'the default endpoint'})"


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


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), capped."""
    try:
        if headers.get("retry-after-ms"):
            return min(MAX_RETRY_AFTER, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            seconds = float(value)
        except ValueError:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        return min(MAX_RETRY_AFTER, max(0.0, seconds))
    except (TypeError, ValueError):
        return None
