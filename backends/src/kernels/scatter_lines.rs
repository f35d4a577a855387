//! The line scatter kernel (`stridex_core::kernel::ScatterLinesDesc`): the `parts`
//! invocations of line `l` each walk line `l` of a ScatterElements' indices along the axis, in
//! order, reading each index on the device and applying the updates whose index falls in their
//! part (`index % parts`) to the element it names in the line's own line of the destination.
//! Lines never share an element (nor a word: 32-bit elements only) and parts never share one
//! either, so no two invocations write one word and the order of each element's updates is
//! the serial reference's.

use super::index::{index_of, scatter_index_of};
use super::scatter::combine;
use super::{offline_definition, start_below};
use crate::launch::{self, Queued, RAN_MARKER};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{IndexRead, ScatterLinesDesc};
use stridex_core::Reduction;

/// The line kernel. Under `error` it takes every index as in range (`k.index`, read by
/// `scatter_index_of`): a check must have found them so before it is queued. Its lines' length
/// `len` is a launch argument: one compiled kernel serves every count of a `_` ScatterElements
/// (whose count is that length).
#[cube(launch_unchecked)]
pub fn scatter_lines_kernel(
    updates: &[u32],
    indices: &[u32],
    dest: &mut [u32],
    status: &mut [u32],
    len: u32,
    #[comptime] k: ScatterLinesDesc,
) {
    let invocation = ABSOLUTE_POS;
    let parts = comptime!(k.parts as usize);
    let line = invocation / parts;
    let part = invocation % parts;
    // `with_parts` keeps `lines * parts` within 32 bits.
    if start_below(invocation, status, comptime!(k.lines * k.parts)) {
        let mut rem = line;
        let mut at_indices = 0usize;
        let mut at_updates = 0usize;
        let mut at_dest = 0usize;
        #[unroll]
        for i in 0..comptime!(k.dims.len()) {
            let d = comptime!(k.dims[i]);
            let c = rem / comptime!(d.step as usize);
            rem %= comptime!(d.step as usize);
            at_indices += c * comptime!(d.indices_stride as usize);
            at_updates += c * comptime!(d.updates_stride as usize);
            at_dest += c * comptime!(d.dest_stride as usize);
        }
        for j in 0..usize::cast_from(len) {
            let (ok, index) =
                scatter_index_of(indices, at_indices + j * comptime!(k.indices_step as usize), k.index);
            // A dropped update (`zero`, `skip`) writes nothing; under `error` a check before
            // this kernel found every index in range, and the read only bounds it by the axis.
            // Another part's element is that part's to write.
            let mut mine = ok;
            if comptime!(k.parts > 1) {
                mine = ok && index % parts == part;
            }
            if mine {
                let to = at_dest + index * comptime!(k.index.axis_stride as usize);
                let u = updates[at_updates + j * comptime!(k.updates_step as usize)];
                if comptime!(k.reduction == Reduction::None) {
                    dest[to] = u;
                } else {
                    dest[to] = combine(dest[to], u, k.dtype, k.reduction);
                }
            }
        }
    }
}

/// Raises the status flag when one of the first `count` indices of a packed buffer is out of
/// range (`r`'s policy is `error`): the check before a line scatter under `error`, on the
/// device, so only a flagged launch reads the indices back. The count is a launch argument:
/// one compiled check serves every count of a `_` scatter.
#[cube(launch_unchecked)]
pub fn index_check_kernel(indices: &[u32], status: &mut [u32], count: u32, #[comptime] r: IndexRead) {
    let i = ABSOLUTE_POS;
    if i == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    // A run of indices per invocation: one each kept lavapipe busy starting invocations.
    let start = i * comptime!(CHECK_RUN as usize);
    let count = usize::cast_from(count);
    if start < count {
        let mut all_ok = true;
        let mut end = start + comptime!(CHECK_RUN as usize);
        if end > count {
            end = count;
        }
        for at in start..end {
            let (ok, _) = index_of(indices, at * comptime!(r.index_words as usize), r);
            all_ok = all_ok && ok;
        }
        if !all_ok {
            status[0] = 1u32;
        }
    }
}

