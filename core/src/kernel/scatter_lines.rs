//! The line scatter: a ScatterElements whose updates are applied with no grouping at all.
//!
//! A ScatterElements update at index position `p` lands on the data element whose coordinates
//! are `p`'s, but for the axis, which the index value gives. So positions that differ off the
//! axis never meet: each *line* (the positions sharing every coordinate but the axis) writes
//! its own line of the data. One invocation per line, walking its positions along the axis in
//! order, applies them in the indices' row-major order restricted to that line, which is the
//! serial reference's order for every element it can reach. No other invocation touches
//! those elements (32-bit elements only: narrower ones share words across lines), so the
//! result needs no atomics, no sorting and no read-back of the indices.
//!
//! It serves where the grouping on the host is the cost: many lines, each of few updates (a
//! ScatterElements of millions of positions). A mean, a reduction without the data's element
//! and `duplicates: error` keep the grouped kernel, which counts and checks on the host.

use super::IndexRead;
use crate::dtype::{DType, IndexType};
use crate::layout::TensorLayout;
use crate::rules::{Duplicates, GatherForm, OutOfRange, Reduction};
use crate::scatter::ScatterPlan;

/// Fewer lines than this leave most of a device idle while each walks its positions: the
/// grouped kernel (one invocation per destination) serves them.
pub const MIN_LINES: usize = 256;

/// One dimension of the lines (an indices dimension other than the axis), in 32-bit words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineDim {
    /// Lines after this dimension: the divisor of a line's number.
    pub step: u32,
    pub indices_stride: u32,
    pub updates_stride: u32,
    pub dest_stride: u32,
}

/// How a scatter kernel that reads its indices on the device reads them (its policy, the axis
/// of `axis_size` elements, each `axis_stride` apart in the destination), and under `error`,
/// with packed indices, the read that checks them all first (with their count); `None` when a
/// number does not fit 32 bits. Under `skip` an index is read as unsigned, so a negative one
/// is past the end and its update is dropped as one past the end is; under `error` the check
/// ran first, so the write reads each index as in range (normalized, and only bounded by the
/// axis, which keeps it there whatever the buffer holds). A negative 32-bit index read as
/// unsigned is at least 2^31, past the end only of an axis no longer than that: a longer axis
/// under `skip` with 32-bit signed indices takes no device read (`None`: the host groups).
pub(super) fn device_reads(
    plan: &ScatterPlan,
    axis_size: u32,
    axis_stride: u32,
) -> Option<(IndexRead, Option<(IndexRead, u32)>)> {
    let read = IndexRead {
        index_type: plan.map.index_type,
        policy: plan.out_of_range,
        axis_size,
        axis_stride,
        index_words: plan.map.index_type.words() as u32,
        offset: 0,
    };
    let check = match plan.out_of_range == OutOfRange::Error && plan.map.indices.is_packed() {
        true => Some((read, u32::try_from(plan.map.indices.num_elements()).ok()?)),
        false => None,
    };
    let (index_type, policy) = match (plan.out_of_range, plan.map.index_type) {
        (OutOfRange::Skip, IndexType::I32) if axis_size > i32::MAX as u32 => return None,
        (OutOfRange::Skip, IndexType::I32) => (IndexType::U32, OutOfRange::Zero),
        (OutOfRange::Skip, IndexType::I64) => (IndexType::U64, OutOfRange::Zero),
        (OutOfRange::Skip, t) => (t, OutOfRange::Zero),
        (p, t) => (t, p),
    };
    Some((IndexRead { index_type, policy, ..read }, check))
}

