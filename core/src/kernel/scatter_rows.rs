//! The owned-row scatter: a scatter of whole rows along axis 0 under `none` (a KV cache's
//! write of new tokens' rows at slot ids), with no grouping on the host.
//!
//! Under `none` only the last write to a row reaches the result. A first kernel has every
//! index position claim its destination row with an integer atomic maximum of its ordinal
//! (plus one) in a zeroed buffer of one word per row; a second writes each position's row only
//! where its claim won. The maximum is the last position in the indices' row-major order,
//! whatever order the claims arrive in, so the result is the serial reference's, every run,
//! with no read-back of the indices (no float atomics: the data's words are only copied).

use super::scatter_lines::device_reads;
use super::IndexRead;
use crate::layout::TensorLayout;
use crate::rules::{Duplicates, GatherForm, Reduction};
use crate::scatter::ScatterPlan;

/// An owned-row scatter kernel pair, specialized on a plan and the layout it writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScatterRowsDesc {
    /// Index positions (the packed indices' elements), each writing one row.
    pub positions: u32,
    /// Rows of the destination (its size along axis 0): the claims buffer's words.
    pub rows: u32,
    /// Vectors of [`Self::vector`] 32-bit words per row, in the updates and the destination.
    pub run: u32,
    /// Vectors from one destination row to the next.
    pub dest_row: u32,
    /// 32-bit words per vector: 4, 2 or 1.
    pub vector: u32,
    pub index: IndexRead,
    /// Under `error`: the check of every index before anything is written (see
    /// `ScatterLinesDesc::check`).
    pub check: Option<(IndexRead, u32)>,
}

impl ScatterRowsDesc {
    /// The kernels of `plan` writing `dest` (the packed output, or the data in place), where
    /// they apply: ScatterUpdate along axis 0 under `none` (duplicates allowed), packed indices
    /// and updates, and rows of whole 32-bit words packed in the destination.
    pub fn of(plan: &ScatterPlan, dest: &TensorLayout) -> Option<ScatterRowsDesc> {
        let elem = plan.data_type().size();
        if plan.map.form != GatherForm::Axis
            || plan.map.axis != 0
            || plan.reduction != Reduction::None
            || plan.duplicates == Duplicates::Error
            || !plan.map.indices.is_packed()
            || !plan.updates.is_packed()
        {
            return None;
        }
        // The row (every dimension after the axis) packed in the destination too.
        let mut span = 1usize;
        for d in (1..dest.rank()).rev() {
            if dest.sizes[d] > 1 && dest.strides[d] != span {
                return None;
            }
            span = span.checked_mul(dest.sizes[d])?;
        }
        let row_bytes = plan.run_len().checked_mul(elem)?;
        let rows = dest.sizes[0];
        let dest_row_bytes = if rows > 1 { dest.strides[0].checked_mul(elem)? } else { row_bytes };
        if row_bytes == 0 || row_bytes % 4 != 0 || dest_row_bytes % 4 != 0 {
            return None;
        }
        let (run_words, dest_row_words) = (row_bytes / 4, dest_row_bytes / 4);
        let vector = [4, 2, 1].into_iter().find(|v| run_words % v == 0 && dest_row_words % v == 0)?;
        let positions = plan.map.indices.num_elements();
        if positions == 0 {
            // Nothing is written, and a launch of no invocations would not show that it ran.
            return None;
        }
        let word = |n: usize| u32::try_from(n).ok();
        // Claims are ordinals plus one, and every (position, vector) pair is an invocation.
        word(positions.checked_add(1)?)?;
        word(positions.checked_mul(run_words / vector)?)?;
        let (index, check) = device_reads(plan, word(rows)?, word(dest_row_words / vector)?)?;
        Some(ScatterRowsDesc {
            positions: word(positions)?,
            rows: word(rows)?,
            run: word(run_words / vector)?,
            dest_row: word(dest_row_words / vector)?,
            vector: vector as u32,
            index,
            check,
        })
    }
}
