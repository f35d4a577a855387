//! A chain of a gather of rows and a scatter of those rows (an MoE combine: expert rows picked
//! per token and choice, then reduced into each token's row), fused by folding the gather into
//! the scatter's lists.
//!
//! The grouped scatter kernel reads each listed position's update at the offset its member
//! says (`ScatterGroups::members`, the position's first element in the updates). Position `p`'s
//! update is the gathered row `p`, which is data row `g[p]` (the gather's index, normalized).
//! Its member can name that row in the data itself: the host, which reads the scatter's
//! indices back to group them anyway, reads the gather's too and moves each member there. The
//! kernel then reads the rows where they lie, and no intermediate is written.
//! Under the gather's `zero` policy a position whose index is out of range reads a row of
//! zeros: its member becomes [`ZERO_MEMBER`], which the kernel takes as zeros without a load.

use super::{ScatterKernelDesc, ScatterLinesDesc, ScatterRowsDesc, ZERO_MEMBER};
use crate::chain::{ChainPlan, StagePlan};
use crate::rules::{GatherForm, OutOfRange};

/// How the lists of a gather-then-scatter chain move from the gathered rows to the data's
/// (see the module's notes). Offsets are in the lists' units: elements over the scatter's
/// lanes ([`crate::ScatterPlan::lanes`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GatheredRows {
    /// The scatter's grouped kernel, the one the scatter alone would take (its `zero_members`
    /// variant under the gather's `zero`).
    pub kernel: ScatterKernelDesc,
    /// From one position's update to the next.
    updates_row: usize,
    /// From one data row to the next along the gather's axis (the first starts the buffer).
    data_row: usize,
    /// From one gather index to the next in its buffer (any stride, 0 for a broadcast one).
    index_stride: usize,
    /// The gather's axis size, and its policy: `error` (checked before the fold), `clamp` or
    /// `zero`.
    axis_size: usize,
    policy: OutOfRange,
}

impl GatheredRows {
    /// The fold of a chain whose stages are a gather along axis 0 by one-dimensional indices
    /// (of any stride), then a scatter along axis 0 by one-dimensional indices that the grouped
    /// kernel runs (a reduction, or `none` where the kernels that read their indices on the
    /// device do not apply), where each data row is packed as the updates' rows are and starts where the
    /// kernel's vectors do. Under the gather's `error` and `clamp` every position reads a data
    /// row; under `zero` one out of range reads zeros ([`ZERO_MEMBER`], the kernel's
    /// `zero_members`).
    pub fn of_chain(chain: &ChainPlan) -> Option<GatheredRows> {
        let [StagePlan::Gather(g), StagePlan::Scatter(s)] = chain.stages.as_slice() else { return None };
        let s = &**s;
        let one_dim = |form, axis, rank| form == GatherForm::Axis && axis == 0 && rank == 1;
        if !one_dim(g.form, g.axis, g.indices.rank())
            || !one_dim(s.map.form, s.map.axis, s.map.indices.rank())
            || !matches!(g.out_of_range, OutOfRange::Error | OutOfRange::Clamp | OutOfRange::Zero)
            || g.dynamic_leading
            || g.data.sizes[0] == 0
            || !s.updates.is_packed()
            || ScatterLinesDesc::of(s, &s.map.data).is_some()
            || ScatterRowsDesc::of(s, &s.map.data).is_some()
        {
            return None;
        }
        let kernel = ScatterKernelDesc::of(s, &s.map.data)?;
        if kernel.lane_words {
            return None;
        }
        let kernel = ScatterKernelDesc { zero_members: g.out_of_range == OutOfRange::Zero, ..kernel };
        // The row (every dimension after the axis) packed in the data, as in the packed
        // updates the gather would write.
        let span = g.data.packed_row_span()?;
        let positions = s.map.indices.num_elements();
        let rows = g.data.sizes[0];
        let lanes = s.lanes();
        let updates_row = if positions > 1 { s.updates.strides[0] } else { span };
        let data_row = if rows > 1 { g.data.strides[0] } else { span };
        // Each row starts on a whole unit of the lists, and on a whole vector of the kernel
        // (a unit is `kernel.words` 32-bit words).
        let unit_aligned =
            |n: usize| n % lanes == 0 && (n / lanes * kernel.words as usize) % kernel.vector as usize == 0;
        if span == 0 || updates_row == 0 || !unit_aligned(data_row) {
            return None;
        }
        Some(GatheredRows {
            kernel,
            updates_row: updates_row / lanes,
            data_row: data_row / lanes,
            index_stride: if positions > 1 { g.indices.strides[0] } else { 0 },
            axis_size: rows,
            policy: g.out_of_range,
        })
    }

    /// Moves each member (position `p`'s first updates unit) to data row `g[p]`'s: `index(i)`
    /// is element `i` of the gather's index buffer (position `p`'s is at `p` times the indices'
    /// stride), normalized here under its policy (out of range under `zero`: [`ZERO_MEMBER`]).
    /// `Err((p, g[p]))` for an index out of range under `error` (the caller checks them first,
    /// in row-major order, so none is) or a row whose offset leaves 32 bits or is
    /// [`ZERO_MEMBER`] (the plan keeps the data's elements below 2^32, so none does).
    pub fn fold(&self, members: &mut [u32], index: impl Fn(usize) -> i128) -> Result<(), (usize, i128)> {
        let s = self.axis_size as i128;
        for m in members {
            let p = *m as usize / self.updates_row;
            let v = index(p * self.index_stride);
            let normalized = if v < 0 { v + s } else { v };
            let row = match self.policy {
                OutOfRange::Clamp => normalized.clamp(0, s - 1),
                _ if (0..s).contains(&normalized) => normalized,
                OutOfRange::Zero => {
                    *m = ZERO_MEMBER;
                    continue;
                }
                _ => return Err((p, v)),
            };
            let at = (row as usize).checked_mul(self.data_row);
            *m = at.and_then(|a| u32::try_from(a).ok()).filter(|&a| a != ZERO_MEMBER).ok_or((p, v))?;
        }
        Ok(())
    }

    /// The gather's axis size (its index's range).
    pub fn axis_size(&self) -> usize {
        self.axis_size
    }
}
