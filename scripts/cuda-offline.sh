#!/usr/bin/env bash
# Proves the CUDA kernels compile for NVIDIA GPUs on a machine without one: installs NVRTC,
# ptxas, nvdisasm and the CUDA headers from PyPI wheels (pinned; cached outside the repo), writes
# the CUDA C++ of the kernel catalogue for sm_80 and sm_90, and compiles every kernel with
# warnings as errors (scripts/cuda-offline.py prints the per-kernel report).
set -euo pipefail
cd "$(dirname "$0")/.."

CUDA_WHEELS_VERSION=13.5.37
CCCL_VERSION=13.3.5.0.6 # nvidia-cuda-cccl is versioned apart from the toolkit
cache="${STRIDEX_CUDA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stridex/cuda-$CUDA_WHEELS_VERSION}"
root="$cache/site/nvidia/cu13"

if [ ! -x "$root/bin/ptxas" ] || [ ! -e "$cache/complete" ]; then
    echo "cuda-offline: installing CUDA $CUDA_WHEELS_VERSION compiler wheels into $cache" >&2
    rm -rf "$cache"
    mkdir -p "$cache/wheels"
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$cache/wheels" \
        "nvidia-cuda-nvrtc==$CUDA_WHEELS_VERSION" "nvidia-cuda-nvcc==$CUDA_WHEELS_VERSION" \
        "nvidia-cuda-runtime==$CUDA_WHEELS_VERSION" "nvidia-cuda-crt==$CUDA_WHEELS_VERSION" \
        "nvidia-cuda-nvdisasm==$CUDA_WHEELS_VERSION" "nvidia-cuda-cccl==$CCCL_VERSION"
    python3 -m pip install -q --no-deps --no-compile --disable-pip-version-check --target "$cache/site" "$cache"/wheels/*.whl
    touch "$cache/complete"
fi

# Twice: the tiles as the definitions show them (consecutive), and spread through their rows,
# as CUDA launches them (`kernels::tile_spread`).
for tiles in consecutive spread; do
    out="target/cuda-catalogue-$tiles"
    rm -rf "$out"
    STRIDEX_TILE=$tiles cargo run -q --features "${STRIDEX_CUDA_FEATURES:-cuda}" --example cuda_catalogue -- "$out"
    echo "cuda-offline: tiles $tiles"
    python3 scripts/cuda-offline.py "$root" "$out"
done
