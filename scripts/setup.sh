#!/usr/bin/env bash
# README's setup step on a fresh Debian/Ubuntu machine: a Vulkan driver (lavapipe where there is
# no GPU, so `wgpu`, the default feature, runs its kernels for real), then the static LLVM that
# the `cpu` and `cuda` features link. Idempotent: each part does nothing once done.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-vulkan.sh
# The default `wgpu` build needs no LLVM: where its download fails, say so and carry on.
if ! bash scripts/install-llvm.sh; then
    echo "setup: no LLVM for the \`cpu\` and \`cuda\` features (see above); \`wgpu\` builds need none" >&2
fi
