//! What the macros expand to, without a compiler: each descriptor's tokens through
//! `stridex_syntax::expand`, against `tests/snapshots/expand.txt`. A change to the expansion is
//! reviewed there: `STRIDEX_BLESS=1 cargo test -p stridex-syntax --test expand` rewrites it.

use proc_macro2::TokenStream;
use stridex_syntax::expand::{
    chain_macro, gather_elements_macro, gather_macro, gather_nd_macro, scatter_elements_macro, scatter_macro,
    scatter_nd_macro, slice_macro,
};

const CASES: &[(&str, &str)] = &[
    ("gather", "data: f32[3, 2], indices: i64[2, 2]"),
    ("gather", "rules: openvino, data: u8[2, 5, 3] strides [20, 4, 1], indices: i32[2, 4], axis: -2, batch_dims: 1, out_of_range: clamp"),
    ("gather", "rules: directml, data: f16[1, 3, 3], indices: u32[1, 1, 2], axis: 2, index_dims: 2, feature_level: 3_0"),
    ("gather", "static EMBED; data: f32[50, 8], indices: i32[_]"),
    ("gather", "data: f64[3, 2], indices: i64[2], output: [2, 2] strides [1, 2]"),
    ("gather_elements", "data: f32[3, 3], indices: i64[2, 3], axis: 0"),
    ("gather_nd", "rules: openvino, data: f32[2, 3, 4], indices: i32[2, 5, 1], batch_dims: 1"),
    ("slice", "input: i8[1, 1, 4, 4], offsets: [0, 0, 0, 1], sizes: [1, 1, 4, 3], strides: [1, 1, -2, 2]"),
    ("slice", "rules: onnx, input: f32[2, 3, 4], starts: [-1], ends: [-5], axes: [2], steps: [-1]"),
    ("slice", "pub static CROP; input: u8[_, 3, 8, 8], s[.., .., 1..7, ..;-1]"),
    ("chain", "data: f32[100, 16], gather { indices: i64[8, 12] }, slice { rules: onnx, starts: [-1], ends: [12], axes: [1] }"),
    ("chain", "static LAST; data: f32[50, 8], gather { indices: i32[_, 5], axis: 0 }, slice { s[.., -1.., ..] }"),
    ("chain", "data: u8[_, 3, 8, 8] strides [192, 1, 24, 3], slice { s[.., ..;-1, 1..7, ..] }, convert { to: f16, dim: 1, scale: [0.5, 0.25, -2.0], offset: [1.0] }"),
    ("scatter", "data: f32[100, 16], indices: i32[8], updates: f32[8, 16], axis: 0, reduction: add"),
    ("scatter", "pub static KV; rules: openvino, data: f16[64, 8, 128], indices: i32[16], updates: f16[16, 8, 128], out_of_range: skip"),
    ("scatter", "data: f32[100, 16], indices: i32[_], updates: f32[_, 16], axis: 0"),
    ("scatter_elements", "data: f32[4, 6], indices: i64[4, 2], updates: f32[4, 2], axis: 1, reduction: max"),
    ("scatter_nd", "rules: openvino, data: i32[4, 5, 3], indices: i64[6, 2], updates: i32[6, 3], reduction: sub"),
    ("chain", "data: f32[8, 32], slice { s[.., 0..16] }, scatter { into: f32[64, 16], indices: i32[8], axis: 0 }"),
    // Broken descriptors expand to their errors (an expression's inside a block).
    ("gather", "data: f32[3, 2], indices: i64[2], axis: 5"),
    ("slice", "static BAD; input: f32[4], offsets: [5], sizes: [1], strides: [1]"),
    ("scatter_elements", "data: f32[100, 16], indices: i64[_, 16], updates: f32[_, 16], axis: 0"),
];

fn expand(kind: &str, text: &str) -> String {
    let tokens: TokenStream = text.parse().expect("tokens");
    let out = match kind {
        "gather" => gather_macro(tokens),
        "gather_elements" => gather_elements_macro(tokens),
        "gather_nd" => gather_nd_macro(tokens),
        "slice" => slice_macro(tokens),
        "scatter" => scatter_macro(tokens),
        "scatter_elements" => scatter_elements_macro(tokens),
        "scatter_nd" => scatter_nd_macro(tokens),
        _ => chain_macro(tokens),
    };
    out.to_string()
}

#[test]
fn expansions_match_their_snapshot() {
    let mut all = String::new();
    for (kind, text) in CASES {
        all += &format!("== {kind}! {{ {text} }}\n{}\n\n", expand(kind, text));
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/expand.txt");
    if std::env::var_os("STRIDEX_BLESS").is_some() {
        std::fs::write(path, &all).expect("write the snapshot");
        return;
    }
    let want = std::fs::read_to_string(path).expect("tests/snapshots/expand.txt (STRIDEX_BLESS=1 writes it)");
    if all != want {
        let first = all.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "the expansion changed (line {}):\n  now:  {}\n  was:  {}\nreview, then STRIDEX_BLESS=1 to accept",
            first + 1,
            all.lines().nth(first).unwrap_or(""),
            want.lines().nth(first).unwrap_or("")
        );
    }
}

/// An expression's errors stand inside a block, an item's at item level; both are
/// `compile_error!`s spanned on the tokens at fault.
#[test]
fn errors_expand_to_compile_errors() {
    let expr = expand("gather", "data: f32[3, 2], indices: i64[2], axis: 5");
    assert!(expr.starts_with('{') && expr.contains("compile_error"), "{expr}");
    let item = expand("slice", "static BAD; input: f32[4], offsets: [5], sizes: [1], strides: [1]");
    assert!(!item.starts_with('{') && item.contains("compile_error"), "{item}");
}
