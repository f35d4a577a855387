//! The grouping kernels (`stridex_core::kernel::ScatterGroupingDesc`): the grouped scatter's
//! lists built on the device from its index buffer. Each position's run as its key, the runs'
//! counts (integer atomic adds) and their prefix sums (each run's first slot), then a stable
//! radix sort of the positions by key, 8 bits at a time (histograms per block of positions,
//! their prefix sums, and each position moved past the positions of its block before it with
//! the same digit). Atomics only count, so the lists are the host's (`ScatterPlan::group`)
//! every run (under `none` the host keeps a run's last position alone, these all of them: the
//! kernel applies the last either way).

// `#[cube]` loops over index ranges; it has no slice iterators.
#![allow(clippy::needless_range_loop)]

use super::index::scatter_index_of;
use super::{offline_definition, start};
use crate::launch::{self, Queued, RAN_MARKER};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{Scan, ScatterGroupingDesc};

/// Position `p`'s key: the run its index names, or `runs` where its policy drops it.
#[cube(launch_unchecked)]
pub fn keys_kernel(
    indices: &[u32],
    keys: &mut [u32],
    status: &mut [u32],
    count: u32,
    #[comptime] d: ScatterGroupingDesc,
) {
    let p = ABSOLUTE_POS;
    if start(p, status, count, true, 0u32) {
        let (ok, run) = scatter_index_of(indices, p * comptime!(d.index.index_words as usize), d.index);
        let mut key = u32::cast_from(run);
        if !ok {
            key = comptime!(d.runs);
        }
        keys[p] = key;
    }
}

/// Position `p` counts one for its run (a dropped one for none).
#[cube(launch_unchecked)]
pub fn count_kernel(
    keys: &[u32],
    counts: &[Atomic<u32>],
    status: &mut [u32],
    count: u32,
    #[comptime] d: ScatterGroupingDesc,
) {
    let p = ABSOLUTE_POS;
    if start(p, status, count, true, 0u32) {
        let key = keys[p];
        if key < comptime!(d.runs) {
            counts[usize::cast_from(key)].fetch_add(1u32);
        }
    }
}

/// The exclusive prefix sum of `len` counts into `out`, its total at `out[len]`, in one cube
/// of `units` units (a power of two): unit `u` sums counts `u * stretch ..` (`Scan::stretch`),
/// the cube scans those sums in shared memory (a step per bit of `units`, each read before
/// any write), then each unit writes its stretch's prefixes after the sums of the units
/// before it. Every unit reaches every `sync_cube`: none returns early.
#[cube(launch_unchecked)]
pub fn scan_kernel(
    counts: &[u32],
    out: &mut [u32],
    status: &mut [u32],
    len: u32,
    stretch: u32,
    #[comptime] units: u32,
) {
    let u = UNIT_POS as usize;
    if u == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    let first = u * usize::cast_from(stretch);
    let mut end = first + usize::cast_from(stretch);
    if end > usize::cast_from(len) {
        end = usize::cast_from(len);
    }
    let mut total = 0u32;
    for i in first..end {
        total += counts[i];
    }
    let mut sums = Shared::<[u32]>::new_slice(comptime!(units as usize));
    sums[u] = total;
    sync_cube();
    let mut gap = 1usize;
    #[unroll]
    for _ in 0..comptime!(units.trailing_zeros()) {
        let mut sum = sums[u];
        if u >= gap {
            sum += sums[u - gap];
        }
        sync_cube();
        sums[u] = sum;
        sync_cube();
        gap *= 2;
    }
    let mut before = sums[u] - total;
    for i in first..end {
        out[i] = before;
        before += counts[i];
    }
    if u == comptime!(units as usize - 1) {
        out[usize::cast_from(len)] = sums[u];
    }
}

/// Position `i` counts one for its key's digit at `shift` in its block (`hist[digit * blocks +
/// block]`).
#[cube(launch_unchecked)]
pub fn histogram_kernel(
    keys: &[u32],
    hist: &[Atomic<u32>],
    status: &mut [u32],
    count: u32,
    blocks: u32,
    #[comptime] d: ScatterGroupingDesc,
    #[comptime] shift: u32,
) {
    let i = ABSOLUTE_POS;
    if start(i, status, count, true, 0u32) {
        let digit = usize::cast_from((keys[i] >> shift) & 255u32);
        let block = i / comptime!(d.block as usize);
        hist[digit * usize::cast_from(blocks) + block].fetch_add(1u32);
    }
}

