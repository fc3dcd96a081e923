"""Build the ``tiny-warm`` model (or find it in the cache) and print where it is and what the build cost.

    python scripts/build_tiny_warm.py [--steps N] [--out DIR]

The model is what ``actor.model: tiny-warm`` loads; commands build it on first use, so running this script
is optional. It takes about 3 minutes on 2 CPU cores (expert collection ≈ 1 min, tokenizer ≈ 5 s, warm-up
training the rest).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from expbank.training.models import set_cpu_threads
from expbank.training.tiny_warm import WarmRecipe, build_tiny_warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=WarmRecipe.steps, help="warm-up optimizer steps")
    parser.add_argument("--out", type=Path, default=None, help="model folder (default: the cache)")
    args = parser.parse_args()
    set_cpu_threads()
    began = time.perf_counter()
    out = build_tiny_warm(replace(WarmRecipe(), steps=args.steps), out=args.out, progress=True)
    info = json.loads((out / "tiny-warm.json").read_text())
    print(f"{out}\n  built in {info['seconds']} s (this call {time.perf_counter() - began:.1f} s); "
          f"{info['conversations']} expert conversations; final warm-up loss {info['final_loss']:.3f}")


if __name__ == "__main__":
    main()
