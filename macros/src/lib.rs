//! `gather!`, `gather_elements!`, `gather_nd!`, `slice!`, `chain!`, `scatter!`,
//! `scatter_elements!` and `scatter_nd!`: a thin wrapper of `stridex-syntax`, the descriptor
//! front end (tokens to a typed input, collecting every independent mistake, then the rules of
//! `stridex-core`, then the tokens of an op whose kernel is specialized on the validated
//! constants). This crate only converts tokens.

use proc_macro::TokenStream;

/// A gather kernel checked at compile time (ONNX Gather, OpenVINO Gather-8, DirectML GATHER).
///
/// ```text
/// let op = stridex::gather! { rules: onnx, data: f32[3, 2], indices: i64[2, 2], axis: 0 };
/// let y = op.run(&data, &ids)?;              // a stridex::GatherOp<f32, i64>
/// stridex::gather! { pub static EMBED; data: f32[50000, 64], indices: i64[32] }   // item form
/// ```
///
/// | key | value | default |
/// | --- | --- | --- |
/// | `rules` | `onnx`, `openvino`, `directml` | `onnx` |
/// | `data` | `T[sizes]`, or `T[sizes] strides [..]` (element strides) | required |
/// | `indices` | `I[sizes]` (`I[]` for a scalar), strides allowed | required |
/// | `axis` | integer; negative counts from the back (not under `directml`) | `0` |
/// | `batch_dims` | OpenVINO's, in `[-min(r, q), min(r, q)]`, `<= axis` once normalized | `0` (openvino only) |
/// | `index_dims` | DirectML's `IndexDimensions`, `0..=DimensionCount` | every indices dimension (directml only) |
/// | `feature_level` | `1_0`, `2_1`, `3_0`, `4_1`: the seed's tables of the DirectML level targeted | `4_1` (directml only) |
/// | `out_of_range` | `error` (`Err` from `run`), `zero`, `clamp` | `onnx`: error, `openvino`: zero, `directml`: clamp |
/// | `output` | `[sizes]`, `T[sizes]`, with `strides [..]` (padded or permuted, never overlapping) | inferred, packed |
///
/// `T`: `f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8 bool` (DirectML: no `bool`, `bf16`);
/// `I`: `i32 i64`, and `u32 u64` under `openvino` and `directml`. Every rule of the chosen rule
/// set is checked while your crate compiles; every independent mistake is reported, each on
/// its token.
#[proc_macro]
pub fn gather(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::gather_macro(input.into()).into()
}

/// A GatherElements kernel checked at compile time (ONNX GatherElements-13, OpenVINO
/// GatherElements-6, DirectML GATHER_ELEMENTS): one element per index; the indices, shaped as
/// the output, give each element's coordinate along `axis`, and every other coordinate is the
/// output's (`out[i][j] = data[idx[i][j]][j]` along axis 0; PyTorch's `gather`).
///
/// ```text
/// let op = stridex::gather_elements! { data: f32[3, 3], indices: i64[2, 3], axis: 0 };
/// let y = op.run(&data, &idx)?;              // a stridex::GatherOp<f32, i64>, shape [2, 3]
/// ```
///
/// Keys as [`gather!`]'s but `batch_dims`, `index_dims` and `feature_level`: `rules`, `data`,
/// `indices` (the data's rank; along every dimension but the axis at most the data's size
/// under `onnx`, equal to it under `openvino` and `directml`), `axis`, `out_of_range`,
/// `output`. A `_` leading size of the indices is taken along axis 0. In `chain!`, the stage
/// `gather_elements { indices: .., axis: .. }`.
#[proc_macro]
pub fn gather_elements(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::gather_elements_macro(input.into()).into()
}

/// A GatherND kernel checked at compile time (ONNX GatherND-13, OpenVINO GatherND-8, DirectML
/// GATHER_ND1): the indices' last dimension holds tuples of `k` coordinates into the data's
/// dimensions `batch_dims..batch_dims + k`; each tuple picks an element (`k` = the rest of the
/// data's rank) or a slice, and the output is `indices.shape[..-1] + data.shape[batch_dims + k..]`.
///
/// ```text
/// let op = stridex::gather_nd! { data: f32[4, 5, 64], indices: i64[8, 2] };
/// let y = op.run(&data, &idx)?;              // a stridex::GatherOp<f32, i64>, shape [8, 64]
/// ```
///
/// Keys: `rules` (`onnx`, the default, takes i64 indices alone), `data`, `indices` (rank >= 1,
/// last size in `1..=rank(data) - batch_dims`), `batch_dims` (in `0..min(rank(data),
/// rank(indices))`; the first `batch_dims` sizes of data and indices equal), `out_of_range`
/// (each coordinate checked against its own axis), `output`. No `axis`: the tuples name the
/// axes. A `_` leading size of the indices, with `batch_dims` 0. In `chain!`, the stage
/// `gather_nd { indices: .., batch_dims: .. }`.
#[proc_macro]
pub fn gather_nd(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::gather_nd_macro(input.into()).into()
}

/// A scatter along an axis, checked at compile time: the inverse of `gather!` (OpenVINO
/// ScatterUpdate-3, the default and only rule set; with a `reduction`, PyTorch's
/// `index_add_` / `index_reduce_`).
///
/// ```text
/// let op = stridex::scatter! { data: f32[32000, 256], indices: i64[512], updates: f32[512, 256], axis: 0, reduction: add };
/// let y = op.run(&table, &ids, &grads)?;    // a stridex::ScatterOp<f32, i64>, shape [32000, 256]
/// ```
///
/// Keys: `rules`, `data`, `indices`, `updates` (shaped as `gather!`'s output for the same data,
/// indices and axis), `axis`, `reduction` (`none`, the default, `add`, `mul`, `max`, `min`),
/// `duplicates` (`last`, the default, or `error`, under `none`), `out_of_range` (`error`,
/// `zero` or `skip`, which drop the update, or `clamp`). The result is the serial
/// reference's, bit for bit: updates apply in the indices' row-major order. A `_` leading size
/// of the indices, and then of the updates, is taken along axis 0 (a KV cache's new tokens:
/// `indices: i32[_], updates: f16[_, 8, 128]`; `launch_at` takes the count).
#[proc_macro]
pub fn scatter(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::scatter_macro(input.into()).into()
}

