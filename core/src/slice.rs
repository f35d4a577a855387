//! Slice: DirectML SLICE1 windows (docs/rules.md, `slice1-*`), and ONNX Slice-13 translated into one.

use crate::dims::{Dims, SignedDims};
use crate::error::{Operand, RuleError, Window};
use crate::feature_level::{self, DmlOperator, FeatureLevel};
use crate::layout::TensorLayout;
use crate::rules::{RuleSet, SliceForm};
use crate::tensor::{
    check_addressable, check_output_decl, check_output_layout, check_rank, layout, OutputDecl, TensorDecl,
};

/// Which elements a slice copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SliceWindow {
    /// DirectML SLICE1: per dimension a window offset and size, and a signed, non-zero stride.
    DirectMl { offsets: Dims, sizes: Dims, strides: SignedDims },
    /// ONNX Slice-13: `starts`/`ends` (clamped to the input, negative from the end) along
    /// `axes` (default: the first ones) with `steps` (default 1). The result may be empty.
    Onnx { starts: SignedDims, ends: SignedDims, axes: Option<SignedDims>, steps: Option<SignedDims> },
}

/// A slice as a descriptor states it.
impl SliceWindow {
    pub const fn form(&self) -> SliceForm {
        match self {
            SliceWindow::DirectMl { .. } => SliceForm::DirectMl,
            SliceWindow::Onnx { .. } => SliceForm::Onnx,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceDesc {
    pub input: TensorDecl,
    pub window: SliceWindow,
    pub output: Option<OutputDecl>,
    /// SLICE1 windows only: the DirectML feature level targeted (`None`: the highest, 4_1).
    pub feature_level: Option<FeatureLevel>,
    /// The input's leading size is `_`: known at run time, from the input's length
    /// (`input.sizes[0]`, and a SLICE1 window's `sizes[0]`, are then not read). See
    /// [`crate::dynamic`].
    pub dynamic_leading: bool,
}

impl SliceDesc {
    /// A slice of `input` through `window`, every optional key unset, as a macro leaves a key
    /// not written: set the others on the result.
    pub const fn new(input: TensorDecl, window: SliceWindow) -> SliceDesc {
        SliceDesc { input, window, output: None, feature_level: None, dynamic_leading: false }
    }
}

/// One output dimension of a validated slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceDim {
    pub size: usize,
    pub output_stride: usize,
    /// Element stride in the input per output step: window stride times input stride.
    pub input_stride: i64,
}

/// A slice that satisfies every rule, as a SLICE1 window.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SlicePlan {
    pub data_type: crate::DType,
    pub input: TensorLayout,
    pub output: TensorLayout,
    /// The SLICE1 window (ONNX slices translated); `None` for an empty ONNX result.
    pub window: Option<(Dims, Dims, SignedDims)>,
    /// Output dimensions, size-1 dimensions left out.
    pub dims: Vec<SliceDim>,
    /// Input element offset of the first output element (`CopyStart` dotted with the strides).
    pub base: usize,
    /// The input's (and so the output's) leading size is a run-time count; this plan is for
    /// [`crate::dynamic::PLACEHOLDER`] (or, at run time, the count).
    pub dynamic_leading: bool,
}

impl SliceDesc {
    /// Applies every rule of the slice's form to the sizes as written (a `_` size is the
    /// placeholder count here: [`SliceDesc::plan`], in [`crate::dynamic`], adds its rules).
    pub(crate) fn plan_sizes(&self) -> Result<SlicePlan, RuleError> {
        if self.feature_level.is_some() && self.window.form() != SliceForm::DirectMl {
            return Err(RuleError::FeatureLevelOutsideDirectMl { rules: RuleSet::Slice(self.window.form()) });
        }
        let p = self.plan_window()?;
        // After every other rule: a descriptor broken at any level reports that first.
        if let Some(level) = self.feature_level {
            feature_level::check(DmlOperator::Slice1, level, self.input.dtype, None, p.input.rank())?;
        }
        Ok(p)
    }

