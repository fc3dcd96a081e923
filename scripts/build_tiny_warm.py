"""Build the ``tiny-warm`` model (or find it in the cache) and print where it is and what the build cost.

    python scripts/build_tiny_warm.py [--steps N] [--copy-task] [--out DIR] [--check SPLIT]

The model is what ``actor.model: tiny-warm`` loads; commands build it on first use, so running this script
is optional. It takes about 3 minutes on 2 CPU cores (expert collection ≈ 1 min, tokenizer ≈ 5 s, warm-up
training the rest; ``--copy-task`` adds ≈ 1 min). ``--check dev`` then prints the fraction of the expert's
answer tokens the model predicts on that split's transcripts (teacher-forced), per environment.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from expbank.paths import cache_dir
from expbank.torch_threads import set_torch_threads
from expbank.training.actors.tiny_warm import (
    WarmRecipe,
    answer_accuracy,
    build_tiny_warm,
    expert_conversations,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=WarmRecipe.steps, help="warm-up optimizer steps")
    parser.add_argument("--copy-task", action="store_true",
                        help="train an induction head first and keep it in every warm-up batch")
    parser.add_argument("--out", type=Path, default=None, help="model folder (default: the cache)")
    parser.add_argument("--check", metavar="SPLIT", default=None,
                        help="then score answer-token accuracy on the expert's transcripts of SPLIT (e.g. dev)")
    args = parser.parse_args()
    set_torch_threads()
    began = time.perf_counter()
    recipe = replace(WarmRecipe(), steps=args.steps)
    if args.copy_task:
        recipe = replace(recipe, induction_steps=250, induction_mix_batch_size=16)
    out = build_tiny_warm(recipe, out=args.out, progress=True)
    info = json.loads((out / "tiny-warm.json").read_text())
    print(f"{out}\n  built in {info['seconds']} s (this call {time.perf_counter() - began:.1f} s); "
          f"{info['conversations']} expert conversations; final warm-up loss {info['final_loss']:.3f}")
    if args.check:
        workdir = cache_dir("models") / "tiny-warm-transcripts"
        for env in recipe.envs:
            conversations = expert_conversations(env, recipe.history_length, workdir, split=args.check)
            accuracy = answer_accuracy(out, conversations, recipe.max_length)
            print(f"  {env}/{args.check}: {accuracy:.1%} of {len(conversations)} expert answers' tokens predicted")


if __name__ == "__main__":
    main()