/// ONNX ScatterElements-18, OpenVINO ScatterElementsUpdate-12, DirectML SCATTER: the inverse
/// of `gather_elements!`; keys as `scatter!`, the updates shaped as the indices. `rules: onnx`
/// by default. A `_` leading size of the indices and updates along `axis: 0` (the gradient of
/// a `_` `gather_elements!`: `indices: i32[_, 512], updates: f32[_, 512]`; `launch_at` takes the
/// count).
#[proc_macro]
pub fn scatter_elements(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::scatter_elements_macro(input.into()).into()
}

/// ONNX ScatterND-18, OpenVINO ScatterNDUpdate-15, DirectML SCATTER_ND: the inverse of
/// `gather_nd!` (no batch dimensions); keys as `scatter!` without `axis`, the updates shaped
/// as the indices before their last dimension, then the data after the named axes. A `_`
/// leading size of indices of rank 2 or more, and then of the updates (`i64[_, 1]`).
#[proc_macro]
pub fn scatter_nd(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::scatter_nd_macro(input.into()).into()
}

/// A slice kernel checked at compile time (DirectML SLICE1 windows, or ONNX Slice-13).
///
/// ```text
/// let s = stridex::slice! { input: f32[1, 1, 4, 4], offsets: [0, 0, 0, 1], sizes: [1, 1, 4, 3], strides: [1, 1, -2, 2] };
/// let o = stridex::slice! { rules: onnx, input: u8[20, 10], starts: [0, -1], ends: [20, 0], steps: [2, -1] };
/// ```
///
/// | key | value | default |
/// | --- | --- | --- |
/// | `rules` | `directml` (SLICE1 windows) or `onnx` (Slice-13) | `directml` |
/// | `input` | `T[sizes]`, strides allowed | required |
/// | `offsets`, `sizes`, `strides` | one per dimension; `strides` signed and non-zero | required (`directml` only) |
/// | `starts`, `ends`, `axes`, `steps` | as ONNX Slice: clamped, negative from the end; may be empty | `starts`, `ends` required; `axes`: the first ones; `steps`: 1 (`onnx` only) |
/// | `output` | `[sizes]` (each in `1..=MaxCopiedElements` under `directml`), strides allowed | every element the window reaches, packed |
/// | `feature_level` | `2_1`, `3_0`, `4_1` (SLICE1 came with 2_1) | `4_1` (`directml` only) |
/// | `s[..]` (no key) | ndarray/Burn ranges standing for the SLICE1 window: `s[.., 1..9;2, ..;-1]` | instead of `offsets`/`sizes`/`strides` |
///
/// A key of the other form is an error, not ignored. `output[c] = input[CopyStart + stride *
/// c]`, `CopyStart[i] = offset[i] + (stride[i] < 0 ? size[i] - 1 : 0)`.
#[proc_macro]
pub fn slice(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::slice_macro(input.into()).into()
}

/// A chain of gathers and slices, every stage checked at compile time on the shape it
/// receives, and fused into one kernel (no intermediate is written).
///
/// ```text
/// let op = stridex::chain! {
///     data: f32[32000, 4096],
///     gather { indices: i64[8, 128], axis: 0 },                           // -> [8, 128, 4096]
///     slice { rules: onnx, starts: [-1], ends: [128], axes: [1] },        // -> [8, 1, 4096]
///     slice { offsets: [0, 0, 0], sizes: [8, 1, 4096], strides: [1, 1, -2] },  // -> [8, 1, 2048]
///     gather { rules: openvino, indices: i32[8, 16], axis: 2, batch_dims: 1 },  // -> [8, 1, 16]
/// };
/// let y = op.run(&table, (&ids, &cols))?;   // a stridex::ChainOp<f32, (i64, i32)>
/// ```
///
/// | entry | value |
/// | --- | --- |
/// | `data` | first: `T[sizes]`, strides allowed, as `gather!`'s `data` |
/// | `gather { .. }` | the keys of `gather!` but `data` and `output`; the same defaults |
/// | `slice { .. }` | the keys of `slice!` but `input` and `output` (`s[..]` ranges lowered against the shape the stage receives); the same defaults |
/// | `convert { .. }` | last stage only: `to`, `dim`, `scale`, `offset` (the result in another element type) |
/// | `scatter { .. }` (`scatter_elements`, `scatter_nd`) | last stage only: the keys of `scatter!` but `data` (the destination, here `into`) and `updates` (what the stage receives); the result is `into`, written in place by `run_into` or `launch` |
/// | `output` | optional, last: the result's `[sizes]` with `strides [..]`, as `gather!`'s (not after a scatter) |
///
/// 1 to 8 stages, at most 4 of them gathers. A stage's input is the previous stage's output
/// (packed); a broken rule is reported on the stage's token and names the stage (`stage 3
/// (slice)`) and the shape it received. `run` takes the gathers' index buffers as a tuple in
/// stage order (`()` for none, `(&ids,)` for one; a scatter stage's last). `static NAME;` first
/// gives the item form.
#[proc_macro]
pub fn chain(input: TokenStream) -> TokenStream {
    stridex_syntax::expand::chain_macro(input.into()).into()
}
