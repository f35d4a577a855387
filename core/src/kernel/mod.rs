//! The constant descriptors the CubeCL kernels are specialized on, derived from validated plans.
//!
//! Every size, stride and divisor here becomes a literal in the generated code. Kernels move
//! 32-bit words instead of typed values, so one kernel serves every dtype on every backend (WGSL
//! has no 8-, 16- or 64-bit storage). Two walks of the output exist:
//!
//! - [`RowWalk`] (preferred): the innermost output dimension is packed and line-aligned, so the
//!   output is rows of whole vector lines. An invocation moves a tile of lines of one row: row
//!   coordinates are divided out once per tile and its index reads happen once per row. It
//!   takes a list of index reads ([`ReadDesc`]), each at an offset affine in the output
//!   coordinates and in the values of the reads before it: none for a slice, one for a gather,
//!   one per gather of a fused chain.
//! - [`MoveDesc`] (any layout, single ops): one output word or line per invocation, every
//!   element slot mapped back to coordinates on its own, with the checks a padded output needs.

mod chain;
mod convert;
mod gathered_rows;
mod rows;
mod scatter;
mod scatter_grouping;
mod scatter_lines;
mod scatter_rows;
mod slots;

pub use chain::ChainKernelDesc;
pub use convert::{ConvertDim, ConvertWalk};
pub use gathered_rows::GatheredRows;
pub use rows::{RowAccess, RowDim, RowGroup, RowWalk, CPU_NARROW_GROUP_ROWS};
pub use scatter::{ScatterDim, ScatterKernelDesc, ZERO_MEMBER};
pub use scatter_grouping::{Scan, ScatterGroupingDesc};
pub use scatter_lines::{LineDim, ScatterLinesDesc, MIN_LINES};
pub use scatter_rows::ScatterRowsDesc;
pub use slots::{KernelDim, MoveDesc};

use crate::dtype::IndexType;
use crate::gather::GatherPlan;
use crate::rules::OutOfRange;
use crate::slice::SlicePlan;

pub use crate::limits::MAX_READS;

