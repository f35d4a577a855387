#!/usr/bin/env python3
"""Runs the device suite (`tests/suite`) in two processes at once.

stridex serializes each process's device traffic (one lock, and CubeCL's one device thread
compiles and launches), so one suite process keeps about one core busy however many test
threads libtest starts: measured on 2 cores with lavapipe, the whole suite took 524 s with two
test threads and 527 s test by test, while two processes ran twice the cases in 1.07x the time
of one. This script builds the suite, lists its tests (after the libtest filters given),
splits them into two shards of about equal time and runs both, each with `--exact` names.

    python3 scripts/suite.py [cargo test options] [-- libtest filters and options]

The cargo options choose the build (`--workspace`, `--features cpu,burn`); after `--`, the
filters choose the tests and libtest's options (`--ignored`, `--skip NAME`, `--nocapture`,
`--test-threads=N`) reach both the listing and each shard; the environment (`STRIDEX_BACKEND`,
`PROPTEST_CASES`, ...) reaches the tests unchanged. Exits non-zero when a shard fails or does
not run, after printing every shard's output.
"""

import json
import os
import subprocess
import sys
import threading

# Seconds each test took alone on lavapipe at its full case count (2 cores, 2026-11-27); any
# test not named counts as one second. Only the balance depends on them.
WEIGHTS = {
    "random::gather_matches_reference": 171,
    "chains::chains_match_their_stages_run_one_by_one": 51,
    "walks::the_host_model_is_the_kernel": 39,
    "nd::gather_nd_matches_reference": 36,
    "elements::gather_elements_match_reference": 32,
    "random::slice_matches_reference": 22,
    "convert::random_chains_end_in_convert": 18,
    "scatter::scatters_match_the_serial_reference": 13,
    "chains::most_random_chains_fuse": 12,
    "dynamic::dynamic_gathers_match_the_reference": 11,
    "dynamic::dynamic_slices_match_the_reference": 10,
    "convert::every_type_converts_to_f32_f16_and_bf16": 9,
    "chains::a_gather_folds_into_the_scatter": 6,
}
SHARDS = 2
# libtest options that take the next argument as their value.
VALUED = {"--skip", "--test-threads", "--color", "--format", "--logfile", "-Z"}


def build(cargo_args):
    """Builds the suite and returns its executable."""
    cmd = ["cargo", "test", *cargo_args, "--test", "suite", "--no-run", "--message-format=json-render-diagnostics"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "suite" and msg.get("executable"):
            return msg["executable"]
    sys.exit("suite.py: cargo built no `suite` test executable")


def split(names):
    """Longest first, each to the lighter shard."""
    shards, loads = [[] for _ in range(SHARDS)], [0] * SHARDS
    for name in sorted(names, key=lambda n: -WEIGHTS.get(n, 1)):
        i = loads.index(min(loads))
        shards[i].append(name)
        loads[i] += WEIGHTS.get(name, 1)
    return [shard for shard in shards if shard]


def libtest_args(args):
    """Splits libtest's arguments into (filters, options), each option with its value."""
    filters, options, it = [], [], iter(args)
    for arg in it:
        if arg.startswith("-"):
            options.append(arg)
            if arg in VALUED:
                options.append(next(it, ""))
        else:
            filters.append(arg)
    return filters, options


def main():
    args = sys.argv[1:]
    cargo_args, test_args = (args[: args.index("--")], args[args.index("--") + 1 :]) if "--" in args else (args, [])
    filters, options = libtest_args(test_args)
    suite = build(cargo_args)
    listed = subprocess.run([suite, "--list", *options, *filters], stdout=subprocess.PIPE, check=True, text=True).stdout
    names = [line[: -len(": test")] for line in listed.splitlines() if line.endswith(": test")]
    if not names:
        sys.exit("suite.py: no test matches " + " ".join(test_args))
    shards = split(names)
    results = [(None, "not run", len(shard)) for shard in shards]

    def run(i, shard):
        # The suite runs from the package root, as `cargo test` runs it.
        try:
            p = subprocess.run(
                [suite, *options, "--exact", *shard],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            )
            results[i] = (p.returncode, p.stdout, len(shard))
        except Exception as e:  # noqa: BLE001 - reported, and the shard counts as failed
            results[i] = (None, f"suite.py: the shard did not run: {e}\n", len(shard))

    threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate(shards)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = False
    for code, output, count in results:
        print(f"---- suite shard of {count} tests")
        sys.stdout.write(output)
        failed |= code != 0
    sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    main()
