"""The GPU check behind ``scripts/gpu_check.sh`` (docs/gpu.md): GRPO steps of expbank's own trainer on the
bundled WebShop, with random-weight models of Qwen2.5's shapes, on one GPU (or, ``--cpu``, tiny shapes here).

Stages, each on a fresh run directory:

1. ``lora-1.5b-shaped``: Qwen2.5-1.5B's architecture, LoRA, bf16 frozen base;
2. ``full-fsdp2-1.5b-shaped``: the same, full fine-tuning with ``train.sharding=fsdp2`` at world size 1 (so
   the CUDA FSDP2 path runs: bf16 compute, fp32 reduce, the generation copy, a sharded checkpoint), then a
   resume from that checkpoint and an export of it to a plain model;
3. ``lora-7b-shaped``: Qwen2.5-7B's architecture, LoRA.

No Qwen tokenizer is available offline, so each model is built with the Qwen config's vocabulary size and
SmolLM2's tokenizer (its ids all fall inside that vocabulary), initialised in bf16 on the device and saved.
Random weights never write the protocol's tags, so the task reward is the same for every episode and no row
would train: the check scores episodes with a **check-only reward** (the characters the policy wrote), which
varies, so rows carry advantages and the update does real work. It is no learning signal.

Per step it prints the tokens generated per second of rollouts and the row tokens per second of the update;
per stage the peak GPU memory against ``expbank train --dry-run``'s prediction for the same config, and any
error (the other stages still run).

    python scripts/gpu_check.py build build/gpu-check        # wheels + tokenizer (here, with network)
    python scripts/gpu_check.py missing build/gpu-check/wheels
    python scripts/gpu_check.py run --work DIR [--tokenizer DIR] [--cpu]
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIB = 2**30
# distributions the GPU machine lacks (its image has torch, transformers, peft, accelerate, numpy, pyyaml,
# regex, tqdm, httpx, pyarrow, pandas, ...): what `expbank train` imports on the WebShop path, plus trl and its
# pure-python needs for `expbank sft`
RUNTIME = ["pydantic", "pydantic-core", "annotated-types", "typing-inspection", "typing-extensions", "gymnasium",
           "farama-notifications", "rapidfuzz", "trl", "datasets", "dill", "multiprocess"]
BUILD = ["setuptools", "wheel", "packaging"]  # pip builds expbank from the tree there, isolated, from the folder
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
WHEEL_LIMIT_MIB = 60  # what travels to the GPU machine is 64 MiB at most, the working tree included


# ------------------------------------------------------------------------------------------ wheels
def build(folder: Path) -> int:
    """Download cp312 manylinux wheels of RUNTIME (the versions installed here) and BUILD into ``folder/wheels``
    and save SmolLM2's tokenizer to ``folder/tokenizer``."""
    from transformers import AutoTokenizer

    from expbank.training.actors.models import smollm2_dir

    wheels = folder / "wheels"
    shutil.rmtree(folder, ignore_errors=True)
    wheels.mkdir(parents=True)
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in RUNTIME] + ["setuptools>=68", "wheel",
                                                                                   "packaging>=24"]
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "--implementation", "cp", *platforms, "-d", str(wheels), *pins],
                   check=True)
    AutoTokenizer.from_pretrained(smollm2_dir()).save_pretrained(folder / "tokenizer")
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20
    for path in sorted(wheels.iterdir()):
        print(f"  {path.name}  {path.stat().st_size / 2**20:.1f} MiB")
    print(f"{folder}: {size:.1f} MiB (wheels and tokenizer); carry it to the GPU machine")
    if size > WHEEL_LIMIT_MIB:
        print(f"ERROR: more than {WHEEL_LIMIT_MIB} MiB; the GPU call could not carry it", file=sys.stderr)
        return 1
    return 0


def missing(wheels: Path) -> int:
    """Print the runtime wheels whose distribution is not installed here, or older than the wheel."""
    from packaging.utils import canonicalize_name, parse_wheel_filename
    from packaging.version import Version

    for path in sorted(wheels.glob("*.whl")):
        name, version, _, _ = parse_wheel_filename(path.name)
        if name in {canonicalize_name(build) for build in BUILD}:
            continue
        try:
            installed = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed is None or installed < version:
            print(path)
    return 0


