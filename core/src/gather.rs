//! Gather under the three rule sets (docs/rules.md: ONNX Gather-13, OpenVINO Gather-8, DirectML GATHER), reduced to one form: ONNX Gather with
//! OpenVINO's batch dimensions and DirectML's index-dimension trimming.

use crate::dims::Dims;
use crate::dtype::IndexType;
use crate::error::{Operand, RuleError};
use crate::feature_level::{self, DmlOperator, FeatureLevel};
use crate::layout::TensorLayout;
use crate::rules::{GatherForm, GatherRules, OutOfRange, RuleSet};
use crate::tensor::{
    check_addressable, check_output_decl, check_output_layout, check_rank, layout, OutputDecl, TensorDecl,
};

/// A gather as a descriptor states it, before any rule is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GatherDesc {
    /// Gather, GatherElements or GatherND.
    pub form: GatherForm,
    pub rules: GatherRules,
    pub data: TensorDecl,
    pub indices: TensorDecl,
    /// Not read by GatherND, whose indices name the axes.
    pub axis: i64,
    /// OpenVINO only; `None` when not given.
    pub batch_dims: Option<i64>,
    /// DirectML `IndexDimensions`; `None` when not given (then: every indices dimension).
    pub index_dims: Option<usize>,
    /// `None`: the rule set's default.
    pub out_of_range: Option<OutOfRange>,
    pub output: Option<OutputDecl>,
    /// DirectML only: the feature level of the devices targeted (`None`: the highest, 4_1).
    pub feature_level: Option<FeatureLevel>,
    /// The indices' leading size is `_`: known at run time, from the indices' length
    /// (`indices.sizes[0]` is then not read). See [`crate::dynamic`].
    pub dynamic_leading: bool,
}

impl GatherDesc {
    /// A gather with its required keys and every optional one unset, as a macro leaves a key
    /// not written: set the others on the result.
    pub const fn new(rules: GatherRules, data: TensorDecl, indices: TensorDecl, axis: i64) -> GatherDesc {
        GatherDesc {
            form: GatherForm::Axis,
            rules,
            data,
            indices,
            axis,
            batch_dims: None,
            index_dims: None,
            out_of_range: None,
            output: None,
            feature_level: None,
            dynamic_leading: false,
        }
    }
}

/// One output dimension of a validated gather, with the strides that move along it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GatherDim {
    pub size: usize,
    /// Element stride in the output.
    pub output_stride: usize,
    /// Element stride in the data (0 for a dimension that comes from the indices).
    pub data_stride: usize,
    /// Element stride in the indices (0 for a dimension that comes from the data; both are set
    /// for an OpenVINO batch dimension).
    pub index_stride: usize,
    /// Which output dimension this is.
    pub output_dim: usize,
    /// The data dimension it walks (`None` for a dimension that comes from the indices alone).
    pub data_dim: Option<usize>,
}

/// A data axis an output element's index names: the gather's axis, or one component of a
/// GatherND tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndexAxis {
    /// The data dimension.
    pub dim: usize,
    pub size: usize,
    /// Its data stride (0 when the axis has at most one element: only index 0 is read).
    pub stride: usize,
    /// Indices elements past the element's index position (the component's place in its tuple).
    pub offset: usize,
}

/// A gather that satisfies every rule, normalized.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GatherPlan {
    pub form: GatherForm,
    pub rules: GatherRules,
    pub index_type: IndexType,
    pub data_type: crate::DType,
    pub data: TensorLayout,
    /// The indices tensor as declared (DirectML: with its padding dimensions).
    pub indices: TensorLayout,
    /// The output as declared or inferred (DirectML: right-aligned into DimensionCount).
    pub output: TensorLayout,
    /// The gathered data axis (GatherND: the first of its `components` axes).
    pub axis: usize,
    pub batch_dims: usize,
    pub out_of_range: OutOfRange,
    /// Output dimensions in the formula's order, size-1 dimensions left out.
    pub dims: Vec<GatherDim>,
    /// Indices per output element: 1, or GatherND's tuple length (the indices' last size),
    /// naming data axes `axis..axis + components`.
    pub components: usize,
    /// Indices elements from one component of a GatherND tuple to the next.
    pub component_stride: usize,
    /// The indices' (and so the output's) leading size is a run-time count; this plan is for
    /// [`crate::dynamic::PLACEHOLDER`] (or, at run time, the count).
    pub dynamic_leading: bool,
}

