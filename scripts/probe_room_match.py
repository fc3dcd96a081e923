"""Diagnostic: does a language model's state at the critique's verdict say whether the shown entry is this room's?

The households critique (docs/training.md) asks the policy to tell its own room's entry from another room's by
comparing the entry's ``situation`` (the room as first seen in the visit it came from) with this room. SmolLM2
learnt the rate of rejections, not which entry to reject. This script asks whether the information is there
before any training: it builds each walk's first-step prompt exactly as SFT and evaluation do (the bench's
k = 1 block, no system message, retrieval with the first observation), once shown the room's own entry and
once shown what ``memory.rooms: other`` retrieves (the ``sft-bank-other`` arm's entry), appends the reply up to
the verdict (``<observe>…</observe><critique>[1] ``), and fits a logistic regression on the hidden state there,
per layer, on the training households' walks; it scores the held-out households' (rooms no fit saw). A
lexical control fits the same classifier on the Jaccard overlap of the two receptacle lists.

    python scripts/probe_room_match.py --games runs/households-s0/games --bank runs/households-s0/bank \
        [--model smollm2-135m] [--adapter DIR] [--out DIR]

It collects the expert's walkthroughs of ``train`` and ``valid_unseen`` into ``--out`` (reused on a rerun) and
prints AUC and balanced accuracy per layer; ``--out``/probe.json keeps them.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from sklearn.preprocessing import StandardScaler
from tqdm import tqdm

from expbank.config import MemoryConfig
from expbank.envs.alfworld.games import room_of
from expbank.envs.alfworld.households import STEP_LIMIT
from expbank.training.actors.backends import HFBackend
from expbank.training.agent.collect import collect
from expbank.training.agent.protocol import ProtocolSpec
from expbank.training.agent.retrieve import Memory, made_in_room
from expbank.training.agent.targets import records_from_episode
from expbank.training.evaluation.households import RENDER
from expbank.trajectory import read_episodes

_ROOM = re.compile(r"you see (.*?)\.")


def walks(games: Path, split: str, out: Path) -> list:
    """The expert's won walkthroughs of ``split`` (``collect`` resumes: a rerun plays nothing again)."""
    path = out / f"{split}.jsonl"
    collect("alfworld", split, "expert", path, data_dir=str(games), workers=2, max_steps=STEP_LIMIT)
    return [episode for episode in read_episodes(path) if episode.success]


def receptacles(text: str) -> set[str]:
    match = _ROOM.search(text)
    return {part.strip().removeprefix("and ").removeprefix("a ").strip()
            for part in match[1].split(",")} if match else set()


def first_turns(episodes: list, bank: Path, spec: ProtocolSpec) -> list[dict]:
    """Per walk, its first-step conversation shown its own room's entry and shown another room's."""
    turns = []
    for rooms in ("any", "other"):
        memory = Memory.from_config(MemoryConfig(mode="bank", bank=str(bank), observation="first",
                                                 rooms=rooms, **{**RENDER, "k": 1}), seed=0)
        for episode in episodes:
            entries = memory.retrieve(task=episode.task, observation=episode.steps[0].observation,
                                      task_id=episode.task_id, env="alfworld")
            room = room_of(episode.task_id)
            own = any(made_in_room(entry, room) for entry in entries)
            if rooms == "any" and not own:
                continue  # a retrieval miss: neither side of the comparison
            record = records_from_episode(episode, spec, memory, 1, shown=entries)[0]
            reply = record[-1]["content"]
            situation = entries[0].situation if entries else ""
            turns.append({"messages": record[:-1], "prefix": reply[:reply.index("<critique>") + len("<critique>[1] ")],
                          "own": own, "room": room_of(episode.task_id),
                          "jaccard": jaccard(receptacles(episode.steps[0].observation), receptacles(situation))})
    return turns


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def states(backend: HFBackend, turns: list[dict], desc: str) -> np.ndarray:
    """The hidden state of every layer at the verdict position: (turns, layers + 1, hidden)."""
    chunks = range(0, len(turns), 16)
    return np.concatenate([backend.hidden_states([turn["messages"] for turn in turns[i: i + 16]],
                                                 [turn["prefix"].rstrip() for turn in turns[i: i + 16]], None)
                           for i in tqdm(chunks, desc=desc, unit="16 turns")])


def score(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray) -> dict:
    scaler = StandardScaler().fit(train_x)
    model = LogisticRegression(C=0.1, max_iter=2000, class_weight="balanced").fit(scaler.transform(train_x), train_y)
    probability = model.predict_proba(scaler.transform(test_x))[:, 1]
    return {"auc": round(float(roc_auc_score(test_y, probability)), 3),
            "balanced_accuracy": round(float(balanced_accuracy_score(test_y, probability > 0.5)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=Path, required=True)
    parser.add_argument("--bank", type=Path, required=True)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--adapter", default=None)
    parser.add_argument("--train-walks", type=int, default=80, help="training walks fitted on (a seeded draw; each "
                        "is two forward passes of ~400 tokens, ~4 s on 2 cores)")
    parser.add_argument("--out", type=Path, default=Path("runs/probe-room-match"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    spec = ProtocolSpec("bank", system="none")
    train_walks = walks(args.games, "train", args.out)
    train_walks = [train_walks[i] for i in sorted(np.random.default_rng(0).permutation(len(train_walks))
                                                  [:args.train_walks])]
    train = first_turns(train_walks, args.bank, spec)
    test = first_turns(walks(args.games, "valid_unseen", args.out), args.bank, spec)
    if {turn["room"] for turn in train} & {turn["room"] for turn in test}:
        raise SystemExit("held-out rooms appear among the training walks: not a held-out probe")
    backend = HFBackend(args.model, adapter=args.adapter)
    train_x, test_x = states(backend, train, "training rooms"), states(backend, test, "held-out rooms")
    train_y = np.array([turn["own"] for turn in train])
    test_y = np.array([turn["own"] for turn in test])
    result = {"model": args.model, "adapter": args.adapter, "train_turns": len(train), "test_turns": len(test),
              "test_own": int(test_y.sum()),
              "jaccard": score(np.array([[t["jaccard"]] for t in train]), train_y,
                               np.array([[t["jaccard"]] for t in test]), test_y),
              "layers": {layer: score(train_x[:, layer], train_y, test_x[:, layer], test_y)
                         for layer in range(train_x.shape[1])}}
    print(f"{len(train)} training-room turns, {len(test)} held-out ({int(test_y.sum())} shown their own entry)")
    print(f"lexical control (Jaccard of the receptacle lists): {result['jaccard']}")
    for layer, figures in result["layers"].items():
        print(f"layer {layer:2d}: AUC {figures['auc']:.3f}, balanced accuracy {figures['balanced_accuracy']:.3f}")
    (args.out / "probe.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