# --------------------------------------------------------------------------------------------- run
SHAPES = {"1.5b": "Qwen/Qwen2.5-1.5B-Instruct", "7b": "Qwen/Qwen2.5-7B-Instruct"}
# --cpu: the same structure (tied or untied embeddings, grouped-query attention), tiny sizes and the
# tokenizer's own vocabulary (Qwen's 152k-entry LM head alone would make a CPU update take minutes)
TINY = {"1.5b": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2),
        "7b": dict(hidden_size=96, intermediate_size=192, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2)}


@dataclass
class Stage:
    name: str
    shape: str
    lora: bool
    sharding: str = "none"


STAGES = [Stage("lora-1.5b-shaped", "1.5b", lora=True), Stage("full-fsdp2-1.5b-shaped", "1.5b", lora=False,
                                                              sharding="fsdp2"),
          Stage("lora-7b-shaped", "7b", lora=True)]


def check_reward(result: Any) -> float:
    """Check-only: characters the policy wrote in the episode (varies between random-weight episodes)."""
    return sum(len(message["content"]) for conversation in result.conversations for message in conversation
               if message["role"] == "assistant") / 100.0


def random_model(shape: str, tokenizer_dir: Path, out: Path, device: Any, cpu: bool) -> Path:
    """A Qwen2.5-shaped model with random bf16 weights made on ``device``, saved with SmolLM2's tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen2Config

    from expbank.training.rl.dry_run import QWEN25

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    arch = {**QWEN25[SHAPES[shape]], **(TINY[shape] | {"vocab_size": len(tokenizer)} if cpu else {})}
    config = Qwen2Config(**arch, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                         else tokenizer.eos_token_id)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def stage_config(stage: Stage, model_dir: Path, run_dir: Path, cpu: bool, episodes: int | None = None) -> Any:
    """The stage's GRPO config: ``episodes`` per step (default 4 on the CPU, 8 on a GPU), all in flight at once,
    in groups of two."""
    from expbank.config import Config

    episodes = episodes or (4 if cpu else 8)

    return Config.model_validate({
        "env": {"name": "webshop", "split": "test", "max_steps": 2 if cpu else 3},
        "actor": {"backend": "hf", "model": str(model_dir)},
        "memory": {"mode": "none"},
        "decoding": {"temperature": 1.0, "max_new_tokens": 16 if cpu else 64},
        "train": {"steps": 2, "split": "train", "tasks_per_step": max(1, episodes // 2), "group_size": 2,
                  "learning_rate": 1e-5 if stage.lora else 1e-6, "beta": 0.01, "micro_batch_size": 4 if cpu else 8,
                  "max_length": 1024, "drop_zero_variance": False, "sharding": stage.sharding,
                  "lora": {"enabled": stage.lora, "r": 16, "alpha": 32}, "checkpoint": {"every": 2}},
        "select": {"every": 0},
        "report": {"splits": ["test"]},
        "run": {"dir": str(run_dir), "seed": 0, "episodes_in_flight": episodes},
    })


def predicted_gib(config: Any) -> float:
    """What ``expbank train --dry-run`` counts per GPU for ``config`` (one process)."""
    from expbank.training.rl import dry_run

    arch, _ = dry_run.model_architecture(config.actor.model)
    model = dry_run.meta_model(arch, dry_run.lora_config(config))
    total, trainable = dry_run.parameter_counts(model)
    strategy = dry_run.launch_strategy(config, None, 1)
    parts = dry_run.memory_per_gpu(config, arch, total, trainable, strategy, dry_run.unit_sizes(model))
    return sum(parts.values()) / GIB


def synchronize() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def train_steps(config: Any, say) -> Any:
    """``grpo.train``'s loop with the check-only reward and timings; returns the run (for the checks after)."""
    from expbank.training.rl import grpo
    from expbank.trajectory import EpisodeWriter

    run = grpo.start_run(config, resume=False)
    before = weight_digest(run.policy.trainable().values())
    with grpo.rollout_pool(run) as pool, EpisodeWriter(run.run_dir / "episodes.jsonl") as writer:
        for step in range(run.start + 1, config.train.steps + 1):
            began = time.perf_counter()
            generated = run.backend.usage.completion_tokens
            results, _ = grpo.play_groups(run, pool, step)  # its own rewards below
            synchronize()
            rollout_s, generated = time.perf_counter() - began, run.backend.usage.completion_tokens - generated
            rewards = [check_reward(result) for result in results]
            rows, zero_variance = grpo.training_rows(results, rewards, run.policy.tokenizer, config.train)
            started = time.perf_counter()
            stats = grpo.update(run.policy, run.optimizer, rows, config.train, config.decoding.max_new_tokens,
                                run.model, run.dist, run.settings.temperature)
            synchronize()
            update_s, row_tokens = time.perf_counter() - started, sum(len(ids) for ids, _, _ in rows)
            started = time.perf_counter()
            grpo.finish_step(run, step, results, rewards, rows, zero_variance, stats, writer, began)
            finish_s = time.perf_counter() - started
            say(f"step {step}: {len(results)} episodes; rollouts {generated} tokens in {rollout_s:.1f} s "
                f"({generated / rollout_s:.0f} generated tok/s); update {len(rows)} rows, {row_tokens} tokens "
                f"({sum(sum(m) for _, m, _ in rows)} with loss) in {update_s:.1f} s ({row_tokens / update_s:.0f} "
                f"tok/s), loss {stats['loss']:+.4f}; finish (metrics, checkpoint) {finish_s:.1f} s")
    after = weight_digest(run.policy.trainable().values())
    say(f"the updates changed {sum(a != b for a, b in zip(before, after, strict=True))} of {len(after)} trainable "
        "tensors (a loss near 0 is expected: with one pass the ratio is 1 and a group's advantages sum to 0)")
    return run


