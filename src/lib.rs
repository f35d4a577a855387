#![doc = include_str!("../README.md")]

/// Ops on Burn tensors (feature `burn`): `op.apply(..)`, and the Burn crates it works with.
#[cfg(feature = "burn")]
pub use stridex_backends::burn;
pub use stridex_backends::{
    buffers, cubecl, explain, AppendIndex, Backend, Chain, ChainKernel, ChainKind, ChainOp, Device, Dialect,
    Element, Error, Gather, GatherKind, GatherOp, IndexBuffers, IndexElement, IndexTypes, Op, OpKind,
    Scatter, ScatterKernel, ScatterKind, ScatterOp, Slice, SliceKind, SliceOp, StageKernel, Tensor,
};
pub use stridex_core::{
    ChainDesc, ChainPlan, DType, Duplicates, FeatureLevel, GatherDesc, GatherForm, GatherPlan, GatherRules,
    IndexType, Operand, OutOfRange, Reduction, RuleError, RuleSet, ScatterDesc, ScatterPlan, SliceDesc,
    SliceForm, SlicePlan, SliceRange,
};
pub use stridex_macros::{
    chain, gather, gather_elements, gather_nd, scatter, scatter_elements, scatter_nd, slice,
};

/// Re-exported so expansions and users name the same `f16`/`bf16`.
pub use half;

/// The layout model and rules (`stridex-core`).
pub use stridex_core as core;

/// Paths used by macro expansions; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use std::borrow::Cow;
    pub use stridex_core::{
        ChainCount, ChainDesc, Channels, ConvertStage, DType, Dims, Duplicates, FeatureLevel, GatherDesc,
        GatherForm, GatherRules, GatherStage, OutOfRange, OutputDecl, Reduction, ScatterDesc, ScatterStage,
        SignedDims, SliceDesc, SliceWindow, StageDesc, TensorDecl,
    };
}

/// The guide's examples (`docs/guide.md`), compiled and run with the README's as doctests, so
/// what a reader copies from either works.
#[cfg(doctest)]
#[doc = include_str!("../docs/guide.md")]
pub struct GuideExamples;
