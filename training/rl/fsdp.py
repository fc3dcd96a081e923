"""FSDP2 for ``train.sharding: fsdp2``: PyTorch's ``fully_shard`` over the ranks of a ``torchrun`` launch.

Each decoder layer is one FSDP unit and the rest (embeddings, final norm, LM head) the root unit, so a rank
keeps ``1/world`` of every parameter, gradient and AdamW state, and gathers a layer's full weights only while
that layer computes. On a GPU the gathered weights are bf16 and gradients are reduce-scattered in fp32
(``MixedPrecisionPolicy``); on a CPU (gloo, as the tests run) everything stays fp32.

A sharded forward is collective: every rank must run it together. GRPO's rollouts are not in step: each rank
plays its own episodes, so ranks make different numbers of generate calls (transformers keeps FSDP ranks in
step within one call, not across calls) and replies end at different lengths. So rollouts never touch the
sharded model:
once per step :func:`copy_full_weights` gathers every parameter into a plain, unsharded copy on each rank
(bf16 on a GPU), and each rank generates from its copy alone. The update runs sharded, with the same number
of micro-batches on every rank (``grpo.update`` pads with zero-loss rows).

Checkpoints go through ``torch.distributed.checkpoint`` (each rank writes its shards, :func:`save_state`);
:func:`load_full_weights` reads them back into a plain model in one process (``expbank export-model``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor

from expbank.config import Config


def refusal(config: Config) -> str | None:
    """Why ``config`` cannot train with ``train.sharding=fsdp2``; None when it can."""
    if config.train.sharding != "fsdp2":
        return None
    if config.train.lora.enabled or config.actor.adapter:
        return ("train.sharding=fsdp2 shards full fine-tuning: set train.lora.enabled=false and no actor.adapter "
                "(a LoRA run's trainable state is small enough to keep whole on every rank: leave sharding at none)")
    if config.actor.backend == "vllm":
        return ("train.sharding=fsdp2 generates from an unsharded copy with the hf backend; actor.backend=vllm is "
                "not wired to sharded weights yet: use actor.backend=hf")
    return None


def device_mesh(device: torch.device) -> DeviceMesh:
    """The 1-D mesh of all ranks. A single process gets a one-rank process group of its own: FSDP2 always
    needs one, and ``expbank train`` started without ``torchrun`` has none."""
    if not dist.is_initialized():
        if device.type == "cuda":  # named, so NCCL does not guess the GPU from the rank (it warns when it does)
            index = device.index if device.index is not None else torch.cuda.current_device()
            dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1,
                                    device_id=torch.device("cuda", index))
        else:
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    return init_device_mesh(device.type, (dist.get_world_size(),))


def shard(model: torch.nn.Module, mesh: DeviceMesh) -> None:
    """Shard ``model`` in place: one FSDP unit per decoder layer (the model's ``_no_split_modules``), then
    the root. Parameters keep their names; on a GPU they compute in bf16 and reduce gradients in fp32."""
    if mesh.device_type == "cuda":
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    else:
        policy = MixedPrecisionPolicy()
    layers = set(getattr(model, "_no_split_modules", None) or ())
    for module in model.modules():
        if type(module).__name__ in layers:
            fully_shard(module, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)


def is_sharded(model: torch.nn.Module) -> bool:
    return isinstance(model, FSDPModule)


@torch.no_grad()
def copy_full_weights(sharded: torch.nn.Module, replica: torch.nn.Module) -> None:
    """Gather each parameter of ``sharded`` in full into ``replica``, one tensor at a time.

    Collective: every rank calls it at the same point of the step, and the gathers run in the same order
    (``named_parameters``) on all of them.
    """
    target = dict(replica.named_parameters())
    for name, param in sharded.named_parameters():
        target[name].copy_(param.full_tensor() if isinstance(param, DTensor) else param)


def save_state(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Every rank writes its shards of the weights and AdamW states to ``folder`` (collective)."""
    model_state, optimizer_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=str(folder))


def load_state(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Read :func:`save_state`'s folder into the sharded model and optimizer (collective; the number of
    ranks may differ from the run that wrote it)."""
    model_state, optimizer_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optimizer": optimizer_state}
    dcp.load(state, checkpoint_id=str(folder))
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])


def load_full_weights(folder: Path, model: torch.nn.Module) -> None:
    """Fill a plain (unsharded) model's weights from :func:`save_state`'s folder, in this process alone (with
    or without a process group)."""
    state = {"model": model.state_dict()}
    with warnings.catch_warnings():  # "assuming the intent is to load in a single process": it is
        warnings.simplefilter("ignore", UserWarning)
        dcp.load(state, checkpoint_id=str(folder), no_dist=True)
    model.load_state_dict(state["model"])


def rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def barrier() -> None:
    if dist.is_initialized():
        dist.barrier()
