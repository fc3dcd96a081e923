"""Training rows from chat conversations: token ids and a mask that is 1 exactly on policy-written tokens.

SFT records and GRPO rows both go through :func:`tokenize_conversation`, so the docs/design.md §5 rule (every
span the policy generates is a target; everything the system inserts — system prompt, observations,
``<experience>`` blocks — is masked out) has one implementation.

The mask is found on the rendered text: for the i-th assistant message, the chat template rendered up to
message i with a generation prompt is a prefix of the template rendered through message i; the characters
in between are the assistant's reply and its end-of-turn marker. Tokens are mapped back to characters
with the fast tokenizer's offsets.
"""

from __future__ import annotations


def _render(tokenizer, messages: list[dict], generation_prompt: bool) -> str:
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)


def assistant_spans(tokenizer, messages: list[dict]) -> tuple[str, list[tuple[int, int]]]:
    """The rendered conversation and the character spans written by the assistant."""
    text = _render(tokenizer, messages, False)
    spans = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before = _render(tokenizer, messages[:i], True)
        through = _render(tokenizer, messages[: i + 1], False)
        if not (text.startswith(through) and through.startswith(before)):
            raise ValueError("the chat template is not prefix-preserving; cannot locate assistant tokens")
        spans.append((len(before), len(through.rstrip())))  # reply + end-of-turn marker, not the newline
    return text, spans


def tokenize_conversation(tokenizer, messages: list[dict], max_length: int | None = None,
                          tags: tuple[str, ...] = ()) -> tuple[list[int], list[int]]:
    """Token ids of the templated conversation and the assistant mask (truncated from the left if long); with
    ``tags``, the mask covers only the tokens of those tags' contents in the last reply (an auxiliary loss on
    one decision, e.g. the critique's verdict and what it reconstructs)."""
    text, spans = assistant_spans(tokenizer, messages)
    if tags:
        start, end = spans[-1]
        spans = []
        for tag in tags:
            opened = text.index(f"<{tag}>", start, end) + len(f"<{tag}>")
            spans.append((opened, text.index(f"</{tag}>", opened, end)))
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = encoded["input_ids"]
    mask = [int(any(start <= begin < end for start, end in spans)) for begin, _ in encoded["offset_mapping"]]
    if max_length is not None and len(ids) > max_length:
        ids, mask = ids[-max_length:], mask[-max_length:]
    return ids, mask
