"""How many CPU threads torch uses: one rule for every process of ours that runs a model on a CPU."""

from __future__ import annotations

import os

from expbank.errors import UserError


def set_torch_threads(default: int | None = None) -> int:
    """Set torch's CPU threads to ``$EXPBANK_TORCH_THREADS``, else ``default``, else one per core, and return it.

    One per core suits training and generation on a machine of one's own: they never run beside busy
    environment workers (a rollout steps its environments between generate calls). Another busy process is
    another matter: torch's threads then wait for each other at every operation (on 2 cores, two threads beside
    one busy process generated 5x slower than one thread, docs/benchmarks.md, "Lean CPU"), so set
    ``EXPBANK_TORCH_THREADS=1`` on a shared machine. The bank service passes ``default=1``: a query is one short
    sentence, and on a busy machine one encode took 857 ms with 2 threads, 17 ms with 1.
    """
    import torch

    value = os.environ.get("EXPBANK_TORCH_THREADS") or str(default or os.cpu_count() or 1)
    if not value.isdigit() or int(value) < 1:
        raise UserError(f"EXPBANK_TORCH_THREADS={value!r}: give a positive number of threads")
    torch.set_num_threads(int(value))
    return int(value)