/// How a kernel walks the output.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Walk {
    Rows(RowWalk),
    Slots(MoveDesc),
    /// A chain that ends in `convert` (see [`ConvertWalk`]; boxed: its scale and offset make it
    /// the largest walk).
    Convert(Box<ConvertWalk>),
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
            Walk::Convert(c) => c.src_words,
        }
    }

    /// Output buffer words the kernel may touch (a multiple of its output vector width).
    pub fn out_words(&self) -> u32 {
        match self {
            Walk::Rows(w) => w.out_words,
            Walk::Slots(m) => m.out_words,
            Walk::Convert(c) => c.out_words,
        }
    }

    pub fn invocations(&self) -> u32 {
        match self {
            Walk::Rows(w) => w.invocations,
            Walk::Slots(m) => m.invocations,
            Walk::Convert(c) => c.invocations,
        }
    }

    /// What the kernel is specialized on (see [`RowWalk::specialized`]).
    pub fn specialized(&self) -> Walk {
        match self {
            Walk::Rows(w) => Walk::Rows(w.specialized()),
            Walk::Slots(m) => Walk::Slots(m.specialized()),
            Walk::Convert(c) => Walk::Convert(Box::new(c.specialized())),
        }
    }

    /// A `_` walk for `count` leading steps (see [`RowWalk::with_count`]).
    pub fn with_count(
        &self,
        count: usize,
        src: &crate::TensorLayout,
        out: &crate::TensorLayout,
        elem_bytes: usize,
    ) -> Option<Walk> {
        match self {
            Walk::Rows(w) => w.with_count(count, src, out, elem_bytes).map(Walk::Rows),
            Walk::Slots(m) => m.with_count(count, src, out, elem_bytes).map(Walk::Slots),
            Walk::Convert(c) => c.with_count(count, src, out).map(|c| Walk::Convert(Box::new(c))),
        }
    }

    /// Whether the walk's leading dimension is a `_` count.
    pub fn is_dynamic(&self) -> bool {
        match self {
            Walk::Rows(w) => w.dynamic,
            Walk::Slots(m) => m.dynamic,
            Walk::Convert(c) => c.dynamic,
        }
    }

    /// Whether `self`, built for `first` leading steps, and `other`, built for `second`, are
    /// one kernel launched for two counts: the same specialized walk and base, led by the `_`
    /// dimension, whose invocations grow with the count alone.
    pub(crate) fn counts_apart(&self, other: &Walk, first: usize, second: usize) -> bool {
        // The rows of a row or convert walk: the leading size, and invocations per count.
        let per_count = |dynamic: bool, lead: Option<u32>, a: u32, b: u32| {
            let (lead, a, b) = (lead.map(|s| s as usize), a as usize, b as usize);
            dynamic && lead == Some(first) && a % first == 0 && (a / first) * second == b
        };
        // The base is a launch argument, left out of the specialized walks, but `with_count`
        // keeps the placeholder's: it must not move with the count.
        match (self, other) {
            (Walk::Rows(a), Walk::Rows(b)) => {
                a.specialized() == b.specialized()
                    && a.base == b.base
                    && per_count(a.dynamic, a.outer.first().map(|d| d.size), a.invocations, b.invocations)
            }
            (Walk::Convert(a), Walk::Convert(b)) => {
                a.specialized() == b.specialized()
                    && a.base == b.base
                    && per_count(a.dynamic, a.outer.first().map(|d| d.size), a.invocations, b.invocations)
            }
            (Walk::Slots(a), Walk::Slots(b)) => {
                a.dynamic
                    && a.check_total
                    && a.specialized() == b.specialized()
                    && a.dims.first().is_some_and(|d| d.size as usize == first && !d.check)
            }
            _ => false,
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
    /// Source stride of the gathered axis, in the slot walk's source units (the row walk keeps
    /// its own, signed, in [`ReadDesc::data`]).
    pub axis_stride: u32,
    pub index_words: u32,
    /// Index words past the slot's index position, in the slot walk (a GatherND tuple's
    /// component; the row walk keeps its own in [`ReadDesc::base`]).
    pub offset: u32,
}

/// One index read of a row walk. It reads 32-bit word `base + sum(coordinate * coefficient) +
/// sum(value_i * deps[i])` of index buffer `buffer` (the coefficients of each row dimension are
/// in [`RowDim::reads`], of the innermost dimension in `elem`), checks and normalizes the value
/// `v` as `index` says, and moves the source by `v * data` units. Coefficients are signed and
/// applied in wrapping 32-bit arithmetic: every offset they produce lies in `0..2^32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadDesc {
    pub index: IndexRead,
    /// The index buffer read (0 for a single gather; the gather's position in a chain).
    pub buffer: u32,
    /// The chain stage the read belongs to (1-based; 1 for a single gather), for messages.
    pub stage: u32,
    pub base: i64,
    pub deps: [i64; MAX_READS],
    pub data: i64,
    /// Coefficient of the row's element (the innermost output coordinate), in index words.
    pub elem: i64,
    /// Whether the read happens per element: `elem` is not 0, or it depends on a read that does.
    pub per_element: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GatherKernelDesc {
    pub walk: Walk,
    /// One read per output element, or GatherND's one per tuple component.
    pub reads: Vec<IndexRead>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SliceKernelDesc {
    pub walk: Walk,
}

/// A dimension before unit conversion: size, output stride, signed source stride (elements),
/// and signed indices strides of each read (index elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dim {
    pub size: usize,
    pub out: usize,
    pub src: i64,
    pub reads: [i64; MAX_READS],
}

/// An index read before unit conversion (index elements, source elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MoveRead {
    pub index: IndexRead,
    pub buffer: u32,
    pub stage: u32,
    pub base: i64,
    pub deps: [i64; MAX_READS],
    /// Source elements per step of the read's value.
    pub data: i64,
}

