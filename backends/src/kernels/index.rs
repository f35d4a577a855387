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
/// the loop's arithmetic is its cost (f32[4096, 4096] axis 1 <- [4096, 512], 2026-11-28): the
/// line kernel reading its indices with [`index_of`]'s range test ran at 0.7-0.8x Burn's
/// kernel, which reads them with none; with this read at 0.9-1.1x (four runs each).
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
            // -s..-1 wraps to s - |v|. An index in range is negative where its low word's top
            // bit is set, unless the axis passes 2^31 (then only a 64-bit one's high word says).
            let mut negative = lo >= 0x8000_0000u32;
            if comptime!(r.index_words == 2 && s > 0x8000_0000u32) {
                negative = indices[at + 1] >= 0x8000_0000u32;
            }
            if negative {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch;
    use stridex_core::IndexType;

    /// Writes `(ok, index)` of each of `n` indices as [`scatter_index_of`] reads them.
    #[cube(launch_unchecked)]
    fn probe_kernel(indices: &[u32], out: &mut [u32], #[comptime] r: IndexRead, #[comptime] n: u32) {
        let p = ABSOLUTE_POS;
        if p < comptime!(n as usize) {
            let (ok, index) = scatter_index_of(indices, p * comptime!(r.index_words as usize), r);
            let mut flag = 0u32;
            if ok {
                flag = 1u32;
            }
            out[2 * p] = flag;
            out[2 * p + 1] = u32::cast_from(index);
        }
    }

    /// `(ok, index)` of each value read as `index_type` on an axis of `s`, under `policy`.
    fn probe(index_type: IndexType, policy: OutOfRange, s: u32, values: &[i128]) -> Vec<(bool, u32)> {
        let words = index_type.words();
        let packed: Vec<u32> =
            values.iter().flat_map(|&v| [v as u32, (v >> 32) as u32].into_iter().take(words)).collect();
        let r = IndexRead {
            index_type,
            policy,
            axis_size: s,
            axis_stride: 1,
            index_words: words as u32,
            offset: 0,
        };
        let client = crate::Device::default_device().unwrap().client();
        let indices = launch::upload(client, bytemuck::cast_slice(&packed), packed.len());
        let out = launch::upload(client, &[], 2 * values.len());
        let n = values.len() as u32;
        // SAFETY: invocation `p < n` reads index `p` (`words` words) and writes words `2p`,
        // `2p + 1`: both buffers were made that long.
        unsafe {
            probe_kernel::launch_unchecked(
                client,
                launch::cube_count(client, n),
                launch::cube_dim(client),
                BufferArg::from_raw_parts(indices.clone(), packed.len()),
                BufferArg::from_raw_parts(out.clone(), 2 * values.len()),
                r,
                n,
            );
        }
        let bytes = launch::read(client, out).unwrap();
        let words: &[u32] = bytemuck::cast_slice(&bytes[..8 * values.len()]);
        words.chunks(2).map(|w| (w[0] == 1, w[1])).collect()
    }

    /// Under `error` (a check found every index in range first) an index is normalized with no
    /// range test, and bounded by the axis whatever it is; under the others as `index_of`
    /// reads it. Axes past 2^31 take a 64-bit index's sign from its high word.
    #[test]
    fn scatter_indices_are_normalized_and_bounded() {
        use IndexType::{I32, I64, U32, U64};
        use OutOfRange::{Error, Zero};
        let ok = |v: &[u32]| v.iter().map(|&i| (true, i)).collect::<Vec<_>>();
        // In range: as given, negative ones from the end.
        assert_eq!(probe(I32, Error, 5, &[0, 4, -1, -5]), ok(&[0, 4, 4, 0]));
        assert_eq!(probe(I64, Error, 5, &[0, 4, -1, -5]), ok(&[0, 4, 4, 0]));
        assert_eq!(probe(U32, Error, 5, &[0, 4]), ok(&[0, 4]));
        assert_eq!(probe(U64, Error, 5, &[3]), ok(&[3]));
        // Out of range (a buffer changed since its check): some element of the axis, never
        // one past it.
        let inside = |read: Vec<(bool, u32)>| read.iter().all(|&(ok, i)| ok && i < 5);
        assert!(inside(probe(I32, Error, 5, &[5, -6, i32::MAX as i128, i32::MIN as i128])));
        assert!(inside(probe(I64, Error, 5, &[1 << 32, -(1 << 40), 7, i64::MIN as i128])));
        assert!(inside(probe(U64, Error, 5, &[(1 << 32) + 2, 9, u64::MAX as i128])));
        // An axis of 3 * 10^9: 64-bit indices past 2^31 are positive, their negatives wrap.
        let s = 3_000_000_000u32;
        let big = [2_999_999_999i128, 2_147_483_648, -1, -3_000_000_000];
        assert_eq!(probe(I64, Error, s, &big), ok(&[2_999_999_999, 2_147_483_648, 2_999_999_999, 0]));
        assert_eq!(
            probe(U32, Error, s, &[2_999_999_999, 3_000_000_000]),
            ok(&[2_999_999_999, 2_999_999_999])
        );
        // Under `zero`: an index out of range is dropped.
        assert_eq!(probe(I32, Zero, 5, &[-5, 5, -6]), vec![(true, 0), (false, 0), (false, 0)]);
        assert_eq!(probe(I64, Zero, s, &[2_147_483_648, -1]), ok(&[2_147_483_648, 2_999_999_999]));
    }
}
