//! Typed rule violations. Each carries the numbers involved and the place in the descriptor it
//! belongs to, so the macro can span it on the offending token and the runtime can name it.

mod faults;
mod messages;

pub use faults::{DynamicFault, RangeFault, Unfused};

impl From<crate::feature_level::Refusal> for RuleError {
    fn from(r: crate::feature_level::Refusal) -> RuleError {
        RuleError::FeatureLevel { op: r.op, level: r.level, unsupported: r.unsupported, lowest: r.lowest }
    }
}

use crate::dtype::DType;
use crate::layout::Overlap;
use crate::rules::{GatherForm, GatherRules, RuleSet, SliceForm};
use std::fmt;

/// A tensor of a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Data,
    Indices,
    Output,
    /// The input of a slice.
    Input,
    /// The updates of a scatter.
    Updates,
}

impl Operand {
    pub const fn key(self) -> &'static str {
        match self {
            Operand::Data => "data",
            Operand::Indices => "indices",
            Operand::Output => "output",
            Operand::Input => "input",
            Operand::Updates => "updates",
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A per-dimension list of a slice descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Window {
    Offsets,
    Sizes,
    Strides,
    Starts,
    Ends,
    Axes,
    Steps,
}

impl Window {
    pub const fn key(self) -> &'static str {
        match self {
            Window::Offsets => "offsets",
            Window::Sizes => "sizes",
            Window::Strides => "strides",
            Window::Starts => "starts",
            Window::Ends => "ends",
            Window::Axes => "axes",
            Window::Steps => "steps",
        }
    }
}

/// A key of a chain's `convert` stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvertKey {
    To,
    Dim,
    Scale,
    Offset,
}

impl ConvertKey {
    pub const fn key(self) -> &'static str {
        match self {
            ConvertKey::To => "to",
            ConvertKey::Dim => "dim",
            ConvertKey::Scale => "scale",
            ConvertKey::Offset => "offset",
        }
    }
}

/// Where in a descriptor a rule is broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    DType(Operand),
    /// A tensor's whole size list.
    Shape(Operand),
    /// One size of a tensor.
    Size(Operand, usize),
    /// A tensor's whole stride list.
    Strides(Operand),
    Axis,
    BatchDims,
    IndexDims,
    Window(Window),
    WindowAt(Window, usize),
    /// The chain as a whole (its list of stages).
    Chain,
    /// A DirectML descriptor's `feature_level`.
    FeatureLevel,
    /// A slice's `s[..]` ranges as a whole.
    Ranges,
    /// One range of `s[..]`.
    RangeAt(usize),
    /// A key of a `convert` stage.
    Convert(ConvertKey),
    /// One value of a `convert` stage's `scale` or `offset`.
    ConvertAt(ConvertKey, usize),
    /// The `rules` key (or the macro, where it is not written).
    Rules,
    /// A scatter's `reduction`.
    Reduction,
    /// A scatter's `duplicates`.
    Duplicates,
    /// A scatter's `use_init_val`.
    UseInitVal,
    /// The `out_of_range` policy.
    OutOfRange,
}

impl Location {
    /// The tensor the location lies in, if any.
    pub fn operand(self) -> Option<Operand> {
        match self {
            Location::DType(t) | Location::Shape(t) | Location::Size(t, _) | Location::Strides(t) => Some(t),
            _ => None,
        }
    }
}