/// What both walks are built from: the output's dimensions and where the source starts.
pub(crate) struct Moves<'a> {
    pub dims: Vec<Dim>,
    /// Source element offset of the first output element.
    pub base: i64,
    pub reads: Vec<MoveRead>,
    pub elem_bytes: usize,
    pub src: &'a crate::TensorLayout,
    pub out: &'a crate::TensorLayout,
    /// `dims[0]` is a `_` leading dimension: the row walk keeps it the outermost row dimension,
    /// never merged or grouped, so its size is the count alone.
    pub dynamic: bool,
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
        let axes: Vec<_> = plan.index_axes().collect();
        let reads = axes.iter().all(|a| a.size > 0);
        let index_words = plan.index_type.words();
        let indexed = |x: usize| {
            let mut r = [0; MAX_READS];
            r[..axes.len()].fill(x as i64);
            r
        };
        let moves = Moves {
            dims: plan
                .dims
                .iter()
                .map(|d| Dim {
                    size: d.size,
                    out: d.output_stride,
                    src: if reads { d.data_stride as i64 } else { 0 },
                    reads: indexed(d.index_stride),
                })
                .collect(),
            base: 0,
            reads: axes
                .iter()
                .map(|a| MoveRead {
                    index: IndexRead {
                        index_type: plan.index_type,
                        policy: plan.out_of_range,
                        axis_size: a.size as u32,
                        axis_stride: 0,
                        index_words: index_words as u32,
                        offset: (a.offset * index_words) as u32,
                    },
                    buffer: 0,
                    stage: 1,
                    base: a.offset as i64,
                    deps: [0; MAX_READS],
                    data: if reads { a.stride as i64 } else { 0 },
                })
                .collect(),
            elem_bytes: plan.data_type.size(),
            src: &plan.data,
            out: &plan.output,
            dynamic: plan.dynamic_leading,
        };
        let (walk, axis_strides) = walk(&moves, choice);
        let reads = moves
            .reads
            .iter()
            .zip(axis_strides)
            .map(|(r, axis_stride)| IndexRead { axis_stride, ..r.index })
            .collect();
        Some(GatherKernelDesc { walk, reads })
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
                .map(|d| Dim {
                    size: d.size,
                    out: d.output_stride,
                    src: d.input_stride,
                    reads: [0; MAX_READS],
                })
                .collect(),
            base: plan.base as i64,
            reads: vec![],
            elem_bytes: plan.data_type.size(),
            src: &plan.input,
            out: &plan.output,
            dynamic: plan.dynamic_leading,
        };
        Some(SliceKernelDesc { walk: walk(&moves, choice).0 })
    }
}

/// The walk for `moves`, and each read's gathered axis stride in the slot walk's source units
/// (0 for the row walk, which keeps its own).
fn walk(moves: &Moves, choice: WalkChoice) -> (Walk, Vec<u32>) {
    if choice == WalkChoice::Best {
        if let Some(rows) = RowWalk::build(moves) {
            return (Walk::Rows(rows), vec![0; moves.reads.len()]);
        }
    }
    let (slots, axis_strides) = MoveDesc::build(moves);
    (Walk::Slots(slots), axis_strides)
}

/// Merges neighbours that are one contiguous run in output, source and every read alike.
pub(crate) fn merge(dims: Vec<Dim>) -> Vec<Dim> {
    let mut out: Vec<Dim> = Vec::with_capacity(dims.len());
    for d in dims {
        if let Some(prev) = out.last_mut() {
            let n = d.size;
            let runs = prev.out == n * d.out
                && prev.src == n as i64 * d.src
                && (0..MAX_READS).all(|j| prev.reads[j] == n as i64 * d.reads[j]);
            if runs {
                prev.size *= n;
                prev.out = d.out;
                prev.src = d.src;
                prev.reads = d.reads;
                continue;
            }
        }
        out.push(d);
    }
    out
}

/// The dimensions in output memory order (largest output stride first), merged; a `_` leading
/// dimension (`dynamic`: `dims[0]`) stays first and on its own.
pub(crate) fn in_output_order(dims: &[Dim], dynamic: bool) -> Vec<Dim> {
    let (lead, rest) =
        if dynamic { dims.split_first().map_or((None, dims), |(l, r)| (Some(*l), r)) } else { (None, dims) };
    let mut rest = rest.to_vec();
    rest.sort_by_key(|d| std::cmp::Reverse(d.out));
    lead.into_iter().chain(merge(rest)).collect()
}

/// 32-bit words of a buffer of `layout` (`elem_bytes`-byte elements), rounded up to whole
/// vectors of `line` words: at least one element and one vector, as loads are unconditional
/// and an empty gathered axis still reads (and then zeroes) element 0.
pub fn buffer_words(layout: &crate::TensorLayout, elem_bytes: usize, line: usize) -> usize {
    ((layout.min_buffer_len().unwrap_or(0) * elem_bytes).div_ceil(4).max(elem_bytes / 4))
        .div_ceil(line)
        .max(1)
        * line
}
