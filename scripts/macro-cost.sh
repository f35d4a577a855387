#!/usr/bin/env bash
# What stridex's macros cost a build: generates a scratch crate in target/macro-cost with N
# distinct gather! invocations (every op of one type, GatherOp<f32, i64>, each calling `run`) and one with a single
# invocation, and times `cargo check` and `cargo build` of each (dependencies built once,
# untimed). Prints the cost per invocation and of the first use of an op type.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${N:-200}
dir=target/macro-cost
export CARGO_TARGET_DIR="$root/target/macro-cost/target"

make_crate() { # name count
    local c="$dir/$1"
    mkdir -p "$c/src"
    cat > "$c/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
stridex = { path = "$root" }
TOML
    {
        echo "pub fn ops() -> usize {"
        echo "    let mut n = 0;"
        for i in $(seq 1 "$2"); do
            echo "    let g = stridex::gather! { data: f32[$((i + 1)), 16], indices: i64[$i], axis: 0 };"
            # `run` is compiled (never called): the launch path is what an op's type costs.
            echo "    n += g.output_shape().map_or(0, |s| s[0]);"
            echo "    if n == usize::MAX { let _ = g.run(&[], &[]); }"
        done
        echo "    n"
        echo "}"
    } > "$c/src/lib.rs"
}

secs() { # command...: wall seconds of one run, after touching the crate's source
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

make_crate macro_cost_one 1
make_crate macro_cost_many "$n"
make_crate macro_cost_none 0
# No op at all: the function is empty.
echo "pub fn ops() -> usize { 0 }" > "$dir/macro_cost_none/src/lib.rs"

for c in macro_cost_none macro_cost_one macro_cost_many; do
    (cd "$dir/$c" && cargo check -q && cargo build -q)   # dependencies, untimed
done

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_of() { # crate, cargo subcommand
    for _ in 1 2 3; do
        touch "$dir/$1/src/lib.rs"
        (cd "$dir/$1" && secs cargo "$2" -q)
    done | median
}

check_none=$(time_of macro_cost_none check)
check_one=$(time_of macro_cost_one check)
check_many=$(time_of macro_cost_many check)
build_none=$(time_of macro_cost_none build)
build_one=$(time_of macro_cost_one build)
build_many=$(time_of macro_cost_many build)

per() { echo "($2 - $1) / ($n - 1) * 1000" | bc -l; }
printf 'cargo check: no op %.2f s, 1 op %.2f s, %d ops %.2f s: %.1f ms per invocation\n' \
    "$check_none" "$check_one" "$n" "$check_many" "$(per "$check_one" "$check_many")"
printf 'cargo build (debug): no op %.2f s, 1 op %.2f s, %d ops %.2f s: %.1f ms per invocation\n' \
    "$build_none" "$build_one" "$n" "$build_many" "$(per "$build_one" "$build_many")"
printf 'first use of an op type (GatherOp<f32, i64>) in a debug build: %.2f s\n' \
    "$(echo "$build_one - $build_none" | bc -l)"
