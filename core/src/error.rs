//! Typed rule violations. Each carries the numbers involved and the place in the descriptor it
//! belongs to, so the macro can span it on the offending token and the runtime can name it.

use crate::dims::list;
use crate::dtype::DType;
use crate::layout::Overlap;
use crate::rules::GatherRules;
use std::fmt;

/// A tensor of a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Data,
    Indices,
    Output,
    /// The input of a slice.
    Input,
}

impl Operand {
    pub const fn key(self) -> &'static str {
        match self {
            Operand::Data => "data",
            Operand::Indices => "indices",
            Operand::Output => "output",
            Operand::Input => "input",
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
}

/// A descriptor that breaks a rule of SPEC.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleError {
    Rank {
        tensor: Operand,
        rank: usize,
        min: usize,
        max: usize,
        rules: &'static str,
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
    /// The buffer would need more 32-bit words than stridex's 32-bit offsets address.
    TooLarge {
        tensor: Operand,
    },
    IndexNotInteger {
        dtype: DType,
    },
    IndexTypeNotAllowed {
        rules: GatherRules,
        dtype: DType,
    },
    DataTypeNotAllowed {
        rules: &'static str,
        dtype: DType,
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
        dim: usize,
        data: usize,
        indices: usize,
    },
    DimensionCount {
        tensor: Operand,
        count: usize,
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
    },
    OutputShape {
        declared: Vec<usize>,
        inferred: Vec<usize>,
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
}

impl RuleError {
    /// The place in the descriptor to point at.
    pub fn location(&self) -> Location {
        use RuleError::*;
        match *self {
            Rank { tensor, .. } | DimensionCount { tensor, .. } => Location::Shape(tensor),
            StridesLen { tensor, .. } => Location::Strides(tensor),
            OutputOverlap { .. } => Location::Strides(Operand::Output),
            TooLarge { tensor } => Location::Shape(tensor),
            IndexNotInteger { .. } | IndexTypeNotAllowed { .. } => Location::DType(Operand::Indices),
            DataTypeNotAllowed { .. } => Location::DType(Operand::Data),
            OutputDType { .. } => Location::DType(Operand::Output),
            AxisOutOfRange { .. } => Location::Axis,
            KeyNotAllowed { key, .. } => match key {
                "batch_dims" => Location::BatchDims,
                _ => Location::IndexDims,
            },
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
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RuleError::*;
        match self {
            Rank { tensor, rank, max, .. } if rank > max => write!(
                f,
                "tensor rank: `{tensor}` has {rank} dimensions, but stridex tensors have at most {max} (DirectML's limit); merge or drop dimensions"
            ),
            Rank { tensor, rank, min, max, rules } if min == max => write!(
                f,
                "{rules}: `{tensor}` has rank {rank}, but it must have rank {min}; give it {min} dimension(s)"
            ),
            Rank { tensor, rank, min, max, rules } => write!(
                f,
                "{rules}: `{tensor}` has rank {rank}, but ranks {min} to {max} are allowed; {}",
                if rank < min {
                    format!("give `{tensor}` at least {min} dimension(s) (a size-1 dimension changes nothing)")
                } else {
                    format!("merge or drop dimensions until `{tensor}` has at most {max}")
                }
            ),
            StridesLen { tensor, sizes, strides } => write!(
                f,
                "strided layout: `{tensor}` has {sizes} size(s) but {strides} stride(s); give exactly one stride per dimension"
            ),
            OutputOverlap { overlap: Overlap::Collision { a, b, offset }, strides } => write!(
                f,
                "output layout: strides {} map coordinates {} and {} to the same element offset {offset}, and parallel writes to one address race; use strides that give every output element its own offset (zero strides are for inputs only), e.g. the packed default",
                list(strides),
                list(a),
                list(b)
            ),
            OutputOverlap { overlap: Overlap::Unproven, strides } => write!(
                f,
                "output layout: strides {} interleave dimensions, so stridex cannot show that every output element has its own offset; order the strides so that each is at least the span of the smaller ones (packed, permuted or padded layouts all do)",
                list(strides)
            ),
            TooLarge { tensor } => write!(
                f,
                "size limit: `{tensor}` spans 2^32 or more elements or 32-bit words (or has an axis that long), past the 32-bit offsets stridex kernels use; split the tensor"
            ),
            IndexNotInteger { dtype } => write!(
                f,
                "index type: `indices` has element type {dtype}, but index values must be integers; use i64 or i32 (u32/u64 where the rules allow them)"
            ),
            IndexTypeNotAllowed { rules, dtype } => write!(
                f,
                "{}: index type {dtype} is not allowed ({} takes {}); {}",
                rules.op_name(),
                rules.op_name(),
                rules.index_types_text(),
                match rules {
                    GatherRules::Onnx => "use i64 or i32, or pick `rules: directml` / `rules: openvino`, which accept unsigned indices",
                    _ => "use i32 or i64 (stridex reads indices of i32, i64, u32 and u64)",
                }
            ),
            DataTypeNotAllowed { rules, dtype } => write!(
                f,
                "{rules}: data type {dtype} is not in its list (f64, f32, f16, i64, i32, i16, i8, u64, u32, u16, u8); {}, or use a listed type of the same width (the bits move unchanged)",
                if rules.contains("SLICE1") {
                    "slice with `rules: onnx` (starts/ends/steps), which takes every type"
                } else {
                    "use `rules: openvino`, which takes every type and unsigned indices"
                }
            ),
            OutputDType { data, output } => write!(
                f,
                "output type: input and output must have the same data type, but the input is {data} and the output {output}; write `output: {data}[..]` or leave the type out"
            ),
            AxisOutOfRange { rules, axis, rank } => {
                let (lo, hi) = rules.axis_range(*rank);
                write!(
                    f,
                    "{}: axis {axis} is out of range for data of rank {rank}; allowed: {lo} to {hi}{}",
                    rules.op_name(),
                    match rules {
                        GatherRules::DirectMl if *axis < 0 && axis.unsigned_abs() as usize <= *rank => format!(
                            " (DirectML has no negative axis): write axis: {}",
                            *rank as i64 + axis
                        ),
                        _ => String::new(),
                    }
                )
            }
            KeyNotAllowed { rules, key } => write!(
                f,
                "{}: `{key}` is not part of this operator; {}",
                rules.op_name(),
                if *key == "batch_dims" {
                    "batch_dims belongs to OpenVINO Gather-8: write `rules: openvino` or remove it"
                } else {
                    "index_dims (IndexDimensions) belongs to DirectML GATHER: write `rules: directml` or remove it"
                }
            ),
            OutputRank { rank, indices_rank, data_rank } => write!(
                f,
                "output rank: gathering with indices of rank {indices_rank} from data of rank {data_rank} gives an output of rank {rank}, over the limit of 8; use fewer index dimensions"
            ),
            BatchDimsOutOfRange { batch_dims, limit } => write!(
                f,
                "OpenVINO Gather-8: batch_dims {batch_dims} is out of range; allowed: -{limit} to {limit} (min of the data and indices ranks)"
            ),
            BatchDimsAfterAxis { batch_dims, axis } => write!(
                f,
                "OpenVINO Gather-8: batch_dims (normalized {batch_dims}) must be <= axis (normalized {axis}); gather along a dimension after the batch dimensions, e.g. axis: {batch_dims}"
            ),
            BatchDimMismatch { dim, data, indices } => write!(
                f,
                "OpenVINO Gather-8: batch dimension {dim} differs: data has {data}, indices have {indices}; the first batch_dims sizes of data and indices must be equal"
            ),
            DimensionCount { tensor, count, expected } => write!(
                f,
                "DirectML GATHER: `{tensor}` has DimensionCount {count}, but input, indices and output must all have {expected}; {}",
                dimension_count_hint(*count, *expected)
            ),
            IndexDimsOutOfRange { index_dims, dimension_count } => write!(
                f,
                "DirectML GATHER: index_dims {index_dims} is more than the indices' DimensionCount {dimension_count}; use at most {dimension_count}"
            ),
            IndexPadding { dim, size, index_dims } => write!(
                f,
                "DirectML GATHER: indices dimension {dim} has size {size}, but with index_dims {index_dims} the leading dimensions are padding and must be 1; raise index_dims to include it"
            ),
            OutputDoesNotFit { formula, meaningful, original_rank, index_dims, dimension_count, suggest_index_dims } => write!(
                f,
                "DirectML GATHER: with index_dims {index_dims} the output (sizes {}) has {meaningful} meaningful dimensions (original input rank {original_rank} + index_dims {index_dims} - 1 = {}), more than DimensionCount {dimension_count}{}",
                list(formula),
                original_rank + index_dims - 1,
                match suggest_index_dims {
                    Some(k) => format!(
                        "; the extra dimensions are size-1 padding of the indices: write index_dims: {k}, which gives the same values"
                    ),
                    None => "; use fewer index dimensions or gather along another axis".to_string(),
                }
            ),
            OutputShape { declared, inferred } => write!(
                f,
                "output shape: declared {}, but the rules give {}; write output: {} or leave it out",
                list(declared),
                list(inferred),
                list(inferred)
            ),
            WindowLen { window, len, expected, against } => write!(
                f,
                "slice: `{}` has {len} value(s), but {against} is {expected}; give {expected}",
                window.key()
            ),
            WindowStrideZero { dim } => write!(
                f,
                "DirectML SLICE1: window stride of dimension {dim} is 0; strides are signed and non-zero (use 1 to take every element, -1 to reverse)"
            ),
            WindowEmpty { dim } => write!(
                f,
                "DirectML SLICE1: window size of dimension {dim} is 0, and windows may not be empty; use a size of at least 1"
            ),
            WindowPastInput { dim, offset, size, input } if offset >= input => write!(
                f,
                "DirectML SLICE1: window of dimension {dim} starts at offset {offset}, past the input size {input}; use an offset of at most {}",
                input.saturating_sub((*size).max(1))
            ),
            WindowPastInput { dim, offset, size, input } => write!(
                f,
                "DirectML SLICE1: window of dimension {dim} ends past the input: offset {offset} + size {size} = {} > input size {input}; use size <= {}",
                offset.saturating_add(*size),
                input - offset
            ),
            SliceOutputSize { dim, size, max } => write!(
                f,
                "DirectML SLICE1: output size {size} of dimension {dim} must be in 1 to MaxCopiedElements = 1 + (size - 1) / |stride| = {max}; use a size in 1..={max}"
            ),
            SliceAxisOutOfRange { axis, rank, .. } => write!(
                f,
                "ONNX Slice: axis {axis} is out of range for input of rank {rank}; allowed: -{rank} to {}",
                *rank as i64 - 1
            ),
            SliceAxisRepeated { axis, .. } => write!(
                f,
                "ONNX Slice: axis {axis} appears twice in `axes`; name each axis once"
            ),
            SliceStepZero { position } => write!(
                f,
                "ONNX Slice: steps[{position}] is 0; steps are non-zero (1 takes every element, -1 reverses)"
            ),
        }
    }
}

impl std::error::Error for RuleError {}

fn dimension_count_hint(count: usize, expected: usize) -> String {
    if count < expected {
        let mut parts = vec!["1".to_string(); expected - count];
        parts.extend((0..count).map(|i| format!("n{i}")));
        format!("pad with leading 1s, e.g. [{}]", parts.join(", "))
    } else {
        format!("drop leading 1s to give {expected} dimensions")
    }
}

pub(crate) fn trim_leading_ones(xs: &[usize]) -> &[usize] {
    let k = xs.iter().take_while(|&&n| n == 1).count();
    &xs[k..]
}
