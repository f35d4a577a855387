//! The convert kernel: a chain that ends in `convert`, fused. Invocation `ABSOLUTE_POS` takes a
//! tile of one row's elements (see `ConvertWalk`): the row's coordinates, reads and channel
//! once, then per element its source, the decode to f32, `x * scale + offset`, and the encode.
//! A 16-bit result is written a whole 32-bit word (two elements) at a time.
//!
//! Decoding and encoding use integer operations only (no f16 arithmetic, which WGSL has only
//! behind an extension): an f16 is widened by moving its fields, and f32 is rounded to f16 and
//! bf16 to nearest, ties to even, as the `half` crate does.

use super::rows::{read_step, times};
use super::{cpu_retile, index_args, offline_definition, start};
use crate::launch;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::ConvertWalk;
use stridex_core::DType;

/// Elements an invocation takes on CubeCL's CPU runtime at most, where an invocation costs far
/// more than on a GPU (as for the row walk's `cpu_tile`).
const CPU_TILE_MAX: u32 = 1024;

/// `data` is an array of 32-bit words, `output` of vectors of `NO` words (the walk's `line`);
/// `index0..index3` are the index buffers the walk's reads name (unused ones may be any
/// buffer). Offsets are wrapping 32-bit sums of signed coefficients from a `base` passed at
/// launch, as in the row kernel;
/// chains check `error`-policy indices on the host, so this kernel only keeps every read in
/// bounds (an index out of range reads element 0 of its axis, and its element converts 0).
#[allow(clippy::too_many_arguments)]
#[cube(launch_unchecked)]
pub fn convert_kernel<NO: Size>(
    data: &[u32],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<u32, NO>],
    status: &mut [u32],
    limit: u32,
    base: u32,
    #[comptime] w: ConvertWalk,
) {
    let pos = ABSOLUTE_POS;
    if start(pos, status, limit, w.dynamic, w.invocations) {
        let tiles = comptime!(w.row_len.div_ceil(w.tile) as usize);
        let first = (pos % tiles) * comptime!(w.tile as usize);
        tile(data, index0, index1, index2, index3, output, pos / tiles, first, base, w);
    }
}

/// Row `row`'s tile starting at element `first`.
#[allow(clippy::too_many_arguments)]
#[cube]
fn tile<NO: Size>(
    data: &[u32],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<u32, NO>],
    row: usize,
    first: usize,
    base: u32,
    #[comptime] w: ConvertWalk,
) {
    let slots = comptime!(w.reads.len().max(1));
    let mut ats = Array::<u32>::new(slots);
    let mut vals = Array::<u32>::new(slots);
    let (out_row, src, channel) = row_start(row, base, &mut ats, w.clone());
    let mut row_src = src;
    let mut row_ok = true;
    #[unroll]
    for j in 0..comptime!(w.reads.len()) {
        let r = comptime!(w.reads[j]);
        if comptime!(!r.per_element) {
            let (in_range, v) = read_step(index0, index1, index2, index3, ats[j], &mut vals, j, r);
            row_ok = row_ok && in_range;
            if comptime!(r.data != 0) {
                row_src += times(v, r.data);
            }
        }
    }
    // The row's channel, once a tile (a channel within the row is picked per element).
    let (scale, offset) = channel_values(channel, w.clone());
    let row = RowState { out_row, src: row_src, ok: row_ok, channel, scale, offset };
    let per_vector = comptime!(w.line_elems() as usize);
    let vectors = comptime!((w.tile / w.line_elems()) as usize);
    let partial = comptime!(w.row_len % w.tile != 0);
    if comptime!(vectors > 8) {
        // A long tile (the CPU runtime's): a loop, not unrolled copies.
        for k in 0..vectors {
            store(
                data,
                index0,
                index1,
                index2,
                index3,
                output,
                first + k * per_vector,
                &row,
                &ats,
                &mut vals,
                w.clone(),
            );
        }
    }
    #[unroll]
    for k in 0..comptime!(if vectors > 8 { 0 } else { vectors }) {
        let e = first + k * per_vector;
        if comptime!(partial) {
            // The one row's last word is half full: its invocation may start past the row.
            if e < comptime!(w.row_len as usize) {
                store(data, index0, index1, index2, index3, output, e, &row, &ats, &mut vals, w.clone());
            }
        } else {
            store(data, index0, index1, index2, index3, output, e, &row, &ats, &mut vals, w.clone());
        }
    }
}

