#!/usr/bin/env bash
# Runs the test suite on CUDA when an NVIDIA driver and GPU are present; says plainly that it
# skipped the GPU run otherwise (the kernels' CUDA C++ is still checked offline by
# scripts/cuda-offline.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep 'libcuda\.so' >/dev/null || ! { nvidia-smi -L 2>/dev/null | grep GPU >/dev/null; }; then
    echo "test-cuda: SKIPPED the GPU run: no NVIDIA driver or GPU found on this machine"
    exit 0
fi
nvidia-smi -L
STRIDEX_BACKEND=cuda cargo test --features cuda --test suite "$@" -- seeds:: dtypes:: runtime:: random:: conformance::