impl GatherPlan {
    /// The data axes each output element's indices name, in tuple order.
    pub fn index_axes(&self) -> impl Iterator<Item = IndexAxis> + '_ {
        (0..self.components).map(|j| {
            let dim = self.axis + j;
            let size = self.data.sizes[dim];
            IndexAxis {
                dim,
                size,
                // With one element (or none) only index 0 is ever read: its stride plays no
                // part, and the size rules do not bound the stride of a size-1 dimension.
                stride: if size > 1 { self.data.strides[dim] } else { 0 },
                offset: j * self.component_stride,
            }
        })
    }

    /// The axis the index at `position` of the indices names (GatherND: by its place in the
    /// tuple, the last coordinate).
    pub fn axis_of(&self, position: &[usize]) -> IndexAxis {
        let j = match self.form {
            GatherForm::Nd => position.last().copied().unwrap_or(0),
            _ => 0,
        };
        self.index_axes().nth(j).expect("a component of the tuple")
    }
}

impl GatherDesc {
    /// Applies every rule of the chosen rule set to the sizes as written (a `_` size is the
    /// placeholder count here: [`GatherDesc::plan`], in [`crate::dynamic`], adds its rules).
    pub(crate) fn plan_sizes(&self) -> Result<GatherPlan, RuleError> {
        self.plan_sizes_with(false)
    }

    /// [`GatherDesc::plan_sizes`]; `smaller_elements`: GatherElements' indices may be smaller
    /// than the data in every dimension but the axis, whatever the rule set (OpenVINO's
    /// ScatterElementsUpdate-12 allows it where its GatherElements-6 does not).
    pub(crate) fn plan_sizes_with(&self, smaller_elements: bool) -> Result<GatherPlan, RuleError> {
        let p = plan(self, smaller_elements)?;
        // After every other rule: a descriptor broken at any level reports that first.
        if let Some(level) = self.feature_level {
            feature_level::check(
                DmlOperator::Gather,
                level,
                self.data.dtype,
                Some(self.indices.dtype),
                p.data.rank(),
            )?;
        }
        Ok(p)
    }
}