/// What a tile's elements share: the row's first output element, its source element after the
/// row's reads, whether those were in range, its channel and that channel's scale and offset.
#[derive(CubeType)]
struct RowState {
    out_row: usize,
    src: u32,
    ok: bool,
    channel: u32,
    scale: f32,
    offset: f32,
}

/// The output vector (or word) holding row element `e` and the `line_elems - 1` after it.
#[allow(clippy::too_many_arguments)]
#[cube]
fn store<NO: Size>(
    data: &[u32],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<u32, NO>],
    e: usize,
    row: &RowState,
    ats: &Array<u32>,
    vals: &mut Array<u32>,
    #[comptime] w: ConvertWalk,
) {
    let lanes = comptime!(w.out_lanes() as usize);
    let mut v = Vector::<u32, NO>::new(0u32);
    #[unroll]
    for k in 0..comptime!(w.line as usize) {
        v.insert(k, word(data, index0, index1, index2, index3, e + k * lanes, row, ats, vals, w.clone()));
    }
    let mut at = row.out_row;
    if comptime!(lanes == 1 && w.inner.len() == 1 && w.inner[0].out_stride != 1) {
        // An f32 row that is not contiguous in the output: word by word (`line` is 1).
        at += e * comptime!(w.inner[0].out_stride as usize);
    } else {
        // A packed row whose tiles start on vector boundaries (or `line` is 1).
        at = (at + e) / comptime!(w.line_elems() as usize);
    }
    output[at] = v;
}

/// Where row `row` starts: its first output element, its source element before the reads, and
/// its channel (0 when the channel is not a row coordinate); each read's row part into `ats`.
/// Innermost dimension first; the outermost takes what is left, undivided.
#[cube]
fn row_start(row: usize, base: u32, ats: &mut Array<u32>, #[comptime] w: ConvertWalk) -> (usize, u32, u32) {
    let n = comptime!(w.outer.len());
    let reads = comptime!(w.reads.len());
    #[unroll]
    for j in 0..reads {
        ats[j] = comptime!(w.reads[j].base as u32);
    }
    let mut rem = row;
    let mut out = 0usize;
    // The base is a launch argument, as in the row kernel (`rows::rows_kernel` says why); added
    // to a new variable, so that `base` itself is not bound.
    let mut src = 0u32;
    src += base;
    let mut channel = 0u32;
    #[unroll]
    for i in 0..n {
        let d = comptime!(w.outer[n - 1 - i]);
        let mut c = 0usize;
        if comptime!(i + 1 < n) {
            c = rem % comptime!(d.size as usize);
            rem /= comptime!(d.size as usize);
        } else {
            c += rem;
        }
        out += c * comptime!(d.out_stride as usize);
        if comptime!(d.src != 0) {
            src += times(u32::cast_from(c), d.src);
        }
        #[unroll]
        for j in 0..reads {
            if comptime!(d.reads[j] != 0) {
                ats[j] += times(u32::cast_from(c), d.reads[j]);
            }
        }
        if comptime!(d.channel) {
            channel = u32::cast_from(c);
        }
    }
    (out, src, channel)
}

