"""Chat backends for actors: a local transformers model (``hf``), any OpenAI-compatible endpoint (``openai``)
and in-process vLLM (``vllm``). All implement the bank's ``ChatBackend`` protocol (``expbank/chat.py``):
``generate(conversations, **sampling) -> list[str]``, one reply per conversation, in order.

``HFBackend.generate_tokens`` also returns prompt and completion token ids with their log-probs, which GRPO
needs; API backends cannot give those.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from expbank.bank.summarise import make_summariser
from expbank.chat import UsageCounter
from expbank.config import ActorConfig, LivingBankConfig
from expbank.errors import UserError
from expbank.training.actors.models import load_model, resolve_model_path
from expbank.training.actors.openai_compat import OpenAICompatBackend
from expbank.training.agent.protocol import ACTION_STOP


@dataclass
class Generation:
    """One completion with its tokens (ids and log-probs only where the backend has them)."""

    text: str
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)




@functools.cache
def _cache_argument() -> str:
    """What ``forward``/``generate`` call the key-value cache (``past_key_values`` before transformers 5.2x)."""
    from transformers.modeling_outputs import CausalLMOutputWithPast

    return "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"


def _cut_at_stop(text: str, stop: list[str]) -> str:
    """Keep the text up to and including the first stop string (generation may run a few tokens past it)."""
    cut = [text.index(s) + len(s) for s in stop if s in text]
    return text[: min(cut)] if cut else text


class HFBackend:
    """A local causal LM (CPU or GPU), batched generation from a shared-prefix cache, optional PEFT adapter.

    ``rowwise`` (default: on a CPU) prefills each prompt on its own instead of as a padded batch.
    ``batch_size`` splits a call into batches of that many conversations; None (the default) generates for the
    whole call at once: a rollout passes every episode in flight, and that is the batch it wants.
    """

    def __init__(self, model: str, adapter: str | None = None, device: str | None = None,
                 batch_size: int | None = None):
        loaded = load_model(model, adapter=adapter, device=device)
        self._hold(loaded.model, loaded.tokenizer, model, batch_size)

    @classmethod
    def wrap(cls, model, tokenizer, name: str, batch_size: int | None = None) -> HFBackend:
        """A backend over a model already in memory (the policy being trained)."""
        backend = cls.__new__(cls)
        backend._hold(model, tokenizer, name, batch_size)
        return backend

    def _hold(self, model, tokenizer, name: str, batch_size: int | None) -> None:
        self.name, self.model, self.tokenizer = name, model, tokenizer
        self.batch_size, self.usage = batch_size, UsageCounter()
        self.last_usage: list[UsageCounter] = []  # per conversation of the last call
        self.rowwise = model.device.type == "cpu"

    def render(self, conversation: list[dict]) -> str:
        """The chat-template text the model sees (generation prompt appended)."""
        return self.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)

    def generate(self, messages: list[list[dict]], **sampling: Any) -> list[str]:
        return [g.text for g in self.generate_tokens(messages, logprobs=False, **sampling)]

    def generate_tokens(self, messages: list[list[dict]], temperature: float = 0.0, max_new_tokens: int = 128,
                        stop: list[str] | None = None, seed: int | None = None, logprobs: bool = True,
                        prefixes: list[str] | None = None, **_: Any) -> list[Generation]:
        """Generate one reply per conversation in batches; stop strings end a reply early. ``logprobs=False``
        skips the full-vocabulary scores of every generated position (``generate`` needs only the text). With
        ``prefixes``, each reply continues its prefix (the returned text is what follows it)."""
        import torch

        stop = [ACTION_STOP] if stop is None else list(stop)
        results: list[Generation] = []
        if seed is not None:
            torch.manual_seed(seed)
        eos = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id}
        self.last_usage = []
        size = self.batch_size or max(1, len(messages))
        for start in range(0, len(messages), size):
            batch = messages[start: start + size]
            heads = prefixes[start: start + size] if prefixes is not None else [""] * len(batch)
            prompts = [self.tokenizer(self.render(conversation) + head, add_special_tokens=False)["input_ids"]
                       for conversation, head in zip(batch, heads, strict=True)]
            ids, attention, cache = self._prefill(prompts)
            sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
            with torch.no_grad():
                out = self.model.generate(
                    input_ids=ids, attention_mask=attention, **{_cache_argument(): cache},
                    max_new_tokens=max_new_tokens, stop_strings=stop or None, tokenizer=self.tokenizer, pad_token_id=self.tokenizer.pad_token_id,
                    output_scores=logprobs, return_dict_in_generate=True, top_k=None, top_p=None, **sampling,
                )
            width = ids.shape[1]
            scores = torch.stack(out.scores, dim=1).log_softmax(-1) if logprobs and out.scores else None
            for row, (prompt, sequence) in enumerate(zip(prompts, out.sequences, strict=True)):
                completion = sequence[width:].tolist()
                # drop padding/eos after the reply ends
                length = next((i + 1 for i, tok in enumerate(completion) if tok in eos), len(completion))
                completion = completion[:length]
                token_logprobs = [] if scores is None else [
                    float(scores[row, i, tok]) for i, tok in enumerate(completion)]
                text = _cut_at_stop(self.tokenizer.decode(completion, skip_special_tokens=True), stop)
                results.append(Generation(text, prompt, completion, token_logprobs))
                self.usage.prompt_tokens += len(prompt)
                self.usage.completion_tokens += len(completion)
                self.last_usage.append(UsageCounter(len(prompt), len(completion), 1))
            self.usage.calls += 1
        return results

    def score_options(self, messages: list[list[dict]], prefixes: list[str],
                      options: list[list[str]]) -> list[list[float]]:
        """Per conversation, the log-probability the model gives each option as the continuation of its reply
        ``prefix`` (the sum over the option's tokens): ``decoding.action: scored`` takes the likeliest.

        The conversation's prompt and the prefix go through the model once; the options then run as one
        right-padded batch from that cache. Text is tokenized whole (prompt, prefix and option together), so
        each option is scored in the tokens the model would have written; where the prefix's last tokens
        merge differently with an option, scoring starts at the first token the options do not all share
        with the prefix alone.
        """
        import torch
        from transformers import DynamicCache

        scores: list[list[float]] = []
        pad = self.tokenizer.pad_token_id
        for conversation, prefix, choices in zip(messages, prefixes, options, strict=True):
            context = self.render(conversation) + prefix
            rows = [self.tokenizer(context + choice, add_special_tokens=False)["input_ids"] for choice in choices]
            alone = self.tokenizer(context, add_special_tokens=False)["input_ids"]
            shared = min(_common_prefix([alone, row]) for row in rows)  # tokens every row shares with the prefix
            tails = [row[shared - 1:] for row in rows]  # the last shared token predicts the first scored one
            width = max(len(tail) for tail in tails)
            ids = torch.tensor([tail + [pad] * (width - len(tail)) for tail in tails], device=self.model.device)
            mask = torch.tensor([[1] * (shared - 1 + len(tail)) + [0] * (width - len(tail)) for tail in tails],
                                device=self.model.device)
            with torch.no_grad():
                cache = DynamicCache()
                if shared > 1:
                    layers = self._forward(torch.tensor([alone[: shared - 1]], device=self.model.device), cache)
                    cache = DynamicCache([(k.expand(len(rows), -1, -1, -1), v.expand(len(rows), -1, -1, -1))
                                          for k, v in layers])
                out = self.model(input_ids=ids, attention_mask=mask, **{_cache_argument(): cache}, use_cache=True)
                logprobs = out.logits.float().log_softmax(-1)
            device = logprobs.device
            scores.append([float(logprobs[r, torch.arange(len(tail) - 1, device=device),
                                          torch.tensor(tail[1:], device=device)].sum())
                           for r, tail in enumerate(tails)])
        return scores

    def hidden_states(self, messages: list[list[dict]], prefixes: list[str], layer: int | None,
                      base: bool = False) -> Any:
        """Per conversation, hidden state ``layer`` (0: the embeddings; None: every layer) at the last token of
        its reply ``prefix``, as a (conversations × [layers ×] hidden) float array, of the policy or, with
        ``base``, of its base model (the PEFT adapter switched off): what ``decoding.verdict: head`` reads."""
        import torch

        if base and not hasattr(self.model, "disable_adapter"):
            raise UserError(f"{self.name}: a base-model readout needs a PEFT adapter to switch off")
        rows = []
        with torch.no_grad(), self.model.disable_adapter() if base else contextlib.nullcontext():
            for conversation, prefix in zip(messages, prefixes, strict=True):
                ids = self.tokenizer(self.render(conversation) + prefix, add_special_tokens=False)["input_ids"]
                out = self.model(input_ids=torch.tensor([ids], device=self.model.device), output_hidden_states=True,
                                 logits_to_keep=1)
                states = torch.stack([h[0, -1] for h in out.hidden_states]) if layer is None \
                    else out.hidden_states[layer][0, -1]
                rows.append(states.float().cpu().numpy())
                self.usage.prompt_tokens += len(ids)
        return np.stack(rows)

    def _prefill(self, prompts: list[list[int]]) -> tuple[Any, Any, Any]:
        """The batch's ids and attention mask, and a cache holding the keys and values of every prompt token
        but the last, for ``generate`` to continue from.

        Rows are laid out as ``prefix | padding | rest of the prompt``, where the prefix is what every prompt
        of the batch shares (the system prompt and the start of the user turn): it goes through the model
        once per batch, not once per row. The padding is masked out and ``generate`` numbers positions from
        the mask, so every token keeps the position it has in its own prompt and the replies are those of
        left-padded prompts. With ``self.rowwise`` (the default on a CPU) each row's rest also goes through
        the model on its own, so no padding is computed at all (prompt lengths vary a lot: padding was 30 %
        of the prefill here); otherwise (a GPU) ``generate`` prefills the rests as one padded batch.
        """
        import torch
        from transformers import DynamicCache

        shared = min(_common_prefix(prompts), min(len(p) for p in prompts) - 1)  # one uncached token per row
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        rows = [p[:shared] + [pad] * (width - len(p)) + p[shared:] for p in prompts]
        masks = [[1] * shared + [0] * (width - len(p)) + [1] * (len(p) - shared) for p in prompts]
        device = self.model.device
        ids, attention = torch.tensor(rows, device=device), torch.tensor(masks, device=device)
        with torch.no_grad():
            prefix = self._forward(ids[:1, :shared], DynamicCache()) if shared else None
            if not self.rowwise:
                if prefix is None:
                    return ids, attention, None
                batch = len(rows)
                return ids, attention, DynamicCache([(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1))
                                                     for k, v in prefix])
            stitched: list[tuple[Any, Any]] = []
            for row, prompt in enumerate(prompts):
                rest = prompt[shared:-1]
                layers = prefix or []
                if rest:
                    cache = DynamicCache(prefix) if prefix else DynamicCache()
                    layers = self._forward(torch.tensor([rest], device=device), cache)
                if not layers:
                    continue  # a one-token prompt sharing nothing: generate computes it
                if not stitched:
                    stitched = [(k.new_zeros(len(rows), k.shape[1], width - 1, k.shape[3]),
                                 v.new_zeros(len(rows), v.shape[1], width - 1, v.shape[3])) for k, v in layers]
                start = width - len(prompt) + shared  # where the row's rest begins
                for (keys, values), (k, v) in zip(stitched, layers, strict=True):
                    keys[row, :, :shared], values[row, :, :shared] = k[0, :, :shared], v[0, :, :shared]
                    keys[row, :, start:], values[row, :, start:] = k[0, :, shared:], v[0, :, shared:]
        return ids, attention, DynamicCache(stitched) if stitched else None

    def _forward(self, ids: Any, cache: Any) -> list[tuple[Any, Any]]:
        """Run ``ids`` through the model after ``cache``; the keys and values of every layer, cache included."""
        out = self.model(input_ids=ids, **{_cache_argument(): cache}, use_cache=True, logits_to_keep=1)
        return [(layer.keys, layer.values) for layer in getattr(out, _cache_argument()).layers]


def _common_prefix(rows: list[list[int]]) -> int:
    """How many leading tokens every row shares."""
    shortest = min(len(row) for row in rows)
    for i in range(shortest):
        token = rows[0][i]
        if any(row[i] != token for row in rows[1:]):
            return i
    return shortest


class VLLMBackend:
    """In-process vLLM for GPU machines (the ``vllm`` extra); imported only when selected.

    ``expbank eval`` builds one engine over the model (an adapter is served through vLLM's LoRA support);
    ``expbank train`` builds a colocated engine per rank (:meth:`colocated`) and pushes the policy's weights
    into it before every step's rollouts (:meth:`load_weights`).
    """

    def __init__(self, model: str, adapter: str | None = None, **engine_args: Any):
        LLM = require_vllm().LLM
        self.name = model
        self._llm = LLM(model=resolve_model_path(model), enable_lora=adapter is not None, **engine_args)
        self._adapter = adapter
        self.usage = UsageCounter()
        self.last_usage: list[UsageCounter] = []  # per conversation of the last call

    @classmethod
    def colocated(cls, model: str, rank: int, gpu_memory_utilization: float, max_model_len: int) -> VLLMBackend:
        """The engine one training rank samples from, on that rank's GPU, as TRL's colocate mode builds it.

        vLLM's ``external_launcher`` runs the engine inside this process (so its weights can be replaced in
        place) and finds its GPU and peers through torchrun's variables, which ``accelerate launch`` sets and a
        single ``expbank train`` process gets here.
        """
        for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "localhost")):
            os.environ.setdefault(key, value)
        if not os.environ.get("MASTER_PORT"):
            with socket.socket() as probe:  # a free port for the engine's one-process group
                probe.bind(("localhost", 0))
                os.environ["MASTER_PORT"] = str(probe.getsockname()[1])
        # vLLM's memory profiler misjudges free memory with its large default batch budget (TRL sets 4096 too)
        return cls(model, distributed_executor_backend="external_launcher", seed=rank,
                   gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len,
                   max_num_batched_tokens=4096)

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> None:
        """Replace the engine's weights (Hugging Face names, ``training/actors/vllm_sync.py``) one tensor at a time,
        then drop the prefix cache, whose keys and values the old weights computed."""
        engine_model = self._llm.llm_engine.model_executor.driver_worker.model_runner.model
        for name, tensor in weights:
            engine_model.load_weights([(name, tensor)])
        self._llm.reset_prefix_cache()

    def generate(self, messages: list[list[dict]], temperature: float = 0.0, max_new_tokens: int = 128,
                 stop: list[str] | None = None, seed: int | None = None, **_: Any) -> list[str]:
        """One reply per conversation. Each request gets its own seed (``seed + i``): one seed shared by a
        batch would make identical prompts (a GRPO group's first turn) sample identical replies."""
        from vllm import SamplingParams  # importable: this engine was built with it

        params = [SamplingParams(temperature=temperature, max_tokens=max_new_tokens,
                                 seed=None if seed is None else seed + i,
                                 stop=[ACTION_STOP] if stop is None else list(stop),
                                 include_stop_str_in_output=True) for i in range(len(messages))]
        lora = None
        if self._adapter:
            from vllm.lora.request import LoRARequest

            lora = LoRARequest("adapter", 1, self._adapter)
        outputs = self._llm.chat(messages, params, lora_request=lora, use_tqdm=False)
        self.usage.calls += 1
        self.last_usage = [UsageCounter(len(o.prompt_token_ids), len(o.outputs[0].token_ids), 1) for o in outputs]
        for used in self.last_usage:
            self.usage.prompt_tokens += used.prompt_tokens
            self.usage.completion_tokens += used.completion_tokens
        return [output.outputs[0].text for output in outputs]


def require_vllm():
    """The vllm module, or a clear error naming the extra that installs it."""
    try:
        import vllm
    except ImportError:
        raise UserError('actor.backend=vllm needs the vllm extra: pip install "expbank[vllm]"') from None
    return vllm


def backend_for(actor: ActorConfig, cache_dir: str | os.PathLike | None = None, **options: Any):
    """The backend an ``actor:`` config section describes (its request limits included); ``cache_dir`` is
    where an ``openai`` actor with ``actor.cache`` keeps its replies."""
    if actor.backend == "openai":
        options |= {"max_retries": actor.max_retries, "concurrency": actor.concurrency,
                    "cache_dir": cache_dir if actor.cache else None}
    return make_backend(actor.backend, actor.model, adapter=actor.adapter, base_url=actor.base_url,
                        api_key_env=actor.api_key_env, timeout_s=actor.timeout_s, deadline_s=actor.deadline_s,
                        max_reply_chars=actor.max_reply_chars, **options)


def make_backend(backend: str, model: str, adapter: str | None = None, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout_s: float | None = None,
                 deadline_s: float | None = None, max_reply_chars: int | None = None, **options: Any):
    """The backend named by ``actor.backend``; ``timeout_s``, ``deadline_s`` and ``max_reply_chars`` (the
    ``actor.*`` keys of the same names) bound the ``openai`` backend's requests, None keeping its defaults."""
    if backend == "hf":
        return HFBackend(model, adapter=adapter, **options)
    if backend == "openai":
        limits = {"timeout": timeout_s, "deadline": deadline_s, "max_reply_chars": max_reply_chars}
        return OpenAICompatBackend(model, base_url=base_url, api_key_env=api_key_env,
                                   **{k: v for k, v in limits.items() if v is not None}, **options)
    if backend == "vllm":
        return VLLMBackend(model, adapter=adapter, **options)
    raise ValueError(f"unknown backend {backend!r}; choose hf, openai or vllm")


def summariser_for(bank: LivingBankConfig, actor_model: str):
    """The summariser of a bank that grows from a run's episodes (``train.bank``: a GRPO run's living bank,
    an online evaluation's copy): the rule summariser, or an LLM one on an OpenAI-compatible server."""
    if bank.summariser == "rule":
        return make_summariser("rule", sightings=bank.sightings)
    backend = OpenAICompatBackend(bank.summariser_model or actor_model, base_url=bank.summariser_base_url)
    return make_summariser("llm", backend)
