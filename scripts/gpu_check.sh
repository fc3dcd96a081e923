#!/usr/bin/env bash
# The prepared GPU check (docs/gpu.md): GRPO steps on the bundled WebShop with random-weight Qwen2.5-shaped
# models: 1.5B with LoRA, 1.5B full fine-tuning under FSDP2 (world size 1: the CUDA FSDP2, bf16 and sharded
# checkpoint path), 7B with LoRA. It prints generation and update tokens/s, peak GPU memory against the dry
# run's prediction, and any error. One call of at most 8 minutes on one H200.
#
#   bash scripts/gpu_check.sh --build   here: cp312 wheels of what the GPU machine lacks, and SmolLM2's
#                                       tokenizer, into build/gpu-check/ (about 12 MiB; build/ is ignored)
#   bash scripts/gpu_check.sh           on the GPU machine (carry build/gpu-check): installs what is missing
#                                       from those wheels into $WORK/site, then runs the check
#   bash scripts/gpu_check.sh --cpu     here: the same stages with tiny shapes on the CPU
#   ... --stage NAME                    only that stage (repeatable), e.g. to rerun one that failed
#   ... --episodes N                    N episodes per step, all in flight (default 8; 4 with --cpu)
#
# GPU_CHECK_WORK sets the scratch folder (default /dev/shm/expbank-gpu-check when /dev/shm has 60 GB free,
# else /tmp/expbank-gpu-check); PYTHON the interpreter (default python3); GPU_CHECK_TIMEOUT the seconds the
# check may run (default 470).
set -euo pipefail
cd "$(dirname "$0")/.."
FOLDER=build/gpu-check
PYTHON=${PYTHON:-python3}
MODE=gpu
case "${1:-}" in --build | --cpu) MODE=$1; shift ;; esac

if [ "$MODE" = "--build" ]; then
    exec "$PYTHON" scripts/gpu_check.py build "$FOLDER"
fi
# other arguments (--stage NAME, --episodes N) go to `gpu_check.py run`, whose parser checks them

WORK=${GPU_CHECK_WORK:-}
if [ -z "$WORK" ]; then
    free_kib=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
    if [ "${free_kib:-0}" -gt 60000000 ]; then WORK=/dev/shm/expbank-gpu-check; else WORK=/tmp/expbank-gpu-check; fi
fi
mkdir -p "$WORK/site"
export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export EXPBANK_CACHE=${EXPBANK_CACHE:-$WORK/cache}

# what the machine lacks: wheels whose distribution is missing or older, and expbank itself (built from this
# tree; pip takes its build requirements, setuptools and wheel, from the same folder)
if [ -d "$FOLDER/wheels" ]; then
    missing=$("$PYTHON" scripts/gpu_check.py missing "$FOLDER/wheels")
    if [ -n "$missing" ]; then
        echo "installing from $FOLDER/wheels: $(echo $missing | xargs -n1 basename | tr '\n' ' ')"
        # shellcheck disable=SC2086
        "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/site" $missing
    fi
fi
if ! (cd / && "$PYTHON" -c "import expbank.envs, expbank.training") 2>/dev/null; then  # not this tree's folder
    echo "installing expbank from this tree into $WORK/site"
    "$PYTHON" -m pip install -q --no-index --find-links "$FOLDER/wheels" --no-deps --no-compile --no-cache-dir \
        --target "$WORK/site" .
fi

tokenizer=()
if [ -d "$FOLDER/tokenizer" ]; then tokenizer=(--tokenizer "$FOLDER/tokenizer"); fi
device=()
if [ "$MODE" = "--cpu" ]; then device=(--cpu); fi
# the call that runs this has 8 minutes: end the check itself first, with what it printed so far
exec timeout -k 10 "${GPU_CHECK_TIMEOUT:-470}" "$PYTHON" scripts/gpu_check.py run --work "$WORK" ${tokenizer[@]+"${tokenizer[@]}"} ${device[@]+"${device[@]}"} "$@"
