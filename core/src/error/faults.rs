//! The faults a [`super::RuleError`] carries from the rules that find them, each with its
//! message beside it.

use super::Operand;
use crate::dims::{list, Dims};
use std::fmt;

/// What is wrong with one range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeFault {
    /// A bound outside `[-n, n]` (`end` of `a..=b` outside `[-n, n-1]`).
    BoundOutside {
        bound: i64,
        size: usize,
    },
    /// The range selects nothing (SLICE1 copies at least one element per dimension).
    Empty {
        start: usize,
        end: usize,
    },
    StepZero,
    /// A single index (ndarray drops the dimension; a slice keeps it).
    SingleIndex {
        index: i64,
    },
}

/// Why a chain does not fuse into one row-walk kernel (it then runs stage by stage; a `_`
/// chain must fuse).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unfused {
    /// Stage `stage`'s output is empty while the chain's is not.
    EmptyStage { stage: usize },
    /// Stage `stage` gathers along an axis of size 0: every index is out of range.
    EmptyAxis { stage: usize },
    /// An offset through stage `stage` leaves 64-bit arithmetic (a huge step or stride).
    Overflow { stage: usize },
    /// The result's rows (its last dimension, `size` elements of `elem_bytes` bytes, as the
    /// last stage, `stage`, leaves it) are not whole 32-bit words, which the fused kernel writes.
    Rows { stage: usize, size: usize, elem_bytes: usize },
    /// Through stage `stage` the chain reads more than `max` indices per output element (one
    /// per gather, one per component of a GatherND tuple).
    Reads { stage: usize, max: usize },
    /// Stage `stage` scatters: it writes where its indices say, after the stages before it.
    Scatter { stage: usize },
}

impl Unfused {
    /// The stage (1-based) the cause lies in: where a front end points its error.
    pub const fn stage(self) -> usize {
        match self {
            Unfused::EmptyStage { stage }
            | Unfused::EmptyAxis { stage }
            | Unfused::Overflow { stage }
            | Unfused::Rows { stage, .. }
            | Unfused::Reads { stage, .. }
            | Unfused::Scatter { stage } => stage,
        }
    }

    /// What the user can change.
    pub fn fix(self) -> String {
        match self {
            Unfused::Rows { elem_bytes, .. } => format!(
                "make the result's last dimension a multiple of {} element{} (whole words), or give the leading size",
                4 / elem_bytes.clamp(1, 4),
                if elem_bytes >= 4 { "" } else { "s" }
            ),
            _ => "give the leading size".to_string(),
        }
    }
}

impl fmt::Display for Unfused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Unfused::EmptyStage { stage } => {
                write!(f, "stage {stage}'s output is empty, so the stages after it have nothing to read")
            }
            Unfused::EmptyAxis { stage } => {
                write!(f, "stage {stage} gathers along an axis of size 0, so every index is out of range")
            }
            Unfused::Overflow { stage } => {
                write!(f, "an offset through stage {stage} leaves 64-bit arithmetic (a step or stride that large)")
            }
            Unfused::Rows { stage, size, elem_bytes } => write!(
                f,
                "the result's rows (its last dimension, as stage {stage} leaves it) are {size} element{} of {elem_bytes} byte{}, {} bytes, not a whole number of 32-bit words, which the one kernel writes",
                if size == 1 { "" } else { "s" },
                if elem_bytes == 1 { "" } else { "s" },
                size.saturating_mul(elem_bytes)
            ),
            Unfused::Reads { stage, max } => write!(
                f,
                "through stage {stage} the one kernel would read more than {max} indices per output element (one per gather, one per coordinate of a GatherND tuple)"
            ),
            Unfused::Scatter { stage } => write!(
                f,
                "stage {stage} scatters: it writes where its indices say, after the stages before it have made its updates"
            ),
        }
    }
}