    fn plan_window(&self) -> Result<SlicePlan, RuleError> {
        let input = layout(Operand::Input, self.input.sizes, self.input.strides)?;
        let dtype = self.input.dtype;
        let form = self.window.form();
        let directml = form == SliceForm::DirectMl;
        let rules = RuleSet::Slice(form);
        if !form.allows_data_type(dtype) {
            return Err(RuleError::DataTypeNotAllowed { rules, dtype });
        }
        if let Some(t) = self.output.and_then(|o| o.dtype).filter(|&t| t != dtype) {
            return Err(RuleError::OutputDType { data: dtype, output: t });
        }
        check_rank(Operand::Input, input.rank(), 1, rules)?;
        // Before any window arithmetic: sizes then fit the 32-bit offsets (and i64).
        check_addressable(Operand::Input, &input, dtype.size())?;
        let window = match self.window {
            SliceWindow::DirectMl { offsets, sizes, strides } => {
                check_directml_window(&input, offsets, sizes, strides)?;
                Some((offsets, sizes, strides))
            }
            SliceWindow::Onnx { starts, ends, axes, steps } => {
                onnx_window(&input, starts, ends, axes, steps)?
            }
        };
        let inferred = match &window {
            Some((_, sizes, strides)) => {
                let v: Vec<usize> =
                    sizes.iter().zip(strides.iter()).map(|(&n, &s)| max_copied(n, s)).collect();
                Dims::new(&v).expect("rank <= 8")
            }
            // ONNX: the empty result keeps the input's rank; find which dims are 0.
            None => onnx_empty_shape(&input, &self.window),
        };
        let output = match &self.output {
            None => TensorLayout::packed(inferred),
            Some(decl) => {
                if decl.sizes.len() != input.rank() {
                    return Err(RuleError::Rank {
                        tensor: Operand::Output,
                        rank: decl.sizes.len(),
                        min: input.rank(),
                        max: input.rank(),
                        rules,
                    });
                }
                if window.is_some() && directml {
                    // SLICE1 lets the output take fewer elements than the window reaches.
                    for (dim, (&size, &max)) in decl.sizes.iter().zip(inferred.iter()).enumerate() {
                        if size < 1 || size > max {
                            return Err(RuleError::SliceOutputSize { dim, size, max });
                        }
                    }
                    layout(Operand::Output, decl.sizes, decl.strides)?
                } else {
                    check_output_decl(dtype, decl, inferred)?;
                    layout(Operand::Output, decl.sizes, decl.strides)?
                }
            }
        };
        check_addressable(Operand::Output, &output, dtype.size())?;
        // After the size check, so the overlap search works on bounded numbers.
        check_output_layout(&output)?;

        let mut dims = Vec::new();
        let mut base = 0usize;
        if let Some((offsets, sizes, strides)) = &window {
            for i in 0..input.rank() {
                // CopyStart[i] = offset[i] + (stride[i] < 0 ? size[i] - 1 : 0).
                let start = offsets[i] + if strides[i] < 0 { sizes[i] - 1 } else { 0 };
                base += start * input.strides[i];
                if output.sizes[i] != 1 {
                    dims.push(SliceDim {
                        size: output.sizes[i],
                        output_stride: output.strides[i],
                        input_stride: strides[i] * input.strides[i] as i64,
                    });
                }
            }
        }
        Ok(SlicePlan { data_type: dtype, input, output, window, dims, base, dynamic_leading: false })
    }
}

/// `MaxCopiedElements = 1 + (size - 1) / |stride|`.
pub fn max_copied(size: usize, stride: i64) -> usize {
    1 + (size - 1) / stride.unsigned_abs() as usize
}

fn check_directml_window(
    input: &TensorLayout,
    offsets: Dims,
    sizes: Dims,
    strides: SignedDims,
) -> Result<(), RuleError> {
    let rank = input.rank();
    for (window, len) in
        [(Window::Offsets, offsets.len()), (Window::Sizes, sizes.len()), (Window::Strides, strides.len())]
    {
        if len != rank {
            return Err(RuleError::WindowLen { window, len, expected: rank, against: "the input's rank" });
        }
    }
    for dim in 0..rank {
        if strides[dim] == 0 {
            return Err(RuleError::WindowStrideZero { dim });
        }
        if sizes[dim] == 0 {
            return Err(RuleError::WindowEmpty { dim });
        }
        if offsets[dim].checked_add(sizes[dim]).is_none_or(|end| end > input.sizes[dim]) {
            return Err(RuleError::WindowPastInput {
                dim,
                offset: offsets[dim],
                size: sizes[dim],
                input: input.sizes[dim],
            });
        }
    }
    Ok(())
}

/// Per input dimension: (start, step, count) of ONNX Slice after normalizing and clamping.
fn onnx_ranges(
    input: &TensorLayout,
    starts: SignedDims,
    ends: SignedDims,
    axes: Option<SignedDims>,
    steps: Option<SignedDims>,
) -> Result<Vec<(i64, i64, usize)>, RuleError> {
    let rank = input.rank();
    let n = starts.len();
    let len_check = |window, len| {
        if len != n {
            Err(RuleError::WindowLen { window, len, expected: n, against: "the length of `starts`" })
        } else {
            Ok(())
        }
    };
    len_check(Window::Ends, ends.len())?;
    if let Some(a) = axes {
        len_check(Window::Axes, a.len())?;
    }
    if let Some(s) = steps {
        len_check(Window::Steps, s.len())?;
    }
    if n > rank {
        return Err(RuleError::WindowLen {
            window: Window::Starts,
            len: n,
            expected: rank,
            against: "the input's rank",
        });
    }
    let mut ranges: Vec<(i64, i64, usize)> = input.sizes.iter().map(|&d| (0, 1, d)).collect();
    let mut seen = [false; crate::MAX_RANK];
    for k in 0..n {
        let raw_axis = axes.map_or(k as i64, |a| a[k]);
        if raw_axis < -(rank as i64) || raw_axis >= rank as i64 {
            return Err(RuleError::SliceAxisOutOfRange { position: k, axis: raw_axis, rank });
        }
        let axis = if raw_axis < 0 { (raw_axis + rank as i64) as usize } else { raw_axis as usize };
        if seen[axis] {
            return Err(RuleError::SliceAxisRepeated { position: k, axis });
        }
        seen[axis] = true;
        let step = steps.map_or(1, |s| s[k]);
        if step == 0 {
            return Err(RuleError::SliceStepZero { position: k });
        }
        // An empty input may still have a huge dimension.
        let dim = i64::try_from(input.sizes[axis]).unwrap_or(i64::MAX);
        let norm = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
        let (start, end) = if step > 0 {
            (norm(starts[k]).clamp(0, dim), norm(ends[k]).clamp(0, dim))
        } else {
            (norm(starts[k]).clamp(0, (dim - 1).max(0)), norm(ends[k]).clamp(-1, dim - 1))
        };
        let count = if dim == 0 {
            0
        } else if step > 0 {
            (end - start).max(0).unsigned_abs().div_ceil(step.unsigned_abs())
        } else {
            (start - end).max(0).unsigned_abs().div_ceil(step.unsigned_abs())
        };
        ranges[axis] = (start, step, count as usize);
    }
    Ok(ranges)
}

fn onnx_window(
    input: &TensorLayout,
    starts: SignedDims,
    ends: SignedDims,
    axes: Option<SignedDims>,
    steps: Option<SignedDims>,
) -> Result<Option<(Dims, Dims, SignedDims)>, RuleError> {
    let ranges = onnx_ranges(input, starts, ends, axes, steps)?;
    if ranges.iter().any(|r| r.2 == 0) {
        return Ok(None);
    }
    let mut offsets = Vec::new();
    let mut sizes = Vec::new();
    let mut strides = Vec::new();
    for (start, step, count) in ranges {
        // Window [lo, lo + size) read from its start (step > 0) or its end (step < 0).
        // The picked elements lie inside the dimension, so the span is below its size.
        let span = ((count as u64 - 1) * step.unsigned_abs()) as i64;
        let lo = if step > 0 { start } else { start - span };
        offsets.push(lo as usize);
        sizes.push(span as usize + 1);
        strides.push(step);
    }
    Ok(Some((Dims::new(&offsets).unwrap(), Dims::new(&sizes).unwrap(), SignedDims::new(&strides).unwrap())))
}

fn onnx_empty_shape(input: &TensorLayout, window: &SliceWindow) -> Dims {
    match *window {
        SliceWindow::Onnx { starts, ends, axes, steps } => {
            let ranges = onnx_ranges(input, starts, ends, axes, steps).expect("checked");
            Dims::new(&ranges.iter().map(|r| r.2).collect::<Vec<_>>()).unwrap()
        }
        SliceWindow::DirectMl { .. } => unreachable!("SLICE1 windows are never empty"),
    }
}
