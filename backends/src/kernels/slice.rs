use super::{locate, mark_ran, read_lane};
use cubecl::prelude::*;
use stridex_core::kernel::MoveDesc;

/// Slice: invocation `ABSOLUTE_POS` writes output word (or vector of words) `ABSOLUTE_POS`.
#[cube(launch_unchecked)]
pub fn slice_kernel<N: Size>(
    input: &[Vector<u32, N>],
    output: &mut [Vector<u32, N>],
    status: &mut [u32],
    limit: u32,
    slots: u32,
    #[comptime] m: MoveDesc,
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
            let (valid, forward, backward) = locate(pos, slots, m.clone());
            if valid {
                // Backward steps never exceed forward ones for an element (a window read
                // backwards starts at its end), so the difference does not wrap.
                output[pos] = input[forward - backward];
            }
        } else {
            let lanes = comptime!(m.lanes);
            let bits = comptime!(32 / lanes);
            let mut out = 0u32;
            #[unroll]
            for lane in 0..comptime!(lanes as usize) {
                let (valid, forward, backward) =
                    locate(pos * comptime!(lanes as usize) + lane, slots, m.clone());
                if valid {
                    out |= read_lane(input, forward - backward, lanes) << comptime!(lane as u32 * bits);
                }
            }
            output[pos] = Vector::new(out);
        }
    }
}