/// Indices each invocation of [`index_check_kernel`] checks.
const CHECK_RUN: u32 = 64;

/// Queues [`index_check_kernel`].
///
/// # Safety
/// `indices` holds at least `count` indices of `r`'s type, packed.
pub(crate) unsafe fn queue_check(client: &Client, r: IndexRead, count: u32, indices: &Handle) -> Queued {
    let status = launch::status(client);
    unsafe {
        // SAFETY: (of the caller) invocation `i` reads indices `CHECK_RUN * i ..` below
        // `count`, inside the buffer.
        index_check_kernel::launch_unchecked(
            client,
            launch::cube_count(client, count.div_ceil(CHECK_RUN)),
            launch::cube_dim(client),
            BufferArg::from_raw_parts(indices.clone(), indices.size_in_used() as usize / 4),
            BufferArg::from_raw_parts(status.clone(), 2),
            count,
            r,
        );
    }
    Queued::new(status)
}

/// Queues the line kernel.
///
/// # Safety
/// The kernel reads each line's indices and updates and writes the elements they name: the
/// caller made `k` with `ScatterLinesDesc::of` for the plan the buffers were checked against
/// (every line's positions lie in the indices and updates; an index is normalized into the
/// axis or dropped, so every element written lies in `dest`'s layout).
pub(crate) unsafe fn queue(
    client: &Client,
    k: &ScatterLinesDesc,
    updates: &Handle,
    indices: &Handle,
    dest: &Handle,
) -> Queued {
    let status = launch::status(client);
    let words = |h: &Handle| h.size_in_used() as usize / 4;
    // Compiled without the lines' length, a launch argument.
    let compiled = with_parts(&k.specialized(), super::tile_spread(client));
    unsafe {
        // SAFETY: (of the caller) every offset the descriptor forms, its positions `0..k.len`
        // along each line included, lies in these buffers; the parts change which invocation
        // writes an element, not which elements are written.
        scatter_lines_kernel::launch_unchecked(
            client,
            launch::cube_count(client, compiled.lines * compiled.parts),
            launch::cube_dim(client),
            BufferArg::from_raw_parts(updates.clone(), words(updates)),
            BufferArg::from_raw_parts(indices.clone(), words(indices)),
            BufferArg::from_raw_parts(dest.clone(), words(dest)),
            BufferArg::from_raw_parts(status.clone(), 2),
            k.len,
            compiled,
        );
    }
    Queued::new(status)
}

/// The line kernel's definition for `k`, as its launcher specializes it (for `explain`; parts
/// as `offline_tile_spread` says).
pub(crate) fn definition(k: &ScatterLinesDesc) -> KernelDefinition {
    let k = with_parts(&k.specialized(), super::offline_tile_spread());
    offline_definition!(scatter_lines_kernel::ScatterLinesKernel, buffers[updates indices dest status], (), k)
}

/// `k` with the invocations per line its runtime takes (`ScatterLinesDesc::parts`): where tiles
/// spread (GPUs), a warp's width or the axis's size rounded up to a power of two, whichever is
/// smaller, while the invocations fit 32 bits; else one.
fn with_parts(k: &ScatterLinesDesc, gpu: bool) -> ScatterLinesDesc {
    let wanted = match gpu {
        // The axis's size rounded up to a power of two, at most a warp's width.
        true => match k.index.axis_size {
            size if size >= GPU_LINE_PARTS => GPU_LINE_PARTS,
            size => size.max(1).next_power_of_two(),
        },
        false => 1,
    };
    let parts = if k.lines.checked_mul(wanted).is_some() { wanted } else { 1 };
    ScatterLinesDesc { parts, ..k.clone() }
}

/// A warp's width: a line's updates walked by a warp's lanes, each applying those of its own
/// elements, read every index from one cache line at once.
const GPU_LINE_PARTS: u32 = 32;
