"""``tiny-warm``: a ~1 M-parameter policy with its own tokenizer, warmed up on the project's expert transcripts.

GRPO only learns when a group's episodes differ in reward. A randomly initialised model never writes a valid
action, so every group scores the same and nothing is learnt; SmolLM2-135M is too slow to train to a measurable
change inside a CPU test. ``tiny-warm`` sits between them: a 4-layer Qwen2 with a 2k byte-level BPE vocabulary
trained on the bundled games' text, then trained for a fixed number of optimizer steps on the expert's
answers in the exact rollout layout (``agent/targets.py``, memory ``none``).

Most of an answer is copied from the prompt (the place in ``take apple 1 from shelf 1``, an item id). Trained
on transcripts alone, a model this small does not learn to copy within minutes: on held-out games it guesses
names at chance. The optional copy task (``induction_steps``) first trains an induction head on repeated
random token sequences (learnt in ~150 steps) and keeps that task in every warm-up batch; it is off by
default because it has only been shown to help in one setting. Both results are in docs/training.md,
"Learning on a CPU".

Everything is seeded (the build uses every core, so floating-point sums may differ across machines) and cached under
``$EXPBANK_CACHE/models/tiny-warm-<hash>``; ``scripts/build_tiny_warm.py`` builds it and prints timings.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from expbank.bank.entry import Entry
from expbank.bank.store import content_hash
from expbank.bank.summarise import (
    alfworld_not_found,
    alfworld_sightings,
    first_take,
    goal_object,
    not_found,
    said,
    takes,
)
from expbank.config import MemoryConfig
from expbank.envs.alfworld.games import game_set_hash, list_games
from expbank.paths import cache_dir, publish, staging_dir, staging_path
from expbank.torch_threads import set_torch_threads
from expbank.training.agent.collect import collect
from expbank.training.agent.protocol import ProtocolSpec
from expbank.training.agent.retrieve import Memory
from expbank.training.agent.rows import tokenize_conversation
from expbank.training.agent.targets import records_from_episode
from expbank.trajectory import Episode, episodes_in_id_order

# ChatML, as SmolLM2 and Qwen2 use it; prefix-preserving, which agent/rows.py relies on.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


@dataclass(frozen=True)
class WarmRecipe:
    """Everything that determines the built model (its hash names the cache folder)."""

    envs: tuple[str, ...] = ("webshop", "alfworld")
    alfworld_data: str | None = None  # an official-layout game folder for the ALFWorld transcripts (None: bundled)
    alfworld_split: str = "train"  # the split of it the expert plays
    vocab_size: int = 2048
    hidden_size: int = 128
    layers: int = 4
    heads: int = 4
    history_length: int = 2
    steps: int = 150
    batch_size: int = 8
    max_length: int = 1024
    learning_rate: float = 3e-3
    # the copy task: random sequences of `induction_length` tokens, repeated once; loss on the repeat
    induction_steps: int = 0  # before the warm-up (0: none; 250 learns it)
    induction_batch_size: int = 32
    induction_mix_batch_size: int = 0  # also in every warm-up step, so copying is not unlearnt (0: none)
    induction_length: int = 32
    induction_learning_rate: float = 1e-3
    average_last: int = 0  # save the mean of the last N steps' weights (Polyak averaging; 0: the last step's)
    # the experience the transcripts show (agent/targets.py): memory "none", or a bank and how it is rendered
    memory: str = "none"
    bank: str | None = None
    reconstruct: bool = True
    k: int = 2
    source_chars: int = 200
    guidance_tokens: int = 256
    observation: str = "current"  # memory.observation of the rows: each step's own, or the episode's first
    system: str = "full"  # prompt.system of the rows: full, or none (no system message)
    # with a bank, the share of expert episodes whose records show only other rooms' entries (ALFWorld), and the
    # share that show an empty block: both teach NONE and acting without memory (0, 0: every record retrieves)
    other_rooms_share: float = 0.0
    empty_share: float = 0.0
    # a split of alfworld_data with alfworld_split's tasks in the same order, walked by searching (households'
    # ``searches``): the negatives' records come from its episodes, so an episode shown no applicable entry is
    # taught to look, miss and look again; with memory none the same share of records come from it (None: off)
    search_split: str | None = None
    # with a bank, the share of expert episodes whose records show a not-found warning of the room's first attempt
    # and the second attempt's walk (households' ``searches`` and ``warned`` splits, ``warned_splits``), so the
    # policy learns to look elsewhere than a warning says (0: none); without memory the same walks, no block
    warned_share: float = 0.0
    warned_splits: tuple[str, str] | None = None
    # with a bank, the share of expert episodes whose records show, instead of what retrieval finds, the sighting
    # the rule summariser writes of the same walk cut before its take (a failed episode that saw the object, as
    # an online bank's entries come from: ``outcome: failure``), so such a find is used like a won one (0: none)
    sighted_share: float = 0.0
    # with a bank (ALFWorld), each warm-up step also trains this many critique rows: the training episodes' steps
    # shown their own room's entry or another room's, half each, with the loss on the critique alone. In the
    # records the critique is one decision among ~40 answer tokens and seldom "another room", and the policy
    # never learnt to compare the entry's room with this one; trained on that decision alone, the same model
    # does (0: none)
    critique_mix_batch_size: int = 0
    seed: int = 0
    version: int = 5  # bump when the build code changes what it produces

    def __post_init__(self):
        if self.critique_mix_batch_size and (self.memory == "none" or "alfworld" not in self.envs
                                             or not self.reconstruct):
            raise ValueError("critique_mix_batch_size needs a bank, ALFWorld's rooms and the critique stage")

    def memory_config(self) -> MemoryConfig:
        return MemoryConfig(mode=self.memory, bank=self.bank, reconstruct=self.reconstruct, k=self.k,
                            source_chars=self.source_chars, guidance_tokens=self.guidance_tokens,
                            observation=self.observation)

    def negatives(self) -> Negatives:
        return Negatives(self.other_rooms_share, self.empty_share, self.search_split, self.warned_share,
                         self.warned_splits, self.sighted_share)

    def key(self) -> str:
        """Names the cache folder: the recipe, and the fingerprint of the ``alfworld_split`` games when
        ``alfworld_data`` is set (a folder rewritten with other games is another recipe)."""
        fields = asdict(self)
        if self.alfworld_data is not None:
            fields["alfworld_data"] = _games_fingerprint(self.alfworld_data, self.alfworld_split)
        if self.bank is not None:
            fields["bank"] = content_hash(self.bank)
        if self.system == "full":  # the default adds nothing to the key (older keys stay)
            del fields["system"]
        if self.search_split is None:  # the default adds nothing (older keys stay)
            del fields["search_split"]
        else:
            fields["search_split"] = _games_fingerprint(self.alfworld_data, self.search_split)
        for name in ("other_rooms_share", "empty_share"):
            if fields[name] == 0.0 or self.memory == "none" and self.search_split is None \
                    and not self.warned_share:  # (older keys stay)
                del fields[name]
        if not self.warned_share:  # the default adds nothing (older keys stay)
            del fields["warned_share"], fields["warned_splits"]
        else:
            fields["warned_splits"] = [_games_fingerprint(self.alfworld_data, split) for split in self.warned_splits]
        if not self.sighted_share:  # the default adds nothing (older keys stay)
            del fields["sighted_share"]
        if not self.critique_mix_batch_size:  # the default adds nothing (older keys stay)
            del fields["critique_mix_batch_size"]
        if self.observation == "current" or self.memory == "none":  # nothing at the default (older keys stay)
            del fields["observation"]
        if self.memory == "none":  # the rendering keys change nothing without memory (and older keys stay)
            for name in ("memory", "bank", "reconstruct", "k", "source_chars", "guidance_tokens"):
                del fields[name]
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Negatives:
    """Which expert episodes' records show other rooms' entries or an empty block instead of what retrieval
    finds (a seeded draw per episode, in id order). Retrieval in the training rooms nearly always finds the
    room's own entry, so without them the policy seldom sees an entry that does not apply, or none at all:
    it then copies whatever it is shown, and cannot act from an empty bank (an online run's first wave).
    Shown the expert's straight walk, such a record still teaches the room's place, which only a training room
    has; with ``search_split`` it shows the walk a policy without memory can make in any room instead."""

    other_rooms: float = 0.0
    empty: float = 0.0
    search_split: str | None = None  # the split whose episodes the negatives' records show (None: the same)
    warned: float = 0.0  # the share shown a not-found warning of a first attempt, answered by a second attempt
    warned_splits: tuple[str, str] | None = None  # the splits of the first and second attempts
    sighted: float = 0.0  # the share shown the sighting of a failed walk that saw the goal object (cut before the take)

    def __post_init__(self):
        shares = (self.other_rooms, self.empty, self.warned, self.sighted)
        if min(shares) < 0 or sum(shares) > 1:
            raise ValueError(f"negative shares must be >= 0 and sum to <= 1, not {', '.join(map(str, shares))}")
        if self.warned and self.warned_splits is None:
            raise ValueError("a warned share needs warned_splits (the first and second attempts' splits)")

    def draws(self, seed: int) -> Iterator[str]:
        """``own``, ``other``, ``empty``, ``warned`` or ``sighted`` for each episode in turn."""
        rng = random.Random(f"negatives-{seed}")
        names = ("empty", "other", "warned", "sighted")
        bounds = list(itertools.accumulate((self.empty, self.other_rooms, self.warned, self.sighted)))
        while True:
            roll = rng.random()
            yield next((draw for draw, bound in zip(names, bounds, strict=True) if roll < bound), "own")


def _games_fingerprint(data_dir: str, split: str) -> str:
    return game_set_hash(list_games(split, data_dir))


def expert_conversations(env: str, history_length: int, workdir: Path, split: str = "train",
                         data_dir: str | None = None, memory: MemoryConfig | None = None,
                         seed: int = 0, system: str = "full",
                         negatives: Negatives = Negatives()) -> list[list[dict]]:
    """The expert's won episodes on ``split`` (of ``data_dir``, default bundled) as rollout-layout
    conversations, with the experience ``memory`` retrieves (default: none), ``negatives`` aside."""
    episodes = _expert_episodes(env, split, data_dir, workdir)
    def same_tasks(other: str) -> list[Episode]:
        """The expert's episodes of split ``other``, which must hold ``split``'s tasks in the same order."""
        walks = _expert_episodes(env, other, data_dir, workdir)
        if [_task_folder(e) for e in walks] != [_task_folder(e) for e in episodes]:
            raise ValueError(f"{data_dir}: split {other!r} does not hold {split!r}'s tasks in the same order")
        return walks

    searches = same_tasks(negatives.search_split) if negatives.search_split is not None else None
    firsts, seconds = map(same_tasks, negatives.warned_splits) if negatives.warned else (None, None)
    memory = memory or MemoryConfig()
    spec = ProtocolSpec.of(memory, system)
    retrievers: dict[str, Memory | None] = {"own": None, "other": None, "empty": None}
    if memory.mode != "none":
        retrievers["own"] = Memory.from_config(memory, seed)
        if negatives.other_rooms:
            if env != "alfworld":
                raise ValueError("other_rooms_share needs ALFWorld's rooms")
            retrievers["other"] = other_rooms_memory(memory, seed)
    draws = negatives.draws(seed)
    conversations = []
    for index, episode in enumerate(episodes):
        if episode.success:
            draw = next(draws)
            if draw == "warned":
                warning = first_attempt_warning(firsts[index], seconds[index]) if seconds[index].success else None
                if warning is not None:
                    conversations += records_from_episode(seconds[index], spec, retrievers["own"], history_length,
                                                          [warning] if retrievers["own"] else None)
                    continue
                draw = "own"  # the first look finds the food: no first attempt misses it
            if draw == "sighted":
                sighting = sighting_before_take(episode)
                if sighting is not None and retrievers["own"] is not None:
                    conversations += records_from_episode(episode, spec, retrievers["own"], history_length,
                                                          [sighting])
                    continue
                draw = "own"  # no memory, or the walk took nothing
            shown = episode if draw == "own" or searches is None else searches[index]
            if shown.success:
                conversations += records_from_episode(shown, spec, retrievers[draw], history_length)
    if not conversations:
        raise RuntimeError(f"{env}/{split}: no won expert episode to warm up on (delete its file under {workdir} "
                           "to collect it again)")
    return conversations


def critique_conversations(history_length: int, workdir: Path, split: str, data_dir: str | None,
                           memory: MemoryConfig, seed: int, system: str = "full") -> list[list[dict]]:
    """Every step of the expert's won ALFWorld episodes on ``split`` twice: shown what retrieval finds (in a
    training room, nearly always the room's own entry) and shown only other rooms' entries; the critique
    targets say which applies (``targets.target_blocks``)."""
    spec = ProtocolSpec.of(memory, system)
    retrievers = (Memory.from_config(memory, seed), other_rooms_memory(memory, seed))
    return [record for episode in _expert_episodes("alfworld", split, data_dir, workdir) if episode.success
            for retriever in retrievers for record in records_from_episode(episode, spec, retriever, history_length)]


def other_rooms_memory(memory: MemoryConfig, seed: int) -> Memory:
    """Retrieval from ``memory``'s bank that never shows an entry made in the episode's own room."""
    return Memory.from_config(memory.model_copy(update={"rooms": "other"}), seed)


def first_attempt_warning(search: Episode, second: Episode) -> Entry | None:
    """The not-found warning the rule summariser writes of a first attempt that looked at the places ``second``
    (a second attempt's walk) skips: the searching walk ``search`` cut after those looks, as an episode that ran
    out of steps there would end (None when ``second`` skips nothing)."""
    def places(episode: Episode) -> list[str]:
        return [said(step.action)[len("go to "):] for step in episode.steps if said(step.action).startswith("go to ")]

    skipped = [place for place in places(search) if place not in places(second)]
    if not skipped:
        return None
    looks = [t for t, step in enumerate(search.steps) if step.action.endswith(f" {skipped[-1]}")]
    cut = search.model_copy(update={"steps": search.steps[:looks[-1] + 2], "success": False, "score": 0.0})
    warnings = alfworld_not_found(cut)
    return warnings[0] if warnings and not_found(warnings[0]) == (goal_object(search.task), skipped) else None


def sighting_before_take(episode: Episode) -> Entry | None:
    """The sighting (``alfworld_sightings``) of the goal object written of ``episode``'s walk as a failed episode
    that saw the object and did not take it: cut after the step that took it, whose take becomes a ``look`` (the
    observation that listed the object is that step's). None when the walk takes no goal object."""
    goal = goal_object(episode.task)
    take = first_take(episode)
    if take is None:
        return None
    looked = episode.steps[take].model_copy(update={"action": "look"})
    cut = episode.model_copy(update={"steps": [*episode.steps[:take], looked], "success": False, "score": 0.0})
    return next((entry for entry in alfworld_sightings(cut) if takes(entry.actions[-1], goal)), None)


def _expert_episodes(env: str, split: str, data_dir: str | None, workdir: Path) -> list[Episode]:
    """The expert's episodes of ``split`` in id order, collected once into ``workdir`` (no step limit), in a
    file of this process's own that is then published: two builds appending to one file doubled its episodes."""
    source = "bundled" if data_dir is None else _games_fingerprint(data_dir, split)
    path = workdir / f"{env}-{split}-{source}-expert.jsonl"
    if not path.exists():
        staging = staging_path(path)
        collect(env, split, "expert", staging, data_dir=data_dir, workers=2, progress=False)
        publish(staging, path)
    return list(episodes_in_id_order(path))


def _task_folder(episode: Episode) -> str:
    """The task's folder (``pick_and_place_simple-Egg-None-GarbageCan-701``): the task without its trial."""
    return episode.task_id.rsplit("/", 1)[0]


def train_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE (any text encodes; no unknown tokens) with ChatML special tokens.

    It splits text exactly as ``Qwen2Tokenizer`` does (NFC, Qwen's pre-tokenizer regex, byte level): from a
    folder whose ``config.json`` says ``qwen2``, ``AutoTokenizer`` rebuilds that class from the vocabulary and
    merges and ignores the saved pipeline, so a BPE trained with any other split would encode differently
    once saved and loaded again.
    """
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, chat_template=CHAT_TEMPLATE, padding_side="left")


def build_tiny_warm(recipe: WarmRecipe = WarmRecipe(), out: Path | None = None, progress: bool = False) -> Path:
    """Build (or find) the model folder for ``recipe``; returns it."""
    import torch
    from tqdm import tqdm
    from transformers import Qwen2Config, Qwen2ForCausalLM


    out = out or cache_dir("models") / f"tiny-warm-{recipe.key()}"
    if (out / "config.json").exists():
        return out
    began = time.perf_counter()
    workdir = cache_dir("models") / "tiny-warm-transcripts"  # shared by recipes
    workdir.mkdir(parents=True, exist_ok=True)
    conversations = []
    for env in recipe.envs:
        split, data_dir = (recipe.alfworld_split, recipe.alfworld_data) if env == "alfworld" else ("train", None)
        conversations += expert_conversations(env, recipe.history_length, workdir, split, data_dir,
                                              recipe.memory_config(), recipe.seed, recipe.system,
                                              recipe.negatives())
    tokenizer = train_tokenizer([m["content"] for c in conversations for m in c], recipe.vocab_size)
    rows = [tokenize_conversation(tokenizer, c, recipe.max_length) for c in conversations]
    critiques = [tokenize_conversation(tokenizer, c, recipe.max_length, tags=("critique",))
                 for c in critique_conversations(recipe.history_length, workdir, recipe.alfworld_split,
                                                 recipe.alfworld_data, recipe.memory_config(), recipe.seed,
                                                 recipe.system)] if recipe.critique_mix_batch_size else []
    staging = staging_dir(out)
    tokenizer.save_pretrained(staging)

    threads = torch.get_num_threads()
    set_torch_threads()  # no env workers run while it trains
    torch.manual_seed(recipe.seed)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=recipe.hidden_size,
                         intermediate_size=3 * recipe.hidden_size, num_hidden_layers=recipe.layers,
                         num_attention_heads=recipe.heads, num_key_value_heads=recipe.heads // 2,
                         max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    config.save_pretrained(staging)
    _check_round_trip(staging, conversations, rows, recipe.max_length)
    model = Qwen2ForCausalLM(config)
    model.train()
    sequences = torch.Generator().manual_seed(recipe.seed)
    copy_loss = train_copy_task(model, recipe, sequences, progress) if recipe.induction_steps else None
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 20))
    order = random.Random(recipe.seed)
    critique_order = random.Random(f"critique-{recipe.seed}")  # leaves the records' draws as they were
    averaged = torch.optim.swa_utils.AveragedModel(model) if recipe.average_last else None
    for step in tqdm(range(recipe.steps), desc="tiny-warm", unit="step", disable=not progress):
        batch = order.sample(rows, recipe.batch_size)
        loss = _lm_loss(model, batch, tokenizer.pad_token_id)
        total = loss
        if recipe.induction_mix_batch_size:
            mixed_copy_loss = _induction_loss(model, recipe.induction_mix_batch_size, recipe, sequences)
            total = loss + mixed_copy_loss
            copy_loss = mixed_copy_loss.item()
        if critiques:
            total = total + _lm_loss(model, critique_order.sample(critiques, recipe.critique_mix_batch_size),
                                     tokenizer.pad_token_id)
        optimizer.zero_grad()
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if averaged is not None and step >= recipe.steps - recipe.average_last:
            averaged.update_parameters(model)
    if averaged is not None:
        model = averaged.module
    model.eval()
    torch.set_num_threads(threads)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(staging)
    (staging / "tiny-warm.json").write_text(json.dumps({
        "recipe": asdict(recipe), "conversations": len(conversations), "final_loss": loss.item(),
        "final_copy_loss": copy_loss,
        "seconds": round(time.perf_counter() - began, 1)}, indent=2) + "\n")
    return publish(staging, out)


def answer_accuracy(folder: Path, conversations: list[list[dict]], max_length: int = 1024) -> float:
    """The fraction of the expert's answer tokens the model predicts (greedy, teacher-forced): on held-out
    transcripts, a direct measure of whether it copies the names its answers need."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    right = total = 0
    with torch.no_grad():
        for conversation in conversations:
            ids, mask = tokenize_conversation(tokenizer, conversation, max_length)
            predicted = model(input_ids=torch.tensor([ids])).logits[0, :-1].argmax(-1).tolist()
            for guess, target, trained in zip(predicted, ids[1:], mask[1:], strict=True):
                right += trained and guess == target
                total += trained
    return right / max(total, 1)


def _check_round_trip(folder: Path, conversations: list[list[dict]], rows: list, max_length: int) -> None:
    """Fail the build unless the saved folder's tokenizer, loaded as every user loads it, encodes the training
    rows to the same ids (``AutoTokenizer`` may rebuild the tokenizer class the model config implies)."""
    from transformers import AutoTokenizer


    loaded = AutoTokenizer.from_pretrained(folder)
    for conversation, row in zip(conversations, rows, strict=True):
        if tokenize_conversation(loaded, conversation, max_length) != row:
            raise RuntimeError(f"{folder}: the saved tokenizer ({type(loaded).__name__}) encodes the warm-up "
                               "transcripts differently from the one trained; the model would be trained on "
                               "other ids than it reads")


def train_copy_task(model, recipe: WarmRecipe, generator, progress: bool = False) -> float:
    """``recipe.induction_steps`` AdamW steps of the copy task (its own optimizer); returns the last loss."""
    import torch
    from tqdm import tqdm

    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.induction_learning_rate, weight_decay=0.0)
    for _ in tqdm(range(recipe.induction_steps), desc="tiny-warm copy task", unit="step", disable=not progress):
        loss = _induction_loss(model, recipe.induction_batch_size, recipe, generator)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def _induction_loss(model, batch_size: int, recipe: WarmRecipe, generator):
    """Next-token loss on the second copy of random token sequences: only copying lowers it."""
    import torch

    length = recipe.induction_length
    first = len(SPECIAL_TOKENS)  # the special tokens come first in the vocabulary
    sequence = torch.randint(first, model.config.vocab_size, (batch_size, length), generator=generator)
    ids = torch.cat([sequence, sequence], dim=1)
    logits = model(input_ids=ids).logits[:, length:-1]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, length + 1:].reshape(-1))


def _lm_loss(model, batch: list[tuple[list[int], list[int]]], pad_id: int):
    """Next-token loss on the expert's answers only (``agent/rows.py`` masks), as SFT trains them."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    attention = torch.zeros_like(ids)
    for i, (row, mask) in enumerate(batch):
        ids[i, : len(row)] = torch.tensor(row)
        labels[i, : len(row)] = torch.tensor([t if m else -100 for t, m in zip(row, mask, strict=True)])
        attention[i, : len(row)] = 1
    return model(input_ids=ids, attention_mask=attention, labels=labels).loss
