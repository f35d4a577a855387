//! Grouping on the device: the lists of the grouped scatter kernel (every destination run's
//! index positions, in row-major order) built from an index buffer on the device, so that no
//! index is read back and nothing is sorted on the host.
//!
//! Six kernels, each a plain pass (integer atomics only where the result does not depend on
//! their order):
//!
//! 1. *count*: each kept position adds one to its run's count (an atomic add: a sum of ones);
//! 2. *scan* (three kernels): the counts' exclusive prefix sums, in chunks: each chunk's total,
//!    then the totals' prefix (one invocation), then each chunk's starts: `every[g]`, run `g`'s first slot, as
//!    `ScatterGroups::every_run` has it;
//! 3. *place*: each kept position takes a slot of its run's list with an atomic subtraction
//!    from the count: which slot is a race, so the list is in no particular order;
//! 4. *rank*: each kept position counts the positions of its run's list below its own, and
//!    writes its member at `every[g]` plus that rank: the list in row-major order, whatever
//!    the race placed where.
//!
//! A rank reads its whole list, so a list of `L` positions costs `L²` reads: nothing on a GPU
//! (an embedding's most frequent id of 16384 Zipf draws: 1500 positions, 2.25M reads spread
//! over 1500 invocations), but far more than the host's sort on lavapipe or CubeCL's CPU
//! runtime, where an invocation is a SIMD lane of a CPU thread. The backend groups on the
//! device on GPUs only.

use super::scatter_lines::device_reads;
use super::IndexRead;
use crate::layout::TensorLayout;
use crate::rules::Duplicates;
use crate::scatter::ScatterPlan;

/// The grouping kernels' constants, for a plan and the layout written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScatterGroupingDesc {
    /// Index positions, each at word `p * index.index_words` of the packed indices.
    pub positions: u32,
    /// Destination runs, back to back (`ScatterPlan::back_to_back_runs`): run `g` is the one
    /// index value `g` names.
    pub runs: u32,
    /// Runs per chunk of the scan, and the chunks (`chunk * chunks >= runs`).
    pub chunk: u32,
    pub chunks: u32,
    /// The member of position `p` is `p * member_step`: its update's first element divided by
    /// the plan's lanes (the updates are packed, one run per position).
    pub member_step: u32,
    /// The read of a position's index (its policy; under `error` and `skip` as the line
    /// kernel reads them: `ScatterLinesDesc::index`).
    pub index: IndexRead,
    /// Under `error`: the read that checks every index on the device first, with their count.
    pub check: Option<(IndexRead, u32)>,
}

impl ScatterGroupingDesc {
    /// The grouping of `plan` writing `dest`, where one index per position names a run of
    /// runs lying back to back (a scatter along axis 0 of whole rows: an embedding's
    /// gradient), the indices and updates are packed, and the lists are all the kernel needs
    /// (`duplicates: error` needs the host, which names the two positions). `None` elsewhere:
    /// the host groups.
    pub fn of(plan: &ScatterPlan, dest: &TensorLayout) -> Option<ScatterGroupingDesc> {
        let runs = plan.back_to_back_runs(dest)?;
        let mut axes = plan.map.index_axes();
        let axis = axes.next()?;
        let positions: usize = plan.keyed.iter().map(|k| k.size).product();
        let keyed_lead_updates = plan.keyed.iter().enumerate().all(|(i, k)| k.updates_dim == i);
        if axes.next().is_some()
            || axis.offset != 0
            || plan.lane_words()
            || plan.duplicates == Duplicates::Error
            || !plan.map.indices.is_packed()
            || plan.map.indices.num_elements() != positions
            || !plan.updates.is_packed()
            || !keyed_lead_updates
            || positions == 0
            || runs == 0
        {
            return None;
        }
        let word = |n: usize| u32::try_from(n).ok();
        let member_step = plan.run_len() / plan.lanes();
        // Every member must fit a word, and the kernels' counters too.
        word(positions.checked_mul(member_step.max(1))?)?;
        word(positions.checked_mul(plan.map.index_type.words())?)?;
        // About the square root of the runs per chunk: the serial pass over the chunks' totals
        // and each chunk's walk stay equally short.
        let chunk = (runs as f64).sqrt().ceil() as usize;
        let chunk = chunk.clamp(64, runs.max(64));
        let (index, check) = device_reads(plan, word(axis.size)?, 1)?;
        Some(ScatterGroupingDesc {
            positions: word(positions)?,
            runs: word(runs)?,
            chunk: word(chunk)?,
            chunks: word(runs.div_ceil(chunk))?,
            member_step: word(member_step)?,
            index,
            check,
        })
    }
}