fn plan(desc: &GatherDesc, smaller_elements: bool) -> Result<GatherPlan, RuleError> {
    let rules = desc.rules;
    if desc.out_of_range == Some(OutOfRange::Skip) {
        return Err(RuleError::SkipOnGather);
    }
    let data = layout(Operand::Data, desc.data.sizes, desc.data.strides)?;
    let indices = layout(Operand::Indices, desc.indices.sizes, desc.indices.strides)?;

    let index_type = match desc.indices.dtype.as_index() {
        _ if !desc.indices.dtype.is_integer() => {
            return Err(RuleError::IndexNotInteger { dtype: desc.indices.dtype })
        }
        // GatherND-13 lists int64 alone.
        Some(t) if desc.form == GatherForm::Nd && rules == GatherRules::Onnx && t != IndexType::I64 => {
            return Err(RuleError::NdIndexType { dtype: desc.indices.dtype })
        }
        Some(t) if rules.allows_index_type(t) => t,
        _ => {
            return Err(RuleError::IndexTypeNotAllowed { rules, form: desc.form, dtype: desc.indices.dtype })
        }
    };
    if !rules.allows_data_type(desc.data.dtype) {
        return Err(RuleError::DataTypeNotAllowed { rules: RuleSet::Gather(rules), dtype: desc.data.dtype });
    }
    if let Some(out) = &desc.output {
        if let Some(t) = out.dtype.filter(|&t| t != desc.data.dtype) {
            return Err(RuleError::OutputDType { data: desc.data.dtype, output: t });
        }
    }
    if desc.form == GatherForm::Elements {
        let given = [
            ("batch_dims", desc.batch_dims.is_some()),
            ("index_dims", desc.index_dims.is_some()),
            ("feature_level", desc.feature_level.is_some()),
        ];
        if let Some((key, _)) = given.into_iter().find(|&(_, given)| given) {
            return Err(RuleError::ElementsKey { rules, key });
        }
    }
    if desc.form == GatherForm::Nd {
        return plan_nd(desc, rules, data, indices, index_type);
    }
    if desc.batch_dims.is_some() && rules != GatherRules::OpenVino {
        return Err(RuleError::KeyNotAllowed { rules, key: "batch_dims" });
    }
    if desc.index_dims.is_some() && rules != GatherRules::DirectMl {
        return Err(RuleError::KeyNotAllowed { rules, key: "index_dims" });
    }
    if desc.feature_level.is_some() && rules != GatherRules::DirectMl {
        return Err(RuleError::FeatureLevelOutsideDirectMl { rules: RuleSet::Gather(rules) });
    }

    let r = data.rank();
    check_rank(Operand::Data, r, 1, RuleSet::Gather(rules))?;
    let (lo, hi) = rules.axis_range(r);
    if desc.axis < lo || desc.axis > hi {
        return Err(RuleError::AxisOutOfRange { rules, axis: desc.axis, rank: r });
    }
    let axis = if desc.axis < 0 { (desc.axis + r as i64) as usize } else { desc.axis as usize };

    // The indices that take part in the formula, and where the output's dims come from.
    let (index_view, batch_dims, formula) = match rules {
        _ if desc.form == GatherForm::Elements => {
            (indices, 0, elements_shape(rules, &data, &indices, axis, smaller_elements)?)
        }
        GatherRules::Onnx => {
            let f = formula(&data, &indices, axis, 0);
            (indices, 0, f)
        }
        GatherRules::OpenVino => {
            let b = openvino_batch_dims(desc, &data, &indices, axis)?;
            (indices, b, formula(&data, &indices, axis, b))
        }
        GatherRules::DirectMl => directml_view(desc, &data, &indices, axis)?,
    };
    let inferred_sizes: Vec<usize> = match rules {
        GatherRules::DirectMl if desc.form == GatherForm::Axis => right_align(&formula, r),
        _ => formula.clone(),
    };
    if inferred_sizes.len() > crate::MAX_RANK {
        return Err(RuleError::OutputRank {
            rank: inferred_sizes.len(),
            indices_rank: indices.rank(),
            data_rank: r,
        });
    }
    let inferred = Dims::new(&inferred_sizes).expect("rank checked");
    let output = output_layout(desc, &data, &indices, index_type, inferred, axis..axis + 1)?;

    let dims = match desc.form {
        GatherForm::Elements => elements_dims(&data, &indices, &output, axis),
        _ => gather_dims(&data, &index_view, &output, axis, batch_dims, formula.len()),
    };
    Ok(GatherPlan {
        form: desc.form,
        rules,
        index_type,
        data_type: desc.data.dtype,
        data,
        indices,
        output,
        axis,
        batch_dims,
        out_of_range: desc.out_of_range.unwrap_or(rules.default_out_of_range()),
        dims,
        components: 1,
        component_stride: 0,
        dynamic_leading: false,
    })
}

/// The output as declared (checked against the inferred shape) or packed, with the size rules
/// every gather's tensors obey; `axes` are the data axes indices name.
fn output_layout(
    desc: &GatherDesc,
    data: &TensorLayout,
    indices: &TensorLayout,
    index_type: IndexType,
    inferred: Dims,
    axes: std::ops::Range<usize>,
) -> Result<TensorLayout, RuleError> {
    let output = match &desc.output {
        Some(decl) => {
            check_output_decl(desc.data.dtype, decl, inferred)?;
            layout(Operand::Output, decl.sizes, decl.strides)?
        }
        None => TensorLayout::packed(inferred),
    };
    let elem = desc.data.dtype.size();
    check_addressable(Operand::Data, data, elem)?;
    check_addressable(Operand::Indices, indices, index_type.words() * 4)?;
    check_addressable(Operand::Output, &output, elem)?;
    // Kernels compare indices with the axis extent in 32 bits; a broadcast axis (stride 0) can
    // be longer than its buffer.
    if let Some(&size) = data.sizes[axes].iter().find(|&&n| n > u32::MAX as usize) {
        return Err(RuleError::TooLarge { tensor: Operand::Data, elements: Some(size), elem_bytes: elem });
    }
    // After the size check, so the overlap search works on bounded numbers.
    check_output_layout(&output)?;
    Ok(output)
}

