//! The layout model and the rules of stridex: plain functions over plain data, shared by the
//! macros (`gather!`, `slice!`, `chain!`, the GatherElements/GatherND gathers and the scatters,
//! at expansion time), the run-time builders and the ops.
//! The rules are written out, with their sources, in the repository's `docs/rules.md`.
//!
//! Modules in layers; a module imports only from its own layer or those below
//! (`scripts/check-layers.py` keeps it so in CI):
//!
//! 1. vocabulary: [`dims`], [`dtype`], [`limits`], [`layout`], [`rules`] (rule-set names and
//!    policies), [`feature_level`] (DirectML's support tables);
//! 2. [`error`]: every fault a rule reports, each with its message;
//! 3. declared tensors and keys: [`tensor`], [`ranges`], [`keys`];
//! 4. fixed-size plans: [`gather`], [`mod@slice`], [`convert`], [`scatter`] (a gather's
//!    inverse), then [`chain`] (stage by stage) and [`gradient`] (backward passes as those
//!    plans);
//! 5. [`kernel`]: the constant descriptors the CubeCL kernels are specialized on, the fused
//!    chain's included;
//! 6. [`dynamic`]: a `_` leading count on top, planning the layers below at a count it passes
//!    down (and the `plan()` entry points, which dispatch to it);
//! 7. readers of all the above: [`describe`], [`seeds`];
//! 8. [`op`]: the questions every op kind's descriptor and plan answer, for the generic op.

pub mod chain;
pub mod convert;
pub mod describe;
pub mod dims;
pub mod dtype;
pub mod dynamic;
pub mod error;
pub mod feature_level;
pub mod gather;
pub mod gradient;
pub mod kernel;
pub mod keys;
pub mod layout;
pub mod limits;
pub mod op;
pub mod ranges;
pub mod rules;
pub mod scatter;
pub mod seeds;
pub mod slice;
pub mod tensor;

pub use chain::{ChainCount, ChainDesc, ChainPlan, GatherStage, ScatterStage, StageDesc, StagePlan};
pub use convert::{Channels, ConvertPlan, ConvertStage};
pub use dims::{Dims, SignedDims, MAX_RANK};
pub use dtype::{DType, IndexType};
pub use dynamic::DynamicFault;
pub use error::{ConvertKey, Location, Operand, RuleError, Unfused, Window};
pub use feature_level::FeatureLevel;
pub use gather::{GatherDesc, GatherDim, GatherPlan};
pub use kernel::ChainKernelDesc;
pub use layout::{LayoutKind, Overlap, TensorLayout};
pub use op::{OpDesc, OpPlan};
pub use ranges::SliceRange;
pub use rules::{Duplicates, GatherForm, GatherRules, OutOfRange, Reduction, RuleSet, SliceForm};
pub use scatter::{ScatterDesc, ScatterFault, ScatterGroups, ScatterPlan};
pub use slice::{SliceDesc, SliceDim, SlicePlan, SliceWindow};
pub use tensor::{OutputDecl, TensorDecl};
