//! A leading dimension written `_`: a gather's indices `i64[_, 8]` or a slice's input
//! `f32[_, 3, 64, 64]`, whose size (the count) is known only at run time, from the buffer's
//! length. Every other size, stride and divisor stays a constant of the kernel.
//!
//! The rules are checked once with a placeholder count, with the dimension kept whole and
//! leading in the output, so no rule depends on the count; the kernel is built for two counts
//! and must come out the same but for the count (the row walk's outermost coordinate is what is
//! left of an invocation's position after the inner ones are divided out, so the count is never
//! a divisor, and the invocation limit is a launch argument). What only the count decides
//! (32-bit addressing of the buffers it sizes) is checked again at run time, as an `Err`.

use crate::dims::{list, Dims};
use crate::error::{Location, Operand, RuleError, Window};
use crate::gather::{GatherDesc, GatherPlan};
use crate::kernel::{GatherKernelDesc, SliceKernelDesc, Walk};
use crate::ranges::SliceRange;
use crate::rules::GatherRules;
use crate::slice::{SliceDesc, SlicePlan, SliceWindow};
use std::fmt;

/// The count a `_` descriptor is checked and planned with: not 1 (size-1 dimensions drop out
/// of a plan), and checked against a second count, so the value plays no part in the kernel.
pub const PLACEHOLDER: usize = 2;
const SECOND: usize = 3;

