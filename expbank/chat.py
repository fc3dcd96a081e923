"""The chat-backend protocol: what the bank's LLM summariser and every actor agree a model call looks like.

The actors in ``expbank.training.actors`` (local HF, vLLM, OpenAI-compatible) implement it; the bank only
depends on this protocol, never on an implementation, so the bank layer imports nothing from training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class ChatBackend(Protocol):
    """Batched chat completion: one reply per conversation, in order."""

    name: str

    def generate(self, messages: list[list[dict]], **sampling: Any) -> list[str]: ...


@dataclass
class UsageCounter:
    """Tokens in and out and the requests made, for run diagnostics and cost."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0  # requests sent again (API backends)