/// A descriptor that breaks a rule (each is written out in docs/rules.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleError {
    Rank {
        tensor: Operand,
        rank: usize,
        min: usize,
        max: usize,
        rules: RuleSet,
    },
    StridesLen {
        tensor: Operand,
        sizes: usize,
        strides: usize,
    },
    OutputOverlap {
        overlap: Overlap,
        strides: Vec<usize>,
    },
    /// The buffer would need more 32-bit words than stridex's 32-bit offsets address:
    /// `elements` (`None`: beyond `usize`) of `elem_bytes` bytes each.
    TooLarge {
        tensor: Operand,
        elements: Option<usize>,
        elem_bytes: usize,
    },
    IndexNotInteger {
        dtype: DType,
    },
    /// Indices of a type the rule set's operator of `form` does not list.
    IndexTypeNotAllowed {
        rules: GatherRules,
        form: GatherForm,
        dtype: DType,
    },
    DataTypeNotAllowed {
        rules: RuleSet,
        dtype: DType,
    },
    /// A window key of the other slice form (it would be ignored).
    KeyOfOtherForm {
        window: Window,
        form: SliceForm,
    },
    OutputDType {
        data: DType,
        output: DType,
    },
    AxisOutOfRange {
        rules: GatherRules,
        axis: i64,
        rank: usize,
    },
    KeyNotAllowed {
        rules: GatherRules,
        key: &'static str,
    },
    /// GatherElements: a key of the axis form (`batch_dims`, `index_dims`, `feature_level`).
    ElementsKey {
        rules: GatherRules,
        key: &'static str,
    },
    /// GatherElements: data and indices of different ranks.
    ElementsRank {
        rules: GatherRules,
        data_rank: usize,
        indices_rank: usize,
    },
    /// GatherElements: an indices dimension other than the axis larger than the data's (ONNX)
    /// or different from it (OpenVINO, DirectML).
    ElementsShape {
        rules: GatherRules,
        dim: usize,
        data: usize,
        indices: usize,
    },
    /// GatherND: a key of the Gather form (`axis`, `index_dims`, `feature_level`).
    NdKey {
        rules: GatherRules,
        key: &'static str,
    },
    /// ONNX GatherND-13 takes int64 indices alone.
    NdIndexType {
        dtype: DType,
    },
    /// GatherND: `batch_dims` outside `0..min(data rank, indices rank)`.
    NdBatchDims {
        rules: GatherRules,
        batch_dims: i64,
        data_rank: usize,
        indices_rank: usize,
    },
    /// GatherND: the indices' last size (coordinates per tuple) outside `1..=data rank -
    /// batch_dims` (`None`: the indices are a scalar, with no last dimension).
    NdDepth {
        rules: GatherRules,
        depth: Option<usize>,
        data_rank: usize,
        indices_rank: usize,
        batch_dims: usize,
    },
    OutputRank {
        rank: usize,
        indices_rank: usize,
        data_rank: usize,
    },
    BatchDimsOutOfRange {
        batch_dims: i64,
        limit: usize,
    },
    BatchDimsAfterAxis {
        batch_dims: usize,
        axis: usize,
    },
    BatchDimMismatch {
        /// The operator whose rule it is (OpenVINO Gather-8, or a GatherND).
        op: &'static str,
        dim: usize,
        data: usize,
        indices: usize,
    },
    /// `sizes`: the tensor's sizes, whose count is its DimensionCount.
    DimensionCount {
        tensor: Operand,
        sizes: Vec<usize>,
        expected: usize,
    },
    IndexDimsOutOfRange {
        index_dims: usize,
        dimension_count: usize,
    },
    IndexPadding {
        dim: usize,
        size: usize,
        index_dims: usize,
    },
    /// `meaningful`: the larger of seed 000's `original input rank + IndexDimensions - 1` and
    /// the formula's length after trimming leading 1s.
    OutputDoesNotFit {
        formula: Vec<usize>,
        meaningful: usize,
        original_rank: usize,
        index_dims: usize,
        dimension_count: usize,
        suggest_index_dims: Option<usize>,
        /// Whether `index_dims` was written (else it is the default: every indices dimension).
        index_dims_given: bool,
    },
    OutputShape {
        declared: Vec<usize>,
        inferred: Vec<usize>,
    },
    /// `out_of_range: skip` on a gather (it drops a scatter's update; a gather has none).
    SkipOnGather,
    /// The rule set has no scatter of this form (`scatter!` is OpenVINO's alone).
    ScatterRules {
        form: GatherForm,
        rules: GatherRules,
    },
    /// A gather key a scatter does not take (`batch_dims`, `index_dims`, `feature_level`,
    /// `output`: a scatter's result has the data's shape).
    ScatterKey {
        op: &'static str,
        key: &'static str,
    },
    /// A gather rule broken by the indices of a scatter: a scatter's indices follow its
    /// gather's rules (the gather reads where the scatter writes).
    InScatter {
        op: &'static str,
        rule: Box<RuleError>,
    },
    /// The updates' type differs from the data's.
    UpdatesDType {
        data: DType,
        updates: DType,
    },
    /// The updates' sizes are not the gather's output sizes.
    UpdatesShape {
        op: &'static str,
        declared: Vec<usize>,
        expected: Vec<usize>,
    },
    /// The standard's scatter takes no such reduction.
    ReductionNotAllowed {
        op: &'static str,
        reduction: crate::rules::Reduction,
    },
    /// No reduction of 64-bit elements (stridex's scatter kernels compute in 32-bit words), no
    /// `sub` of bools.
    ReductionType {
        reduction: crate::rules::Reduction,
        dtype: DType,
    },
    /// `duplicates: error` with a reduction (which combines duplicates by definition).
    DuplicatesWithReduction {
        reduction: crate::rules::Reduction,
    },
    /// `use_init_val` on a scatter whose standard has no such attribute (OpenVINO
    /// ScatterElementsUpdate-12 alone has it).
    UseInitValNotAllowed {
        op: &'static str,
    },
    /// Two coordinates of a scatter's data share an element: it is written in place.
    ScatterOverlap {
        overlap: Overlap,
        strides: Vec<usize>,
    },
    /// 8- or 16-bit elements whose updated runs do not fill whole 32-bit words: two
    /// invocations would write halves of one word.
    ScatterLanes {
        dtype: DType,
        /// Why the runs are not whole words.
        why: String,
    },
    /// `against`: what the length must match ("the input's rank", "`starts`").
    WindowLen {
        window: Window,
        len: usize,
        expected: usize,
        against: &'static str,
    },
    WindowStrideZero {
        dim: usize,
    },
    WindowEmpty {
        dim: usize,
    },
    WindowPastInput {
        dim: usize,
        offset: usize,
        size: usize,
        input: usize,
    },
    SliceOutputSize {
        dim: usize,
        size: usize,
        max: usize,
    },
    SliceAxisOutOfRange {
        position: usize,
        axis: i64,
        rank: usize,
    },
    SliceAxisRepeated {
        position: usize,
        axis: usize,
    },
    SliceStepZero {
        position: usize,
    },
    /// A chain with no stage, or more than `max`.
    ChainLength {
        stages: usize,
        max: usize,
    },
    /// A chain with more gathers than a fused kernel reads index tensors.
    ChainGathers {
        gathers: usize,
        max: usize,
    },
    /// A DirectML feature level that does not support the descriptor; `lowest` is the first
    /// level that does.
    FeatureLevel {
        op: crate::feature_level::DmlOperator,
        level: crate::FeatureLevel,
        unsupported: crate::feature_level::Unsupported,
        lowest: Option<crate::FeatureLevel>,
    },
    /// `feature_level` under a rule set other than DirectML's.
    FeatureLevelOutsideDirectMl {
        rules: RuleSet,
    },
    /// More `s[..]` ranges than the input has dimensions.
    RangeCount {
        ranges: usize,
        rank: usize,
    },
    /// One `s[..]` range that selects no valid window.
    Range {
        dim: usize,
        fault: RangeFault,
    },
    /// `s[..]` ranges with another way of giving the window (`rules: onnx`, `offsets`, ...).
    RangesWith {
        other: &'static str,
    },
    /// A key a chain stage does not take (`data`, `input`, `output`).
    StageKey {
        key: &'static str,
    },
    /// A leading dimension written `_` (known at run time) where the descriptor cannot keep it
    /// the output's leading dimension, or keep one kernel for every count.
    Dynamic {
        fault: DynamicFault,
        at: Location,
    },
    /// A `convert` stage writing a type other than f32, f16 or bf16.
    ConvertTo {
        to: DType,
    },
    /// A `convert` stage reading a type it does not convert (bool, 64-bit).
    ConvertFrom {
        from: DType,
    },
    ConvertDim {
        dim: i64,
        rank: usize,
    },
    /// `scale` or `offset` with neither one value nor one per channel.
    ConvertChannels {
        key: ConvertKey,
        given: usize,
        dim: usize,
        size: usize,
    },
    ConvertManyChannels {
        key: ConvertKey,
        given: usize,
        max: usize,
    },
    /// A `scale` or `offset` value that is not finite (its f32 bits).
    ConvertValue {
        key: ConvertKey,
        index: usize,
        bits: u32,
    },
    /// A 16-bit result whose layout leaves no rows of whole 32-bit words (see
    /// [`crate::convert::word_rows`]).
    ConvertWords {
        to: DType,
        strides: Vec<usize>,
    },
    /// A declared output of another type than the one `convert` writes.
    ConvertOutput {
        to: DType,
        output: DType,
    },
    /// A `convert` stage before the chain's last.
    ConvertNotLast {
        stage: usize,
        stages: usize,
    },
    /// A chain's scatter stage (1-based `stage` of `stages`) that is not its last.
    ScatterNotLast {
        stage: usize,
        stages: usize,
    },
    /// A chain that ends in a scatter and declares `output`: its result is the scatter's
    /// destination, in the destination's layout.
    ScatterChainOutput,
    /// A chain's scatter stage that receives updates of other sizes than its `into` and
    /// `indices` call for (the single op's `UpdatesShape`, in a chain's words).
    ScatterStageUpdates {
        op: &'static str,
        received: Vec<usize>,
        expected: Vec<usize>,
    },
    /// A chain's scatter stage whose destination (`into`) is not of the chain's element type,
    /// which its updates are.
    ScatterIntoType {
        into: DType,
        updates: DType,
    },
    /// A stage of a chain breaks a rule of its rule set: which stage (1-based), its kind, and
    /// the shape it received.
    Stage {
        stage: usize,
        kind: &'static str,
        input: Vec<usize>,
        error: Box<RuleError>,
    },
}