/// GatherND (ONNX GatherND-13, OpenVINO GatherND-8, DirectML GATHER_ND1): the indices' last
/// dimension holds tuples of `k` coordinates into data dimensions `b..b+k` (after the `b` batch
/// dimensions, which data and indices share); the output is `indices.shape[:-1] +
/// data.shape[b+k:]`. DirectML pads every tensor to one DimensionCount and states the
/// meaningful ranks in InputDimensionCount and IndicesDimensionCount: stridex takes the
/// meaningful shapes, unpadded.
fn plan_nd(
    desc: &GatherDesc,
    rules: GatherRules,
    data: TensorLayout,
    indices: TensorLayout,
    index_type: IndexType,
) -> Result<GatherPlan, RuleError> {
    let given = [("index_dims", desc.index_dims.is_some()), ("feature_level", desc.feature_level.is_some())];
    if let Some((key, _)) = given.into_iter().find(|&(_, given)| given) {
        return Err(RuleError::NdKey { rules, key });
    }
    let (r, q) = (data.rank(), indices.rank());
    check_rank(Operand::Data, r, 1, RuleSet::Gather(rules))?;
    let Some(&k) = indices.sizes.last() else {
        return Err(RuleError::NdDepth { rules, depth: None, data_rank: r, indices_rank: 0, batch_dims: 0 });
    };
    let raw = desc.batch_dims.unwrap_or(0);
    if raw < 0 || raw >= r.min(q) as i64 {
        return Err(RuleError::NdBatchDims { rules, batch_dims: raw, data_rank: r, indices_rank: q });
    }
    let b = raw as usize;
    if let Some(dim) = (0..b).find(|&i| data.sizes[i] != indices.sizes[i]) {
        return Err(RuleError::BatchDimMismatch {
            op: rules.nd_op_name(),
            dim,
            data: data.sizes[dim],
            indices: indices.sizes[dim],
        });
    }
    if k == 0 || k > r - b {
        return Err(RuleError::NdDepth {
            rules,
            depth: Some(k),
            data_rank: r,
            indices_rank: q,
            batch_dims: b,
        });
    }
    let mut formula = indices.sizes[..q - 1].to_vec();
    formula.extend_from_slice(&data.sizes[b + k..]);
    if formula.len() > crate::MAX_RANK {
        return Err(RuleError::OutputRank { rank: formula.len(), indices_rank: q, data_rank: r });
    }
    let inferred = Dims::new(&formula).expect("rank checked");
    let output = output_layout(desc, &data, &indices, index_type, inferred, b..b + k)?;
    let mut dims = Vec::new();
    for (o, &size) in formula.iter().enumerate() {
        if size == 1 {
            continue;
        }
        // The tuples' dimensions walk the indices (and, batch dimensions, the data too); the
        // rest walk the data after the named axes.
        let (data_dim, index_stride) = match o {
            _ if o < b => (Some(o), indices.strides[o]),
            _ if o < q - 1 => (None, indices.strides[o]),
            _ => (Some(o - (q - 1) + b + k), 0),
        };
        dims.push(GatherDim {
            size,
            output_stride: output.strides[o],
            data_stride: data_dim.map_or(0, |i| data.strides[i]),
            index_stride,
            output_dim: o,
            data_dim,
        });
    }
    Ok(GatherPlan {
        form: GatherForm::Nd,
        rules,
        index_type,
        data_type: desc.data.dtype,
        data,
        indices,
        output,
        axis: b,
        batch_dims: b,
        out_of_range: desc.out_of_range.unwrap_or(rules.default_out_of_range()),
        dims,
        components: k,
        component_stride: indices.strides[q - 1],
        dynamic_leading: false,
    })
}

