//! The constant descriptors the CubeCL kernels are specialized on, derived from validated plans.
//!
//! Every size, stride and divisor here becomes a literal in the generated code. Kernels move
//! 32-bit words instead of typed values, so one kernel serves every dtype on every backend (WGSL
//! has no 8-, 16- or 64-bit storage). Two walks of the output exist:
//!
//! - [`RowWalk`] (preferred): the innermost output dimension is packed and line-aligned, so the
//!   output is rows of whole vector lines. An invocation moves a tile of lines of one row: row
//!   coordinates are divided out once per tile and a gather's index is read once per row.
//! - [`MoveDesc`] (any layout): one output word or line per invocation, every element slot
//!   mapped back to coordinates on its own, with the checks a padded output needs.

mod rows;
mod slots;

pub use rows::{RowAccess, RowDim, RowWalk};
pub use slots::{KernelDim, MoveDesc};

use crate::dtype::IndexType;
use crate::gather::GatherPlan;
use crate::rules::OutOfRange;
use crate::slice::SlicePlan;

/// How a kernel walks the output.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Walk {
    Rows(RowWalk),
    Slots(MoveDesc),
}

/// Which walks [`GatherKernelDesc::with`] and [`SliceKernelDesc::with`] may choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalkChoice {
    /// Rows where the layout allows, else slots (what ops launch).
    Best,
    /// Always the slot walk (to test one walk against the other).
    Slots,
}

impl Walk {
    /// Source buffer words the kernel may touch (a multiple of its source vector width).
    pub fn src_words(&self) -> u32 {
        match self {
            Walk::Rows(w) => w.src_words,
            Walk::Slots(m) => m.src_words,
        }
    }

    /// Output buffer words the kernel may touch (a multiple of its output vector width).
    pub fn out_words(&self) -> u32 {
        match self {
            Walk::Rows(w) => w.out_words,
            Walk::Slots(m) => m.out_words,
        }
    }

    pub fn invocations(&self) -> u32 {
        match self {
            Walk::Rows(w) => w.invocations,
            Walk::Slots(m) => m.invocations,
        }
    }
}

/// How a gather reads its indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndexRead {
    pub index_type: IndexType,
    pub policy: OutOfRange,
    /// Extent of the gathered axis (`s`): valid indices lie in `[-s, s-1]` (signed types).
    pub axis_size: u32,
    /// Source stride of the gathered axis, in the walk's source units.
    pub axis_stride: u32,
    pub index_words: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GatherKernelDesc {
    pub walk: Walk,
    pub index: IndexRead,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SliceKernelDesc {
    pub walk: Walk,
}

/// A dimension before unit conversion: size, output stride, signed source stride (elements),
/// and indices stride (index elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dim {
    pub size: usize,
    pub out: usize,
    pub src: i64,
    pub index: usize,
}

/// What both walks are built from: the output's dimensions and where the source starts.
pub(crate) struct Moves<'a> {
    pub dims: Vec<Dim>,
    /// Source element offset of the first output element.
    pub base: usize,
    /// Source elements per index step (gathers), 0 for slices.
    pub axis_stride: usize,
    pub elem_bytes: usize,
    /// 32-bit words per index (gathers), 0 for slices.
    pub index_words: usize,
    pub src: &'a crate::TensorLayout,
    pub out: &'a crate::TensorLayout,
}

impl GatherKernelDesc {
    /// `None` for an empty output: nothing to launch.
    pub fn new(plan: &GatherPlan) -> Option<GatherKernelDesc> {
        Self::with(plan, WalkChoice::Best)
    }

    pub fn with(plan: &GatherPlan, choice: WalkChoice) -> Option<GatherKernelDesc> {
        if plan.output.is_empty() {
            return None;
        }
        // An empty axis leaves the data empty: nothing is ever read, and its strides (which the
        // size rules do not bound for an empty tensor) play no part.
        let reads = plan.axis_size > 0;
        let moves = Moves {
            dims: plan
                .dims
                .iter()
                .map(|d| Dim {
                    size: d.size,
                    out: d.output_stride,
                    src: if reads { d.data_stride as i64 } else { 0 },
                    index: d.index_stride,
                })
                .collect(),
            base: 0,
            axis_stride: if reads { plan.axis_stride } else { 0 },
            elem_bytes: plan.data_type.size(),
            index_words: plan.index_type.words(),
            src: &plan.data,
            out: &plan.output,
        };
        let (walk, axis_stride) = walk(&moves, choice);
        Some(GatherKernelDesc {
            walk,
            index: IndexRead {
                index_type: plan.index_type,
                policy: plan.out_of_range,
                axis_size: plan.axis_size as u32,
                axis_stride,
                index_words: plan.index_type.words() as u32,
            },
        })
    }
}

impl SliceKernelDesc {
    /// `None` for an empty output: nothing to launch.
    pub fn new(plan: &SlicePlan) -> Option<SliceKernelDesc> {
        Self::with(plan, WalkChoice::Best)
    }

    pub fn with(plan: &SlicePlan, choice: WalkChoice) -> Option<SliceKernelDesc> {
        if plan.output.is_empty() {
            return None;
        }
        let moves = Moves {
            dims: plan
                .dims
                .iter()
                .map(|d| Dim { size: d.size, out: d.output_stride, src: d.input_stride, index: 0 })
                .collect(),
            base: plan.base,
            axis_stride: 0,
            elem_bytes: plan.data_type.size(),
            index_words: 0,
            src: &plan.input,
            out: &plan.output,
        };
        Some(SliceKernelDesc { walk: walk(&moves, choice).0 })
    }
}

/// The walk for `moves`, and the gathered axis' stride in that walk's source units.
fn walk(moves: &Moves, choice: WalkChoice) -> (Walk, u32) {
    if choice == WalkChoice::Best {
        if let Some((rows, axis_stride)) = RowWalk::build(moves) {
            return (Walk::Rows(rows), axis_stride);
        }
    }
    let (slots, axis_stride) = MoveDesc::build(moves);
    (Walk::Slots(slots), axis_stride)
}

/// Merges neighbours that are one contiguous run in output, source and indices alike.
pub(crate) fn merge(dims: Vec<Dim>) -> Vec<Dim> {
    let mut out: Vec<Dim> = Vec::with_capacity(dims.len());
    for d in dims {
        if let Some(prev) = out.last_mut() {
            let n = d.size;
            if prev.out == n * d.out && prev.src == n as i64 * d.src && prev.index == n * d.index {
                prev.size *= n;
                prev.out = d.out;
                prev.src = d.src;
                prev.index = d.index;
                continue;
            }
        }
        out.push(d);
    }
    out
}

/// The dimensions in output memory order (largest output stride first), merged.
pub(crate) fn in_output_order(dims: &[Dim]) -> Vec<Dim> {
    let mut dims = dims.to_vec();
    dims.sort_by_key(|d| std::cmp::Reverse(d.out));
    merge(dims)
}
