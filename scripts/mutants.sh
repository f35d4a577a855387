#!/usr/bin/env bash
# Mutation testing of stridex-core (cargo-mutants): each mutant of a source line must fail a
# test. Default: the rule modules against core's own tests (no device, a few minutes on 2
# cores). `scripts/mutants.sh index` mutates the scatter's rules, grouping and kernel
# choices (the fused chains' too) and the gradients (about an hour and a half), `rest` the other core modules (the `_` count, chain and
# kernel descriptors, describe, vocabulary, errors), `all` every module. Results land in
# target/mutants/mutants.out (caught.txt, missed.txt, unviable.txt); the summary is printed.
# Known equivalent mutants (same output for every input) are listed, with why, in
# scripts/mutants-equivalent.txt and excluded.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
files=(-f core/src/gather.rs -f core/src/slice.rs -f core/src/layout.rs -f core/src/tensor.rs
       -f core/src/rules.rs -f core/src/ranges.rs -f core/src/feature_level.rs)
case "${1:-}" in
    all) files=(); shift ;;
    index) files=(-f core/src/scatter.rs -f core/src/gradient.rs -f core/src/kernel/scatter.rs
                  -f core/src/kernel/scatter_grouping.rs -f core/src/kernel/scatter_lines.rs
                  -f core/src/kernel/scatter_rows.rs -f core/src/kernel/gathered_rows.rs); shift ;;
    rest) files=(); for f in core/src/*.rs core/src/*/*.rs; do
              case "$f" in */gather.rs|*/slice.rs|*/layout.rs|*/tensor.rs|*/rules.rs|*/ranges.rs|*/feature_level.rs|*/lib.rs) ;;
                  *) files+=(-f "$f") ;; esac
          done; shift ;;
esac
exclude=()
if [ -f scripts/mutants-equivalent.txt ]; then
    while IFS= read -r line; do
        case "$line" in ''|'#'*) continue ;; esac
        exclude+=(--exclude-re "${line%%  #*}")
    done < scripts/mutants-equivalent.txt
fi
cargo mutants -p stridex-core "${files[@]}" "${exclude[@]}" --output target/mutants --timeout 120 -j 2 "$@" || true
for f in caught missed timeout unviable; do
    printf '%-9s %s\n' "$f" "$(wc -l < "target/mutants/mutants.out/$f.txt" 2>/dev/null || echo 0)"
done
