"""The chat-backend protocol the bank uses for model calls (LLM summariser), without importing training.

``expbank.training``'s backends (local HF, vLLM, OpenAI-compatible) implement it. The OpenAI-compatible one
lives in ``expbank/openai_backend.py`` (it needs only ``openai``) and is re-exported here, so
``expbank bank build --summariser llm`` works on its own.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from expbank.openai_backend import OpenAICompatBackend

__all__ = ["ChatBackend", "OpenAICompatBackend"]


@runtime_checkable
class ChatBackend(Protocol):
    """Batched chat completion: one reply per conversation, in order."""

    name: str

    def generate(self, messages: list[list[dict]], **sampling: Any) -> list[str]: ...
