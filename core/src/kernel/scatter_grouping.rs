//! Grouping on the device: the lists of the grouped scatter kernel (every destination run's
//! index positions, in row-major order) built from an index buffer on the device, so that no
//! index is read back and nothing is sorted on the host.
//!
//! The positions are sorted by the run they write with a stable least-significant-digit radix
//! sort, whose result is the same every run (atomics only count):
//!
//! 1. *keys*: each position's run, or `runs` for one its policy drops (sorted last);
//! 2. *counts* and their *scan* (one cube): each run's first slot, `every[g]`, as
//!    `ScatterGroups::every_run` has it, and `every[runs]`, the positions kept;
//! 3. per 8-bit digit of the keys, lowest first: each block of `block` positions counts its
//!    digits (a histogram, digit-major), the histogram is scanned, and each position moves to
//!    its digit's offset for its block plus the positions of its block before it with the same
//!    digit (it reads its block: at most `block` reads, whatever the duplication). Blocks in
//!    order and positions in order within a block keep the sort stable;
//! 4. *members*: the sorted positions' updates, the first `every[runs]` of them.
//!
//! Each position reads at most `block` keys per digit, so the work is bounded by the positions
//! times the block, whatever the ids (a padding id taking half the positions costs what Zipf ids
//! do). It is still far more work than the host's sort where an invocation is a SIMD lane of a
//! CPU thread (lavapipe, CubeCL's CPU runtime): the backend groups on the device on GPUs only.

use super::scatter_lines::device_reads;
use super::IndexRead;
use crate::dims::size_product;
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
    /// The scan of the runs' counts.
    pub runs_scan: Scan,
    /// Positions per block of the sort, the blocks, and the sort's 8-bit digits (enough for the
    /// keys `0..=runs`).
    pub block: u32,
    pub blocks: u32,
    pub digits: u32,
    /// The scan of a digit's histogram (`256 * blocks` counts).
    pub digits_scan: Scan,
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
        let positions = size_product(plan.keyed.iter().map(|k| k.size));
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
            || plan.run_len() == 0
        {
            return None;
        }
        // Run `g` is index value `g`: the kernels count per value below `runs`.
        if axis.size != runs {
            return None;
        }
        let word = |n: usize| u32::try_from(n).ok();
        let member_step = plan.run_len() / plan.lanes();
        // Every member must fit a word, and the kernels' counters and offsets too (the keys
        // reach `runs`, the histogram `256 * blocks` plus its total).
        word(positions.checked_mul(member_step.max(1))?)?;
        word(positions.checked_mul(plan.map.index_type.words())?)?;
        // A scan's chunk ends past its last count (`start + chunk`) in 32 bits: half the range.
        let half = u32::MAX as usize / 2;
        let blocks = positions.div_ceil(SORT_BLOCK);
        let bins = blocks.checked_mul(256)?;
        if runs >= half || bins >= half {
            return None;
        }
        let digits = (usize::BITS - runs.leading_zeros()).div_ceil(8).max(1);
        let (index, check) = device_reads(plan, word(axis.size)?, 1)?;
        Some(ScatterGroupingDesc {
            positions: word(positions)?,
            runs: word(runs)?,
            runs_scan: Scan { len: word(runs)? },
            block: SORT_BLOCK as u32,
            blocks: word(blocks)?,
            digits,
            digits_scan: Scan { len: word(bins)? },
            member_step: word(member_step)?,
            index,
            check,
        })
    }

    /// The constants the kernels are compiled on: these but for what the count of positions
    /// decides (the positions, their blocks, the histograms' scan and the `error` check's
    /// count), which they take as launch arguments, so that a `_` scatter's every count shares
    /// them. The scans' kernels take their sizes as launch arguments whatever the count.
    pub fn specialized(&self) -> ScatterGroupingDesc {
        ScatterGroupingDesc {
            positions: 0,
            blocks: 0,
            digits_scan: Scan { len: 0 },
            check: self.check.map(|(read, _)| (read, 0)),
            ..*self
        }
    }
}

/// Positions per block of the device's sort: each reads up to this many keys per digit.
const SORT_BLOCK: usize = 256;

/// An exclusive prefix sum of `len` counts on the device, the total written after the last:
/// one cube, each of its units summing a stretch of the counts, the units' sums scanned in
/// shared memory, then each unit writing its stretch's prefixes. One launch whose longest
/// chain of loads is two stretches, where a scan in chunks took three launches with a serial
/// pass over the chunks' totals between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scan {
    pub len: u32,
}

impl Scan {
    /// The counts each of `units` units sums: the stretches cover the counts, the last ones
    /// empty where `units` does not divide them.
    pub const fn stretch(self, units: u32) -> u32 {
        self.len.div_ceil(units)
    }
}