/// The output word holding row element `e` (and, for a 16-bit result, `e + 1`).
#[allow(clippy::too_many_arguments)]
#[cube]
fn word(
    data: &[u32],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    e: usize,
    row: &RowState,
    ats: &Array<u32>,
    vals: &mut Array<u32>,
    #[comptime] w: ConvertWalk,
) -> u32 {
    let lo = element(data, index0, index1, index2, index3, e, row, ats, vals, w.clone());
    let mut hi = 0u32;
    if comptime!(w.out_lanes() == 2) {
        if comptime!(w.row_len % 2 == 1) {
            if e + 1 < comptime!(w.row_len as usize) {
                hi = element(data, index0, index1, index2, index3, e + 1, row, ats, vals, w.clone());
            }
        } else {
            hi = element(data, index0, index1, index2, index3, e + 1, row, ats, vals, w.clone());
        }
    }
    lo | (hi << 16u32)
}

/// Row element `e` converted: the bits of the result (in the low half for a 16-bit one).
#[allow(clippy::too_many_arguments)]
#[cube]
fn element(
    data: &[u32],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    e: usize,
    row: &RowState,
    ats: &Array<u32>,
    vals: &mut Array<u32>,
    #[comptime] w: ConvertWalk,
) -> u32 {
    let m = comptime!(w.inner.len());
    let reads = comptime!(w.reads.len());
    let per_element = comptime!(w.reads.iter().any(|r| r.per_element));
    let slots = comptime!(reads.max(1));
    let mut at_elem = row.src;
    let mut channel = row.channel;
    let mut eats = Array::<u32>::new(slots);
    if comptime!(per_element) {
        #[unroll]
        for j in 0..reads {
            eats[j] = ats[j];
        }
    }
    let mut rem = e;
    #[unroll]
    for i in 0..m {
        let d = comptime!(w.inner[m - 1 - i]);
        let mut c = 0usize;
        if comptime!(i + 1 < m) {
            c = rem % comptime!(d.size as usize);
            rem /= comptime!(d.size as usize);
        } else {
            c += rem;
        }
        if comptime!(d.src != 0) {
            at_elem += times(u32::cast_from(c), d.src);
        }
        if comptime!(per_element) {
            #[unroll]
            for j in 0..reads {
                if comptime!(d.reads[j] != 0) {
                    eats[j] += times(u32::cast_from(c), d.reads[j]);
                }
            }
        }
        if comptime!(d.channel) {
            channel = u32::cast_from(c);
        }
    }
    let mut ok = row.ok;
    #[unroll]
    for j in 0..reads {
        let r = comptime!(w.reads[j]);
        if comptime!(r.per_element) {
            let (in_range, v) = read_step(index0, index1, index2, index3, eats[j], vals, j, r);
            ok = ok && in_range;
            if comptime!(r.data != 0) {
                at_elem += times(v, r.data);
            }
        }
    }
    let mut x = decode(data, at_elem, w.from);
    if !ok {
        x = 0.0f32;
    }
    let mut scale = row.scale;
    let mut offset = row.offset;
    if comptime!(w.channel_in_row()) {
        let (s, o) = channel_values(channel, w.clone());
        scale = s;
        offset = o;
    }
    let mut y = x * scale + offset;
    if comptime!(w.zero_scale_on_floats()) {
        // The IEEE product of an infinite or NaN `x` and a zero scale is NaN; compared as bits,
        // which no assumption about floats can fold away, unlike the product itself.
        let exponent = comptime!(0x7f80_0000u32);
        if (u32::reinterpret(x) & exponent) == exponent && (u32::reinterpret(scale) << 1u32) == 0u32 {
            y = f32::reinterpret(comptime!(0x7fc0_0000u32));
        }
    }
    encode(y, w.to)
}

/// Channel `c`'s scale and offset: constants, picked by comparisons (at most 16 channels).
// The initial values are runtime variables that the first channel's constants then fill.
#[allow(unused_assignments)]
#[cube]
fn channel_values(c: u32, #[comptime] w: ConvertWalk) -> (f32, f32) {
    let mut scale = 0u32;
    let mut offset = 0u32;
    scale = comptime!(w.scale.get(0).to_bits());
    offset = comptime!(w.offset.get(0).to_bits());
    #[unroll]
    for k in 1..comptime!(w.channels as usize) {
        if c == comptime!(k as u32) {
            scale = comptime!(w.scale.get(k).to_bits());
            offset = comptime!(w.offset.get(k).to_bits());
        }
    }
    (f32::reinterpret(scale), f32::reinterpret(offset))
}