impl RuleError {
    /// The place in the descriptor to point at.
    pub fn location(&self) -> Location {
        use RuleError::*;
        match *self {
            Rank { tensor, .. } | DimensionCount { tensor, .. } => Location::Shape(tensor),
            StridesLen { tensor, .. } => Location::Strides(tensor),
            OutputOverlap { .. } => Location::Strides(Operand::Output),
            SkipOnGather => Location::OutOfRange,
            ScatterRules { .. } => Location::Rules,
            ScatterKey { key, .. } => match key {
                "batch_dims" => Location::BatchDims,
                "index_dims" => Location::IndexDims,
                "output" => Location::Shape(Operand::Output),
                _ => Location::FeatureLevel,
            },
            InScatter { ref rule, .. } => rule.location(),
            UpdatesDType { .. } => Location::DType(Operand::Updates),
            UpdatesShape { ref declared, ref expected, .. } => {
                match (0..declared.len()).find(|&i| declared.get(i) != expected.get(i)) {
                    Some(dim) if declared.len() == expected.len() => Location::Size(Operand::Updates, dim),
                    _ => Location::Shape(Operand::Updates),
                }
            }
            ReductionNotAllowed { .. } | ReductionType { .. } => Location::Reduction,
            DuplicatesWithReduction { .. } => Location::Duplicates,
            UseInitValNotAllowed { .. } => Location::UseInitVal,
            ScatterOverlap { .. } => Location::Strides(Operand::Data),
            ScatterLanes { .. } => Location::DType(Operand::Data),
            TooLarge { tensor, .. } => Location::Shape(tensor),
            IndexNotInteger { .. } | IndexTypeNotAllowed { .. } => Location::DType(Operand::Indices),
            DataTypeNotAllowed { .. } => Location::DType(Operand::Data),
            KeyOfOtherForm { window, .. } => Location::Window(window),
            OutputDType { .. } => Location::DType(Operand::Output),
            AxisOutOfRange { .. } => Location::Axis,
            KeyNotAllowed { key, .. } => match key {
                "batch_dims" => Location::BatchDims,
                _ => Location::IndexDims,
            },
            ElementsKey { key, .. } => match key {
                "batch_dims" => Location::BatchDims,
                "index_dims" => Location::IndexDims,
                _ => Location::FeatureLevel,
            },
            ElementsRank { .. } => Location::Shape(Operand::Indices),
            NdKey { key, .. } => match key {
                "axis" => Location::Axis,
                "index_dims" => Location::IndexDims,
                _ => Location::FeatureLevel,
            },
            NdIndexType { .. } => Location::DType(Operand::Indices),
            NdBatchDims { .. } => Location::BatchDims,
            NdDepth { depth: None, .. } => Location::Shape(Operand::Indices),
            NdDepth { indices_rank, .. } => Location::Size(Operand::Indices, indices_rank - 1),
            ElementsShape { dim, .. } => Location::Size(Operand::Indices, dim),
            OutputRank { .. } => Location::Shape(Operand::Indices),
            BatchDimsOutOfRange { .. } | BatchDimsAfterAxis { .. } => Location::BatchDims,
            BatchDimMismatch { dim, .. } => Location::Size(Operand::Indices, dim),
            IndexDimsOutOfRange { .. } | OutputDoesNotFit { .. } => Location::IndexDims,
            IndexPadding { dim, .. } => Location::Size(Operand::Indices, dim),
            OutputShape { ref declared, ref inferred } => {
                if declared.len() != inferred.len() {
                    Location::Shape(Operand::Output)
                } else {
                    let dim = (0..declared.len()).find(|&i| declared[i] != inferred[i]).unwrap_or(0);
                    Location::Size(Operand::Output, dim)
                }
            }
            WindowLen { window, .. } => Location::Window(window),
            WindowStrideZero { dim } => Location::WindowAt(Window::Strides, dim),
            WindowEmpty { dim } => Location::WindowAt(Window::Sizes, dim),
            WindowPastInput { dim, offset, input, .. } if offset >= input => {
                Location::WindowAt(Window::Offsets, dim)
            }
            WindowPastInput { dim, .. } => Location::WindowAt(Window::Sizes, dim),
            SliceOutputSize { dim, .. } => Location::Size(Operand::Output, dim),
            SliceAxisOutOfRange { position, .. } | SliceAxisRepeated { position, .. } => {
                Location::WindowAt(Window::Axes, position)
            }
            SliceStepZero { position } => Location::WindowAt(Window::Steps, position),
            ChainLength { .. } | ChainGathers { .. } | StageKey { .. } => Location::Chain,
            FeatureLevel { unsupported, .. } => {
                use crate::feature_level::Unsupported;
                match unsupported {
                    Unsupported::Operator => Location::FeatureLevel,
                    Unsupported::DataType(_) => Location::DType(Operand::Data),
                    Unsupported::IndexType(_) => Location::DType(Operand::Indices),
                    Unsupported::DimensionCount(_) => Location::Shape(Operand::Data),
                }
            }
            FeatureLevelOutsideDirectMl { .. } => Location::FeatureLevel,
            RangeCount { .. } | RangesWith { .. } => Location::Ranges,
            Range { dim, .. } => Location::RangeAt(dim),
            Dynamic { at, .. } => at,
            ConvertTo { .. } => Location::Convert(ConvertKey::To),
            // The data's type is what the stage reads (a later stage's input is the data's type).
            ConvertFrom { .. } => Location::DType(Operand::Data),
            ConvertDim { .. } => Location::Convert(ConvertKey::Dim),
            ConvertChannels { key, .. } | ConvertManyChannels { key, .. } => Location::Convert(key),
            ConvertValue { key, index, .. } => Location::ConvertAt(key, index),
            ConvertNotLast { .. } | ScatterNotLast { .. } => Location::Chain,
            ScatterChainOutput => Location::Shape(Operand::Output),
            // What the stage receives stands on its keyword.
            ScatterStageUpdates { .. } => Location::Shape(Operand::Updates),
            // The stage's `into`, which its spans name as its data.
            ScatterIntoType { .. } => Location::DType(Operand::Data),
            ConvertWords { .. } => Location::Strides(Operand::Output),
            ConvertOutput { .. } => Location::DType(Operand::Output),
            // The stage's own tokens: the macro maps the location within the stage.
            Stage { ref error, .. } => error.location(),
        }
    }
}

impl std::error::Error for RuleError {}
