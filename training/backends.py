"""Chat backends for actors: a local transformers model (``hf``), any OpenAI-compatible endpoint (``openai``)
and in-process vLLM (``vllm``). All implement the bank's ``ChatBackend`` protocol (``expbank/backend.py``):
``generate(conversations, **sampling) -> list[str]``, one reply per conversation, in order.

``HFBackend.generate_tokens`` also returns prompt and completion token ids with their log-probs, which GRPO
needs; API backends cannot give those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from expbank.backend import OpenAICompatBackend
from expbank.training.protocol import ACTION_STOP


@dataclass
class Generation:
    """One completion with its tokens (ids and log-probs only where the backend has them)."""

    text: str
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)


@dataclass
class UsageCounter:
    """Tokens in and out across calls, for run diagnostics and benchmarks."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0


def _cut_at_stop(text: str, stop: list[str]) -> str:
    """Keep the text up to and including the first stop string (generation may run a few tokens past it)."""
    cut = [text.index(s) + len(s) for s in stop if s in text]
    return text[: min(cut)] if cut else text


class HFBackend:
    """A local causal LM (CPU or GPU), batched left-padded generation, optional PEFT adapter."""

    def __init__(self, model: str, adapter: str | None = None, device: str | None = None, batch_size: int = 8):
        from expbank.training.models import load_model

        loaded = load_model(model, adapter=adapter, device=device)
        self.name = model
        self.model, self.tokenizer = loaded.model, loaded.tokenizer
        self.batch_size = batch_size
        self.usage = UsageCounter()

    @classmethod
    def wrap(cls, model, tokenizer, name: str, batch_size: int = 8) -> HFBackend:
        """A backend over a model already in memory (the policy being trained)."""
        backend = cls.__new__(cls)
        backend.name, backend.model, backend.tokenizer = name, model, tokenizer
        backend.batch_size, backend.usage = batch_size, UsageCounter()
        return backend

    def render(self, conversation: list[dict]) -> str:
        """The chat-template text the model sees (generation prompt appended)."""
        return self.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)

    def generate(self, messages: list[list[dict]], **sampling: Any) -> list[str]:
        return [g.text for g in self.generate_tokens(messages, **sampling)]

    def generate_tokens(self, messages: list[list[dict]], temperature: float = 0.0, max_new_tokens: int = 128,
                        stop: list[str] | None = None, seed: int | None = None, **_: Any) -> list[Generation]:
        """Generate one reply per conversation in batches; stop strings end a reply early."""
        import torch

        stop = [ACTION_STOP] if stop is None else list(stop)
        results: list[Generation] = []
        if seed is not None:
            torch.manual_seed(seed)
        for start in range(0, len(messages), self.batch_size):
            batch = messages[start: start + self.batch_size]
            texts = [self.render(conversation) for conversation in batch]
            encoded = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
            encoded = encoded.to(self.model.device)
            sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
            with torch.no_grad():
                out = self.model.generate(
                    **encoded, max_new_tokens=max_new_tokens, stop_strings=stop or None, tokenizer=self.tokenizer,
                    pad_token_id=self.tokenizer.pad_token_id, output_scores=True, return_dict_in_generate=True,
                    top_k=None, top_p=None, **sampling,
                )
            width = encoded["input_ids"].shape[1]
            logprobs = torch.stack(out.scores, dim=1).log_softmax(-1) if out.scores else None
            for row, sequence in enumerate(out.sequences):
                completion = sequence[width:].tolist()
                # drop padding/eos after the reply ends
                eos = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id}
                length = next((i + 1 for i, tok in enumerate(completion) if tok in eos), len(completion))
                completion = completion[:length]
                prompt = encoded["input_ids"][row][encoded["attention_mask"][row].bool()].tolist()
                token_logprobs = [] if logprobs is None else [
                    float(logprobs[row, i, tok]) for i, tok in enumerate(completion)]
                text = _cut_at_stop(self.tokenizer.decode(completion, skip_special_tokens=True), stop)
                results.append(Generation(text, prompt, completion, token_logprobs))
                self.usage.prompt_tokens += len(prompt)
                self.usage.completion_tokens += len(completion)
            self.usage.calls += 1
        return results


class VLLMBackend:
    """In-process vLLM for GPU machines (the ``vllm`` extra); imported only when selected."""

    def __init__(self, model: str, adapter: str | None = None, **engine_args: Any):
        try:
            from vllm import LLM
        except ImportError:
            from expbank.errors import UserError

            raise UserError('actor.backend=vllm needs the vllm extra: pip install "expbank[vllm]"') from None
        from expbank.training.models import resolve_model_path

        self.name = model
        self._llm = LLM(model=resolve_model_path(model), enable_lora=adapter is not None, **engine_args)
        self._adapter = adapter
        self.usage = UsageCounter()

    def generate(self, messages: list[list[dict]], temperature: float = 0.0, max_new_tokens: int = 128,
                 stop: list[str] | None = None, seed: int | None = None, **_: Any) -> list[str]:
        from vllm import SamplingParams

        params = SamplingParams(temperature=temperature, max_tokens=max_new_tokens, seed=seed,
                                stop=[ACTION_STOP] if stop is None else list(stop),
                                include_stop_str_in_output=True)
        lora = None
        if self._adapter:
            from vllm.lora.request import LoRARequest

            lora = LoRARequest("adapter", 1, self._adapter)
        outputs = self._llm.chat(messages, params, lora_request=lora, use_tqdm=False)
        self.usage.calls += 1
        for output in outputs:
            self.usage.prompt_tokens += len(output.prompt_token_ids)
            self.usage.completion_tokens += len(output.outputs[0].token_ids)
        return [output.outputs[0].text for output in outputs]


def make_backend(backend: str, model: str, adapter: str | None = None, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", **options: Any):
    """The backend named by ``actor.backend``."""
    if backend == "hf":
        return HFBackend(model, adapter=adapter, **options)
    if backend == "openai":
        return OpenAICompatBackend(model, base_url=base_url, api_key_env=api_key_env, **options)
    if backend == "vllm":
        return VLLMBackend(model, adapter=adapter, **options)
    raise ValueError(f"unknown backend {backend!r}; choose hf, openai or vllm")
