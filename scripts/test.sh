#!/usr/bin/env bash
# The whole test suite: every test `cargo test --workspace` runs (each crate's unit,
# integration and doc tests, the UI cases), its tests in under half the time on 2 cores (354 s
# against about 780 s, builds apart). The device suite (`tests/suite`) runs in two processes
# (scripts/suite.py says why) while the rest runs beside it. `cargo test --workspace` alone runs
# the same tests, one process after another.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --no-run
# Every integration test target but the suite, and every binary that is tested, named from
# the workspace's manifests (`--bins` would also run those marked `test = false`).
others=$(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
for package in json.load(sys.stdin)["packages"]:
    for target in package["targets"]:
        if target["kind"] == ["test"] and target["name"] != "suite":
            print("--test", target["name"])
        elif target["kind"] == ["bin"] and target.get("test", True):
            print("--bin", target["name"])')

suite_log=$(mktemp)
trap 'rm -f "$suite_log"' EXIT
python3 scripts/suite.py --workspace >"$suite_log" 2>&1 &
suite=$!
status=0
# shellcheck disable=SC2086 # the list is words: `--test name` and `--bin name` pairs
cargo test --workspace --lib $others || status=1
cargo test --workspace --doc || status=1
wait "$suite" || status=1
cat "$suite_log"
exit $status
