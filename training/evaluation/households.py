"""The households benchmark's shared parts: each arm's run config, the tiny-warm policies, the critique
diagnostic and the success plot. ``expbank quickstart`` and ``scripts/bench_households.py`` both run the chain
(docs/training.md, "The households panel")."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from expbank.bank.store import Bank
from expbank.bank.summarise import bare_name, goal_object, taken
from expbank.envs.alfworld.games import room_of
from expbank.envs.alfworld.households import STEP_LIMIT
from expbank.training.actors.tiny_warm import WarmRecipe, build_tiny_warm
from expbank.training.agent.protocol import parse_output
from expbank.training.agent.retrieve import made_in_room
from expbank.training.agent.targets import rejects_every_item

# The compact experience block every memory arm sees (docs/training.md, "The households panel").
RENDER = {"k": 2, "source_chars": 0, "guidance_tokens": 48}


# reply budgets: tiny-warm's tokens fit a households reply in 64; SmolLM2's tokenizer needs up to 67 tokens
# for the longest households reply, and at 64 the action was cut off
TINY_REPLY_TOKENS = 64
LM_REPLY_TOKENS = 96


def arm_tree(games: Path, actor: dict, memory: dict, seed: int, temperature: float = 0.0,
             train: dict | None = None, episodes_in_flight: int = 8, render: dict | None = None,
             system: str = "full", max_new_tokens: int = TINY_REPLY_TOKENS) -> dict:
    """The run config (as a tree) of one arm on the held-out households; ``actor`` is ``{"model": ...}`` and,
    for a LoRA policy, ``"adapter"``. ``max_new_tokens`` must fit a reply's four tags in the policy's tokens:
    ``TINY_REPLY_TOKENS`` fits tiny-warm's, a pretrained LM's tokenizer needs ``LM_REPLY_TOKENS``."""
    tree = {
        "env": {"name": "alfworld", "split": "valid_unseen", "max_steps": STEP_LIMIT, "data_dir": str(games)},
        "panel": {"seeds": [0]},
        "actor": {"backend": "hf", **{key: str(value) for key, value in actor.items()}},
        "memory": {**(render or RENDER), **memory},
        "prompt": {"history_length": 1, "system": system},
        "decoding": {"temperature": temperature, "max_new_tokens": max_new_tokens},
        "select": {"split": "dev"},
        "report": {"splits": ["valid_unseen"]},
        "run": {"seed": seed, "episodes_in_flight": episodes_in_flight},
    }
    if train:
        tree["train"] = train
    return tree


def tiny_policy(games: Path, memory: dict, out: Path, seed: int, steps: int, learning_rate: float,
                render: dict | None = None, system: str = "full", progress: bool = True,
                other_rooms_share: float = 0.0, empty_share: float = 0.0, search: bool = False,
                warned_share: float = 0.0, sighted_share: float = 0.0, critique_mix: int = 0) -> Path:
    """A ``tiny-warm`` policy trained from scratch on the training households' expert walkthroughs, shown the
    experience ``memory`` retrieves (``{"mode": "none"}``, or a bank with ``reconstruct`` and ``observation``);
    the shares of episodes shown other rooms' entries or none instead are ``WarmRecipe``'s negatives. With ``search`` those
    episodes are the ``searches`` split's walks (look, miss, look again), for a policy without memory too: it
    gets the same searching records, so the two differ by the block alone. ``warned_share`` of the episodes
    show the not-found warning of a first attempt (the ``searches`` walk cut after one or two misses) and are
    answered by the ``warned`` split's second attempt; without memory the same second attempts, no block.
    ``sighted_share`` of the episodes show the sighting of their own walk written as a failed episode's (a bank
    policy only: without memory the draw changes nothing). ``critique_mix`` critique rows (own room's entry or
    another's, the loss on the critique alone) join every warm-up step of a bank policy that critiques."""
    render = render or RENDER
    with_memory = memory.get("mode", "none") != "none"
    # without searching or warned walks, negatives change nothing without memory (the same walk, no block)
    negatives = with_memory or search or bool(warned_share)
    recipe = WarmRecipe(envs=("alfworld",), alfworld_data=str(games), alfworld_split="train", vocab_size=1024,
                        history_length=1, steps=steps, learning_rate=learning_rate, induction_steps=250,
                        induction_mix_batch_size=16, average_last=50, seed=seed,
                        memory=memory.get("mode", "none"), bank=memory.get("bank"), k=render["k"],
                        reconstruct=memory.get("reconstruct", True), source_chars=render["source_chars"],
                        guidance_tokens=render["guidance_tokens"], system=system,
                        observation=memory.get("observation", "current"),
                        other_rooms_share=other_rooms_share * negatives, empty_share=empty_share * negatives,
                        search_split="searches" if search else None, warned_share=warned_share,
                        warned_splits=("searches", "warned") if warned_share else None,
                        sighted_share=sighted_share * with_memory,
                        critique_mix_batch_size=critique_mix * (with_memory and memory.get("reconstruct", True)))
    return build_tiny_warm(recipe, out=out, progress=progress)


def critique_diagnostic(run_dir: Path, bank: Bank | None = None) -> dict:
    """Over turns before the goal object is taken: how often the policy declined the memory, by writing ``NONE``
    in ``<reconstruct>`` or rejecting every item shown in ``<critique>`` (as the critique's target is stated,
    docs/training.md; SmolLM2 sometimes rejects an item and still copies it).

    With the arm's ``bank``, also split by what each turn showed, as the critique's target is stated: ``own``
    when an entry made in the episode's own room is among those shown, ``other`` when only other rooms' are (in a
    bank arm, a retrieval miss, where NONE is right)."""
    counts = {"all": [0, 0], "own": [0, 0], "other": [0, 0]}  # turns, declined
    for line in (run_dir / "episodes.jsonl").read_text().splitlines():
        episode = json.loads(line)
        room = room_of(episode["task_id"])
        for step in episode["steps"]:
            if step["action"].startswith("take "):
                break
            parsed = parse_output(step.get("output") or "", ())
            if "reconstruct" not in parsed.blocks:
                continue
            keys = ["all"]
            shown = [bank.get(i) for i in step.get("retrieved") or ()] if bank is not None else []
            if shown and None not in shown:  # (an id this bank does not hold leaves the turn out of the split)
                keys.append("own" if any(made_in_room(entry, room) for entry in shown) else "other")
            declined = parsed.reconstruction is None or rejects_every_item(
                parsed.blocks.get("critique", ""), len(step.get("retrieved") or ()))
            for key in keys:
                counts[key][0] += 1
                counts[key][1] += declined

    def share(key: str) -> dict:
        turns, none = counts[key]
        return {"turns": turns, "none_share": none / turns if turns else 0.0}

    return {**share("all"), **({"shown": {"own": share("own"), "other": share("other")}} if bank is not None else {})}


# how a lost game went wrong, read from its first take (``loss_diagnostic``)
LOSS_KINDS = {"other_object_beside_goal": "took another object where the food lay",
              "goal_not_in_view": "took where the food was not in view", "took_goal": "took the food",
              "no_take": "no take"}


def loss_diagnostic(run_dir: Path) -> dict[str, int]:
    """The games an arm lost, counted by their first take, well-formed or not (``LOSS_KINDS``): another object
    (or a malformed take) on a turn whose observation listed the goal object (the place was right, the object
    wrong), a take with the goal object not in view (a wrong place, or a closed receptacle), a take of the goal
    object that still lost (a wrong place named, or never put), or no take. GRPO and the critique fix
    different ones, so a note can say which."""
    counts = {"lost": 0, **dict.fromkeys(LOSS_KINDS, 0)}
    for line in (run_dir / "episodes.jsonl").read_text().splitlines():
        episode = json.loads(line)
        if episode.get("success"):
            continue
        counts["lost"] += 1
        goal = goal_object(episode["task"])
        take = next((step for step in episode["steps"] if step["action"].lower().startswith("take ")), None)
        fact = taken(take["action"]) if take else None
        if take is None:
            counts["no_take"] += 1
        elif fact and bare_name(fact[0]) == goal:
            counts["took_goal"] += 1
        elif goal is not None and re.search(rf"\b{goal} \d+\b", take["observation"].lower()):
            counts["other_object_beside_goal"] += 1
        else:
            counts["goal_not_in_view"] += 1
    return counts


def plot(summary: dict[str, Any], path: Path) -> None:
    """Success per arm with 95% CIs and the no-memory ceiling (``summary["households"]``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = summary["run"]["arm_order"]
    rates = [summary["arms"][n]["success"] for n in names]
    cis = [summary["arms"][n].get("success_ci95") or [r, r] for n, r in zip(names, rates, strict=True)]
    errors = [[r - lo for r, (lo, _) in zip(rates, cis, strict=True)],
              [hi - r for r, (_, hi) in zip(rates, cis, strict=True)]]
    figure, axis = plt.subplots(figsize=(1.2 * len(names) + 2, 3.5))
    axis.bar(names, rates, yerr=errors, capsize=4, color="#4c72b0")
    ceiling = 100 * summary["households"]["no_memory_ceiling"]["rate"]
    axis.axhline(ceiling, color="grey", linestyle="--", label=f"no-memory ceiling {ceiling:.0f}%")
    axis.set_ylabel("success % (95% CI)")
    axis.set_ylim(0, 100)
    axis.set_title("households panel (constructed), held-out rooms")
    axis.legend(loc="upper right", fontsize=8)
    figure.autofmt_xdate(rotation=30)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
