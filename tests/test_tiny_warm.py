"""tiny-warm's tokenizer must encode the same after save and load as during the warm-up.

A Qwen2 model folder makes ``AutoTokenizer`` rebuild ``Qwen2Tokenizer`` from the vocabulary and merges,
dropping the saved splitting rules; a BPE trained with other rules then reads its own transcripts as other
ids, and the warmed-up model sees text it was never trained on.
"""

from __future__ import annotations

from transformers import AutoTokenizer, Qwen2Config

from expbank.training.actors.tiny_warm import train_tokenizer

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


def test_copy_task_is_learnt_within_its_steps():
    """The induction warm-up as the recipe runs it: within its 250 steps the loss on the repeated half drops
    from a uniform guess over the vocabulary to well under one nat (a broken slice or target would not)."""
    import math

    import torch
    from transformers import Qwen2ForCausalLM

    from expbank.training.actors.tiny_warm import WarmRecipe, _induction_loss, train_copy_task

    recipe = WarmRecipe(induction_steps=250)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=600, hidden_size=recipe.hidden_size,
                                         intermediate_size=3 * recipe.hidden_size, num_hidden_layers=recipe.layers,
                                         num_attention_heads=recipe.heads, num_key_value_heads=recipe.heads // 2))
    sequences = torch.Generator().manual_seed(0)
    first = _induction_loss(model, recipe.induction_batch_size, recipe, sequences).item()
    last = train_copy_task(model, recipe, sequences)
    assert first > math.log(600) - 0.5
    assert last < 0.5


def test_a_recipe_on_a_game_folder_names_its_games_and_warms_up_on_their_transcripts(tmp_path):
    import shutil

    from expbank.envs.alfworld.search_games import write_search_games
    from expbank.training.actors.tiny_warm import WarmRecipe, expert_conversations

    dev = [("Bread", "SideTable", "Shelf")]  # without a dev folder, dev would be carved out of train
    egg = write_search_games(tmp_path / "a", triples={"train": [("Egg", "CounterTop", "Shelf")] * 2, "dev": dev})
    egg_key = WarmRecipe(envs=("alfworld",), alfworld_data=str(egg)).key()
    shutil.rmtree(egg)  # the same folder rewritten with other games names another model
    first = write_search_games(tmp_path / "a", triples={"train": [("Apple", "Shelf", "GarbageCan")], "dev": dev})
    assert len({egg_key, WarmRecipe(envs=("alfworld",), alfworld_data=str(first)).key(), WarmRecipe().key()}) == 3
    conversations = expert_conversations("alfworld", 1, tmp_path / "work", data_dir=str(first))
    assert conversations and all("apple" in c[1]["content"] for c in conversations)
    assert conversations[0][-1]["content"].endswith("<action>go to shelf 1</action>")


def test_transcripts_do_not_depend_on_the_order_the_pool_finished_them(tmp_path):
    """Collection writes episodes as workers finish; the warm-up must read them in one order, or two builds
    of the same recipe train on differently ordered rows: two such builds from the same games went on to win
    18/50 and 3/50 held-out games."""
    from expbank.envs.alfworld.search_games import write_search_games
    from expbank.training.actors.tiny_warm import expert_conversations

    games = write_search_games(tmp_path / "games", triples={
        "train": [("Apple", "Shelf", "GarbageCan"), ("Egg", "CounterTop", "Shelf"), ("Bread", "SideTable", "Shelf")],
        "dev": [("Tomato", "Shelf", "SideTable")]})
    first = expert_conversations("alfworld", 1, tmp_path / "work", data_dir=str(games))
    [written] = (tmp_path / "work").glob("alfworld-train-*-expert.jsonl")
    lines = written.read_text().splitlines()
    written.write_text("\n".join(reversed(lines)) + "\n")  # as if the pool had finished them the other way
    assert expert_conversations("alfworld", 1, tmp_path / "work", data_dir=str(games)) == first


def test_average_last_saves_the_mean_of_the_last_steps_weights(tmp_path, monkeypatch):
    """Builds that share their first steps: the mean of steps 3 and 4 is what ``average_last=2`` saves, and a
    window of one step is the last step itself (a window off by one step would fail both)."""
    import torch
    from safetensors.torch import load_file

    from expbank.envs.alfworld.search_games import write_search_games
    from expbank.training.actors.tiny_warm import WarmRecipe, build_tiny_warm

    monkeypatch.setenv("EXPBANK_CACHE", str(tmp_path / "cache"))
    games = write_search_games(tmp_path / "games", triples={
        "train": [("Apple", "Shelf", "GarbageCan"), ("Egg", "CounterTop", "Shelf")],
        "dev": [("Tomato", "Shelf", "SideTable")]})

    def weights(steps: int, average_last: int) -> dict[str, torch.Tensor]:
        recipe = WarmRecipe(envs=("alfworld",), alfworld_data=str(games), vocab_size=400, hidden_size=32,
                            layers=1, history_length=1, steps=steps, average_last=average_last)
        return load_file(build_tiny_warm(recipe, out=tmp_path / f"s{steps}-a{average_last}") / "model.safetensors")

    third, fourth, last_one, last_two = weights(3, 0), weights(4, 0), weights(4, 1), weights(4, 2)
    assert all(torch.equal(last_one[name], fourth[name]) for name in fourth)
    assert not all(torch.equal(third[name], fourth[name]) for name in fourth)
    assert all(torch.allclose(last_two[name], (third[name] + fourth[name]) / 2, atol=1e-6) for name in fourth)
