//! What a broken rule says: the rule set, the numbers, and the fix.

use super::{Operand, RuleError};
use crate::dims::list;
use crate::dtype::DType;
use crate::layout::Overlap;
use crate::rules::{GatherRules, Reduction, RuleSet, SliceForm};
use std::fmt;

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RuleError::*;
        match self {
            // Past the limit of every tensor (a rule's own range is the next arms').
            Rank { tensor, rank, max, .. } if rank > max && *max == crate::MAX_RANK => write!(
                f,
                "tensor rank: `{tensor}` has {rank} dimensions, but stridex tensors have at most {max} (DirectML's limit); merge or drop dimensions"
            ),
            Rank { tensor, rank, min, max, rules } if min == max => write!(
                f,
                "{rules}: `{tensor}` has rank {rank}, but it must have rank {min}{}; give it {min} dimension(s)",
                if matches!(rules, RuleSet::Slice(_)) && *tensor == Operand::Output { " (the input's)" } else { "" }
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
            TooLarge { tensor, elements, elem_bytes } => {
                let span = match elements {
                    Some(n) => format!(
                        "{n} elements of {elem_bytes} byte(s) ({} 32-bit words)",
                        (*n as u128 * *elem_bytes as u128).div_ceil(4)
                    ),
                    None => "more elements than a usize counts".into(),
                };
                write!(
                    f,
                    "size limit: `{tensor}` spans {span}, but stridex kernels address at most {} elements and {} words (32-bit offsets; an axis counts too); split the tensor",
                    u32::MAX,
                    crate::limits::MAX_WORDS
                )
            }
            IndexNotInteger { dtype } => write!(
                f,
                "index type: `indices` has element type {dtype}, but index values must be integers; use i64 or i32 (u32/u64 where the rules allow them)"
            ),
            IndexTypeNotAllowed { rules, form, dtype } => write!(
                f,
                "{}: index type {dtype} is not allowed ({} takes {}); {}",
                rules.form_op_name(*form),
                rules.form_op_name(*form),
                rules.index_types_text(),
                match rules {
                    GatherRules::Onnx => "use i64 or i32, or pick `rules: directml` / `rules: openvino`, which accept unsigned indices",
                    _ => "use i32 or i64 (stridex reads indices of i32, i64, u32 and u64)",
                }
            ),
            DataTypeNotAllowed { rules, dtype } => {
                // The list comes from the predicate the rule applies.
                let allowed: Vec<&str> =
                    DType::ALL.iter().filter(|&&t| rules.allows_data_type(t)).map(|t| t.name()).collect();
                write!(
                    f,
                    "{rules}: data type {dtype} is not in its list ({}); {}, or use a listed type of the same width (the bits move unchanged)",
                    allowed.join(", "),
                    match rules {
                        RuleSet::Slice(_) => "slice with `rules: onnx` (starts/ends/steps), which takes every type",
                        _ => "use `rules: openvino`, which takes every type and unsigned indices",
                    }
                )
            }
            KeyOfOtherForm { window, form } => {
                let key = window.key();
                match form {
                    SliceForm::DirectMl => write!(
                        f,
                        "DirectML SLICE1: `{key}` belongs to ONNX Slice, and a SLICE1 window would ignore it; write `rules: onnx` to slice with starts/ends/axes/steps, or give the window as offsets/sizes/strides"
                    ),
                    SliceForm::Onnx => write!(
                        f,
                        "ONNX Slice: `{key}` belongs to DirectML SLICE1 windows, and ONNX Slice would ignore it; with `rules: onnx` write starts/ends/axes/steps"
                    ),
                }
            }
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
            ElementsKey { rules, key } => write!(
                f,
                "{}: `{key}` belongs to the Gather operator, not GatherElements (whose indices have the data's rank and name one element each); remove it",
                rules.elements_op_name()
            ),
            NdKey { rules, key } => write!(
                f,
                "{}: `{key}` belongs to the Gather operator, not GatherND (whose indices' last dimension names the data's axes: tuples of coordinates after `batch_dims`); remove it",
                rules.nd_op_name()
            ),
            NdIndexType { dtype } => write!(
                f,
                "ONNX GatherND-13: index type {dtype} is not allowed (GatherND-13 takes int64 alone); use i64, or `rules: openvino` or `rules: directml`, which take i32 too"
            ),
            NdBatchDims { rules, batch_dims, data_rank, indices_rank } => write!(
                f,
                "{}: batch_dims {batch_dims} is out of range: it must be in 0..{} (0 up to, not including, the smaller of the data's rank {data_rank} and the indices' rank {indices_rank}); use a value in that range",
                rules.nd_op_name(),
                data_rank.min(indices_rank)
            ),
            NdDepth { rules, depth: None, .. } => write!(
                f,
                "{}: the indices are a scalar, but their last dimension holds the coordinate tuples; give them at least one dimension (e.g. `[1]` for one tuple of one coordinate)",
                rules.nd_op_name()
            ),
            NdDepth { rules, depth: Some(k), data_rank, batch_dims, .. } => write!(
                f,
                "{}: the indices' last size is {k}, the coordinates in each tuple, but it must be in 1..={} (the data's rank {data_rank} minus batch_dims {batch_dims}); make it {}",
                rules.nd_op_name(),
                data_rank - batch_dims,
                if *k == 0 { "at least 1".to_string() } else { format!("at most {}", data_rank - batch_dims) }
            ),
            ElementsRank { rules, data_rank, indices_rank } => write!(
                f,
                "{}: indices of rank {indices_rank} for data of rank {data_rank}; the indices have the data's rank (one index per output element, along the axis): give them {data_rank} dimensions",
                rules.elements_op_name()
            ),
            ElementsShape { rules, dim, data, indices } => {
                let (relation, fix) = match rules {
                    GatherRules::Onnx => ("at most", format!("at most {data}")),
                    _ => ("equal to", format!("{data}")),
                };
                write!(
                    f,
                    "{}: indices dimension {dim} has size {indices}, but every dimension other than the axis must be {relation} the data's ({data}): make it {fix}, or gather along dimension {dim}",
                    rules.elements_op_name()
                )
            }
            BatchDimMismatch { op, dim, data, indices } => write!(
                f,
                "{op}: batch dimension {dim} differs: data has {data}, indices have {indices}; the first batch_dims sizes of data and indices must be equal"
            ),
            DimensionCount { tensor, sizes, expected } => write!(
                f,
                "DirectML GATHER: `{tensor}` has DimensionCount {}, but input, indices and output must all have {expected}; {}",
                sizes.len(),
                dimension_count_hint(sizes, *expected)
            ),
            IndexDimsOutOfRange { index_dims, dimension_count } => write!(
                f,
                "DirectML GATHER: index_dims {index_dims} is more than the indices' DimensionCount {dimension_count}; use at most {dimension_count}"
            ),
            IndexPadding { dim, size, index_dims } => write!(
                f,
                "DirectML GATHER: indices dimension {dim} has size {size}, but with index_dims {index_dims} the leading dimensions are padding and must be 1; raise index_dims to include it"
            ),
            OutputDoesNotFit { formula, meaningful, original_rank, index_dims, dimension_count, suggest_index_dims, index_dims_given } => write!(
                f,
                "DirectML GATHER: with index_dims {index_dims}{} the output (sizes {}) has {meaningful} meaningful dimensions (original input rank {original_rank} + index_dims {index_dims} - 1 = {}), more than DimensionCount {dimension_count}{}",
                if *index_dims_given { String::new() } else { " (the default: every indices dimension)".into() },
                list(formula),
                original_rank + index_dims - 1,
                match suggest_index_dims {
                    Some(k) => format!(
                        "; the extra dimensions are size-1 padding of the indices: write index_dims: {k}, which gives the same values"
                    ),
                    None => "; use fewer index dimensions or gather along another axis".to_string(),
                }
            ),
            SkipOnGather => write!(
                f,
                "out_of_range: `skip` drops a scatter's update, and a gather has none to drop; use `error`, `zero` or `clamp`"
            ),
            ScatterRules { form, rules } => write!(
                f,
                "{}: rules `{rules}` have no such scatter ({} follows OpenVINO ScatterUpdate-3); write `rules: openvino`, or use scatter_elements! or scatter_nd!, which ONNX, OpenVINO and DirectML all have",
                form.scatter_macro_name(),
                form.scatter_macro_name()
            ),
            ScatterKey { op, key } => write!(
                f,
                "{op}: `{key}` belongs to the gathers, not to a scatter (whose result has the data's shape and layout); remove it"
            ),
            InScatter { op, rule } => write!(f, "{op} (its indices follow the matching gather's rules): {rule}"),
            UpdatesDType { data, updates } => write!(
                f,
                "updates type: the data is {data} but the updates are {updates}; a scatter writes updates into the data, so give them the data's type ({data})"
            ),
            UpdatesShape { op, declared, expected } => write!(
                f,
                "{op}: `updates` has sizes {}, but the data and indices give {} (the shape the matching gather would read); give `updates` the sizes {}",
                list(declared),
                list(expected),
                list(expected)
            ),
            ReductionNotAllowed { op, reduction: Reduction::Sub } => write!(
                f,
                "{op} has no `reduction: sub`: OpenVINO ScatterNDUpdate-15 alone subtracts; use `scatter_nd!` with `rules: openvino`, or `reduction: add` of negated updates"
            ),
            ReductionNotAllowed { op, reduction: Reduction::Mean } => write!(
                f,
                "{op} has no `reduction: mean`: OpenVINO ScatterElementsUpdate-12 alone averages; use `scatter_elements!` with `rules: openvino`, or `reduction: add` and divide by the counts"
            ),
            ReductionNotAllowed { op, reduction } => write!(
                f,
                "{op} takes no reduction, so `reduction: {reduction}` is not allowed; write `reduction: none` (or leave it out), or use `rules: onnx` or `rules: openvino`, whose scatters add, multiply and take the max or min"
            ),
            ReductionType { reduction, dtype: DType::Bool } => write!(
                f,
                "`reduction: {reduction}` on bool elements: OpenVINO gives {} no boolean meaning; use a numeric type, or `reduction: add` (or) or `mul` (and)",
                if *reduction == Reduction::Mean { "a mean (ScatterElementsUpdate-12)" } else { "subtraction (ScatterNDUpdate-15)" }
            ),
            ReductionType { reduction, dtype } => write!(
                f,
                "`reduction: {reduction}` on {dtype} elements: stridex's scatter kernels compute in 32-bit words and have no 64-bit arithmetic (WGSL has none); use `reduction: none`, or a 32-bit type"
            ),
            DuplicatesWithReduction { reduction } => write!(
                f,
                "`duplicates: error` refuses two updates to one element, but `reduction: {reduction}` combines them; remove `duplicates`, or write `reduction: none`"
            ),
            UseInitValNotAllowed { op } => write!(
                f,
                "{op} has no `use_init_val`: OpenVINO ScatterElementsUpdate-12 alone can leave the data out of its reductions; remove it, or use `scatter_elements!` with `rules: openvino`"
            ),
            ScatterOverlap { overlap: Overlap::Collision { a, b, offset }, strides } => write!(
                f,
                "scatter data layout: strides {} map coordinates {} and {} to the same element offset {offset}, and a scatter writes its data in place; use strides that give every element its own offset (the packed default does)",
                list(strides),
                list(a),
                list(b)
            ),
            ScatterOverlap { overlap: Overlap::Unproven, strides } => write!(
                f,
                "scatter data layout: strides {} interleave dimensions, so stridex cannot show that every element has its own offset, and a scatter writes its data in place; order the strides so that each is at least the span of the smaller ones",
                list(strides)
            ),
            ScatterLanes { dtype, why } => write!(
                f,
                "{dtype} scatter: {why}, so two invocations would write halves of one 32-bit word; stridex scatters 8- and 16-bit elements in whole words: make the data's and the updates' innermost dimension (after the indexed axes) packed, with a size a multiple of {}, or use a 32-bit type",
                4 / dtype.size()
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
            ChainLength { stages, max } => write!(
                f,
                "chain: {stages} stage(s), but a chain has 1 to {max}; {}",
                if *stages == 0 { "add a `gather { .. }` or `slice { .. }` after `data`" } else { "split it into two chains" }
            ),
            ChainGathers { gathers, max } => write!(
                f,
                "chain: {gathers} gathers, but one fused kernel reads at most {max} index tensors; split the chain after its {max}th gather"
            ),
            FeatureLevel { op, level, unsupported, lowest } => {
                use crate::feature_level::{describe, Unsupported};
                let what = match unsupported {
                    Unsupported::Operator => format!("the operator does not exist yet ({})", describe(*op, *level)),
                    Unsupported::DataType(t) => format!("data type {t} is not supported"),
                    Unsupported::IndexType(t) => format!("index type {t} is not supported"),
                    Unsupported::DimensionCount(n) => format!("DimensionCount {n} is not supported"),
                };
                if *unsupported == Unsupported::Operator {
                    write!(f, "{} at feature level {level}: {what}; ", op.rule_set())?;
                } else {
                    write!(f, "{} at feature level {level}: {what} ({level} takes {}); ", op.rule_set(), describe(*op, *level))?;
                }
                match lowest {
                    Some(l) if *l == crate::FeatureLevel::HIGHEST => write!(
                        f,
                        "only {l} takes this descriptor: write `feature_level: {l}`, or leave it out (the highest level)"
                    ),
                    Some(l) => write!(
                        f,
                        "the lowest level that takes this descriptor is {l}: write `feature_level: {l}` or higher"
                    ),
                    None => write!(f, "no feature level takes it"),
                }
            }
            FeatureLevelOutsideDirectMl { rules } => write!(
                f,
                "{rules}: `feature_level` is DirectML's (DML_FEATURE_LEVEL_*); write `rules: directml` or remove it"
            ),
            RangeCount { ranges, rank } => write!(
                f,
                "slice: s[..] has {ranges} ranges, but the input has {rank} dimension(s); give at most {rank} (dimensions after the last range are taken whole)"
            ),
            Range { dim, fault } => {
                use super::RangeFault;
                write!(f, "slice: s[..] range {dim}: ")?;
                match *fault {
                    RangeFault::BoundOutside { bound, size } => write!(
                        f,
                        "bound {bound} is outside a dimension of size {size}; bounds lie in [-{size}, {size}] (negative counts from the end)"
                    ),
                    RangeFault::Empty { start, end } => write!(
                        f,
                        "it selects nothing (from {start} to {end}, once normalized); a slice copies at least one element per dimension"
                    ),
                    RangeFault::StepZero => write!(
                        f,
                        "step 0; steps are non-zero (`;2` takes every other element, `;-1` walks the range backwards)"
                    ),
                    RangeFault::SingleIndex { index } => write!(
                        f,
                        "a single index `{index}` drops the dimension in ndarray, but a slice keeps its rank; write `{index}..{}`",
                        match index.checked_add(1) {
                            Some(0) | None => String::new(),
                            Some(end) => end.to_string(),
                        }
                    ),
                }
            }
            RangesWith { other } => write!(
                f,
                "slice: s[..] ranges give the window, and so does `{other}`; {}",
                if *other == "rules: onnx" {
                    "ranges lower to a DirectML SLICE1 window: remove `rules: onnx`, or write ONNX's starts/ends/axes/steps instead of s[..]"
                } else {
                    "keep one of them"
                }
            ),
            StageKey { key: "output" } => write!(
                f,
                "chain: `output` belongs to the chain, not to a stage; write it after the last stage (`output: f32[..]`)"
            ),
            StageKey { key: "feature_level" } => write!(
                f,
                "chain: a stage takes no `feature_level`: a fused chain is one stridex kernel, not a DirectML operator, so DirectML's feature-level tables do not apply; check the stage alone with `gather!`/`slice!` if you need them"
            ),
            StageKey { key: "_" } => write!(
                f,
                "chain: a slice stage's input is the stage before it, so it has no `_` (run-time) leading size of its own; put the chain's count on its data (`Chain::dynamic_leading`) or on a gather's indices"
            ),
            StageKey { key } => write!(
                f,
                "chain: a stage takes no `{key}`: its input is the previous stage's output (the chain's `data` for the first stage); remove `{key}`"
            ),
            Dynamic { fault, .. } => write!(f, "{fault}"),
            ConvertTo { to } => write!(
                f,
                "convert: `to: {to}`, but a convert stage writes f32, f16 or bf16 (computed in f32); write one of those, or end the chain without `convert` to keep {to}"
            ),
            ConvertFrom { from } => write!(
                f,
                "convert: the chain's elements are {from}, and a convert stage reads integers and floats of up to 32 bits (u8, i8, u16, i16, u32, i32, f16, bf16, f32); convert {from} on the host, or end the chain without `convert`"
            ),
            ConvertDim { dim, rank } => write!(
                f,
                "convert: `dim: {dim}` is not a dimension of the shape the stage receives, which has rank {rank}; use a value in {}",
                if *rank == 0 { "none: a scalar has no channel dimension, so give `scale` and `offset` one value each".to_string() } else { format!("[-{rank}, {}]", rank - 1) }
            ),
            ConvertChannels { key, given, dim, size } => write!(
                f,
                "convert: `{}` has {given} value{}, but dimension {dim} (the channels) has size {size}; give {size} values (one per channel) or 1 (the same for every channel)",
                key.key(),
                if *given == 1 { "" } else { "s" }
            ),
            ConvertManyChannels { key, given, max } => write!(
                f,
                "convert: `{}` has {given} values, and a convert stage takes at most {max} channels (its values are constants of the kernel); give one value for every channel, or convert in two chains over fewer channels",
                key.key()
            ),
            ConvertValue { key, index, bits } => write!(
                f,
                "convert: `{}[{index}]` is {}, not a finite f32; every scale and offset must be finite (a value past f32's range rounds to infinity)",
                key.key(),
                f32::from_bits(*bits)
            ),
            ConvertWords { to, strides } => write!(
                f,
                "convert: a {to} result is written two elements to a 32-bit word, and the output's strides {} leave no rows of whole words (the innermost dimension contiguous, and a run of packed innermost dimensions of even length with every other stride even); pad the innermost dimension to an even size, or convert to f32",
                list(strides)
            ),
            ConvertOutput { to, output } => write!(
                f,
                "convert: the result is {to} (`to: {to}`), and `output` declares {output}; write `output: {to}[..]`, or leave the type out"
            ),
            ScatterNotLast { stage, stages } => write!(
                f,
                "chain: stage {stage} of {stages} is a scatter, and a scatter stage is the chain's last (it writes into its `into` tensor, which no stage reads); move it to the end"
            ),
            ScatterStageUpdates { op, received, expected } => write!(
                f,
                "{op}: the stage receives its updates as {}, but `into` and `indices` call for {} (the shape the matching gather would read); make the stages before it give {}, or change `into` or `indices`",
                list(received),
                list(expected),
                list(expected)
            ),
            ScatterIntoType { into, updates } => write!(
                f,
                "its updates are the chain's {updates} elements, but `into` is {into}; a scatter writes its updates into `into`, so declare `into: {updates}[..]`"
            ),
            ScatterChainOutput => write!(
                f,
                "chain: `output` is declared, but a chain that ends in a scatter writes into the scatter's `into` tensor, in its layout; remove `output`"
            ),
            ConvertNotLast { stage, stages } => write!(
                f,
                "chain: stage {stage} of {stages} is `convert`, and a convert stage is the chain's last (it changes the element type the other stages move); move it to the end"
            ),
            Stage { stage, kind, input, error } => {
                // A chain's `_` count is shown as written.
                let shown: Vec<String> = input
                    .iter()
                    .map(|&n| if n == crate::limits::COUNT_SHOWN { "_".into() } else { n.to_string() })
                    .collect();
                write!(f, "stage {stage} ({kind}), on its input of shape {}: {error}", list(&shown))
            }
        }
    }
}

/// The shape to write instead: padded with leading 1s, or with leading 1s dropped.
fn dimension_count_hint(sizes: &[usize], expected: usize) -> String {
    let count = sizes.len();
    if count < expected {
        let mut padded = vec![1; expected - count];
        padded.extend_from_slice(sizes);
        format!("pad it with leading 1s: {}", list(&padded))
    } else {
        let extra = count - expected;
        if sizes[..extra].iter().all(|&n| n == 1) {
            format!("drop its leading 1s: {}", list(&sizes[extra..]))
        } else {
            format!("it has {extra} more dimension(s) than {expected}, and they are not 1s; merge dimensions or give the other tensors {count}")
        }
    }
}
