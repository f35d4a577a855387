//! Nothing a user writes may make the front end panic: descriptor texts for `gather!`, `slice!`,
//! `chain!` and the index family (`gather_elements!`, `gather_nd!`, `scatter!`,
//! `scatter_elements!`, `scatter_nd!`), mutated at random (huge, negative and edge numbers,
//! dropped, repeated and stray tokens), go through each whole macro (parse, checks, expansion)
//! and through `stridex-syntax`; what it accepts is planned, lowered to kernel descriptors and
//! described, a gather's and a slice's backward pass is planned, a scatter groups hostile index
//! values as a launch would, and a `_` descriptor is planned at hostile counts. Tests build
//! with overflow checks on, so an unchecked sum of user numbers fails here as a panic.
//!
//! Deterministic (a fixed-seed xorshift); `STRIDEX_FUZZ_CASES` sets the cases per kind and
//! `STRIDEX_FUZZ_SEED` the seed.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};
use stridex_core::kernel::{
    GatherKernelDesc, GatheredRows, ScatterGroupingDesc, ScatterKernelDesc, ScatterLinesDesc,
    ScatterRowsDesc, SliceKernelDesc,
};
use stridex_core::{
    describe, dynamic, gradient, ChainKernelDesc, DType, GatherForm, GatherPlan, ScatterPlan,
};
use stridex_syntax::expand;

const GATHERS: &[&str] = &[
    "data: f32[5, 4, 3], indices: i64[2, 2], axis: 1",
    "rules: onnx, data: f32[5, 4], indices: i32[_, 2], out_of_range: clamp",
    "rules: openvino, data: f32[2, 64, 128], indices: i64[2, 32, 21], axis: 1, batch_dims: 1",
    "rules: openvino, data: i32[2, 1, 5, 4], indices: i32[2, 3], axis: -2, batch_dims: -1, out_of_range: zero",
    "rules: directml, data: f32[1, 3, 3], indices: u32[1, 1, 2], axis: 2, index_dims: 2",
    "data: f32[3, 2] strides [4, 1], indices: i64[2, 2]",
    "data: f64[3, 2], indices: i64[2], output: [2, 2] strides [1, 2]",
    "data: u8[100], indices: i64[_]",
    "data: f32[16384, 1024], indices: i32[_, 9]",
];

const GATHER_ELEMENTS: &[&str] = &[
    "data: f32[3, 3], indices: i64[2, 3], axis: 0",
    "data: u8[2, 4], indices: i32[2, 3], axis: -1, out_of_range: zero",
    "data: f32[4, 3], indices: i32[_, 3], axis: 0",
    "rules: openvino, data: f16[4, 6, 5], indices: i64[4, 2, 5], axis: 1, out_of_range: clamp",
    "rules: directml, data: i32[2, 3] strides [4, 1], indices: u32[2, 3], axis: 1",
];

const GATHER_NDS: &[&str] = &[
    "data: f32[2, 2, 2], indices: i64[2, 2]",
    "data: i32[2, 2, 2], indices: i64[2, 1], batch_dims: 1",
    "rules: openvino, data: u8[2, 3, 5], indices: i32[3, 3], out_of_range: zero",
    "rules: directml, data: u8[2, 3, 5], indices: i32[3, 3]",
    "rules: openvino, data: f32[2, 3, 4], indices: i64[2, 3, 1] strides [12, 2, 1], batch_dims: 2",
    "data: f32[4, 3, 8], indices: i64[_, 2]",
];

const SCATTERS: &[&str] = &[
    "data: f32[10, 8], indices: i32[7], updates: f32[7, 8], reduction: add",
    "data: f32[16, 4, 8], indices: i32[6], updates: f32[6, 4, 8], axis: 0, out_of_range: skip",
    "data: f16[6, 2, 4], indices: i32[3], updates: f16[3, 2, 4], axis: 0, out_of_range: skip",
    "data: f32[4, 300, 64], indices: i32[100], updates: f32[4, 100, 64], axis: 1, reduction: add",
    "data: u8[10, 8], indices: i64[3], updates: u8[3, 8], duplicates: error, out_of_range: error",
    "data: i32[5, 8] strides [16, 2], indices: i64[2, 3], updates: i32[2, 3, 8], reduction: max",
];