/// GatherElements' output shape, the indices': they have the data's rank, and along every
/// dimension but the axis at most the data's size (ONNX GatherElements-13 states only the rank;
/// an index dimension larger than the data's would read past it) or exactly it (OpenVINO
/// GatherElements-6; DirectML GATHER_ELEMENTS, our reading where its page is silent).
fn elements_shape(
    rules: GatherRules,
    data: &TensorLayout,
    indices: &TensorLayout,
    axis: usize,
    smaller: bool,
) -> Result<Vec<usize>, RuleError> {
    if indices.rank() != data.rank() {
        return Err(RuleError::ElementsRank { rules, data_rank: data.rank(), indices_rank: indices.rank() });
    }
    let fits = |d: usize, i: usize| if rules == GatherRules::Onnx || smaller { i <= d } else { i == d };
    let broken = (0..data.rank()).find(|&k| k != axis && !fits(data.sizes[k], indices.sizes[k]));
    if let Some(dim) = broken {
        return Err(RuleError::ElementsShape {
            rules,
            dim,
            data: data.sizes[dim],
            indices: indices.sizes[dim],
        });
    }
    Ok(indices.sizes.to_vec())
}

/// GatherElements' output dimensions: each walks the indices, and the data too but along the
/// axis (whose coordinate the index gives).
fn elements_dims(
    data: &TensorLayout,
    indices: &TensorLayout,
    output: &TensorLayout,
    axis: usize,
) -> Vec<GatherDim> {
    (0..indices.rank())
        .filter(|&k| indices.sizes[k] != 1)
        .map(|k| GatherDim {
            size: indices.sizes[k],
            output_stride: output.strides[k],
            data_stride: if k == axis { 0 } else { data.strides[k] },
            index_stride: indices.strides[k],
            output_dim: k,
            data_dim: (k != axis).then_some(k),
        })
        .collect()
}

/// `data.shape[:axis] + indices.shape[b:] + data.shape[axis+1:]`.
fn formula(data: &TensorLayout, indices: &TensorLayout, axis: usize, b: usize) -> Vec<usize> {
    let mut f = data.sizes[..axis].to_vec();
    f.extend_from_slice(&indices.sizes[b..]);
    f.extend_from_slice(&data.sizes[axis + 1..]);
    f
}

fn openvino_batch_dims(
    desc: &GatherDesc,
    data: &TensorLayout,
    indices: &TensorLayout,
    axis: usize,
) -> Result<usize, RuleError> {
    let raw = desc.batch_dims.unwrap_or(0);
    let limit = data.rank().min(indices.rank());
    if raw < -(limit as i64) || raw > limit as i64 {
        return Err(RuleError::BatchDimsOutOfRange { batch_dims: raw, limit });
    }
    // Seed 002: a negative value normalizes to indices.rank + batch_dims.
    let b = if raw < 0 { (indices.rank() as i64 + raw) as usize } else { raw as usize };
    if b > axis {
        return Err(RuleError::BatchDimsAfterAxis { batch_dims: b, axis });
    }
    if let Some(dim) = (0..b).find(|&i| data.sizes[i] != indices.sizes[i]) {
        return Err(RuleError::BatchDimMismatch {
            op: GatherRules::OpenVino.op_name(),
            dim,
            data: data.sizes[dim],
            indices: indices.sizes[dim],
        });
    }
    Ok(b)
}