def weight_digest(params: Any) -> list[float]:
    """One float64 sum of squares per tensor (its local shard under FSDP2), to tell whether weights changed."""
    import torch
    from torch.distributed.tensor import DTensor

    with torch.no_grad():
        return [float((p.to_local() if isinstance(p, DTensor) else p).double().square().sum()) for p in params]


def after_fsdp2(config: Any, run: Any, work: Path, cpu: bool, say) -> None:
    """Resume from the sharded checkpoint, then export it and compare the exported model's logits."""
    import torch
    from transformers import AutoModelForCausalLM

    from expbank.training.rl import grpo
    from expbank.training.rl.export import export

    checkpoint = grpo.latest_checkpoint(run.run_dir)
    size = sum(path.stat().st_size for path in (checkpoint / "dcp").rglob("*") if path.is_file()) / GIB
    say(f"sharded checkpoint {checkpoint.name}: {size:.2f} GiB in dcp/")
    saved = weight_digest(run.policy.model.parameters())
    started = time.perf_counter()
    resumed = grpo.start_run(config, resume=True)
    say(f"resume: step {resumed.start} loaded in {time.perf_counter() - started:.1f} s; weights restored exactly: "
        f"{weight_digest(resumed.policy.model.parameters()) == saved}")
    started = time.perf_counter()
    out = work / "export"
    shutil.rmtree(out, ignore_errors=True)
    dtype = "float32" if cpu else "bfloat16"  # the generation copy's
    export(run.run_dir, "last", out, dtype)
    device = resumed.dist.device
    exported = AutoModelForCausalLM.from_pretrained(out, dtype=getattr(torch, dtype)).to(device).eval()
    copy = grpo.generation_model(resumed)  # the resumed weights, gathered
    probe = torch.arange(100, 164, device=device)[None]
    with torch.no_grad():
        difference = (exported(input_ids=probe).logits.float() - copy(input_ids=probe).logits.float()).abs().max()
    say(f"export: {out} written in {time.perf_counter() - started:.1f} s; its logits differ from the resumed "
        f"policy's by at most {float(difference):.3g}")


def run_stage(stage: Stage, work: Path, tokenizer: Path, cpu: bool, say, episodes: int | None = None) -> None:
    import torch

    device = torch.device("cpu" if cpu else "cuda")
    started = time.perf_counter()
    model_dir = work / "models" / stage.shape
    if not (model_dir / "config.json").exists():  # the stages of one shape share it
        random_model(stage.shape, tokenizer, model_dir, device, cpu)
    say(f"model {SHAPES[stage.shape]} shape{' (tiny --cpu sizes)' if cpu else ''}: random bf16 weights, SmolLM2 "
        f"tokenizer; ready in {time.perf_counter() - started:.1f} s; "
        f"{'LoRA r16' if stage.lora else 'full fine-tuning'}, sharding {stage.sharding}")
    run_dir = work / "runs" / stage.name
    shutil.rmtree(run_dir, ignore_errors=True)
    config = stage_config(stage, model_dir, run_dir, cpu, episodes)
    if not cpu:
        gc.collect()
        torch.cuda.empty_cache()  # the model just built and saved
        torch.cuda.reset_peak_memory_stats()
    run = train_steps(config, say)
    if cpu:
        say(f"peak GPU memory: n/a on CPU (the dry run predicts {predicted_gib(config):.2f} GiB per GPU)")
    else:
        say(f"peak GPU memory {torch.cuda.max_memory_allocated() / GIB:.2f} GiB allocated "
            f"({torch.cuda.max_memory_reserved() / GIB:.2f} reserved); the dry run predicts "
            f"{predicted_gib(config):.2f} GiB (activations for micro_batch_size x max_length tokens; rows here are "
            "shorter)")
    if stage.sharding == "fsdp2":
        after_fsdp2(config, run, work, cpu, say)
    shutil.rmtree(run_dir, ignore_errors=True)


