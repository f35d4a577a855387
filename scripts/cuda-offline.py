#!/usr/bin/env python3
"""Compiles the CUDA C++ that stridex's kernels expand to, without a GPU.

For every source written by `cargo run --features cuda --example cuda_catalogue -- DIR`:
NVRTC to PTX for compute_XX with warnings as errors (the CUDA runtime's own compile options:
include paths and -lineinfo), ptxas to a cubin for sm_XX (warnings as errors, -v for register
counts), nvdisasm to SASS. Prints one line per kernel: registers, widest global load and store
(LDG.E.64/.128 show vectorization reached the machine code), and whether any runtime integer
division survived (it should not: every divisor is a constant, but for a scatter's `mean`,
which divides by a count of updates).

usage: cuda-offline.py CUDA_ROOT SOURCE_DIR
CUDA_ROOT holds include/, lib/libnvrtc.so.*, bin/ptxas and bin/nvdisasm (the PyPI wheels'
nvidia/cu13 folder). Exits non-zero on any error or warning.
"""
import concurrent.futures
import ctypes
import glob
import os
import re
import subprocess
import sys


def load_nvrtc(root):
    libs = sorted(glob.glob(os.path.join(root, "lib", "libnvrtc.so*")))
    libs = [l for l in libs if "builtins" not in l]
    if not libs:
        sys.exit(f"cuda-offline: no libnvrtc.so in {root}/lib")
    nvrtc = ctypes.CDLL(libs[0])
    nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
    return nvrtc


def nvrtc_compile(nvrtc, source, name, options):
    """Returns (ptx or None, log)."""
    prog = ctypes.c_void_p()
    def check(r, what):
        if r != 0:
            raise RuntimeError(f"{what}: {nvrtc.nvrtcGetErrorString(r).decode()}")

    check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None), "nvrtcCreateProgram")
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    result = nvrtc.nvrtcCompileProgram(prog, len(options), opts)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    ptx = None
    if result == 0:
        nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetPTX(prog, buf)
        ptx = buf.value.decode()
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx, log.value.decode().strip()


def widest(sass, op):
    """The widest width among global loads or stores: 32, 64 or 128 bits."""
    widths = [32]
    for m in re.finditer(rf"\b{op}\.E((?:\.[A-Z0-9_]+)*)", sass):
        mods = m.group(1)
        widths.append(128 if ".128" in mods else 64 if ".64" in mods else 32)
    return max(widths)


def compile_kernel(nvrtc, root, src_dir, name, arch, file):
    """NVRTC, ptxas and nvdisasm on one catalogue entry: (report lines, whether it failed)."""
    path = os.path.join(src_dir, file)
    source = open(path).read()
    include = os.path.join(root, "include")
    # What CubeCL's CUDA runtime passes (compute/context.rs), with PTX as the target and
    # warnings as errors.
    options = [f"--gpu-architecture=compute_{arch}", f"--include-path={include}", "-lineinfo", "-Werror=all-warnings"]
    if os.path.isdir(os.path.join(include, "cccl")):
        options.append(f"--include-path={os.path.join(include, 'cccl')}")
    ptx, log = nvrtc_compile(nvrtc, source, file, options)
    if ptx is None or log:
        return [f"{name}: NVRTC compute_{arch} failed or warned:\n{log}"], True
    base = path[: -len(".cu")]
    open(base + ".ptx", "w").write(ptx)
    ptxas = subprocess.run(
        [os.path.join(root, "bin", "ptxas"), f"-arch=sm_{arch}", "-v", "--warning-as-error", "-o", base + ".cubin", base + ".ptx"],
        capture_output=True,
        text=True,
    )
    info = ptxas.stdout + ptxas.stderr
    if ptxas.returncode != 0 or re.search(r"warning", info, re.I):
        return [f"{name}: ptxas sm_{arch} failed or warned:\n{info}"], True
    regs = re.search(r"Used (\d+) registers", info)
    sass = subprocess.run([os.path.join(root, "bin", "nvdisasm"), "-c", base + ".cubin"], capture_output=True, text=True)
    if sass.returncode != 0:
        return [f"{name}: nvdisasm failed:\n{sass.stderr}"], True
    open(base + ".sass", "w").write(sass.stdout)
    code = sass.stdout
    # A runtime u32 division compiles to a reciprocal estimate (MUFU.RCP after I2F);
    # division by a constant is a multiply-high (IMAD.HI) and shifts.
    runtime_div = "yes" if re.search(r"MUFU\.RCP", code) else "no"
    counts = f"{len(re.findall(r'LDG', code))}/{len(re.findall(r'STG', code))}"
    lines = [
        f"{name:<34} {'sm_' + arch:>5} {regs.group(1) if regs else '?':>5} "
        f"{'%d-bit' % widest(code, 'LDG'):>6} {'%d-bit' % widest(code, 'STG'):>6} {runtime_div:>12}  {counts:>8}"
    ]
    # A scatter's `mean` divides by how many updates reached an element: a count known
    # only at run time (the catalogue names those kernels `..._mean_...`).
    if runtime_div == "yes" and "_mean_" not in name:
        return lines + [f"{name}: a runtime division reached the SASS"], True
    return lines, False


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, src_dir = sys.argv[1], sys.argv[2]
    nvrtc = load_nvrtc(root)
    manifest = [l.rstrip("\n").split("\t") for l in open(os.path.join(src_dir, "manifest.tsv"))][1:]
    print(f"{'kernel':<34} {'arch':>5} {'regs':>5} {'load':>6} {'store':>6} {'runtime div':>12}  {'LDG/STG':>8}")
    # One kernel per core at a time: NVRTC (through ctypes) and the tools (subprocesses) run
    # outside Python's lock, and each kernel writes only its own files. The report keeps the
    # manifest's order.
    files = [file for _, _, file in manifest]
    if len(set(files)) != len(files):
        sys.exit("cuda-offline: the manifest names a source file twice")

    def compile_reported(entry):
        # Anything that goes wrong with one kernel (an NVRTC call, a missing tool) is that
        # kernel's failure in the report, not the end of the others'.
        try:
            return compile_kernel(nvrtc, root, src_dir, *entry)
        except Exception as e:
            return [f"{entry[0]} sm_{entry[1]}: {type(e).__name__}: {e}"], True

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        results = list(pool.map(compile_reported, manifest))
    failures = 0
    for lines, failed in results:
        print("\n".join(lines))
        failures += failed
    print(f"\n{len(manifest) - failures} of {len(manifest)} kernels compiled through NVRTC and ptxas with no warnings")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