/// The element of type `from` at element offset `at` of `data`, as f32.
// The initial values are overwritten by exactly one comptime branch.
#[allow(unused_assignments)]
#[cube]
fn decode(data: &[u32], at: u32, #[comptime] from: DType) -> f32 {
    let lanes = comptime!((4 / from.size()) as u32);
    let mut bits = 0u32;
    if comptime!(lanes == 1) {
        bits = data[usize::cast_from(at)];
    } else {
        let word = data[usize::cast_from(at / lanes)];
        let width = comptime!(32 / lanes);
        bits = (word >> ((at % lanes) * width)) & comptime!(((1u64 << (32 / lanes)) - 1) as u32);
    }
    let mut x = 0.0f32;
    if comptime!(matches!(from, DType::U8 | DType::U16 | DType::U32)) {
        x = f32::cast_from(bits);
    } else if comptime!(from == DType::I8) {
        // Sign extension as wrapping u32 arithmetic: (b ^ 0x80) - 0x80.
        x = f32::cast_from(i32::reinterpret((bits ^ 0x80u32) - 0x80u32));
    } else if comptime!(from == DType::I16) {
        x = f32::cast_from(i32::reinterpret((bits ^ 0x8000u32) - 0x8000u32));
    } else if comptime!(from == DType::I32) {
        x = f32::cast_from(i32::reinterpret(bits));
    } else if comptime!(from == DType::F32) {
        x = f32::reinterpret(bits);
    } else if comptime!(from == DType::BF16) {
        x = f32::reinterpret(bits << 16u32);
    } else {
        x = f16_to_f32(bits);
    }
    x
}

/// The f32 of f16 bits `h` (exact: every f16 is an f32).
#[cube]
pub(super) fn f16_to_f32(h: u32) -> f32 {
    let sign = (h & 0x8000u32) << 16u32;
    let exp = (h >> 10u32) & 0x1Fu32;
    let man = h & 0x3FFu32;
    let mut bits = sign | ((exp + 112u32) << 23u32) | (man << 13u32);
    if exp == 0x1Fu32 {
        bits = sign | 0x7F80_0000u32 | (man << 13u32);
    }
    let mut x = f32::reinterpret(bits);
    if exp == 0u32 {
        // Zero or subnormal: man * 2^-24, exact in f32, with the sign's bit set (a negation
        // lost the sign of -0.0 on CubeCL's CPU runtime, which negates as `0 - x`).
        let magnitude = f32::cast_from(man) * f32::reinterpret(0x3380_0000u32);
        x = f32::reinterpret(u32::reinterpret(magnitude) | sign);
    }
    x
}

/// `y` as the bits of `to` (f32; f16 and bf16 rounded to nearest, ties to even).
#[allow(unused_assignments)]
#[cube]
pub(super) fn encode(y: f32, #[comptime] to: DType) -> u32 {
    let x = u32::reinterpret(y);
    let mut out = 0u32;
    if comptime!(to == DType::F32) {
        out = x;
    } else if comptime!(to == DType::BF16) {
        let mut h = x >> 16u32;
        if (x & 0x7FFF_FFFFu32) > 0x7F80_0000u32 {
            // NaN stays NaN (quiet).
            h |= 0x40u32;
        } else {
            let rem = x & 0xFFFFu32;
            if rem > 0x8000u32 || (rem == 0x8000u32 && (h & 1u32) == 1u32) {
                h += 1u32;
            }
        }
        out = h & 0xFFFFu32;
    } else {
        out = f32_to_f16(x);
    }
    out
}

