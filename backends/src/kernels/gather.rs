use super::{locate, mark_ran, read_lane};
use cubecl::prelude::*;
use stridex_core::kernel::{IndexRead, MoveDesc};
use stridex_core::OutOfRange;

/// Gather: invocation `ABSOLUTE_POS` writes output word (or vector of words) `ABSOLUTE_POS`.
#[cube(launch_unchecked)]
pub fn gather_kernel<N: Size>(
    data: &Array<Vector<u32, N>>,
    indices: &Array<u32>,
    output: &mut Array<Vector<u32, N>>,
    status: &mut Array<u32>,
    #[comptime] m: MoveDesc,
    #[comptime] r: IndexRead,
) {
    let pos = ABSOLUTE_POS;
    mark_ran(pos, status);
    if pos < comptime!(m.invocations as usize) {
        if comptime!(m.lanes == 1) {
            let (valid, src, index) = locate(pos, m.clone());
            if valid {
                let (ok, axis_offset) = read_index(indices, index, status, r);
                let mut v = Vector::<u32, N>::new(0u32);
                if ok {
                    v = data[src + axis_offset];
                }
                output[pos] = v;
            }
        } else {
            gather_lanes(data, indices, output, status, pos, m, r);
        }
    }
}

/// 8- and 16-bit elements that do not travel in whole words: assemble one output word.
#[cube]
fn gather_lanes<N: Size>(
    data: &Array<Vector<u32, N>>,
    indices: &Array<u32>,
    output: &mut Array<Vector<u32, N>>,
    status: &mut Array<u32>,
    pos: usize,
    #[comptime] m: MoveDesc,
    #[comptime] r: IndexRead,
) {
    let lanes = comptime!(m.lanes);
    let bits = comptime!(32 / lanes);
    let mut out = 0u32;
    #[unroll]
    for lane in 0..comptime!(lanes as usize) {
        let (valid, src, index) = locate(pos * comptime!(lanes as usize) + lane, m.clone());
        if valid {
            let (ok, axis_offset) = read_index(indices, index, status, r);
            if ok {
                out |= read_lane(data, src + axis_offset, lanes) << comptime!(lane as u32 * bits);
            }
        }
    }
    output[pos] = Vector::new(out);
}

/// Reads the index at word offset `at`, applies the out-of-range policy, and returns whether
/// to read the source, and the source offset of the gathered element along the axis.
// The comptime `if`s stay apart from runtime ones: collapsed, the check would be generated for
// every policy.
#[allow(clippy::collapsible_if)]
#[cube]
pub(crate) fn read_index(
    indices: &Array<u32>,
    at: usize,
    status: &mut Array<u32>,
    #[comptime] r: IndexRead,
) -> (bool, usize) {
    let s = comptime!(r.axis_size);
    let clamp = comptime!(r.policy == OutOfRange::Clamp);
    let mut ok = false;
    let mut index = 0u32;
    // 32-bit arithmetic only: widening to 64 bits gave wrong answers on lavapipe. A 64-bit
    // index is its low word plus a high word that must be the low word's sign extension.
    if comptime!(s != 0) {
        let lo = indices[at];
        index = lo;
        if comptime!(r.index_type.is_signed()) {
            let mut negative = lo >= 0x8000_0000u32;
            let mut high_ok = true;
            if comptime!(r.index_words == 2) {
                let hi = indices[at + 1];
                negative = hi >= 0x8000_0000u32;
                high_ok = hi == 0u32 || hi == 0xFFFF_FFFFu32;
            }
            // Statements, not `if` expressions: CubeCL mis-evaluated one whose branches were
            // both constants.
            if negative {
                // -s..-1 wraps to s - |v|: adding s modulo 2^32.
                ok = high_ok && lo >= comptime!(0u32.wrapping_sub(s));
                index = lo + s;
            } else {
                ok = high_ok && lo < s;
            }
            if comptime!(clamp) {
                if !ok {
                    if negative {
                        index = 0u32;
                    } else {
                        index = comptime!(s - 1);
                    }
                }
                ok = true;
            }
        } else {
            ok = lo < s;
            if comptime!(r.index_words == 2) {
                ok = ok && indices[at + 1] == 0u32;
            }
            if comptime!(clamp) {
                if !ok {
                    index = comptime!(s - 1);
                }
                ok = true;
            }
        }
    }
    if comptime!(r.policy == OutOfRange::Error) {
        if !ok {
            status[0] = 1u32;
        }
    }
    (ok, usize::cast_from(index) * comptime!(r.axis_stride as usize))
}
