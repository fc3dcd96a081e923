"""tiny-warm's tokenizer must encode the same after save and load as during the warm-up.

A Qwen2 model folder makes ``AutoTokenizer`` rebuild ``Qwen2Tokenizer`` from the vocabulary and merges,
dropping the saved splitting rules; a BPE trained with other rules then reads its own transcripts as other
ids, and the warmed-up model sees text it was never trained on.
"""

from __future__ import annotations

from transformers import AutoTokenizer, Qwen2Config

from expbank.training.tiny_warm import train_tokenizer

TRANSCRIPT = [
    "You arrive at countertop 1. On the countertop 1, you see a apple 1, and a mug 2.",
    "<observe>You arrive at shelf 1.</observe><action>take apple 1 from shelf 1</action>",
    "Instruction: [SEP] i need a 24 pack of sparkling water, and price lower than 20.00 dollars [SEP] X054EXPBSP",
    "click[x054expbsp]\nsearch[red running shoes]\n\nAdmissible actions:\ngo to shelf 1",
]


def test_saved_tokenizer_encodes_like_the_trained_one(tmp_path):
    trained = train_tokenizer(TRANSCRIPT * 20, 400)
    trained.save_pretrained(tmp_path)
    Qwen2Config(vocab_size=len(trained)).save_pretrained(tmp_path)  # what makes AutoTokenizer pick Qwen2
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    text = trained.apply_chat_template([{"role": "user", "content": TRANSCRIPT[0]},
                                        {"role": "assistant", "content": TRANSCRIPT[1]}], tokenize=False)
    for sample in [*TRANSCRIPT, text, "unseen words: 7 zebras, 1.5 kg"]:
        assert loaded(sample, add_special_tokens=False)["input_ids"] == \
            trained(sample, add_special_tokens=False)["input_ids"], sample
    assert loaded.decode(trained(text, add_special_tokens=False)["input_ids"]) == text
