//! The grouping kernels (`stridex_core::kernel::ScatterGroupingDesc`): the grouped scatter's
//! lists built on the device from its index buffer. Counts per run (integer atomic adds), their
//! prefix sums in chunks, a racing placement of each position in its run's list (an atomic
//! subtraction), then each position's rank among its list's positions: the list in row-major
//! order. Only the placement's order depends on the race, and the rank undoes it, so the lists
//! are the host's (`ScatterPlan::group`) every run.

// `#[cube]` loops over index ranges; it has no slice iterators.
#![allow(clippy::needless_range_loop)]

use super::index::index_of;
use super::offline_definition;
use crate::launch::{self, Queued, RAN_MARKER};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::ScatterGroupingDesc;

/// Position `p` counts one for the run its index names (a dropped index counts nowhere).
#[cube(launch_unchecked)]
pub fn count_kernel(
    indices: &[u32],
    counts: &[Atomic<u32>],
    status: &mut [u32],
    #[comptime] d: ScatterGroupingDesc,
) {
    let p = ABSOLUTE_POS;
    if p == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    if p < comptime!(d.positions as usize) {
        let (ok, run) = index_of(indices, p * comptime!(d.index.index_words as usize), d.index);
        if ok {
            counts[run].fetch_add(1u32);
        }
    }
}

/// Chunk `c`'s total count.
#[cube(launch_unchecked)]
pub fn chunk_totals_kernel(
    counts: &[u32],
    totals: &mut [u32],
    status: &mut [u32],
    #[comptime] d: ScatterGroupingDesc,
) {
    let c = ABSOLUTE_POS;
    if c == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    if c < comptime!(d.chunks as usize) {
        let (start, end) = chunk_runs(c, d);
        let mut total = 0u32;
        for g in start..end {
            total += counts[g];
        }
        totals[c] = total;
    }
}

/// One invocation: each chunk's total replaced by the totals before it, and the sum of all
/// after the last run's start (`every[runs]`).
#[cube(launch_unchecked)]
pub fn chunk_offsets_kernel(
    totals: &mut [u32],
    every: &mut [u32],
    status: &mut [u32],
    #[comptime] d: ScatterGroupingDesc,
) {
    if ABSOLUTE_POS == 0 {
        status[1] = comptime!(RAN_MARKER);
        let mut before = 0u32;
        for c in 0..comptime!(d.chunks as usize) {
            let total = totals[c];
            totals[c] = before;
            before += total;
        }
        every[comptime!(d.runs as usize)] = before;
    }
}

/// Chunk `c`'s runs' starts: `every[g]` is the count of the runs before `g`.
#[cube(launch_unchecked)]
pub fn starts_kernel(
    counts: &[u32],
    totals: &[u32],
    every: &mut [u32],
    status: &mut [u32],
    #[comptime] d: ScatterGroupingDesc,
) {
    let c = ABSOLUTE_POS;
    if c == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    if c < comptime!(d.chunks as usize) {
        let (start, end) = chunk_runs(c, d);
        let mut before = totals[c];
        for g in start..end {
            every[g] = before;
            before += counts[g];
        }
    }
}

/// Position `p` takes a slot of its run's list (which one is a race: `counts` counts down).
/// A slot outside the run's list cannot be taken (the counts were made by the same reads); it
/// is refused rather than written.
#[cube(launch_unchecked)]
pub fn place_kernel(
    indices: &[u32],
    every: &[u32],
    counts: &[Atomic<u32>],
    order: &mut [u32],
    status: &mut [u32],
    #[comptime] d: ScatterGroupingDesc,
) {
    let p = ABSOLUTE_POS;
    if p == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    if p < comptime!(d.positions as usize) {
        let (ok, run) = index_of(indices, p * comptime!(d.index.index_words as usize), d.index);
        if ok {
            let left = counts[run].fetch_sub(1u32);
            let (start, end) = (every[run], every[run + 1]);
            // `left` is at least 1 where the counts hold; a wrapped slot fails the test.
            let slot = start + left - 1u32;
            if slot >= start && slot < end && end <= comptime!(d.positions) {
                order[usize::cast_from(slot)] = u32::cast_from(p);
            }
        }
    }
}

/// Position `p` writes its member where its rank among its run's positions puts it.
#[cube(launch_unchecked)]
pub fn rank_kernel(
    indices: &[u32],
    every: &[u32],
    order: &[u32],
    members: &mut [u32],
    status: &mut [u32],
    #[comptime] d: ScatterGroupingDesc,
) {
    let p = ABSOLUTE_POS;
    if p == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    if p < comptime!(d.positions as usize) {
        let (ok, run) = index_of(indices, p * comptime!(d.index.index_words as usize), d.index);
        if ok {
            let start = usize::cast_from(every[run]);
            let end = usize::cast_from(every[run + 1]);
            let me = u32::cast_from(p);
            let mut at = start;
            if end <= comptime!(d.positions as usize) {
                for i in start..end {
                    if order[i] < me {
                        at += 1;
                    }
                }
                if at < end {
                    members[at] = me * comptime!(d.member_step);
                }
            }
        }
    }
}