/// Position `i` of the order so far moves to its digit's offset for its block plus the
/// positions of its block before it with the same digit: the sort by this digit, stable. The
/// first digit's order is the positions' own (`first`: `positions_in` unread).
#[allow(clippy::too_many_arguments)]
#[cube(launch_unchecked)]
pub fn move_kernel(
    keys_in: &[u32],
    positions_in: &[u32],
    offsets: &[u32],
    keys_out: &mut [u32],
    positions_out: &mut [u32],
    status: &mut [u32],
    count: u32,
    blocks: u32,
    #[comptime] d: ScatterGroupingDesc,
    #[comptime] shift: u32,
    #[comptime] first: bool,
) {
    let i = ABSOLUTE_POS;
    if start(i, status, count, true, 0u32) {
        let key = keys_in[i];
        let digit = (key >> shift) & 255u32;
        let block = i / comptime!(d.block as usize);
        let mut to = offsets[usize::cast_from(digit) * usize::cast_from(blocks) + block];
        for j in block * comptime!(d.block as usize)..i {
            if (keys_in[j] >> shift) & 255u32 == digit {
                to += 1u32;
            }
        }
        let mut position = u32::cast_from(i);
        if comptime!(!first) {
            position = positions_in[i];
        }
        // The histogram counted every position once: `to` is below them. A slot past the end
        // is refused, not written.
        if to < count {
            keys_out[usize::cast_from(to)] = key;
            positions_out[usize::cast_from(to)] = position;
        }
    }
}