/// f32 bits `x` rounded to f16 bits.
#[cube]
fn f32_to_f16(x: u32) -> u32 {
    let sign = (x >> 16u32) & 0x8000u32;
    let a = x & 0x7FFF_FFFFu32;
    let mut h = 0u32;
    if a > 0x7F80_0000u32 {
        h = 0x7E00u32 | ((a >> 13u32) & 0x3FFu32);
    } else if a >= 0x4780_0000u32 {
        h = 0x7C00u32;
    } else if a >= 0x3880_0000u32 {
        // Normal: rebias the exponent (127 - 15 = 112); a carry out of the mantissa moves the
        // exponent up, to infinity past 65504.
        let r = (a >> 13u32) - (112u32 << 10u32);
        let rem = a & 0x1FFFu32;
        h = r;
        if rem > 0x1000u32 || (rem == 0x1000u32 && (r & 1u32) == 1u32) {
            h = r + 1u32;
        }
    } else if a >= 0x3300_0000u32 {
        // Subnormal: the mantissa with its hidden bit, shifted to units of 2^-24.
        let shift = 126u32 - (a >> 23u32);
        let m = (a & 0x7F_FFFFu32) | 0x80_0000u32;
        let r = m >> shift;
        let rem = m & ((1u32 << shift) - 1u32);
        let half = 1u32 << (shift - 1u32);
        h = r;
        if rem > half || (rem == half && (r & 1u32) == 1u32) {
            h = r + 1u32;
        }
    }
    sign | h
}

/// A tile for CubeCL's CPU runtime: the longest that divides the row in whole vectors, up to
/// [`CPU_TILE_MAX`] elements (see [`cpu_retile`]), with its invocation count. `None` keeps the
/// walk's.
fn cpu_tile(w: &ConvertWalk, invocations: u32) -> Option<(u32, u32)> {
    if w.row_len % w.tile != 0 {
        return None;
    }
    cpu_retile(w.row_len, w.tile, invocations, CPU_TILE_MAX, |t| t % w.line_elems() == 0)
}

/// Queues the convert kernel on `data`, the index buffers its reads name (in buffer order; the
/// status buffer stands in for those a walk does not read), and `output`.
///
/// # Safety
/// As for the row kernel (`rows::queue`): the buffers hold the words the walk touches, and for
/// a `_` walk, `w` is the walk for one count.
pub(super) unsafe fn queue(
    client: &Client,
    w: &ConvertWalk,
    indices: &[&Handle],
    data: &Handle,
    output: &Handle,
    status: &Handle,
) {
    let (mut limit, src_words, out_words) = (w.invocations, w.src_words as usize, w.out_words as usize);
    // A launch argument (see `rows::rows_kernel`), in two's complement.
    let base = w.base as u32;
    let mut w = w.specialized();
    if launch::is_cpu(client) {
        if let Some((tile, invocations)) = cpu_tile(&w, limit) {
            limit = invocations;
            if !w.dynamic {
                w.invocations = limit;
            }
            w.tile = tile;
        }
    }
    unsafe {
        // SAFETY: (of the caller) the index buffers hold the words the reads touch.
        let [index0, index1, index2, index3] = index_args(indices, status);
        convert_kernel::launch_unchecked(
            client,
            launch::cube_count(client, limit),
            launch::cube_dim(client),
            w.line as usize,
            BufferArg::from_raw_parts(data.clone(), src_words),
            index0,
            index1,
            index2,
            index3,
            BufferArg::from_raw_parts(output.clone(), out_words),
            BufferArg::from_raw_parts(status.clone(), 2),
            limit,
            base,
            w,
        );
    }
}

/// The convert kernel's definition for `w`, as its launcher specializes it (for `explain`).
pub(super) fn definition(w: &ConvertWalk) -> KernelDefinition {
    offline_definition!(
        convert_kernel::ConvertKernel,
        buffers[data index0 index1 index2 index3 output status],
        (),
        (),
        w.line as usize,
        w.specialized(),
    )
}