def describe_machine(cpu: bool) -> None:
    import torch

    versions = {name: importlib.metadata.version(name) for name in ("torch", "transformers", "peft", "accelerate")}
    device = "CPU (--cpu)" if cpu else torch.cuda.get_device_name()
    print(f"gpu_check on {device}; Python {sys.version.split()[0]}; "
          + ", ".join(f"{name} {version}" for name, version in versions.items()))
    try:
        import trl

        print(f"trl {trl.__version__} imports (expbank sft needs it; the check does not)")
    except Exception as err:  # noqa: BLE001 - reported, not fatal: GRPO does not use trl
        print(f"trl does not import ({type(err).__name__}: {err}); expbank sft would fail, GRPO does not need it")
    print("check-only reward: each episode scores the characters its policy wrote (random weights never write "
          "the protocol's tags, so the task reward is constant and no row would train); it is no learning signal")


def run(work: Path, tokenizer: Path | None, cpu: bool, names: list[str] | None = None,
        episodes: int | None = None) -> int:
    """Run the stages named in ``names`` (all when None), each after the previous one whatever its outcome."""
    import torch

    if not cpu and not torch.cuda.is_available():
        print("ERROR: no CUDA device; run with --cpu on a machine without a GPU")
        return 1
    if tokenizer is None:
        from expbank.training.actors.models import smollm2_dir

        tokenizer = smollm2_dir()
    describe_machine(cpu)
    stages = [stage for stage in STAGES if names is None or stage.name in names]
    failed = []
    for stage in stages:
        def say(text: str, stage: Stage = stage) -> None:
            print(f"[{stage.name}] {text}", flush=True)

        started = time.perf_counter()
        try:
            run_stage(stage, work, tokenizer, cpu, say, episodes)
            say(f"OK in {time.perf_counter() - started:.0f} s")
        except Exception as err:  # noqa: BLE001 - every stage runs; each error is printed
            failed.append(stage.name)
            say(f"ERROR after {time.perf_counter() - started:.0f} s: {type(err).__name__}: {err}")
            print("".join(traceback.format_exc().splitlines(keepends=True)[-12:]), flush=True)
        gc.collect()  # the stage's models, also when it failed
        if not cpu:
            torch.cuda.empty_cache()
        if all(later.shape != stage.shape for later in stages[stages.index(stage) + 1:]):
            shutil.rmtree(work / "models" / stage.shape, ignore_errors=True)  # room for the next shape
    print(f"gpu_check: {len(stages) - len(failed)} of {len(stages)} stages OK"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="download the wheels and save the tokenizer").add_argument("folder", type=Path)
    commands.add_parser("missing", help="print the wheels to install here").add_argument("wheels", type=Path)
    check = commands.add_parser("run", help="run the check")
    check.add_argument("--work", type=Path, required=True, help="scratch folder (models, runs, export)")
    check.add_argument("--tokenizer", type=Path, help="SmolLM2's tokenizer folder (default: expbank's own copy)")
    check.add_argument("--cpu", action="store_true", help="tiny shapes on the CPU")
    check.add_argument("--stage", action="append", choices=[stage.name for stage in STAGES],
                       help="run only this stage (repeatable; default: all)")
    check.add_argument("--episodes", type=int, help="episodes per step, all in flight (default 8; 4 with --cpu)")
    args = parser.parse_args()
    if args.command == "build":
        return build(args.folder)
    if args.command == "missing":
        return missing(args.wheels)
    from expbank.torch_threads import set_torch_threads

    if args.cpu:
        set_torch_threads()
    return run(args.work, args.tokenizer, args.cpu, args.stage, args.episodes)


if __name__ == "__main__":
    sys.exit(main())
