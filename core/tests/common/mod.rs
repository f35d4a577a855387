//! Shared by core's tests: shorthands, the naive reference written from the rules
//! (`reference`), random descriptors (`generate`, `chains`) and the row walk's host model. The
//! integration suite includes the last four too (`tests/suite/common/mod.rs`).

#![allow(dead_code, unused_macros)]

pub mod chains;
pub mod generate;
#[macro_use]
pub mod host_model;
pub mod reference;

use stridex_core::*;

pub fn d(v: &[usize]) -> Dims {
    Dims::of(v)
}

/// An ONNX Slice of an f32 `input`, `axes` and `steps` as given (`None`: the attribute is absent).
pub fn onnx_slice(
    input: &[usize],
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
) -> SliceDesc {
    let window = SliceWindow::Onnx {
        starts: SignedDims::of(starts),
        ends: SignedDims::of(ends),
        axes: axes.map(SignedDims::of),
        steps: steps.map(SignedDims::of),
    };
    SliceDesc::new(TensorDecl::packed(DType::F32, d(input)), window)
}