/// The runs of chunk `c`: `c * chunk ..`, the last chunk's ending at the last run.
#[cube]
fn chunk_runs(c: usize, #[comptime] d: ScatterGroupingDesc) -> (usize, usize) {
    let start = c * comptime!(d.chunk as usize);
    let mut end = start + comptime!(d.chunk as usize);
    if end > comptime!(d.runs as usize) {
        end = comptime!(d.runs as usize);
    }
    (start, end)
}

/// The lists on the device: `every` (`runs + 1` starts) and `members` (`positions` words, the
/// first `every[runs]` of them listed), for the grouped kernel over every run.
pub(crate) struct DeviceLists {
    pub every: Handle,
    pub members: Handle,
}

/// Queues the grouping kernels on `indices`.
///
/// # Safety
/// `indices` holds `d.positions` packed indices of `d.index`'s type (`d` made by
/// `ScatterGroupingDesc::of` for the plan they were checked against). Every write the kernels
/// make is inside the buffers made here: a run is an index `index_of` kept (below `runs`), and
/// a slot or rank is tested against its run's list, which the scan keeps below `positions`.
pub(crate) unsafe fn queue(
    client: &Client,
    d: &ScatterGroupingDesc,
    indices: &Handle,
) -> (DeviceLists, Vec<Queued>) {
    let (positions, runs, chunks) = (d.positions as usize, d.runs as usize, d.chunks as usize);
    let counts = launch::upload(client, &[], runs);
    let totals = client.empty(chunks * 4);
    let every = client.empty((runs + 1) * 4);
    let order = client.empty(positions * 4);
    // Zeros: a member the rank did not write (it writes every listed one) names position 0's
    // update, inside the updates, never a garbage offset.
    let members = launch::upload(client, &[], positions);
    let words = |h: &Handle| h.size_in_used() as usize / 4;
    let arg = |h: &Handle| unsafe { BufferArg::from_raw_parts(h.clone(), words(h)) };
    let statuses: Vec<Handle> = (0..5).map(|_| launch::status(client)).collect();
    let status = |i: usize| unsafe { BufferArg::from_raw_parts(statuses[i].clone(), 2) };
    let over = |n: u32| launch::cube_count(client, n);
    let dim = launch::cube_dim(client);
    unsafe {
        // SAFETY: (of the caller) each index read lies in `indices`; every other buffer is
        // sized here for what the kernels index: runs, chunks, `runs + 1` starts, positions.
        count_kernel::launch_unchecked(
            client,
            over(d.positions),
            dim,
            arg(indices),
            arg(&counts),
            status(0),
            *d,
        );
        chunk_totals_kernel::launch_unchecked(
            client,
            over(d.chunks),
            dim,
            arg(&counts),
            arg(&totals),
            status(1),
            *d,
        );
        chunk_offsets_kernel::launch_unchecked(
            client,
            over(1),
            dim,
            arg(&totals),
            arg(&every),
            status(2),
            *d,
        );
        starts_kernel::launch_unchecked(
            client,
            over(d.chunks),
            dim,
            arg(&counts),
            arg(&totals),
            arg(&every),
            status(3),
            *d,
        );
        place_kernel::launch_unchecked(
            client,
            over(d.positions),
            dim,
            arg(indices),
            arg(&every),
            arg(&counts),
            arg(&order),
            status(4),
            *d,
        );
    }
    let rank_status = launch::status(client);
    unsafe {
        // SAFETY: as above.
        rank_kernel::launch_unchecked(
            client,
            over(d.positions),
            dim,
            arg(indices),
            arg(&every),
            arg(&order),
            arg(&members),
            BufferArg::from_raw_parts(rank_status.clone(), 2),
            *d,
        );
    }
    let mut queued: Vec<Queued> = statuses.into_iter().map(Queued::new).collect();
    queued.push(Queued::new(rank_status));
    (DeviceLists { every, members }, queued)
}

/// The grouping kernels' definitions, each headed as the first six of seven kernels, the
/// grouped kernel the seventh (for `explain`).
pub(crate) fn definitions(d: &ScatterGroupingDesc) -> Vec<(Option<String>, Option<KernelDefinition>)> {
    let d = *d;
    let head = |s: &str| Some(s.to_string());
    vec![
        (
            head("kernel 1 of 7: each position counted for its run"),
            Some(offline_definition!(count_kernel::CountKernel, buffers[indices counts status], d)),
        ),
        (
            head("kernel 2 of 7: the counts' totals per chunk of runs"),
            Some(
                offline_definition!(chunk_totals_kernel::ChunkTotalsKernel, buffers[counts totals status], d),
            ),
        ),
        (
            head("kernel 3 of 7: the chunks' offsets"),
            Some(
                offline_definition!(chunk_offsets_kernel::ChunkOffsetsKernel, buffers[totals every status], d),
            ),
        ),
        (
            head("kernel 4 of 7: each run's first slot"),
            Some(offline_definition!(starts_kernel::StartsKernel, buffers[counts totals every status], d)),
        ),
        (
            head("kernel 5 of 7: each position placed in its run's list, in no order"),
            Some(
                offline_definition!(place_kernel::PlaceKernel, buffers[indices every counts order status], d),
            ),
        ),
        (
            head("kernel 6 of 7: each position's member written at its rank in its run's list"),
            Some(
                offline_definition!(rank_kernel::RankKernel, buffers[indices every order members status], d),
            ),
        ),
    ]
}
