//! Backward passes written as ops stridex already has (docs/rules.md, "Gradients"), so a
//! gradient runs the same checked kernels as the forward pass and is as deterministic:
//!
//! - a gather's gradient for its data is the scatter-add of the output's gradient into zeros
//!   through the same map ([`gather_data_gradient`]): where the gather read an element, the
//!   scatter adds to it, duplicates summed in the indices' row-major order (with batch
//!   dimensions, a ScatterND-add of tuples that spell the batch out:
//!   [`batched_gather_gradient`]);
//! - a slice's gradient for its input is the output's gradient moved back through the window
//!   ([`slice_input_gradient`]): one gather per dimension the window changes, each input
//!   position reading the output position it was copied to, or zero where none was.
//!
//! Indices get no gradient.

use crate::dims::size_product;
use crate::dtype::DType;
use crate::gather::{GatherDesc, GatherPlan};
use crate::rules::{GatherRules, OutOfRange, Reduction};
use crate::scatter::{ScatterDesc, ScatterPlan};
use crate::slice::SlicePlan;
use crate::tensor::TensorDecl;
use crate::{error::RuleError, Dims};

/// The scatter-add that gives the gradient of `plan`'s data from its output's gradient: the
/// same form, data and indices sizes (packed), axis and out-of-range policy (`zero`: a
/// gradient that read zero goes nowhere; `clamp`: it goes to the element clamped to), with
/// updates shaped as the output. `index_type` is the indices' element type.
///
/// Gathers whose map no scatter takes have no such scatter: `batch_dims` above 0 (see
/// [`batched_gather_gradient`] for those along an axis), DirectML's
/// `index_dims`, and 64-bit data (no scatter reduces 8-byte elements). The error is the first
/// rule the scatter breaks. Of the rule sets whose scatter takes `add`, OpenVINO's is tried
/// first (it has all three forms and every index type), then ONNX's (GatherElements' indices
/// may be smaller than the data there).
pub fn gather_data_gradient(
    plan: &GatherPlan,
    index_type: DType,
) -> Result<(ScatterDesc, ScatterPlan), RuleError> {
    let packed = |dtype, sizes: Dims| TensorDecl { dtype, sizes, strides: None };
    let mut first_error = None;
    for rules in [GatherRules::OpenVino, GatherRules::Onnx] {
        let mut map = GatherDesc::new(
            rules,
            packed(plan.data_type, plan.data.sizes),
            packed(index_type, plan.indices.sizes),
            plan.axis as i64,
        );
        map.form = plan.form;
        // The scatter refuses batch dimensions: a gather that has some has no scatter here.
        map.batch_dims = (plan.batch_dims > 0).then_some(plan.batch_dims as i64);
        map.out_of_range = Some(plan.out_of_range);
        let desc = ScatterDesc {
            map,
            updates: packed(plan.data_type, plan.output.sizes),
            reduction: Some(Reduction::Add),
            duplicates: None,
            use_init_val: None,
        };
        match desc.plan() {
            Ok(scatter) => return Ok((desc, scatter)),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.expect("two rule sets were tried"))
}

/// The scatter-add that gives the gradient of a gather along an axis with batch dimensions
/// (OpenVINO Gather-8, `batch_dims` above 0), which no scatter takes: a ScatterND does the same
/// work with tuples that spell the batch out. Output position `(c_0 .. c_axis-1, i ..)` read
/// data element `(c_0 .. c_axis-1, idx[c_0 .. c_b-1, i ..], ..)`, so each position of the
/// output's first `axis + index rank - batch_dims` dimensions adds its gradient there: one
/// tuple of `axis + 1` i64 values ([`batched_tuples`]), the updates shaped as the output, under
/// the gather's out-of-range policy. `None` for other gathers.
pub fn batched_gather_gradient(plan: &GatherPlan) -> Option<Result<(ScatterDesc, ScatterPlan), RuleError>> {
    if plan.batch_dims == 0 || plan.form != crate::GatherForm::Axis || plan.rules != GatherRules::OpenVino {
        return None;
    }
    let prefix = plan.axis + plan.indices.rank() - plan.batch_dims;
    let mut sizes = plan.output.sizes.as_slice()[..prefix].to_vec();
    sizes.push(plan.axis + 1);
    let packed = |dtype, sizes: Option<Dims>| sizes.map(|sizes| TensorDecl { dtype, sizes, strides: None });
    let (Some(data), Some(indices), Some(updates)) = (
        packed(plan.data_type, Some(plan.data.sizes)),
        packed(DType::I64, Dims::new(&sizes)),
        packed(plan.data_type, Some(plan.output.sizes)),
    ) else {
        return None;
    };
    let mut first_error = None;
    for rules in [GatherRules::OpenVino, GatherRules::Onnx] {
        let mut map = GatherDesc::new(rules, data, indices, 0);
        map.form = crate::GatherForm::Nd;
        map.out_of_range = Some(plan.out_of_range);
        let desc = ScatterDesc {
            map,
            updates,
            reduction: Some(Reduction::Add),
            duplicates: None,
            use_init_val: None,
        };
        match desc.plan() {
            Ok(scatter) => return Some(Ok((desc, scatter))),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map(Err)
}

/// The tuples of [`batched_gather_gradient`]'s scatter, from the gather's index values (packed,
/// row-major): for each output position `(c_0 .. c_axis-1, i ..)` of its prefix, the
/// coordinates `c` and then the index at `(c_0 .. c_b-1, i ..)`, as given (the scatter applies
/// the policy to it as the gather did).
pub fn batched_tuples(plan: &GatherPlan, values: &[i128]) -> Vec<i64> {
    let b = plan.batch_dims;
    let index_sizes = plan.indices.sizes.as_slice();
    let prefix: Vec<usize> = plan.output.sizes.as_slice()[..plan.axis + index_sizes.len() - b].to_vec();
    let count = size_product(prefix.iter().copied());
    let mut tuples = Vec::with_capacity(count.saturating_mul(plan.axis + 1));
    let mut c = vec![0usize; prefix.len()];
    for _ in 0..count {
        // The index's position: the batch coordinates, then the index dimensions after them.
        let at = c[..b].iter().chain(&c[plan.axis..]).zip(index_sizes).fold(0, |at, (&x, &n)| at * n + x);
        tuples.extend(c[..plan.axis].iter().map(|&x| x as i64));
        // An index of up to 64 bits: i64 holds it, or it is past any axis (as u64 values
        // above i64::MAX are) and stays past it.
        tuples.push(i64::try_from(values[at]).unwrap_or(i64::MAX));
        for d in (0..c.len()).rev() {
            c[d] += 1;
            if c[d] < prefix[d] {
                break;
            }
            c[d] = 0;
        }
    }
    tuples
}

/// A slice's gradient for its input, from its output's gradient.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SliceGradient {
    /// The output is empty (an ONNX window that selects nothing): the gradient is zero.
    Zeros,
    /// Gathers along single dimensions, applied in order to the output's gradient (none: the
    /// window is the whole input, and the gradient passes through).
    Gathers(Vec<AxisInverse>),
}

/// One gather of a slice's gradient, along `axis` of a tensor that has the input's sizes on
/// the dimensions before it was reached and the output's on the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisInverse {
    pub axis: usize,
    /// The input's size along `axis`: the gather's index count.
    pub input_size: usize,
    /// The input position output position 0 was copied from.
    pub start: usize,
    /// Input positions between consecutive output positions, negative where the window walks
    /// backwards; never 0.
    pub stride: i64,
    /// The output's size along `axis`: the index that reads zero for a skipped position (one
    /// past the end, which the `zero` policy reads as zero).
    pub output_size: usize,
}

impl AxisInverse {
    /// The output position copied from input position `j` along `axis` (`None`: the window
    /// skipped it). Computed on demand, so a step costs no memory per position until its
    /// indices are written out (a backward pass checks their count against its index type
    /// first).
    pub fn source(&self, j: usize) -> Option<usize> {
        // Distances along the walk: forwards from `start`, or backwards from it.
        let distance = if self.stride > 0 { j.checked_sub(self.start) } else { self.start.checked_sub(j) }?;
        let step = usize::try_from(self.stride.unsigned_abs()).ok()?;
        let k = distance.checked_div(step)?;
        (distance % step == 0 && k < self.output_size).then_some(k)
    }

    /// The gather's indices: each input position's source, or `output_size` where none.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.input_size).map(|j| self.source(j).unwrap_or(self.output_size))
    }

    /// The gather of this step on a packed `dtype` tensor of `sizes`: OpenVINO Gather-8 along
    /// `axis`, `index_type` indices, an index past the end reading zero.
    pub fn gather(&self, dtype: DType, index_type: DType, sizes: &[usize]) -> Option<GatherDesc> {
        let data = TensorDecl { dtype, sizes: Dims::new(sizes)?, strides: None };
        let indices = TensorDecl { dtype: index_type, sizes: Dims::new(&[self.input_size])?, strides: None };
        let mut desc = GatherDesc::new(GatherRules::OpenVino, data, indices, self.axis as i64);
        desc.out_of_range = Some(OutOfRange::Zero);
        Some(desc)
    }
}

/// The gradient of a slice planned as `plan`: along each dimension, output position `k` was
/// copied from input position `start + k * stride` (`start` the window's first element in its
/// walking direction), so an input position reads the gradient at `k` where it was one of
/// those, and zero elsewhere. Dimensions the window leaves whole and in order need no gather.
pub fn slice_input_gradient(plan: &SlicePlan) -> SliceGradient {
    let Some((offsets, sizes, strides)) = &plan.window else { return SliceGradient::Zeros };
    if plan.output.is_empty() {
        return SliceGradient::Zeros;
    }
    let mut gathers = Vec::new();
    for axis in 0..plan.input.rank() {
        let (input_size, output_size) = (plan.input.sizes[axis], plan.output.sizes[axis]);
        let stride = strides[axis];
        let start = offsets[axis] + if stride < 0 { sizes[axis] - 1 } else { 0 };
        if input_size == output_size && start == 0 && stride == 1 {
            continue;
        }
        gathers.push(AxisInverse { axis, input_size, start, stride, output_size });
    }
    SliceGradient::Gathers(gathers)
}