/// DirectML: every tensor has DimensionCount dims; only the last IndexDimensions of the indices
/// take part, and the leading ones must be 1 (our reading where the seed is silent).
fn directml_view(
    desc: &GatherDesc,
    data: &TensorLayout,
    indices: &TensorLayout,
    axis: usize,
) -> Result<(TensorLayout, usize, Vec<usize>), RuleError> {
    let d = data.rank();
    if indices.rank() != d {
        return Err(RuleError::DimensionCount {
            tensor: Operand::Indices,
            sizes: indices.sizes.to_vec(),
            expected: d,
        });
    }
    if let Some(out) = &desc.output {
        if out.sizes.len() != d {
            return Err(RuleError::DimensionCount {
                tensor: Operand::Output,
                sizes: out.sizes.to_vec(),
                expected: d,
            });
        }
    }
    let k = desc.index_dims.unwrap_or(d);
    if k > d {
        return Err(RuleError::IndexDimsOutOfRange { index_dims: k, dimension_count: d });
    }
    if let Some(dim) = (0..d - k).find(|&i| indices.sizes[i] != 1) {
        return Err(RuleError::IndexPadding { dim, size: indices.sizes[dim], index_dims: k });
    }
    let view = trailing(indices, k);
    let f = formula(data, &view, axis, 0);
    if !directml_fits(data, &f, k) {
        // Lowering index_dims over leading size-1 index dimensions keeps the values.
        let suggest = (0..k)
            .rev()
            .take_while(|&j| indices.sizes[d - k + (k - 1 - j)] == 1)
            .find(|&j| directml_fits(data, &formula(data, &trailing(indices, j), axis, 0), j));
        let original_rank = trim_leading_ones(&data.sizes).len();
        return Err(RuleError::OutputDoesNotFit {
            meaningful: (original_rank + k - 1).max(trim_leading_ones(&f).len()),
            formula: f,
            original_rank,
            index_dims: k,
            dimension_count: d,
            suggest_index_dims: suggest,
            index_dims_given: desc.index_dims.is_some(),
        });
    }
    Ok((view, 0, f))
}

/// The last `k` dimensions of `t`.
fn trailing(t: &TensorLayout, k: usize) -> TensorLayout {
    let d = t.rank();
    TensorLayout {
        sizes: Dims::new(&t.sizes[d - k..]).expect("<= 8"),
        strides: Dims::new(&t.strides[d - k..]).expect("<= 8"),
    }
}

/// Seed 000: the meaningful output rank, original input rank + IndexDimensions - 1 (original:
/// before padding with leading 1s), must be <= DimensionCount; and the formula must
/// right-align into DimensionCount by trimming leading 1s.
fn directml_fits(data: &TensorLayout, f: &[usize], k: usize) -> bool {
    let d = data.rank();
    let original_rank = trim_leading_ones(&data.sizes).len();
    original_rank + k <= d + 1 && trim_leading_ones(f).len() <= d
}

/// Pads with or trims leading 1s to exactly `n` dimensions (the caller checked that it fits).
fn right_align(f: &[usize], n: usize) -> Vec<usize> {
    let t = trim_leading_ones(f);
    let mut v = vec![1; n.saturating_sub(t.len())];
    v.extend_from_slice(&t[t.len().saturating_sub(n)..]);
    v
}

/// The formula's output dimensions with their strides in output, data and indices. The output
/// layout is right-aligned against the formula (they differ only in leading 1s).
fn gather_dims(
    data: &TensorLayout,
    index_view: &TensorLayout,
    output: &TensorLayout,
    axis: usize,
    b: usize,
    formula_len: usize,
) -> Vec<GatherDim> {
    let m = index_view.rank();
    let out_rank = output.rank();
    let mut dims = Vec::new();
    for k in 0..formula_len {
        let (size, data_stride, index_stride, data_dim) = if k < b {
            (data.sizes[k], data.strides[k], index_view.strides[k], Some(k))
        } else if k < axis {
            (data.sizes[k], data.strides[k], 0, Some(k))
        } else if k < axis + m - b {
            let j = b + k - axis;
            (index_view.sizes[j], 0, index_view.strides[j], None)
        } else {
            let j = k - (m - b) + 1;
            (data.sizes[j], data.strides[j], 0, Some(j))
        };
        if size == 1 {
            continue;
        }
        // Right alignment: formula dim k is output dim k + out_rank - formula_len.
        let o = (k + out_rank).checked_sub(formula_len).expect("non-1 dims align");
        dims.push(GatherDim {
            size,
            output_stride: output.strides[o],
            data_stride,
            index_stride,
            output_dim: o,
            data_dim,
        });
    }
    dims
}

/// `xs` without its leading 1s (DirectML pads shapes with leading 1s).
pub(crate) fn trim_leading_ones(xs: &[usize]) -> &[usize] {
    let k = xs.iter().take_while(|&&n| n == 1).count();
    &xs[k..]
}
