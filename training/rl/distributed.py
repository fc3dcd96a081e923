"""The ranks of a training run, through accelerate: one process (``expbank train``) or several
(``torchrun --nproc_per_node N -m expbank.cli train ...`` or ``accelerate launch --multi_gpu``; NCCL on GPUs,
gloo on a machine without one).

GRPO splits each step's task groups across ranks (a group stays on one rank, so its advantages are computed
where it was played), gathers the episodes to rank 0 (which alone writes files and the bank), and combines
the gradients: DDP all-reduces them (``train.sharding: none``), FSDP2 reduce-scatters them into each rank's
shard (``train.sharding: fsdp2``, ``training/rl/fsdp.py``). A single process goes through the same calls;
accelerate then wraps nothing, so the numerics are those of plain PyTorch.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch

from expbank.errors import UserError

# the package each tracker needs, and how to install it
TRACKER_PACKAGES = {"tensorboard": ("tensorboard", "pip install tensorboard"),
                    "wandb": ("wandb", "pip install wandb")}


def check_tracker(tracker: str) -> None:
    """Refuse a tracker whose package is missing before any work starts."""
    if tracker == "none":
        return
    module, install = TRACKER_PACKAGES[tracker]
    if importlib.util.find_spec(module) is None:
        raise UserError(f"train.tracker={tracker} needs the {module} package, which is not installed: {install} "
                        "(or set train.tracker=none)")


# accelerate launches whose semantics GRPO's loop does not have, and why: `expbank train` refuses them, the
# dry run warns
UNSUPPORTED_LAUNCHES = {
    "FSDP": "accelerate's FSDP wraps the model it prepares, and rollouts would then run collective forwards "
            "that the ranks do not make in step (each plays its own episodes): they would hang",
    "DEEPSPEED": "DeepSpeed steps the optimizer inside every backward, so a GRPO step would take one optimizer step "
                 "per micro-batch (and ZeRO-3 forwards are collective, which would hang the rollouts)",
}
FSDP2_WAY = ("to shard weights, gradients and optimizer states, use FSDP2: set train.sharding=fsdp2 and launch "
             "with torchrun --nproc_per_node N -m expbank.cli train CONFIG (docs/gpu.md)")


def launch_refusal(distributed_type: str) -> str | None:
    """Why ``expbank train`` cannot run under this accelerate ``distributed_type``; None when it can."""
    reason = UNSUPPORTED_LAUNCHES.get(distributed_type)
    if reason is None:
        return None
    return f"expbank train does not run under {distributed_type}: {reason}; {FSDP2_WAY}"


class Distributed:
    """This process's rank, the collective operations GRPO needs, and the experiment tracker."""

    def __init__(self, tracker: str, run_dir: Path, sharded: bool = False):
        from accelerate import Accelerator, InitProcessGroupKwargs

        check_tracker(tracker)
        # without a GPU, ranks started by `accelerate launch --multi_gpu` or torchrun meet over gloo (accelerate's
        # own --cpu launcher starts several processes only through mpirun); rank 0 alone evaluates on dev while
        # the others wait in a barrier, hence the long timeout
        self.accelerator = Accelerator(cpu=not torch.cuda.is_available(),
                                       log_with=None if tracker == "none" else tracker, project_dir=str(run_dir),
                                       kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(hours=4))])
        if self.world == 1 and _cpu_launcher_asked_for_several():
            raise UserError("`accelerate launch --cpu --num_processes N` started a single process (accelerate's CPU "
                            "launcher needs mpirun for more); use `accelerate launch --multi_gpu --num_processes N "
                            "...`, whose ranks meet over gloo on a machine without a GPU")
        refusal = launch_refusal(getattr(self.accelerator.distributed_type, "value", ""))
        if refusal:
            raise UserError(refusal)
        self.tracking = tracker != "none"
        self.sharded = sharded  # FSDP2: the model is sharded by training/rl/fsdp.py, not wrapped here

    @property
    def rank(self) -> int:
        return self.accelerator.process_index

    @property
    def world(self) -> int:
        return self.accelerator.num_processes

    @property
    def is_main(self) -> bool:
        return self.accelerator.is_main_process

    @property
    def device(self) -> torch.device:
        return self.accelerator.device

    def shard(self, items: list) -> list:
        """This rank's share of ``items`` (round robin, so shares differ by at most one)."""
        return items[self.rank::self.world]

    def gather(self, items: list) -> list:
        """Every rank's ``items``, concatenated in rank order, on every rank."""
        if self.world == 1:
            return items
        from accelerate.utils import gather_object

        return gather_object(items)

    def total(self, values: list[float]) -> list[float]:
        """Element-wise sums of ``values`` over ranks."""
        if self.world == 1:
            return values
        tensor = torch.tensor(values, dtype=torch.float64, device=self.device)
        return self.accelerator.reduce(tensor, reduction="sum").tolist()

    def most(self, value: int) -> int:
        """The largest ``value`` over ranks."""
        if self.world == 1:
            return value
        tensor = torch.tensor([value], dtype=torch.int64, device=self.device)
        torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MAX)
        return int(tensor.item())

    def barrier(self) -> None:
        self.accelerator.wait_for_everyone()

    def prepare(self, model: Any, optimizer: torch.optim.Optimizer) -> tuple[Any, torch.optim.Optimizer]:
        """The model to run training forwards through (DDP-wrapped with several ranks; a sharded model as it
        is) and the optimizer."""
        if self.sharded:
            return model, optimizer
        return self.accelerator.prepare(model, optimizer)

    def sync_gradients(self, model: Any, sync: bool):
        """A context in which backward passes all-reduce gradients (``sync``) or only accumulate them. A
        sharded model reduce-scatters at every backward: accumulating unsharded gradients would hold them whole."""
        return contextlib.nullcontext() if sync or self.sharded else self.accelerator.no_sync(model)

    def backward(self, loss: torch.Tensor) -> None:
        # DDP averages gradients over ranks; each rank's loss is already its share of the global sum
        self.accelerator.backward(loss * self.world)

    def clip(self, parameters: list[torch.Tensor], max_norm: float) -> None:
        self.accelerator.clip_grad_norm_(parameters, max_norm)

    def start_tracking(self, name: str, config: dict[str, Any]) -> None:
        if self.tracking:
            flat = {key: value if isinstance(value, (int, float, str, bool)) else str(value)
                    for key, value in _flatten(config).items()}
            self.accelerator.init_trackers(name, config=flat)

    def log(self, metrics: dict[str, Any], step: int) -> None:
        if self.tracking:
            self.accelerator.log({k: v for k, v in metrics.items() if isinstance(v, (int, float))}, step=step)

    def end(self) -> None:
        if self.tracking:
            self.accelerator.end_training()


class OneProcess:
    """The collective operations of :class:`Distributed` for code that runs alone (benchmarks, unit tests)."""

    world, rank, is_main, sharded = 1, 0, True, False

    def __init__(self, device: torch.device):
        self.device = device

    def total(self, values: list[float]) -> list[float]:
        return values

    def most(self, value: int) -> int:
        return value

    def sync_gradients(self, model: Any, sync: bool):
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def clip(self, parameters: list[torch.Tensor], max_norm: float) -> None:
        torch.nn.utils.clip_grad_norm_(parameters, max_norm)


def _cpu_launcher_asked_for_several() -> bool:
    """accelerate's --cpu launcher sets a rendezvous address for several processes but starts one without mpirun."""
    return (os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true") and "MASTER_ADDR" in os.environ
            and "WORLD_SIZE" not in os.environ)


def _flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