const SCATTER_ELEMENTS: &[&str] = &[
    "data: f32[300, 8], indices: i32[300, 3], updates: f32[300, 3], axis: 1, reduction: add",
    "rules: onnx, data: f32[3, 3], indices: i64[2, 3], updates: f32[2, 3], axis: 0",
    "rules: openvino, data: f16[4, 5], indices: i32[4, 2], updates: f16[4, 2], axis: -1, reduction: mean, use_init_val: false",
    "rules: directml, data: u16[2, 6], indices: u32[2, 6], updates: u16[2, 6], axis: 1",
    "data: u8[4, 9], indices: i64[4, 9], updates: u8[4, 9], axis: 1, reduction: mul, out_of_range: clamp",
    "data: f32[6, 300], indices: i32[_, 300], updates: f32[_, 300], axis: 0, reduction: add, out_of_range: error",
];

const SCATTER_NDS: &[&str] = &[
    "data: f32[40, 8], indices: i64[300, 1], updates: f32[300, 8], reduction: add",
    "rules: onnx, data: i32[4, 4], indices: i64[3, 2], updates: i32[3], reduction: min",
    "rules: openvino, data: f32[2, 3, 4], indices: i32[5, 2], updates: f32[5, 4], reduction: sub",
    "rules: directml, data: u8[4, 3, 4], indices: u32[2, 1], updates: u8[2, 3, 4]",
    "data: bf16[8, 2], indices: i64[3, 1], updates: bf16[3, 2], out_of_range: skip",
];

const SLICES: &[&str] = &[
    "input: f32[20, 10, 5], s[.., 1..9;2, ..;-1]",
    "input: u8[4, 6], s[-2.., 1..=4]",
    "input: f32[_, 50, 8], s[.., 10..20, ..]",
    "rules: onnx, input: f32[2, 3, 4], starts: [-1], ends: [-5], axes: [2], steps: [-1]",
    "rules: onnx, input: f32[_, 10], starts: [2], ends: [8], axes: [1]",
    "input: i8[1, 1, 4, 4], offsets: [0, 0, 0, 1], sizes: [1, 1, 4, 3], strides: [1, 1, -2, 2]",
    "input: u16[4, 16], offsets: [0, 0], sizes: [4, 16], strides: [-1, 1], output: [4, 16] strides [24, 1]",
    "input: f32[1, 1, 3, 5] strides [15, 1, 5, 1], offsets: [0, 0, 0, 0], sizes: [1, 1, 3, 5], strides: [1, 1, 1, 1]",
];

const CHAINS: &[&str] = &[
    "data: f32[100, 16], gather { indices: i64[8, 12], axis: 0 }, slice { rules: onnx, starts: [-1], ends: [12], axes: [1] }, \
     slice { offsets: [0, 0, 0], sizes: [8, 1, 16], strides: [1, 1, -2] }, \
     gather { rules: openvino, indices: i32[8, 4], axis: 2, batch_dims: 1 }, output: [8, 1, 4]",
    "data: u8[2, 3, 4, 4], slice { rules: onnx, starts: [-1], ends: [-5], axes: [3], steps: [-1] }, \
     slice { offsets: [0, 0, 0, 0], sizes: [2, 3, 4, 4], strides: [1, -1, 2, 2] }, output: [2, 3, 2, 2] strides [16, 4, 2, 1]",
    "data: f32[20, 10], gather { indices: i64[4] }, slice { s[.., 1..9;2] }, slice { s[..;-1] }",
    "data: f32[_, 3, 256, 256], slice { s[.., .., 16..240, 16..240;-1] }, gather { indices: i32[3], axis: 1 }, \
     slice { s[.., .., ..;2, ..;2] }",
    "data: f32[32000, 1024], gather { indices: i32[_, 512] }, slice { s[.., -1.., ..] }",
    "data: f32[4, 6], gather_elements { indices: i64[3, 2], axis: 1 }, slice { s[..;-1, ..] }",
    "data: f32[5, 4, 3], slice { s[1.., .., ..] }, gather_nd { indices: i64[3, 2] }",
    "data: f32[2, 3, 4], gather_nd { rules: openvino, indices: i32[2, 1, 2], batch_dims: 1 }",
    "data: f32[6, 3, 4, 8], slice { rules: onnx, starts: [1], ends: [2], axes: [1] }, \
     scatter { into: f32[16, 1, 4, 8], indices: i32[6], axis: 0, out_of_range: skip }",
    "data: f32[10, 8], gather { indices: i32[12], axis: 0 }, \
     scatter { into: f32[5, 8], indices: i32[12], axis: 0, reduction: add, out_of_range: error }",
];

/// Numbers a mutation writes: edges of every integer type the front end might hold them in.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "255",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211455",
    "1e9",
    "0x7fffffff",
];