/// Why a descriptor cannot keep a `_` leading dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DynamicFault {
    /// DirectML pads every tensor to one DimensionCount with leading 1s.
    DirectMl,
    /// `_` on a tensor with no dimension (builders only: the macros read `_` in a size list).
    Scalar { tensor: Operand },
    /// The `_` tensor declared with strides where none are taken (a gather's indices: their
    /// count is read from a packed length).
    Strides { tensor: Operand },
    /// A strided `_` tensor whose leading dimension is not outermost in memory: its stride is
    /// below the span of the other dimensions, so a buffer's length does not give the count.
    LeadingStride { tensor: Operand, stride: usize, span: usize },
    /// A gather along another axis: the output leads with the data's dimensions.
    Axis { axis: usize },
    /// GatherElements along another axis: the indices' leading size is tied to the data's.
    ElementsAxis { axis: usize },
    /// OpenVINO batch dimensions tie the indices' leading size to the data's.
    BatchDims { batch_dims: usize },
    /// GatherND indices of rank 1: their one dimension is the tuple, not a count.
    NdTuple,
    /// A slice window that does not take the `_` dimension whole, forwards, from 0.
    Window,
    /// Rows of no element: the count cannot be read from a length.
    EmptyRows { tensor: Operand },
    /// No walk of the output stays the same for every count (a guard: every layout the other
    /// rules admit has one).
    Layout { output: Dims, elem_bytes: usize },
    /// Chains: a gather along axis 0 of a tensor whose leading size is the count.
    GatherAcrossCount,
    /// Chains: a GatherND after the count (its tuples index the leading dimensions it
    /// receives, the count's first).
    NdAfterCount,
    /// Chains: a GatherElements along axis 0 after the count (it would index the dimension
    /// the count sizes).
    ElementsAcrossCount,
    /// Chains: a GatherElements after the count whose indices do not lead with `_` (its
    /// output, their shape, leads with the count).
    ElementsStageCount,
    /// Chains: a second `_` (one count per chain).
    SecondCount,
    /// Chains: the chain would run stage by stage, and a `_` chain runs as one kernel.
    Staged { cause: Unfused },
    /// Chains: an explicit SLICE1 window after the count (it cannot say `_` there).
    StageWindow,
    /// Chains: a descriptor that puts the count on the indices of a stage that is no gather.
    NoGatherAt { stage: usize },
    /// A stage number out of a chain's range: stages count from 1, and `last` is the stage
    /// being added after the chain's own (public helpers asked for a stage that is not there).
    NoStage { stage: usize, last: usize },
    /// Chains: OpenVINO batch dimensions in a gather after the count.
    BatchDimsAfterCount { batch_dims: usize },
    /// Chain builder: the data's count declared after stages were added.
    CountAfterStages,
    /// Chains: a `convert` stage whose channels are the `_` dimension (its scale and offset are
    /// constants, one per channel, and the count is not).
    ConvertCount,
    /// A chain's final scatter whose positions do not follow the chain's count: `_` on them in
    /// a chain of fixed sizes, or (`counted`) a size where the chain has a count.
    ScatterStageCount { counted: bool },
}

