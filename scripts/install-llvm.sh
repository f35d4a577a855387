#!/usr/bin/env bash
# Provides the static LLVM 23 that CubeCL 0.11's `cpu` runtime (and, for NVPTX, its `cuda`
# runtime) link, where CubeCL's own build looks for it, so that any crate on this machine that
# depends on stridex with `features = ["cpu"]` or `["cuda"]` builds with no extra step or
# variable. The `wgpu` feature (the default) needs none of this.
#
# Why: CubeCL's `tracel-llvm-bundler` build script downloads its LLVM from a release page;
# where that page cannot be reached it fails. It skips the download when
# `<data dir>/tracel/tracel-llvm-<bundler version>/.tracel-llvm-installed` exists (the data
# dir is `$XDG_DATA_HOME`, else `~/.local/share`), and links through that directory's
# `bin/llvm-config`. PyPI's `mlc-llvm-static` wheels hold a relocatable static LLVM 23.1 with
# such an `llvm-config` (the `-extra-targets` wheel adds NVPTX): this script unpacks them there.
#
# Idempotent: it does nothing when the sentinel exists. Pinned: the wheel versions below, and the
# bundler version read from Cargo.lock (pass another as $1 if your own lock file names one).
set -euo pipefail
cd "$(dirname "$0")/.."

WHEEL_VERSION=23.1.1.post0

bundler=${1:-}
if [ -z "$bundler" ]; then
    bundler=$(awk '$0 == "name = \"tracel-llvm-bundler\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
fi
if [ -z "$bundler" ]; then
    echo "install-llvm: Cargo.lock names no tracel-llvm-bundler; pass its version as the first argument" >&2
    exit 1
fi

dest="${XDG_DATA_HOME:-$HOME/.local/share}/tracel/tracel-llvm-$bundler"
if [ -e "$dest/.tracel-llvm-installed" ]; then
    echo "install-llvm: LLVM for tracel-llvm-bundler $bundler is in $dest"
    exit 0
fi

python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -m pip --version >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "install-llvm: installing python3-pip (to download the LLVM wheels)"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3 python3-pip >/dev/null
    python=$(command -v python3)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "install-llvm: downloading mlc-llvm-static $WHEEL_VERSION (60 MB) and its NVPTX targets (32 MB)"
if ! "$python" -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    --python-version 3.11 -d "$work" \
    "mlc-llvm-static==$WHEEL_VERSION" "mlc-llvm-static-extra-targets==$WHEEL_VERSION"; then
    echo "install-llvm: could not download the LLVM wheels from the Python package index." >&2
    echo "  Check the network (or a proxy: pip honours HTTPS_PROXY and PIP_INDEX_URL), then run" >&2
    echo "  this script again. Builds with the \`wgpu\` feature need no LLVM." >&2
    exit 1
fi

# Both wheels unpack into one `mlc_llvm_static/static` tree (pip refuses to merge them).
"$python" - "$work" <<'PY'
import pathlib, sys, zipfile
work = pathlib.Path(sys.argv[1])
for wheel in sorted(work.glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.startswith("mlc_llvm_static/static/"):
                z.extract(info, work / "tree")
                mode = (info.external_attr >> 16) & 0o777
                if mode:
                    (work / "tree" / info.filename).chmod(mode)
PY
chmod +x "$work"/tree/mlc_llvm_static/static/bin/*

mkdir -p "$(dirname "$dest")"
rm -rf "$dest.partial"
mv "$work/tree/mlc_llvm_static/static" "$dest.partial"
if ! "$dest.partial/bin/llvm-config" --version >/dev/null; then
    echo "install-llvm: the unpacked llvm-config does not run" >&2
    exit 1
fi
rm -rf "$dest"
mv "$dest.partial" "$dest"
touch "$dest/.tracel-llvm-installed"
echo "install-llvm: LLVM $("$dest/bin/llvm-config" --version) (targets: $("$dest/bin/llvm-config" --targets-built)) in $dest"