/// Tokens a mutation inserts.
const STRAY: &[&str] =
    &["_", ",", "..", "..=", ";", "-", "[", "]", "{", "}", ":", "axis", "strides", "s", "1"];

const COUNTS: &[usize] = &[0, 1, 2, 7, 1 << 20, u32::MAX as usize, 1 << 40, usize::MAX / 2, usize::MAX];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Splits a descriptor into tokens: numbers (with a leading minus), words, and punctuation.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == '.' && chars.get(i + 1) == Some(&'.') {
            let eq = chars.get(i + 2) == Some(&'=');
            out.push(if eq { "..=".into() } else { "..".into() });
            i += if eq { 3 } else { 2 };
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

fn is_number(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// One to three mutations of `seed`: mostly numbers replaced, sometimes tokens dropped,
/// repeated or inserted.
fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut t = tokens(seed);
    for _ in 0..1 + rng.below(3) {
        let numbers: Vec<usize> = (0..t.len()).filter(|&i| is_number(&t[i])).collect();
        match rng.below(10) {
            0..=5 if !numbers.is_empty() => {
                let i = numbers[rng.below(numbers.len())];
                t[i] = rng.pick(NUMBERS).to_string();
            }
            6 if !t.is_empty() => {
                let i = rng.below(t.len());
                t.remove(i);
            }
            7 if !t.is_empty() => {
                let i = rng.below(t.len());
                let dup = t[i].clone();
                t.insert(i, dup);
            }
            _ => {
                let i = rng.below(t.len() + 1);
                t.insert(i, rng.pick(STRAY).to_string());
            }
        }
    }
    t.join(" ")
}

fn gather(text: &str) {
    expanded(text, expand::gather_macro);
    index_gather(text, stridex_syntax::gather_str);
}

fn slice(text: &str) {
    expanded(text, expand::slice_macro);
    let Ok(desc) = stridex_syntax::slice_str(text) else { return };
    if let Ok(plan) = desc.plan() {
        let _ = SliceKernelDesc::new(&plan);
        let _ = gradient::slice_input_gradient(&plan);
        let _ = describe::slice(&desc, &plan);
    }
    if desc.dynamic_leading {
        for &n in COUNTS {
            if let Ok(plan) = dynamic::slice_at(&desc, n) {
                let _ = SliceKernelDesc::new(&plan);
            }
        }
    }
}

/// The whole macro on `text` (parse, checks, expansion: what `rustc` runs), which must return
/// tokens (an expansion or `compile_error!`s) rather than panic.
fn expanded(text: &str, macro_fn: fn(proc_macro2::TokenStream) -> proc_macro2::TokenStream) {
    if let Ok(tokens) = text.parse() {
        let _ = macro_fn(tokens);
    }
}

/// What a launch or a backward pass makes of an accepted gather's plan beyond its kernel.
fn gather_plan(plan: &GatherPlan) {
    let _ = GatherKernelDesc::new(plan);
    for index_type in [DType::I32, DType::I64] {
        if let Ok((_, scatter)) = gradient::gather_data_gradient(plan, index_type) {
            scatter_plan(&scatter);
        }
    }
    if let Some(Ok((_, scatter))) = gradient::batched_gather_gradient(plan) {
        scatter_plan(&scatter);
    }
}

fn index_gather(text: &str, parse: fn(&str) -> Result<stridex_core::GatherDesc, String>) {
    let Ok(desc) = parse(text) else { return };
    if let Ok(plan) = desc.plan() {
        gather_plan(&plan);
        let _ = describe::gather(&desc, &plan);
    }
    if desc.dynamic_leading {
        for &n in COUNTS {
            if let Ok(plan) = dynamic::gather_at(&desc, n) {
                gather_plan(&plan);
            }
        }
    }
}

fn gather_elements(text: &str) {
    expanded(text, expand::gather_elements_macro);
    index_gather(text, stridex_syntax::gather_elements_str);
}

fn gather_nd(text: &str) {
    expanded(text, expand::gather_nd_macro);
    index_gather(text, stridex_syntax::gather_nd_str);
}

/// Index values a launch may read: in range, negative, and past every integer type's edge.
const INDEX_VALUES: &[i128] = &[
    0,
    1,
    2,
    3,
    -1,
    -2,
    7,
    i32::MAX as i128,
    i32::MIN as i128,
    u32::MAX as i128,
    i64::MAX as i128,
    i64::MIN as i128,
    u64::MAX as i128,
];

/// Every kernel a scatter's launch may choose, for both destinations it may write (the data in
/// place, the packed output), and its lists grouped from hostile index values where the
/// indices are few enough to read.
fn scatter_plan(plan: &ScatterPlan) {
    for dest in [&plan.map.data, &plan.output] {
        let _ = ScatterKernelDesc::of(plan, dest);
        let _ = ScatterKernelDesc::summing_into_zeros(plan, dest);
        let _ = ScatterLinesDesc::of(plan, dest);
        let _ = ScatterRowsDesc::of(plan, dest);
        let _ = ScatterGroupingDesc::of(plan, dest);
        let small = |l: &stridex_core::TensorLayout| l.min_buffer_len().is_some_and(|n| n <= 1 << 14);
        if small(&plan.map.indices) && small(&plan.updates) {
            for salt in 0..3usize {
                let value = |i: usize| match salt {
                    // In range: mostly 0..3, so that runs repeat.
                    0 => (i % 4) as i128,
                    1 => INDEX_VALUES[(i * 7 + 3) % INDEX_VALUES.len()],
                    _ => INDEX_VALUES[i % 5] - 2,
                };
                if let Ok(groups) = plan.group(dest, value) {
                    let runs = groups.keys.len();
                    let _ = groups.every_run(runs, runs);
                }
                let _ = plan.replaced(dest, value);
            }
        }
    }
}

fn scatter_of(text: &str, form: GatherForm) {
    let Ok(desc) = stridex_syntax::scatter_str(text, form) else { return };
    if let Ok(plan) = desc.plan() {
        scatter_plan(&plan);
        let _ = describe::scatter(&desc, &plan);
    }
    if desc.map.dynamic_leading {
        for &n in COUNTS {
            if let Ok(plan) = dynamic::scatter_at(&desc, n) {
                scatter_plan(&plan);
            }
        }
    }
}

fn scatter(text: &str) {
    expanded(text, expand::scatter_macro);
    scatter_of(text, GatherForm::Axis);
}

fn scatter_elements(text: &str) {
    expanded(text, expand::scatter_elements_macro);
    scatter_of(text, GatherForm::Elements);
}

fn scatter_nd(text: &str) {
    expanded(text, expand::scatter_nd_macro);
    scatter_of(text, GatherForm::Nd);
}

/// A chain's plan as a launch takes it: its fused kernel, a final scatter's row kernel or
/// folded gather, and each stage's own plan where it runs stage by stage.
fn chain_plan(plan: &stridex_core::ChainPlan) {
    let _ = ChainKernelDesc::new(plan);
    let _ = ScatterRowsDesc::of_chain(plan);
    let _ = GatheredRows::of_chain(plan);
    if let Some((_, scatter)) = plan.scatter() {
        scatter_plan(scatter);
    }
}

fn chain(text: &str) {
    expanded(text, expand::chain_macro);
    let Ok(desc) = stridex_syntax::chain_str(text) else { return };
    if let Ok(plan) = desc.plan() {
        chain_plan(&plan);
        let _ = describe::chain(&desc, &plan);
    }
    if desc.dynamic_leading.is_some() {
        for &n in COUNTS {
            if let Ok(plan) = dynamic::chain_at(&desc, n) {
                chain_plan(&plan);
            }
        }
    }
}

fn cases() -> usize {
    std::env::var("STRIDEX_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12_000)
}

/// Runs `cases()` mutations of `seeds` through `f`; panics listing every text that panicked.
fn fuzz(kind: &str, seeds: &[&str], salt: u64, f: fn(&str)) {
    let seed = std::env::var("STRIDEX_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed);
    let mut rng = Rng((seed ^ salt) | 1);
    // Every seed must itself be accepted, or the mutations explore nothing.
    for s in seeds {
        f(s);
    }
    // The panic hook is the process's: one fuzz at a time swaps it for one that records where
    // each panic happened.
    static HOOK: Mutex<()> = Mutex::new(());
    static WHERE: Mutex<String> = Mutex::new(String::new());
    let _one = HOOK.lock().unwrap_or_else(PoisonError::into_inner);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map_or("?".into(), |l| format!("{}:{}", l.file(), l.line()));
        *WHERE.lock().unwrap_or_else(PoisonError::into_inner) = format!(
            "{at}: {}",
            info.payload()
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
                .unwrap_or("")
        );
    }));
    // Where each panic happened, with the first text that reached it.
    let mut panicked: BTreeMap<String, String> = BTreeMap::new();
    let mut count = 0;
    for _ in 0..cases() {
        let from = seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, from);
        if catch_unwind(AssertUnwindSafe(|| f(&text))).is_err() {
            count += 1;
            let at = WHERE.lock().unwrap_or_else(PoisonError::into_inner).clone();
            panicked.entry(at).or_insert(text);
        }
    }
    std::panic::set_hook(hook);
    assert!(
        panicked.is_empty(),
        "{count} of {} {kind} texts panicked, at:\n{}",
        cases(),
        panicked.iter().map(|(at, text)| format!("{at}\n    {text}")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn seeds_are_accepted() {
    for s in GATHERS {
        stridex_syntax::gather_str(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    for s in SLICES {
        stridex_syntax::slice_str(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    for s in CHAINS {
        stridex_syntax::chain_str(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    // The index family's seeds plan too, so that mutations start from the kernels' choices.
    for s in GATHER_ELEMENTS {
        stridex_syntax::gather_elements_str(s)
            .and_then(|d| plan_or(d.plan()))
            .unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    for s in GATHER_NDS {
        stridex_syntax::gather_nd_str(s)
            .and_then(|d| plan_or(d.plan()))
            .unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    for (seeds, form) in [
        (SCATTERS, GatherForm::Axis),
        (SCATTER_ELEMENTS, GatherForm::Elements),
        (SCATTER_NDS, GatherForm::Nd),
    ] {
        for s in seeds {
            stridex_syntax::scatter_str(s, form)
                .and_then(|d| plan_or(d.plan()))
                .unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }
}

fn plan_or<P>(plan: Result<P, stridex_core::RuleError>) -> Result<(), String> {
    plan.map(drop).map_err(|e| e.to_string())
}

#[test]
fn mutated_gathers_never_panic() {
    fuzz("gather", GATHERS, 1, gather);
}

#[test]
fn mutated_slices_never_panic() {
    fuzz("slice", SLICES, 2, slice);
}

#[test]
fn mutated_chains_never_panic() {
    fuzz("chain", CHAINS, 3, chain);
}

#[test]
fn mutated_gather_elements_never_panic() {
    fuzz("gather_elements", GATHER_ELEMENTS, 4, gather_elements);
}

#[test]
fn mutated_gather_nds_never_panic() {
    fuzz("gather_nd", GATHER_NDS, 5, gather_nd);
}

#[test]
fn mutated_scatters_never_panic() {
    fuzz("scatter", SCATTERS, 6, scatter);
}

#[test]
fn mutated_scatter_elements_never_panic() {
    fuzz("scatter_elements", SCATTER_ELEMENTS, 7, scatter_elements);
}

#[test]
fn mutated_scatter_nds_never_panic() {
    fuzz("scatter_nd", SCATTER_NDS, 8, scatter_nd);
}

/// The texts that once panicked, each now an error on its token or a plan.
#[test]
fn huge_numbers_are_errors_or_plans() {
    let e = stridex_syntax::slice_str("input: f32[20, 10, 5], s[.., 1..9;2, 9223372036854775807, ..;-1]")
        .unwrap_err();
    assert!(e.contains("single index `9223372036854775807`"), "{e}");
    let e =
        stridex_syntax::slice_str("input: f32[20, 10, 5], s[.., - -9223372036854775808.., ..]").unwrap_err();
    assert!(!e.is_empty());
    let e = stridex_syntax::slice_str("input: u8[9223372036854775808, 0], s[-2.., 1..=4]").unwrap_err();
    assert!(e.contains("outside a dimension of size"), "{e}");
    let e = stridex_syntax::slice_str("input: u8[9223372036854775808, 4], s[-2.., 1..=2]").unwrap_err();
    assert!(!e.is_empty());
    // A step larger than any offset a kernel forms: the chain plans, and its fused kernel is
    // declined (it runs stage by stage) rather than overflowing.
    let desc = stridex_syntax::chain_str(
        "data: f32[20, 10], gather { indices: i64[4] }, slice { s[.., ..;9223372036854775807] }",
    )
    .unwrap();
    let plan = desc.plan().unwrap();
    assert_eq!(plan.output.sizes.to_vec(), vec![4, 1]);
    let _ = ChainKernelDesc::new(&plan);
    let d = stridex_syntax::gather_str("data: f32[9223372036854775807, 4, 0], indices: i64[2, 2], axis: 1")
        .unwrap();
    if let Ok(p) = d.plan() {
        assert!(describe::gather(&d, &p).contains("empty"));
    }
}
