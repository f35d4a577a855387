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
use crate::chain::{ChainPlan, StagePlan};
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
    /// Where position `p`'s row starts in the updates buffer, in vectors: `updates_base + p *
    /// updates_row` (0 and `run` for packed updates; a chain's slices of its data otherwise).
    pub updates_base: u32,
    pub updates_row: u32,
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
        dest.packed_row_span()?;
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
            updates_base: 0,
            updates_row: word(run_words / vector)?,
            index,
            check,
        })
    }

    /// The constants the kernels are compiled on: these but for the count of positions (and
    /// of the `error` check's indices), which they take as a launch argument, so that a `_`
    /// scatter's every count shares them.
    pub fn specialized(&self) -> ScatterRowsDesc {
        ScatterRowsDesc { positions: 0, check: self.check.map(|(read, _)| (read, 0)), ..self.clone() }
    }

    /// The kernels of a chain that ends in a scatter of whole rows and whose other stages are
    /// slices, fused: the write kernel reads each position's row straight from the chain's
    /// data, where the slices put it, so no intermediate is written. It applies where each row
    /// is contiguous in the data and starts on a whole vector (a KV cache's K or V, sliced
    /// from each token's QKV rows) and the indices are one dimension.
    pub fn of_chain(chain: &ChainPlan) -> Option<ScatterRowsDesc> {
        let (stage, plan) = chain.scatter()?;
        let k = ScatterRowsDesc::of(plan, &plan.map.data)?;
        if stage < 2 || plan.map.indices.rank() != 1 {
            return None;
        }
        let (base, strides) = slice_view(chain, stage - 1)?;
        let sizes = &plan.updates.sizes;
        // The row (every dimension after the first) packed in the data.
        let mut span = 1i64;
        for d in (1..sizes.len()).rev() {
            if sizes[d] > 1 && strides[d] != span {
                return None;
            }
            span = span.checked_mul(i64::try_from(sizes[d]).ok()?)?;
        }
        let elem = i64::try_from(chain.data_type.size()).ok()?;
        // A `_` chain's rows step by the same stride at every count (one kernel for all).
        let row_stride = if sizes[0] > 1 || chain.dynamic_leading { strides[0] } else { 0 };
        let (base_bytes, row_bytes) = (base.checked_mul(elem)?, row_stride.checked_mul(elem)?);
        if base_bytes < 0 || row_bytes < 0 || base_bytes % 4 != 0 || row_bytes % 4 != 0 {
            return None;
        }
        let (base_words, row_words) =
            (u64::try_from(base_bytes / 4).ok()?, u64::try_from(row_bytes / 4).ok()?);
        let (run_words, dest_row_words) = (u64::from(k.run * k.vector), u64::from(k.dest_row * k.vector));
        let vector = [4u64, 2, 1]
            .into_iter()
            .find(|v| [run_words, dest_row_words, base_words, row_words].iter().all(|w| w % v == 0))?;
        let word = |n: u64| u32::try_from(n).ok();
        let mut index = k.index;
        index.axis_stride = word(dest_row_words / vector)?;
        Some(ScatterRowsDesc {
            run: word(run_words / vector)?,
            dest_row: word(dest_row_words / vector)?,
            vector: word(vector)?,
            updates_base: word(base_words / vector)?,
            updates_row: word(row_words / vector)?,
            index,
            ..k
        })
    }
}

/// The element offset in the chain's data of each output element of its first `stages`
/// stages, where they are all slices: `base + Σ y_i strides_i` over the output coordinates
/// `y`. A slice keeps each dimension apart: input coordinate `i` is the window's start plus
/// the window's stride times output coordinate `i`.
fn slice_view(chain: &ChainPlan, stages: usize) -> Option<(i64, Vec<i64>)> {
    let rank = chain.data.rank();
    // Per dimension, the data coordinate as `start + scale * y`.
    let (mut start, mut scale) = (vec![0i64; rank], vec![1i64; rank]);
    for stage in chain.stages[..stages].iter().rev() {
        let StagePlan::Slice(s) = stage else { return None };
        let (offsets, sizes, steps) = s.window.as_ref()?;
        for i in 0..rank {
            let first = i64::try_from(offsets[i]).ok()?
                + if steps[i] < 0 { i64::try_from(sizes[i]).ok()? - 1 } else { 0 };
            start[i] = first.checked_add(steps[i].checked_mul(start[i])?)?;
            scale[i] = steps[i].checked_mul(scale[i])?;
        }
    }
    let mut base = 0i64;
    let mut strides = Vec::with_capacity(rank);
    for i in 0..rank {
        let stride = i64::try_from(chain.data.strides[i]).ok()?;
        base = base.checked_add(start[i].checked_mul(stride)?)?;
        strides.push(scale[i].checked_mul(stride)?);
    }
    Some((base, strides))
}