impl fmt::Display for DynamicFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DynamicFault::*;
        match *self {
            DirectMl => write!(
                f,
                "gather: a `_` leading dimension under DirectML: its tensors have one fixed DimensionCount, padded with leading 1s, so a run-time size cannot lead; write `rules: onnx` or `rules: openvino` (the same values for in-range indices), or give the size"
            ),
            Scalar { tensor } => write!(
                f,
                "`{tensor}` has no dimension to leave to run time: `_` stands for the leading size of a tensor of rank 1 or more"
            ),
            Strides { tensor } => write!(
                f,
                "`{tensor}` with a `_` leading dimension is read packed (its count comes from its length): remove `strides [..]`, or give the leading size"
            ),
            LeadingStride { tensor, stride, span } => write!(
                f,
                "`{tensor}` with a `_` leading dimension must keep it outermost in memory, so that its buffer's length gives the count: its leading stride is {stride}, less than the {span} elements the other dimensions span; make the leading stride at least {span} (the `_` dimension first in memory), or give the leading size"
            ),
            Axis { axis } => write!(
                f,
                "gather: a `_` leading dimension of the indices with `axis: {axis}`: the output leads with the data's dimension 0, not the indices' count; use `axis: 0` (lay the data out with the gathered axis first), or give the indices' size"
            ),
            ElementsAxis { axis } => write!(
                f,
                "gather_elements: a `_` leading dimension of the indices with `axis: {axis}`: along every dimension but the axis the indices' sizes are tied to the data's, so only along axis 0 is their count free; use `axis: 0`, or give the indices' size"
            ),
            BatchDims { batch_dims } => write!(
                f,
                "gather: `batch_dims: {batch_dims}` makes the indices' leading size the data's, so it cannot be `_`; use `batch_dims: 0`, or give the size"
            ),
            Window => write!(
                f,
                "slice: the window must take the `_` dimension whole, from 0, forwards (its size is known only at run time): write `offsets: [0, ..], sizes: [_, ..], strides: [1, ..]`, `..` as the first s[..] range, or (ONNX) leave axis 0 out of `axes` (or start 0, end i64::MAX, step 1)"
            ),
            EmptyRows { tensor } => write!(
                f,
                "`{tensor}` has rows of no element after its `_` dimension, so its count cannot be read from its length; give the leading size"
            ),
            GatherAcrossCount => write!(
                f,
                "gather: `axis: 0` of a tensor whose leading size is the `_` count would replace the count with the indices' dimensions; gather along another axis (the count stays the output's leading size), or give the size"
            ),
            NdAfterCount => write!(
                f,
                "gather_nd: after the chain's `_` count, its tuples would index the dimension the count sizes (they index the leading dimensions of what the stage receives), so the count would not lead its output; give the chain's count a size, or gather the tuples before the count (a `gather_nd!` of its own takes `_` on its indices: `indices: i64[_, k]`)"
            ),
            ElementsAcrossCount => write!(
                f,
                "gather_elements: `axis: 0` after the chain's `_` count would index the dimension the count sizes, whose size is known only at run time; gather along another axis (the indices then lead with the count: `indices: i32[_, ..]`), or give the chain's count a size"
            ),
            ElementsStageCount => write!(
                f,
                "gather_elements: after the chain's `_` count, its output takes the shape of its indices, so their leading size is the count: write `_` there (`indices: i32[_, ..]`)"
            ),
            SecondCount => write!(
                f,
                "a chain has one `_` count: the leading size of its data or of one gather's indices, which every later stage keeps as its leading size (a later gather_elements' or scatter's `_` indices lead with that same count); give this size"
            ),
            StageWindow => write!(
                f,
                "slice: after the chain's `_` count, a stage takes its dimension whole; write the window as `s[..]` ranges with `..` first (`s[.., 8..56, ..]`), or with ONNX keys that leave axis 0 out of `axes`"
            ),
            BatchDimsAfterCount { batch_dims } => write!(
                f,
                "gather: `batch_dims: {batch_dims}` ties the indices' leading sizes to the data's, whose leading size is the chain's `_` count; use `batch_dims: 0`, or give the size"
            ),
            CountAfterStages => write!(
                f,
                "`Chain::dynamic_leading()` comes before the chain's stages: each stage is checked against the shape it receives as it is added; call it right after `Chain::data`"
            ),
            NdTuple => write!(
                f,
                "gather_nd: a `_` leading dimension of indices of rank 1: their one dimension holds the tuple's coordinates, a fixed number, not a count; give the tuples a leading dimension (`[_, k]`), or give the size"
            ),
            ConvertCount => write!(
                f,
                "convert: `dim` names the `_` dimension, whose size is known only at run time, while `scale` and `offset` hold one constant per channel; name another dimension, or give one value in each (the same for every channel)"
            ),
            NoStage { stage, last } => write!(
                f,
                "the chain has no stage {stage}: its stages count from 1, and the last one here is {last}"
            ),
            ScatterStageCount { counted: false } => write!(
                f,
                "a scatter stage's indices lead with `_` only in a chain with a `_` count (on its data, or on a gather's indices), and this chain has fixed sizes: give the indices' leading size"
            ),
            ScatterStageCount { counted: true } => write!(
                f,
                "the scatter stage's updates lead with the chain's `_` count, and so do its positions: its indices' leading size is `_` (`indices: i32[_]`, `Scatter::dynamic_leading`)"
            ),
            NoGatherAt { stage } => write!(
                f,
                "the chain's `_` count is put on the indices of stage {stage}, which is not a gather; put it on a gather's indices or on the data"
            ),
            Staged { cause } => write!(
                f,
                "a chain with a `_` count runs as one kernel, and this one would run stage by stage: {cause}; {}",
                cause.fix()
            ),
            Layout { output, elem_bytes } => {
                let mut shown: Vec<String> = output.iter().map(|n| n.to_string()).collect();
                if let Some(first) = shown.first_mut() {
                    *first = "_".into();
                }
                write!(
                    f,
                    "a `_` leading dimension: no kernel for the output {} of {elem_bytes}-byte elements stays the same for every count; give the leading size",
                    list(&shown)
                )
            }
        }
    }
}
