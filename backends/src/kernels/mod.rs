//! The CubeCL kernels, each specialized by a comptime descriptor from `stridex_core::kernel`:
//! the row kernel (gathers and slices whose output rows are whole vector lines), and a gather
//! and a slice kernel for any layout (the slot walk), sharing the `#[cube]` pieces below.
//!
//! Buffers are arrays of 32-bit words (or vectors of them): data movement does not care about
//! types, and WGSL has no 8-, 16- or 64-bit storage. Index arithmetic is 32-bit (`usize` under
//! CubeCL's default 32-bit address type); every divisor is a literal.

mod gather;
mod index;
mod rows;
mod slice;

pub use gather::gather_kernel;
pub use rows::rows_kernel;
pub use slice::slice_kernel;

use cubecl::prelude::*;
use stridex_core::kernel::MoveDesc;

/// Written to `status[1]` by invocation 0. CubeCL drops a launch whose kernel fails to expand
/// or compile with only a log line; a missing marker turns that into an error.
pub const RAN_MARKER: u32 = 0x5354_5844;

/// Marks the launch as having run (see [`RAN_MARKER`]).
#[cube]
pub(crate) fn mark_ran(pos: usize, status: &mut [u32]) {
    if pos == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
}

/// Where output slot `slot` comes from: whether it is an element (not padding), the sum of its
/// forward source steps (from the base offset), and a second sum: the backward source steps of
/// a slice's negative strides, or the indices word offset of a gather. The two never meet (a
/// gather's source strides are never negative, a slice has no indices), and sharing one
/// accumulator leaves no variable unused in either kernel (NVRTC warns on those).
#[cube]
pub(crate) fn locate(slot: usize, slots: u32, #[comptime] m: MoveDesc) -> (bool, usize, usize) {
    let mut rem = slot;
    let mut valid = true;
    if comptime!(m.check_total) {
        // A `_` walk's slot count is a launch argument; others' a constant.
        valid = if comptime!(m.dynamic) {
            slot < usize::cast_from(slots)
        } else {
            slot < comptime!(m.out_slots as usize)
        };
    }
    let mut forward = 0usize;
    if comptime!(m.base != 0) {
        forward = comptime!(m.base as usize);
    }
    let mut second = 0usize;
    #[unroll]
    for i in 0..comptime!(m.dims.len()) {
        let d = comptime!(m.dims[i]);
        // A broadcast dim of the output may feed neither sum: then its coordinate is not needed.
        if comptime!(d.check || d.src_stride != 0 || d.index_stride != 0) {
            // A unit stride is the innermost dim: the remainder is the coordinate. (`rem` is
            // not reset there: `let c = rem` binds the same variable in CubeCL.)
            let c = if comptime!(d.out_stride == 1) { rem } else { rem / comptime!(d.out_stride as usize) };
            if comptime!(d.check) {
                valid = valid && c < comptime!(d.size as usize);
            }
            if comptime!(d.src_stride != 0) {
                if comptime!(d.src_backwards) {
                    second += c * comptime!(d.src_stride as usize);
                } else {
                    forward += c * comptime!(d.src_stride as usize);
                }
            }
            if comptime!(d.index_stride != 0) {
                second += c * comptime!(d.index_stride as usize);
            }
        }
        if comptime!(d.out_stride != 1) {
            rem %= comptime!(d.out_stride as usize);
        }
    }
    if comptime!(m.check_rem) {
        valid = valid && rem == 0;
    }
    (valid, forward, second)
}

/// Reads one `32 / lanes`-bit element at element offset `elem` of a word array (vectors of one).
#[cube]
pub(crate) fn read_lane<N: Size>(words: &[Vector<u32, N>], elem: usize, #[comptime] lanes: u32) -> u32 {
    let per_word = comptime!(lanes as usize);
    let bits = comptime!(32 / lanes);
    let word = words[elem / per_word].extract(0usize);
    let shift = u32::cast_from(elem % per_word) * bits;
    (word >> shift) & comptime!(((1u64 << bits) - 1) as u32)
}