/// Slot `i` of the sorted positions: its member, where its position was kept (the dropped
/// ones sort last, past `every[runs]`).
#[cube(launch_unchecked)]
pub fn members_kernel(
    keys: &[u32],
    positions: &[u32],
    members: &mut [u32],
    status: &mut [u32],
    count: u32,
    #[comptime] d: ScatterGroupingDesc,
) {
    let i = ABSOLUTE_POS;
    if start(i, status, count, true, 0u32) {
        let position = positions[i];
        if keys[i] < comptime!(d.runs) && position < count {
            members[i] = position * comptime!(d.member_step);
        }
    }
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
/// `ScatterGroupingDesc::of` for the plan they were checked against). Every other buffer is
/// made here, as long as the kernels index it, whatever words a dropped kernel leaves in them
/// (a key is not trusted to be a run): a count is added for a key below `runs` alone (the
/// counts' length); a digit's bin, `digit * blocks + block`, is below `256 * blocks`; a sorted
/// slot is tested against the positions before it is written, and a sorted position before it
/// becomes a member. The members count words of the updates' runs, so the grouped kernel reads
/// inside the updates; it clamps its lists to `every[runs]`, which counts positions once each.
pub(crate) unsafe fn queue(
    client: &Client,
    d: &ScatterGroupingDesc,
    indices: &Handle,
) -> (DeviceLists, Vec<Queued>) {
    let words = |n: u32| client.empty((n as usize).max(1) * 4);
    let zeros = |n: u32| launch::upload(client, &[], n as usize);
    let arg = |h: &Handle| unsafe { BufferArg::from_raw_parts(h.clone(), h.size_in_used() as usize / 4) };
    let over = |n: u32| launch::cube_count(client, n);
    let dim = launch::cube_dim(client);
    let mut queued = Vec::new();
    let mut status = || {
        let s = launch::status(client);
        queued.push(Queued::new(s.clone()));
        unsafe { BufferArg::from_raw_parts(s, 2) }
    };
    let [mut keys, mut order] = [words(d.positions), words(d.positions)];
    let [mut keys_next, mut order_next] = [words(d.positions), words(d.positions)];
    // Zeros where a dropped kernel would leave the next one stale words: with them, every
    // start and member the grouped kernel reads stays inside the lists and the updates even
    // then (the statuses report the dropped kernel once the launch is waited on).
    let (counts, every) = (zeros(d.runs), zeros(d.runs + 1));
    let members = zeros(d.positions);
    let bins = 256 * d.blocks;
    // Compiled without the count of positions, which the kernels take as a launch argument:
    // one set of kernels for every count of a `_` scatter.
    let (c, n) = (d.specialized(), d.positions);
    // SAFETY: (of the caller) each index read lies in `indices`; the rest as said above.
    unsafe {
        keys_kernel::launch_unchecked(client, over(n), dim, arg(indices), arg(&keys), status(), n, c);
        count_kernel::launch_unchecked(client, over(n), dim, arg(&keys), arg(&counts), status(), n, c);
        queue_scan(client, d.runs_scan, &counts, &every, &mut status);
        for digit in 0..d.digits {
            let (hist, offsets) = (zeros(bins), words(bins + 1));
            let shift = 8 * digit;
            histogram_kernel::launch_unchecked(
                client,
                over(n),
                dim,
                arg(&keys),
                arg(&hist),
                status(),
                n,
                d.blocks,
                c,
                shift,
            );
            queue_scan(client, d.digits_scan, &hist, &offsets, &mut status);
            move_kernel::launch_unchecked(
                client,
                over(n),
                dim,
                arg(&keys),
                arg(&order),
                arg(&offsets),
                arg(&keys_next),
                arg(&order_next),
                status(),
                n,
                d.blocks,
                c,
                shift,
                digit == 0,
            );
            std::mem::swap(&mut keys, &mut keys_next);
            std::mem::swap(&mut order, &mut order_next);
        }
        members_kernel::launch_unchecked(
            client,
            over(n),
            dim,
            arg(&keys),
            arg(&order),
            arg(&members),
            status(),
            n,
            c,
        );
    }
    (DeviceLists { every, members }, queued)
}

/// Queues the scan `s` of `counts` into `out` (`s.len + 1` words).
///
/// # Safety
/// `counts` holds `s.len` words and `out` `s.len + 1`.
unsafe fn queue_scan(
    client: &Client,
    s: Scan,
    counts: &Handle,
    out: &Handle,
    status: &mut impl FnMut() -> BufferArg,
) {
    let arg = |h: &Handle| unsafe { BufferArg::from_raw_parts(h.clone(), h.size_in_used() as usize / 4) };
    let units = scan_units(client);
    // SAFETY: (of the caller) unit `u`'s stretch ends at `s.len` at most, and the total lands
    // at `out[s.len]`; the shared sums are `units` long, one per unit of the cube.
    unsafe {
        scan_kernel::launch_unchecked(
            client,
            CubeCount::Static(1, 1, 1),
            CubeDim::new_1d(units),
            arg(counts),
            arg(out),
            status(),
            s.len,
            s.stretch(units),
            units,
        );
    }
}

/// The units of the scan's cube: [`SCAN_UNITS`], or fewer where a cube holds fewer (CubeCL's
/// CPU runtime), a power of two either way.
fn scan_units(client: &Client) -> u32 {
    let most = client.properties().hardware.max_units_per_cube.clamp(1, SCAN_UNITS);
    1 << most.ilog2()
}

/// The scan's units on GPUs: a cube of 256 units is what every WebGPU device takes.
const SCAN_UNITS: u32 = 256;

/// The grouping kernels' definitions, each headed, with the grouped kernel's last (for
/// `explain`; a digit's three kernels shown once, for the lowest digit).
pub(crate) fn definitions(
    d: &ScatterGroupingDesc,
    grouped: KernelDefinition,
) -> Vec<(Option<String>, Option<KernelDefinition>)> {
    // As `queue` compiles them: the counts and sizes are launch arguments.
    let d = d.specialized();
    let all = [
        (
            "each position's run (its key)",
            offline_definition!(keys_kernel::KeysKernel, buffers[indices keys status], (), d),
        ),
        (
            "each run's positions counted",
            offline_definition!(count_kernel::CountKernel, buffers[keys counts status], (), d),
        ),
        (
            "the scan: each run's first slot (one cube)",
            offline_definition!(scan_kernel::ScanKernel, buffers[counts out status], (), (), SCAN_UNITS),
        ),
        (
            "a digit: its histogram per block",
            offline_definition!(histogram_kernel::HistogramKernel, buffers[keys hist status], (), (), d, 0),
        ),
        (
            "a digit: each position moved to its place (after the histogram's scan)",
            offline_definition!(move_kernel::MoveKernel, buffers[keys_in positions_in offsets keys_out positions_out status], (), (), d, 0, true),
        ),
        (
            "a later digit: each position of the order so far moved",
            offline_definition!(move_kernel::MoveKernel, buffers[keys_in positions_in offsets keys_out positions_out status], (), (), d, 8, false),
        ),
        (
            "the sorted positions' members",
            offline_definition!(members_kernel::MembersKernel, buffers[keys positions members status], (), d),
        ),
        ("the grouped kernel, over every run", grouped),
    ];
    let n = all.len();
    all.into_iter()
        .enumerate()
        .map(|(k, (what, definition))| (Some(format!("kernel {} of {n}: {what}", k + 1)), Some(definition)))
        .collect()
}
