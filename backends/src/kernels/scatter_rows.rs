//! The owned-row scatter kernels (`stridex_core::kernel::ScatterRowsDesc`): every index
//! position claims its destination row with an atomic maximum of its ordinal plus one, then
//! every position whose claim won copies its row. The claims buffer is zeroed per launch.

use super::index::scatter_index_of;
use super::{offline_definition, start};
use crate::launch::{self, Queued, RAN_MARKER};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::ScatterRowsDesc;

/// Position `p` claims the row its index names (a dropped index claims nothing). Under `error`
/// both kernels take every index as in range (`scatter_index_of`): a check must have found
/// them so before they are queued.
#[cube(launch_unchecked)]
pub fn claim_rows_kernel(
    indices: &[u32],
    claims: &[Atomic<u32>],
    status: &mut [u32],
    positions: u32,
    #[comptime] k: ScatterRowsDesc,
) {
    let p = ABSOLUTE_POS;
    if start(p, status, positions, true, 0u32) {
        let (ok, row) = scatter_index_of(indices, p * comptime!(k.index.index_words as usize), k.index);
        if ok {
            claims[row].fetch_max(u32::cast_from(p) + 1u32);
        }
    }
}

/// Invocation `i` copies a group of vectors of one position's row, where its claim won.
// The claim is read in an `if` of its own, only for an index in range; `#[cube]` has no slice
// copies.
#[allow(clippy::collapsible_if, clippy::manual_memcpy)]
#[cube(launch_unchecked)]
pub fn write_rows_kernel<N: Size>(
    updates: &[Vector<u32, N>],
    indices: &[u32],
    claims: &[Atomic<u32>],
    dest: &mut [Vector<u32, N>],
    status: &mut [u32],
    positions: u32,
    #[comptime] k: ScatterRowsDesc,
) {
    let i = ABSOLUTE_POS;
    if i == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    let per = comptime!(per_invocation(k.run) as usize);
    let groups = comptime!((k.run / per_invocation(k.run)) as usize);
    if i < usize::cast_from(positions) * groups {
        let p = i / groups;
        let v = (i % groups) * per;
        let (ok, row) = scatter_index_of(indices, p * comptime!(k.index.index_words as usize), k.index);
        if ok {
            if claims[row].load() == u32::cast_from(p) + 1u32 {
                let to = row * comptime!(k.dest_row as usize) + v;
                let mut from = p * comptime!(k.updates_row as usize) + v;
                if comptime!(k.updates_base != 0) {
                    from += comptime!(k.updates_base as usize);
                }
                #[unroll]
                for j in 0..per {
                    dest[to + j] = updates[from + j];
                }
            }
        }
    }
}

/// Vectors each write invocation copies: up to 8 (128 bytes), so its index read and claim
/// check serve several.
fn per_invocation(run: u32) -> u32 {
    [8, 4, 2, 1].into_iter().find(|p| run % p == 0).unwrap_or(1)
}

/// Queues both kernels on a zeroed claims buffer of their own.
///
/// # Safety
/// The caller made `k` with `ScatterRowsDesc::of` for the plan the buffers were checked
/// against: `indices` holds `k.positions` packed indices, `updates` their rows (row `p` at
/// vector `k.updates_base + p * k.updates_row`: with `of_chain`, the chain's data, whose
/// slices put them there), and `dest` `k.rows` rows `k.dest_row` vectors apart (a
/// normalized index is below `k.rows`).
pub(crate) unsafe fn queue(
    client: &Client,
    k: &ScatterRowsDesc,
    updates: &Handle,
    indices: &Handle,
    dest: &Handle,
) -> Vec<Queued> {
    let claims = launch::upload(client, &[], k.rows as usize);
    let words = |h: &Handle| h.size_in_used() as usize / 4;
    let vectors = |h: &Handle| h.size_in_used() as usize / (4 * k.vector as usize);
    // One status for both: the write kernel's marker shows that both ran (they run in order).
    let status = launch::status(client);
    // Compiled without the count, which bounds the invocations as a launch argument: one
    // kernel pair for every count of a `_` scatter.
    let compiled = k.specialized();
    unsafe {
        // SAFETY: (of the caller) every position's index and row, and every row a normalized
        // index names, lie in these buffers; `claims` has a word per row.
        claim_rows_kernel::launch_unchecked(
            client,
            launch::cube_count(client, k.positions),
            launch::cube_dim(client),
            BufferArg::from_raw_parts(indices.clone(), words(indices)),
            BufferArg::from_raw_parts(claims.clone(), words(&claims)),
            BufferArg::from_raw_parts(status.clone(), 2),
            k.positions,
            compiled.clone(),
        );
        write_rows_kernel::launch_unchecked(
            client,
            launch::cube_count(client, k.positions * (k.run / per_invocation(k.run))),
            launch::cube_dim(client),
            k.vector as usize,
            BufferArg::from_raw_parts(updates.clone(), vectors(updates)),
            BufferArg::from_raw_parts(indices.clone(), words(indices)),
            BufferArg::from_raw_parts(claims.clone(), words(&claims)),
            BufferArg::from_raw_parts(dest.clone(), vectors(dest)),
            BufferArg::from_raw_parts(status.clone(), 2),
            k.positions,
            compiled,
        );
    }
    vec![Queued::new(status)]
}

/// Both kernels' definitions for `k`, as their launchers specialize them (for `explain`).
pub(crate) fn definitions(k: &ScatterRowsDesc) -> [KernelDefinition; 2] {
    let claim = offline_definition!(
        claim_rows_kernel::ClaimRowsKernel,
        buffers[indices claims status],
        (),
        k.specialized(),
    );
    let write = offline_definition!(
        write_rows_kernel::WriteRowsKernel,
        buffers[updates indices claims dest status],
        (),
        k.vector as usize,
        k.specialized(),
    );
    [claim, write]
}
