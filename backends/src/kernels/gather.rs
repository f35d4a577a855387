use super::index::read_index;
use super::{locate, mark_ran, read_lane};
use cubecl::prelude::*;
use stridex_core::kernel::{IndexRead, MoveDesc};

/// Gather: invocation `ABSOLUTE_POS` writes output word (or vector of words) `ABSOLUTE_POS`.
#[allow(clippy::too_many_arguments)]
#[cube(launch_unchecked)]
pub fn gather_kernel<N: Size>(
    data: &[Vector<u32, N>],
    indices: &[u32],
    output: &mut [Vector<u32, N>],
    status: &mut [u32],
    limit: u32,
    slots: u32,
    #[comptime] m: MoveDesc,
    #[comptime] r: IndexRead,
) {
    let pos = ABSOLUTE_POS;
    mark_ran(pos, status);
    // A `_` walk is specialized without its count: `limit` and `slots` bound it.
    let active = if comptime!(m.dynamic) {
        pos < usize::cast_from(limit)
    } else {
        pos < comptime!(m.invocations as usize)
    };
    if active {
        if comptime!(m.lanes == 1) {
            let (valid, src, index) = locate(pos, slots, m.clone());
            if valid {
                let (ok, axis_offset) = read_index(indices, index, status, r);
                let mut v = Vector::<u32, N>::new(0u32);
                if ok {
                    v = data[src + axis_offset];
                }
                output[pos] = v;
            }
        } else {
            gather_lanes(data, indices, output, status, pos, slots, m, r);
        }
    }
}

/// 8- and 16-bit elements that do not travel in whole words: assemble one output word.
#[allow(clippy::too_many_arguments)]
#[cube]
fn gather_lanes<N: Size>(
    data: &[Vector<u32, N>],
    indices: &[u32],
    output: &mut [Vector<u32, N>],
    status: &mut [u32],
    pos: usize,
    slots: u32,
    #[comptime] m: MoveDesc,
    #[comptime] r: IndexRead,
) {
    let lanes = comptime!(m.lanes);
    let bits = comptime!(32 / lanes);
    let mut out = 0u32;
    #[unroll]
    for lane in 0..comptime!(lanes as usize) {
        let (valid, src, index) = locate(pos * comptime!(lanes as usize) + lane, slots, m.clone());
        if valid {
            let (ok, axis_offset) = read_index(indices, index, status, r);
            if ok {
                out |= read_lane(data, src + axis_offset, lanes) << comptime!(lane as u32 * bits);
            }
        }
    }
    output[pos] = Vector::new(out);
}