/// Why a descriptor cannot keep a `_` leading dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DynamicFault {
    /// DirectML pads every tensor to one DimensionCount with leading 1s.
    DirectMl,
    /// `_` on a tensor with no dimension (builders only: the macros read `_` in a size list).
    Scalar { tensor: Operand },
    /// The `_` tensor declared with strides: its count is read from a packed length.
    Strides { tensor: Operand },
    /// A declared output: its leading size would be the count.
    Output,
    /// A gather along another axis: the output leads with the data's dimensions.
    Axis { axis: usize },
    /// OpenVINO batch dimensions tie the indices' leading size to the data's.
    BatchDims { batch_dims: usize },
    /// A slice window that does not take the `_` dimension whole, forwards, from 0.
    Window,
    /// Rows of no element: the count cannot be read from a length.
    EmptyRows { tensor: Operand },
    /// No walk of the output stays the same for every count (a guard: every layout the other
    /// rules admit has one).
    Layout { output: Dims, elem_bytes: usize },
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
            Output => write!(
                f,
                "the output's leading size is the `_` count, known at run time: remove `output` (the result is packed, `[count, ..]`), or give the leading size"
            ),
            Axis { axis } => write!(
                f,
                "gather: a `_` leading dimension of the indices with `axis: {axis}`: the output leads with the data's dimension 0, not the indices' count; use `axis: 0` (lay the data out with the gathered axis first), or give the indices' size"
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

fn fault(fault: DynamicFault, at: Location) -> RuleError {
    RuleError::Dynamic { fault, at }
}

/// Elements per leading step: the product of every size after the first.
pub fn row_elements(sizes: &[usize]) -> usize {
    sizes.iter().skip(1).fold(1usize, |a, &n| a.saturating_mul(n))
}

/// Whether `range` takes a dimension whole, from 0, forwards (`..`, `0..`): what a `_`
/// dimension's range must be.
pub fn check_leading_range(range: &SliceRange) -> Result<(), RuleError> {
    if matches!(range.start, None | Some(0)) && range.end.is_none() && range.step == 1 {
        Ok(())
    } else {
        Err(fault(DynamicFault::Window, Location::RangeAt(0)))
    }
}

/// The plan of a gather whose indices' leading size is `_`, at the placeholder count.
pub(crate) fn gather_plan(desc: &GatherDesc) -> Result<GatherPlan, RuleError> {
    let t = Operand::Indices;
    if desc.indices.sizes.is_empty() {
        return Err(fault(DynamicFault::Scalar { tensor: t }, Location::Shape(t)));
    }
    if desc.rules == GatherRules::DirectMl {
        return Err(fault(DynamicFault::DirectMl, Location::Size(t, 0)));
    }
    if desc.indices.strides.is_some() {
        return Err(fault(DynamicFault::Strides { tensor: t }, Location::Strides(t)));
    }
    if desc.output.is_some() {
        return Err(fault(DynamicFault::Output, Location::Shape(Operand::Output)));
    }
    // Before planning: with the placeholder count, a batch dimension would report a mismatch
    // against a size the user never wrote.
    if let Some(b) = desc.batch_dims.filter(|&b| b != 0) {
        let rank = desc.indices.sizes.len() as i64;
        let normalized = if b < 0 { rank + b } else { b };
        let limit = desc.data.sizes.len().min(desc.indices.sizes.len()) as i64;
        if b >= -limit && b <= limit && normalized != 0 {
            return Err(fault(
                DynamicFault::BatchDims { batch_dims: normalized as usize },
                Location::BatchDims,
            ));
        }
    }
    if row_elements(&desc.indices.sizes) == 0 {
        return Err(fault(DynamicFault::EmptyRows { tensor: t }, Location::Size(t, 0)));
    }
    let p = gather_at(desc, PLACEHOLDER)?;
    if p.axis != 0 {
        return Err(fault(DynamicFault::Axis { axis: p.axis }, Location::Axis));
    }
    let second = gather_at(desc, SECOND)?;
    let walks = |p: &GatherPlan| GatherKernelDesc::new(p).map(|k| (k.walk, k.index));
    check_one_kernel(walks(&p), walks(&second), &p.output, p.data_type.size(), Location::Size(t, 0))?;
    Ok(p)
}

/// The plan of a `_` gather for `count` leading steps (what `run` launches with).
pub fn gather_at(desc: &GatherDesc, count: usize) -> Result<GatherPlan, RuleError> {
    let mut d = *desc;
    d.dynamic_leading = false;
    d.indices.sizes.set(0, count);
    let mut p = d.plan()?;
    p.dynamic_leading = true;
    Ok(p)
}

/// The plan of a slice whose input's leading size is `_`, at the placeholder count.
pub(crate) fn slice_plan(desc: &SliceDesc) -> Result<SlicePlan, RuleError> {
    let t = Operand::Input;
    if desc.input.sizes.is_empty() {
        return Err(fault(DynamicFault::Scalar { tensor: t }, Location::Shape(t)));
    }
    if desc.input.strides.is_some() {
        return Err(fault(DynamicFault::Strides { tensor: t }, Location::Strides(t)));
    }
    if desc.output.is_some() {
        return Err(fault(DynamicFault::Output, Location::Shape(Operand::Output)));
    }
    let window = |w: Window, i: usize| fault(DynamicFault::Window, Location::WindowAt(w, i));
    match desc.window {
        SliceWindow::DirectMl { offsets, strides, .. } => {
            if offsets.first().is_some_and(|&o| o != 0) {
                return Err(window(Window::Offsets, 0));
            }
            if strides.first().is_some_and(|&s| s != 1) {
                return Err(window(Window::Strides, 0));
            }
        }
        SliceWindow::Onnx { starts, ends, axes, steps } => {
            let rank = desc.input.sizes.len() as i64;
            for k in 0..starts.len() {
                let axis = axes.map_or(Some(k as i64), |a| a.get(k).copied());
                if axis != Some(0) && axis != Some(-rank) {
                    continue;
                }
                if starts[k] != 0 {
                    return Err(window(Window::Starts, k));
                }
                // Any end at or past 2^32 - 1 clamps to the count (buffers are 32-bit addressed).
                if ends.get(k).is_some_and(|&e| e < u32::MAX as i64) {
                    return Err(window(Window::Ends, k));
                }
                if steps.and_then(|s| s.get(k).copied()).is_some_and(|s| s != 1) {
                    return Err(window(Window::Steps, k));
                }
            }
        }
    }
    if row_elements(&desc.input.sizes) == 0 {
        return Err(fault(DynamicFault::EmptyRows { tensor: t }, Location::Size(t, 0)));
    }
    let p = slice_at(desc, PLACEHOLDER)?;
    let second = slice_at(desc, SECOND)?;
    let walks = |p: &SlicePlan| SliceKernelDesc::new(p).map(|k| (k.walk, ()));
    check_one_kernel(walks(&p), walks(&second), &p.output, p.data_type.size(), Location::Size(t, 0))?;
    Ok(p)
}

/// The plan of a `_` slice for `count` leading steps.
pub fn slice_at(desc: &SliceDesc, count: usize) -> Result<SlicePlan, RuleError> {
    if count == 0 {
        // SLICE1 windows are never empty: the plan for one row, emptied.
        let mut p = slice_at(desc, 1)?;
        let empty = |t: &crate::TensorLayout| {
            let mut sizes = t.sizes;
            sizes.set(0, 0);
            crate::TensorLayout::packed(sizes)
        };
        (p.input, p.output) = (empty(&p.input), empty(&p.output));
        p.dims.clear();
        return Ok(p);
    }
    let mut d = *desc;
    d.dynamic_leading = false;
    d.input.sizes.set(0, count);
    if let SliceWindow::DirectMl { sizes, .. } = &mut d.window {
        if !sizes.is_empty() {
            sizes.set(0, count);
        }
    }
    let mut p = d.plan()?;
    p.dynamic_leading = true;
    Ok(p)
}

/// The kernels for two counts must be one row walk that differs only in the count.
fn check_one_kernel<X: PartialEq>(
    a: Option<(Walk, X)>,
    b: Option<(Walk, X)>,
    output: &crate::TensorLayout,
    elem_bytes: usize,
    at: Location,
) -> Result<(), RuleError> {
    let same = match (a, b) {
        // An empty output for every count: nothing is ever launched.
        (None, None) => true,
        (Some((Walk::Rows(a), x)), Some((Walk::Rows(b), y))) => {
            x == y
                && a.dynamic
                && a.count_free() == b.count_free()
                && a.outer.first().is_some_and(|d| d.size as usize == PLACEHOLDER)
                && a.invocations as usize % PLACEHOLDER == 0
                && (a.invocations as usize / PLACEHOLDER) * SECOND == b.invocations as usize
        }
        (Some((Walk::Slots(a), x)), Some((Walk::Slots(b), y))) => {
            x == y
                && a.dynamic
                && a.check_total
                && a.count_free() == b.count_free()
                && a.dims.first().is_some_and(|d| d.size as usize == PLACEHOLDER && !d.check)
        }
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(fault(DynamicFault::Layout { output: output.sizes, elem_bytes }, at))
    }
}
