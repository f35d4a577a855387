//! Reading a gather's index: the range check of its rule set, and the out-of-range policy.

use cubecl::prelude::*;
use stridex_core::kernel::IndexRead;
use stridex_core::OutOfRange;

/// Reads the index at word offset `at` and applies the out-of-range policy: whether it was in
/// range (always, under `clamp`), and the index normalized into `0..s` (0, an in-bounds
/// position, for an index out of range).
// The comptime `if`s stay apart from runtime ones: collapsed, the check would be generated for
// every policy.
#[allow(clippy::collapsible_if)]
#[cube]
pub(crate) fn index_of(indices: &[u32], at: usize, #[comptime] r: IndexRead) -> (bool, usize) {
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
        if comptime!(!clamp) {
            if !ok {
                index = 0u32;
            }
        }
    }
    (ok, usize::cast_from(index))
}

/// The index a scatter kernel reads (`stridex_core::kernel::ScatterLinesDesc::index` says
/// how): under `error`, one that a check before the kernel found in range, so it is only
/// normalized and bounded by the axis (the bound keeps a buffer written since the check inside
/// it); under the other policies as [`index_of`] reads it.
///
/// Measured on CubeCL's CPU runtime, where a ScatterElements line sits in a core's cache and
/// the loop's arithmetic is its cost (f32[4096, 4096] axis 1 <- [4096, 512], two runs each):
/// reading the index with [`index_of`]'s range test took 0.7-0.8x Burn's kernel, which reads
/// the index with none; with no test at all 0.9-1.0x.
#[allow(clippy::collapsible_if, unused_assignments)]
#[cube]
pub(crate) fn scatter_index_of(indices: &[u32], at: usize, #[comptime] r: IndexRead) -> (bool, usize) {
    let s = comptime!(r.axis_size);
    let mut ok = true;
    let mut index = 0u32;
    if comptime!(r.policy == OutOfRange::Error && s != 0) {
        let lo = indices[at];
        index = lo;
        if comptime!(r.index_type.is_signed()) {
            // -s..-1 wraps to s - |v| (a 64-bit index's low word carries its sign too).
            if lo >= 0x8000_0000u32 {
                index = lo + s;
            }
        }
        if index > comptime!(s - 1) {
            index = comptime!(s - 1);
        }
    } else {
        let (in_range, value) = index_of(indices, at, r);
        ok = in_range;
        index = u32::cast_from(value);
    }
    (ok, usize::cast_from(index))
}

/// Under the `error` policy, raises the status flag when some index was out of range.
#[allow(clippy::collapsible_if)]
#[cube]
pub(crate) fn flag_out_of_range(status: &mut [u32], all_ok: bool, #[comptime] r: IndexRead) {
    if comptime!(r.policy == OutOfRange::Error) {
        if !all_ok {
            status[0] = 1u32;
        }
    }
}

/// [`index_of`], raising the status flag itself and returning the source offset along the axis
/// (the slot walk reads one index at a time).
#[cube]
pub(crate) fn read_index(
    indices: &[u32],
    at: usize,
    status: &mut [u32],
    #[comptime] r: IndexRead,
) -> (bool, usize) {
    let (ok, index) = index_of(indices, at, r);
    flag_out_of_range(status, ok, r);
    (ok, index * comptime!(r.axis_stride as usize))
}
