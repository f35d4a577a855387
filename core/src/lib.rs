//! The layout model and the rules of stridex: plain functions over plain data, shared by the
//! `gather!`/`slice!` macros (at expansion time) and the runtime.
//!
//! SPEC.md is the contract: section 1 lives in [`layout`] and [`tensor`], section 2 in
//! [`gather`] and [`rules`], section 3 in [`mod@slice`]. [`kernel`] turns validated plans into the
//! constant descriptors the CubeCL kernels are specialized on.

pub mod chain;
pub mod describe;
pub mod dims;
pub mod dtype;
pub mod dynamic;
pub mod error;
pub mod feature_level;
pub mod gather;
pub mod kernel;
pub mod keys;
pub mod layout;
pub mod ranges;
pub mod rules;
pub mod seeds;
pub mod slice;
pub mod tensor;

pub use chain::{ChainCount, ChainDesc, ChainKernelDesc, ChainPlan, GatherStage, StageDesc, StagePlan};
pub use dims::{Dims, SignedDims, MAX_RANK};
pub use dtype::{DType, IndexType};
pub use dynamic::DynamicFault;
pub use error::{Location, Operand, RuleError, Window};
pub use feature_level::FeatureLevel;
pub use gather::{GatherDesc, GatherDim, GatherPlan};
pub use layout::{LayoutKind, Overlap, TensorLayout};
pub use ranges::SliceRange;
pub use rules::{GatherRules, OutOfRange, RuleSet, SliceForm};
pub use slice::{SliceDesc, SliceDim, SlicePlan, SliceWindow};
pub use tensor::{OutputDecl, TensorDecl};