/// A line scatter kernel, specialized on a plan and the layout it writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScatterLinesDesc {
    pub lines: u32,
    pub dims: Vec<LineDim>,
    /// Positions per line (the indices' size along the axis), and their strides along it. The
    /// kernel takes `len` as a launch argument (see [`ScatterLinesDesc::specialized`]).
    pub len: u32,
    pub indices_step: u32,
    pub updates_step: u32,
    /// The index read: the policy and the axis, its `axis_stride` the destination's along it.
    /// Under `skip` the index is read as unsigned, so a negative one is past the end and its
    /// update is dropped as one past the end is.
    pub index: IndexRead,
    pub dtype: DType,
    pub reduction: Reduction,
    /// Under `error`, with packed indices: the read that checks each of the `count` indices
    /// on the device before anything is written (`None`: the host reads them back to check).
    pub check: Option<(IndexRead, u32)>,
    /// Invocations per line (1, or a power of two): invocation `part` of a line walks all of
    /// its positions in order and applies those whose index `i` has `i % parts == part`, so
    /// each element is still written by one invocation, in the serial order. 1 where an
    /// invocation is a CPU thread's SIMD lane (lavapipe, the CPU runtime: reading every index
    /// `parts` times costs more than the lines' walk); a warp's width on GPUs, whose lines
    /// are otherwise too few to hide each update's latency. The backend sets it per runtime.
    pub parts: u32,
}

impl ScatterLinesDesc {
    /// The line kernel of `plan` writing `dest` (the packed output, or the data in place), where
    /// it applies: see the module's notes.
    pub fn of(plan: &ScatterPlan, dest: &TensorLayout) -> Option<ScatterLinesDesc> {
        let dtype = plan.data_type();
        let reduction_fits = matches!(
            plan.reduction,
            Reduction::None
                | Reduction::Add
                | Reduction::Mul
                | Reduction::Max
                | Reduction::Min
                | Reduction::Sub
        );
        if plan.map.form != GatherForm::Elements
            || dtype.size() != 4
            || !reduction_fits
            || !plan.use_init_val
            || plan.duplicates == Duplicates::Error
        {
            return None;
        }
        let axis = plan.map.index_axes().next()?;
        let words = plan.map.index_type.words();
        let word = |n: usize| u32::try_from(n).ok();
        let (mut lines, mut len, mut steps) = (1usize, None, (0, 0));
        let mut dims = Vec::new();
        for k in &plan.keyed {
            if k.size == 0 {
                // No position at all: nothing to launch (and no line to walk).
                return None;
            }
            let indices_stride = plan.map.indices.strides[k.indices_dim].checked_mul(words)?;
            let updates_stride = plan.updates.strides[k.updates_dim];
            match k.data_dim {
                None => {
                    len = Some(k.size);
                    steps = (indices_stride, updates_stride);
                }
                Some(d) if k.size > 1 => {
                    lines = lines.checked_mul(k.size)?;
                    dims.push((k.size, indices_stride, updates_stride, dest.strides[d]));
                }
                Some(_) => {}
            }
        }
        let len = len?;
        if lines < MIN_LINES || len == 0 {
            return None;
        }
        let mut step = lines;
        let dims = dims
            .into_iter()
            .map(|(size, i, u, d)| {
                step /= size;
                Some(LineDim {
                    step: word(step)?,
                    indices_stride: word(i)?,
                    updates_stride: word(u)?,
                    dest_stride: word(d)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let (index, check) = device_reads(plan, word(axis.size)?, word(dest.strides[axis.dim])?)?;
        Some(ScatterLinesDesc {
            lines: word(lines)?,
            dims,
            len: word(len)?,
            indices_step: word(steps.0)?,
            updates_step: word(steps.1)?,
            index,
            dtype,
            reduction: plan.reduction,
            check,
            parts: 1,
        })
    }

    /// The constants the kernel is compiled on: these but for the positions per line (and the
    /// `error` check's count of indices), which it takes as launch arguments, so that every
    /// count of a `_` ScatterElements along axis 0, whose count is that length, shares them.
    pub fn specialized(&self) -> ScatterLinesDesc {
        ScatterLinesDesc { len: 0, check: self.check.map(|(read, _)| (read, 0)), ..self.clone() }
    }
}
