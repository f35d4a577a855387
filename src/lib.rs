//! # stridex
//!
//! Tensor data-movement kernels checked at compile time: `gather!` (ONNX Gather, OpenVINO
//! Gather-8, DirectML GATHER) and `slice!` (DirectML SLICE1, ONNX Slice) validate every layout
//! rule while your crate compiles and run a CubeCL kernel specialized on your constants (on
//! wgpu, CUDA or CubeCL's CPU runtime).
//!
//! ```no_run
//! let op = stridex::gather! {
//!     rules: onnx,
//!     data: f32[3, 2],
//!     indices: i64[2, 2],
//!     axis: 0,
//! };
//! let y = op.run(&[1.0, 1.2, 2.3, 3.4, 4.5, 5.7], &[0, 1, 1, 2])?;
//! assert_eq!(y.shape(), &[2, 2, 2]);
//! assert_eq!(y.data(), &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]);
//! # Ok::<(), stridex::Error>(())
//! ```
//!
//! See README.md for every key, the rules, and the backends.

pub use stridex_backends::{
    cubecl, explain, Backend, Device, Dialect, Element, Error, Gather, GatherOp, IndexElement, Slice,
    SliceOp, Tensor,
};
pub use stridex_core::{
    DType, GatherDesc, GatherPlan, GatherRules, IndexType, Operand, OutOfRange, RuleError, RuleSet,
    SliceDesc, SliceForm, SlicePlan,
};
pub use stridex_macros::{gather, slice};

/// Re-exported so expansions and users name the same `f16`/`bf16`.
pub use half;

/// The layout model and rules (`stridex-core`).
pub use stridex_core as core;

/// Paths used by macro expansions; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use stridex_core::{
        DType, Dims, GatherDesc, GatherRules, OutOfRange, OutputDecl, SignedDims, SliceDesc, SliceWindow,
        TensorDecl,
    };
}
