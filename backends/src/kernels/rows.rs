use super::index::index_of;
use super::{cpu_retile, index_args, offline_definition, read_lane, start};
use crate::launch;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{ReadDesc, RowAccess, RowWalk};

/// The row walk, for gathers, slices and fused chains alike: invocation `ABSOLUTE_POS` writes
/// `tile` output lines of one row, or one line of each row of a group (a slice's transposed
/// blocks, a gather's rows sharing their indices). `data` is read in vectors of `NI` words (the
/// line width for line access, 1 when elements are read one by one); `output` is written in
/// lines of `NO` words. `index0..index3` are the index buffers the walk's reads name (unused
/// ones may be any buffer: they are never read).
///
/// Offsets are computed in wrapping 32-bit arithmetic with signed coefficients (a negative
/// stride is its two's complement): every offset of an element that is read lies in `0..2^32`,
/// so the wrapped sum is exact. Loads are unconditional: an index out of range reads the axis'
/// first element (always in bounds) and the result is zeroed afterwards. On lavapipe a load
/// under `if` costs a masked per-lane loop; here it is a select.
///
/// `limit` bounds the invocations of a walk with a `_` leading dimension (its count is not a
/// constant); other walks are bounded by their constant invocation count and ignore it.
///
/// `base` is the walk's base position ([`RowWalk::base`], two's complement), passed at launch
/// and not baked in: NVRTC (CUDA 13.0 and 13.5, seen on an H200 and offline) splits a constant
/// term out of a 32-bit offset before widening it to an address, `zext(x + 13 - 12)` becoming
/// `zext(x - 12) + 13`, so a reversed walk whose first element lies at `base` read 16 GiB past
/// its buffer. With the base unknown to the compiler, the constants left in an offset are the
/// steps between a row's elements, and what remains after splitting them off is the offset of
/// another element of the same row: in `0..2^32`, so widening it is exact.
#[allow(clippy::too_many_arguments)]
#[cube(launch_unchecked)]
pub fn rows_kernel<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<E, NO>],
    status: &mut [u32],
    limit: u32,
    base: u32,
    #[comptime] w: RowWalk,
) {
    let pos = ABSOLUTE_POS;
    if start(pos, status, limit, w.dynamic, w.invocations) {
        if comptime!(w.row_block > 1) {
            // Whole rows, one after the other (`tile == row_lines`).
            let block = comptime!(w.row_block as usize);
            for k in 0..block {
                row_tile::<E, NI, NO>(
                    data,
                    index0,
                    index1,
                    index2,
                    index3,
                    output,
                    status,
                    pos * block + k,
                    0,
                    base,
                    w.clone(),
                );
            }
        } else {
            let tiles = comptime!((w.row_lines / w.tile) as usize);
            // The tile's first line in its row; its other lines follow it, or lie `tiles` apart.
            let mut first = pos % tiles;
            if comptime!(!w.spread) {
                first *= comptime!(w.tile as usize);
            }
            row_tile::<E, NI, NO>(
                data,
                index0,
                index1,
                index2,
                index3,
                output,
                status,
                pos / tiles,
                first,
                base,
                w,
            );
        }
    }
}

/// The tile of row `row` that starts at its line `first`.
#[allow(clippy::too_many_arguments)]
#[cube]
fn row_tile<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<E, NO>],
    status: &mut [u32],
    row: usize,
    first: usize,
    base: u32,
    #[comptime] w: RowWalk,
) {
    if comptime!(w.reads.is_empty()) {
        let (out_row, src) = slice_row(row, base, w.clone());
        slice_tile::<E, NI, NO>(data, output, first, out_row, src, w);
    } else {
        let mut ats = Array::<u32>::new(comptime!(w.reads.len()));
        let (out_row, src) = gather_row(row, base, &mut ats, w.clone());
        gather_tile::<E, NI, NO>(
            data, index0, index1, index2, index3, output, status, first, out_row, src, &mut ats, w,
        );
    }
}

/// `x * c` for a signed comptime coefficient `c`, in wrapping 32-bit arithmetic.
///
/// Offsets with signed coefficients are summed in `u32`, never in `usize`: CubeCL's CPU runtime
/// (0.11) does not wrap `usize` arithmetic (a negative coefficient's two's complement then
/// reads far outside the buffer), while `u32` arithmetic wraps on every runtime. Only the
/// final offset, which lies in the buffer, becomes a `usize` index.
#[cube]
pub(super) fn times(x: u32, #[comptime] c: i64) -> u32 {
    x * comptime!(c as u32)
}

/// Line `first + j * step` of a tile, `j` counting the tile's lines.
#[cube]
fn tile_line(first: usize, #[comptime] j: usize, #[comptime] w: RowWalk) -> usize {
    first + comptime!(if w.spread { j * ((w.row_lines / w.tile) as usize) } else { j })
}

/// Where a slice's row `row` starts: its first output line and its source position (in source
/// units). Innermost dimension first; the outermost takes what is left, undivided.
#[cube]
fn slice_row(row: usize, base: u32, #[comptime] w: RowWalk) -> (usize, u32) {
    let n = comptime!(w.outer.len());
    let mut rem = row;
    let mut out = 0usize;
    // The base is a launch argument (see `rows_kernel`). Added to a new variable: `let mut src
    // = base` would bind `base` itself, and the next row of a block would start where this
    // one ended.
    let mut src = 0u32;
    src += base;
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
    }
    (out, src)
}

/// [`slice_row`] for a walk with reads: also each read's row part of its index offset, into
/// `ats`.
#[cube]
fn gather_row(row: usize, base: u32, ats: &mut Array<u32>, #[comptime] w: RowWalk) -> (usize, u32) {
    let n = comptime!(w.outer.len());
    let reads = comptime!(w.reads.len());
    #[unroll]
    for j in 0..reads {
        ats[j] = comptime!(w.reads[j].base as u32);
    }
    let mut rem = row;
    let mut out = 0usize;
    // The base is a launch argument (see `rows_kernel`). Added to a new variable: `let mut src
    // = base` would bind `base` itself, and the next row of a block would start where this
    // one ended.
    let mut src = 0u32;
    src += base;
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
    }
    (out, src)
}

/// The value of read `r` at word `at` of its buffer: whether it was in range, and the index
/// normalized into the axis (0 when out of range).
// The initial values are overwritten by exactly one comptime branch.
#[allow(clippy::too_many_arguments, unused_assignments)]
#[cube]
pub(super) fn read_value(
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    at: usize,
    #[comptime] r: ReadDesc,
) -> (bool, usize) {
    let mut ok = false;
    let mut v = 0usize;
    if comptime!(r.buffer == 0) {
        let (a, b) = index_of(index0, at, r.index);
        ok = a;
        v = b;
    } else if comptime!(r.buffer == 1) {
        let (a, b) = index_of(index1, at, r.index);
        ok = a;
        v = b;
    } else if comptime!(r.buffer == 2) {
        let (a, b) = index_of(index2, at, r.index);
        ok = a;
        v = b;
    } else {
        let (a, b) = index_of(index3, at, r.index);
        ok = a;
        v = b;
    }
    (ok, v)
}

/// Read `r`, the walk's read `j`, at word `at` of its buffer moved by its dependences on the
/// values of the reads before it (in `vals`): its value goes into `vals[j]` and is returned,
/// with whether it was in range.
#[allow(clippy::too_many_arguments)]
#[cube]
pub(super) fn read_step(
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    at: u32,
    vals: &mut Array<u32>,
    #[comptime] j: usize,
    #[comptime] r: ReadDesc,
) -> (bool, u32) {
    let mut at = at;
    #[unroll]
    for i in 0..j {
        if comptime!(r.deps[i] != 0) {
            at += times(vals[i], r.deps[i]);
        }
    }
    let (in_range, v) = read_value(index0, index1, index2, index3, usize::cast_from(at), r);
    let v = u32::cast_from(v);
    vals[j] = v;
    (in_range, v)
}

/// A tile of a walk with reads: the row's reads once, then lines read whole (forwards, reversed or
/// a stepped window) or element by element (with their own reads), zeroed where an index was out
/// of range.
#[allow(clippy::too_many_arguments)]
#[cube]
fn gather_tile<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<E, NO>],
    status: &mut [u32],
    first: usize,
    out_row: usize,
    row_src: u32,
    ats: &mut Array<u32>,
    #[comptime] w: RowWalk,
) {
    let reads = comptime!(w.reads.len());
    // The row's reads, in order; `ats` then holds each read's value.
    let mut src = row_src;
    let mut row_ok = true;
    #[unroll]
    for j in 0..reads {
        let r = comptime!(w.reads[j]);
        if comptime!(!r.per_element) {
            let at = ats[j];
            let (in_range, v) = read_step(index0, index1, index2, index3, at, ats, j, r);
            row_ok = row_ok && in_range;
            if comptime!(r.data != 0) {
                src += times(v, r.data);
            }
        }
    }
    let mut all_ok = row_ok;
    if comptime!(w.tile > 4) {
        // A long tile (the CPU runtime's): a loop, not unrolled copies.
        for u in first..first + comptime!(w.tile as usize) {
            let line_ok = gather_line::<E, NI, NO>(
                data,
                index0,
                index1,
                index2,
                index3,
                output,
                u,
                out_row,
                src,
                row_ok,
                ats,
                w.clone(),
            );
            // A whole line's flag is the row's, already in `all_ok`.
            if comptime!(w.access == RowAccess::Elements) {
                all_ok = all_ok && line_ok;
            }
        }
    }
    #[unroll]
    for j in 0..comptime!(if w.tile > 4 { 0 } else { w.tile as usize }) {
        let u = tile_line(first, j, w.clone());
        let line_ok = gather_line::<E, NI, NO>(
            data,
            index0,
            index1,
            index2,
            index3,
            output,
            u,
            out_row,
            src,
            row_ok,
            ats,
            w.clone(),
        );
        if comptime!(w.access == RowAccess::Elements) {
            all_ok = all_ok && line_ok;
        }
    }
    // A single gather (its reads all of one stage: one, or a GatherND tuple's) raises the
    // `error` policy's flag here; a chain's `error`-policy indices are checked whole on the host
    // (as running the stages one by one would), so its kernel only keeps every read in bounds.
    let single_error = comptime!(
        w.reads.iter().all(|r| r.stage == w.reads[0].stage)
            && w.reads[0].index.policy == stridex_core::OutOfRange::Error
    );
    raise_flag(status, all_ok, single_error);
}

/// Output line `u` of a row whose reads are done (`src`, `ats`, `row_ok`): from whole source lines
/// (one, or a stepped window), or element by element with the per-element reads. Returns
/// whether every index was in range.
#[allow(clippy::too_many_arguments)]
#[cube]
fn gather_line<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<E, NO>],
    u: usize,
    out_row: usize,
    src: u32,
    row_ok: bool,
    ats: &mut Array<u32>,
    #[comptime] w: RowWalk,
) -> bool {
    // Each comptime branch is the value: no mutable flag (which WGSL keeps as a function
    // variable, measured slower on lavapipe).
    if comptime!(w.access == RowAccess::Elements) {
        if comptime!(w.group.is_some()) {
            grouped_lines::<E, NI, NO>(data, index0, output, u, out_row, src, ats, w.clone())
        } else {
            gather_elements::<E, NI, NO>(
                data,
                index0,
                index1,
                index2,
                index3,
                output,
                u,
                out_row,
                src,
                row_ok,
                ats,
                w.clone(),
            )
        }
    } else {
        let mut v = line_of::<E, NI, NO>(data, u, usize::cast_from(src), w.clone());
        if !row_ok {
            v = Vector::<E, NO>::new(E::from_int(0));
        }
        output[out_row + u] = v;
        row_ok
    }
}

/// Raises the status flag when `enabled` and an index was out of range.
#[allow(clippy::collapsible_if)]
#[cube]
fn raise_flag(status: &mut [u32], all_ok: bool, #[comptime] enabled: bool) {
    if comptime!(enabled) {
        if !all_ok {
            status[0] = 1u32;
        }
    }
}

/// A slice's tile: lines forwards or reversed, transposed blocks, or element by element.
#[cube]
fn slice_tile<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    output: &mut [Vector<E, NO>],
    first: usize,
    out_row: usize,
    src: u32,
    #[comptime] w: RowWalk,
) {
    if comptime!(w.tile > 4) {
        // A long tile (the CPU runtime's): a loop, not unrolled copies.
        for u in first..first + comptime!(w.tile as usize) {
            slice_line::<E, NI, NO>(data, output, u, out_row, src, w.clone());
        }
    }
    #[unroll]
    for j in 0..comptime!(if w.tile > 4 { 0 } else { w.tile as usize }) {
        let u = tile_line(first, j, w.clone());
        slice_line::<E, NI, NO>(data, output, u, out_row, src, w.clone());
    }
}

/// Output line `u` of a slice's row (a transposed block's line for each of its rows).
#[cube]
fn slice_line<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    output: &mut [Vector<E, NO>],
    u: usize,
    out_row: usize,
    src: u32,
    #[comptime] w: RowWalk,
) {
    if comptime!(w.access == RowAccess::Elements) {
        slice_elements::<E, NI, NO>(data, output, u, out_row, src, w.clone());
    } else if comptime!(w.access == RowAccess::Transposed) {
        transposed_block::<E, NI, NO>(data, output, u, out_row, usize::cast_from(src), w.clone());
    } else {
        output[out_row + u] = line_of::<E, NI, NO>(data, u, usize::cast_from(src), w.clone());
    }
}

/// Output line `u` of a row whose source starts at `src` (lines): one source line, forwards or
/// reversed, or picked from a stepped window of two or three.
#[cube]
fn line_of<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    u: usize,
    src: usize,
    #[comptime] w: RowWalk,
) -> Vector<E, NO> {
    let line = comptime!(w.line as usize);
    let mut v = Vector::<E, NO>::new(E::from_int(0));
    if comptime!(w.access == RowAccess::Lines) {
        let x = data[src + u];
        #[unroll]
        for c in 0..line {
            v.insert(c, x.extract(c));
        }
    } else if comptime!(w.access == RowAccess::SteppedLines) {
        v = stepped_line::<E, NI, NO>(data, u, src, w.clone());
    } else {
        // The source line holds the output line's elements last first.
        let x = data[src - u];
        #[unroll]
        for c in 0..line {
            if comptime!(w.elem_words == 2) {
                v.insert(c, x.extract(comptime!((line / 2 - 1 - c / 2) * 2 + c % 2)));
            } else {
                v.insert(
                    c,
                    E::cast_from(reverse_lanes(u32::cast_from(x.extract(comptime!(line - 1 - c))), w.lanes)),
                );
            }
        }
    }
    v
}

/// Output line `u` of a stepped row ([`RowAccess::SteppedLines`]): its window of two or three
/// source lines, each loaded once, then each output word picked from them.
#[cube]
fn stepped_line<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    u: usize,
    src: usize,
    #[comptime] w: RowWalk,
) -> Vector<E, NO> {
    let step = comptime!(w.elem_stride.unsigned_abs() as usize);
    let forwards = comptime!(w.elem_stride > 0);
    // The window's first line (forwards) or its last (backwards); the others follow it, or
    // precede it, and every one holds an element of the row.
    let mut at = src;
    if comptime!(forwards) {
        at += u * step;
    } else {
        at -= u * step;
    }
    let mut next = at;
    if comptime!(forwards) {
        next += 1;
    } else {
        next -= 1;
    }
    let x0 = data[at];
    let x1 = data[next];
    // Unused by a step of 2 (not loaded).
    let mut x2 = x1;
    if comptime!(step == 3 && forwards) {
        x2 = data[next + 1];
    }
    if comptime!(step == 3 && !forwards) {
        x2 = data[next - 1];
    }
    let mut v = Vector::<E, NO>::new(E::from_int(0));
    let lanes = comptime!(w.lanes as usize);
    #[unroll]
    for c in 0..comptime!(w.line as usize) {
        if comptime!(lanes == 1) {
            let (back, word) = comptime!(stepped_word(&w, c, 0));
            v.insert(c, pick_word(x0, x1, x2, back, word));
        } else {
            // Each lane from its own word of the window.
            let bits = comptime!(32 / lanes as u32);
            let mut out = 0u32;
            #[unroll]
            for l in 0..lanes {
                let (back, word) = comptime!(stepped_word(&w, c * lanes + l, 0));
                let shift = comptime!(stepped_word(&w, c * lanes + l, 1).1 as u32 * bits);
                let x = u32::cast_from(pick_word(x0, x1, x2, back, word));
                out |= ((x >> shift) & comptime!(((1u64 << bits) - 1) as u32)) << comptime!(l as u32 * bits);
            }
            v.insert(c, E::cast_from(out));
        }
    }
    v
}

/// Word `word` of the window's line `back` (0, 1 or 2).
#[cube]
fn pick_word<E: Int, NI: Size>(
    x0: Vector<E, NI>,
    x1: Vector<E, NI>,
    x2: Vector<E, NI>,
    #[comptime] back: usize,
    #[comptime] word: usize,
) -> E {
    let mut x = x0;
    if comptime!(back == 1) {
        x = x1;
    }
    if comptime!(back == 2) {
        x = x2;
    }
    x.extract(word)
}

/// Where a stepped output line's slot `c` lies in its window: which line (counted from the
/// window's first, away from it) and which word of that line. Slot `c` is word `c` for 4- and
/// 8-byte elements (`part` 0); for narrower ones it is element `c`, and `part` 1 gives its lane
/// in that word instead of the line.
fn stepped_word(w: &RowWalk, c: usize, part: usize) -> (usize, usize) {
    let (step, line) = (w.elem_stride.unsigned_abs() as usize, w.line as usize);
    let (lanes, ew) = (w.lanes as usize, w.elem_words as usize);
    let e = line * lanes / ew;
    let (k, t) = if lanes == 1 { (c / ew, c % ew) } else { (c, 0) };
    let (back, elem) = if w.elem_stride > 0 {
        ((k * step) / e, (k * step) % e)
    } else {
        // Element `k` lies `k * step` elements before the last element of the window's first
        // line (the highest).
        let back = (k * step).saturating_sub(e - 1).div_ceil(e);
        (back, back * e + e - 1 - k * step)
    };
    match (lanes, part) {
        (1, _) => (back, elem * ew + t),
        (_, 0) => (back, elem / lanes),
        _ => (back, elem % lanes),
    }
}

/// A word's 8- or 16-bit lanes in reverse order.
// Shifts, not `rotate_left`: kernel code is limited to what every CubeCL backend expands.
#[allow(clippy::manual_rotate)]
#[cube]
fn reverse_lanes(x: u32, #[comptime] lanes: u32) -> u32 {
    let mut y = x;
    if comptime!(lanes == 2) {
        y = (x >> 16u32) | (x << 16u32);
    }
    if comptime!(lanes == 4) {
        y = (x << 24u32) | ((x & 0xFF00u32) << 8u32) | ((x >> 8u32) & 0xFF00u32) | (x >> 24u32);
    }
    y
}

/// Line `u` of the group's rows, as 4x4 blocks: source line `src + e * elem_stride + b` holds
/// element `e` of rows `4b..4b+3`, one per component.
#[cube]
fn transposed_block<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    output: &mut [Vector<E, NO>],
    u: usize,
    out_row: usize,
    src: usize,
    #[comptime] w: RowWalk,
) {
    let g = comptime!(w.group.unwrap());
    let stride = comptime!(w.elem_stride as usize);
    let at = src + u * comptime!(4 * w.elem_stride as usize);
    #[unroll]
    for b in 0..comptime!(g.rows as usize / 4) {
        let x0 = data[at + b];
        let x1 = data[at + comptime!(stride + b)];
        let x2 = data[at + comptime!(2 * stride + b)];
        let x3 = data[at + comptime!(3 * stride + b)];
        #[unroll]
        for k in 0..4usize {
            let mut v = Vector::<E, NO>::new(E::from_int(0));
            v.insert(0usize, x0.extract(k));
            v.insert(1usize, x1.extract(k));
            v.insert(2usize, x2.extract(k));
            v.insert(3usize, x3.extract(k));
            output[out_row + u + comptime!((4 * b + k) * g.out_stride as usize)] = v;
        }
    }
}

/// Line `u` of a row with reads, element by element: each element's source is the row's plus
/// `e * elem_stride`, moved by the per-element reads (in order, each at its row part in `ats`
/// plus `e * elem`, plus its dependences). Returns whether every index was in range.
#[allow(clippy::too_many_arguments)]
#[cube]
fn gather_elements<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    index0: &[u32],
    index1: &[u32],
    index2: &[u32],
    index3: &[u32],
    output: &mut [Vector<E, NO>],
    u: usize,
    out_row: usize,
    src: u32,
    row_ok: bool,
    ats: &mut Array<u32>,
    #[comptime] w: RowWalk,
) -> bool {
    let reads = comptime!(w.reads.len());
    let per_line = comptime!((w.line * w.lanes / w.elem_words) as usize);
    let first = u * per_line;
    let mut all_ok = row_ok;
    let mut v = Vector::<E, NO>::new(E::from_int(0));
    #[unroll]
    for k in 0..per_line {
        let e = first + k;
        let mut at_elem = src;
        if comptime!(w.elem_stride != 0) {
            at_elem += times(u32::cast_from(e), w.elem_stride);
        }
        let mut ok = row_ok;
        if comptime!(w.reads_per_element()) {
            if comptime!(chained_per_element(&w)) {
                // A per-element read depends on an earlier one: keep this element's values.
                let mut vals = Array::<u32>::new(reads);
                #[unroll]
                for j in 0..reads {
                    let r = comptime!(w.reads[j]);
                    if comptime!(r.per_element) {
                        let mut at = ats[j];
                        if comptime!(r.elem != 0) {
                            at += times(u32::cast_from(e), r.elem);
                        }
                        #[unroll]
                        for i in 0..j {
                            if comptime!(r.deps[i] != 0) {
                                if comptime!(w.reads[i].per_element) {
                                    at += times(vals[i], r.deps[i]);
                                } else {
                                    at += times(ats[i], r.deps[i]);
                                }
                            }
                        }
                        let (in_range, value) =
                            read_value(index0, index1, index2, index3, usize::cast_from(at), r);
                        vals[j] = u32::cast_from(value);
                        ok = ok && in_range;
                        if comptime!(r.data != 0) {
                            at_elem += times(u32::cast_from(value), r.data);
                        }
                    }
                }
            } else {
                // Each per-element read depends on the row's reads at most (`ats` holds their
                // values).
                #[unroll]
                for j in 0..reads {
                    let r = comptime!(w.reads[j]);
                    if comptime!(r.per_element) {
                        let mut at = ats[j];
                        if comptime!(r.elem != 0) {
                            at += times(u32::cast_from(e), r.elem);
                        }
                        #[unroll]
                        for i in 0..j {
                            if comptime!(r.deps[i] != 0) {
                                at += times(ats[i], r.deps[i]);
                            }
                        }
                        let (in_range, value) =
                            read_value(index0, index1, index2, index3, usize::cast_from(at), r);
                        ok = ok && in_range;
                        if comptime!(r.data != 0) {
                            at_elem += times(u32::cast_from(value), r.data);
                        }
                    }
                }
            }
        }
        place_element::<E, NI, NO>(&mut v, k, data, usize::cast_from(at_elem), w.clone());
        if !ok {
            zero_element::<E, NO>(&mut v, k, w.clone());
        }
        all_ok = all_ok && ok;
    }
    output[out_row + u] = v;
    all_ok
}

/// Whether a per-element read depends on an earlier per-element read (a gather of a gather,
/// both along the row).
fn chained_per_element(w: &RowWalk) -> bool {
    w.reads
        .iter()
        .enumerate()
        .any(|(j, r)| r.per_element && (0..j).any(|i| r.deps[i] != 0 && w.reads[i].per_element))
}

/// Line `u` of each of the group's rows, which share their (single, per-element) read: each
/// element's index is read and checked once, then used for every row.
#[allow(clippy::too_many_arguments)]
#[cube]
fn grouped_lines<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    index0: &[u32],
    output: &mut [Vector<E, NO>],
    u: usize,
    out_row: usize,
    src: u32,
    ats: &mut Array<u32>,
    #[comptime] w: RowWalk,
) -> bool {
    let g = comptime!(w.group.unwrap());
    let r = comptime!(w.reads[0]);
    let per_line = comptime!((w.line * w.lanes / w.elem_words) as usize);
    let first = u * per_line;
    let mut offsets = Array::<u32>::new(per_line);
    let mut oks = Array::<bool>::new(per_line);
    let mut all_ok = true;
    #[unroll]
    for k in 0..per_line {
        let e = first + k;
        let at = ats[0] + times(u32::cast_from(e), r.elem);
        let (in_range, value) = index_of(index0, usize::cast_from(at), r.index);
        let mut off = times(u32::cast_from(value), r.data);
        if comptime!(w.elem_stride != 0) {
            off += times(u32::cast_from(e), w.elem_stride);
        }
        offsets[k] = off;
        oks[k] = in_range;
        all_ok = all_ok && in_range;
    }
    #[unroll]
    for row_in_group in 0..comptime!(g.rows as usize) {
        let row_src = src + comptime!((row_in_group as i64 * g.src) as u32);
        let mut v = Vector::<E, NO>::new(E::from_int(0));
        #[unroll]
        for k in 0..per_line {
            place_element::<E, NI, NO>(&mut v, k, data, usize::cast_from(row_src + offsets[k]), w.clone());
            if !oks[k] {
                zero_element::<E, NO>(&mut v, k, w.clone());
            }
        }
        output[out_row + u + comptime!(row_in_group * g.out_stride as usize)] = v;
    }
    all_ok
}

/// Line `u` of a slice's row, element by element: element `e` is `e * elem_stride` source
/// elements from the row's (signed).
#[cube]
fn slice_elements<E: Int, NI: Size, NO: Size>(
    data: &[Vector<E, NI>],
    output: &mut [Vector<E, NO>],
    u: usize,
    out_row: usize,
    src: u32,
    #[comptime] w: RowWalk,
) {
    let per_line = comptime!((w.line * w.lanes / w.elem_words) as usize);
    let first = u * per_line;
    let mut v = Vector::<E, NO>::new(E::from_int(0));
    #[unroll]
    for k in 0..per_line {
        let mut at = src;
        if comptime!(w.elem_stride != 0) {
            at += times(u32::cast_from(first + k), w.elem_stride);
        }
        place_element::<E, NI, NO>(&mut v, k, data, usize::cast_from(at), w.clone());
    }
    output[out_row + u] = v;
}

/// Reads source element `at` into element slot `k` of output line `v`.
#[cube]
fn place_element<E: Int, NI: Size, NO: Size>(
    v: &mut Vector<E, NO>,
    #[comptime] k: usize,
    data: &[Vector<E, NI>],
    at: usize,
    #[comptime] w: RowWalk,
) {
    let lanes = comptime!(w.lanes as usize);
    if comptime!(w.elem_words == 2) {
        v.insert(comptime!(2 * k), data[2 * at].extract(0usize));
        v.insert(comptime!(2 * k + 1), data[2 * at + 1].extract(0usize));
    } else if comptime!(lanes == 1) {
        v.insert(k, data[at].extract(0usize));
    } else {
        let word = comptime!(k / lanes);
        let lane = read_lane(data, at, w.lanes) << comptime!(((k % lanes) * (32 / lanes)) as u32);
        v.insert(word, v.extract(word) | E::cast_from(lane));
    }
}

/// Clears element slot `k` of output line `v` (an index out of range).
#[cube]
fn zero_element<E: Int, NO: Size>(v: &mut Vector<E, NO>, #[comptime] k: usize, #[comptime] w: RowWalk) {
    let lanes = comptime!(w.lanes as usize);
    if comptime!(w.elem_words == 2) {
        v.insert(comptime!(2 * k), E::from_int(0));
        v.insert(comptime!(2 * k + 1), E::from_int(0));
    } else if comptime!(lanes == 1) {
        v.insert(k, E::from_int(0));
    } else {
        let word = comptime!(k / lanes);
        let bits = comptime!(32 / lanes);
        let mask = comptime!((((1u64 << bits) - 1) << ((k % lanes) * bits)) as u32);
        v.insert(word, v.extract(word) & E::cast_from(comptime!(!mask)));
    }
}

/// The most lines of a row one invocation moves on CubeCL's CPU runtime (64 KiB of 16-byte
/// lines). Measured on the bench's beam reorder (rows of 16384 lines, three runs each):
/// 256 lines 15.6-18.6 GB/s, 1024 lines 16.3-33.0, 4096 lines 19.4-37.8.
const CPU_TILE_MAX: u32 = 4096;

/// Lines of a row per invocation on CubeCL's CPU runtime, where an invocation costs far more
/// than on a GPU or lavapipe (measured there: a row gather moving 4 vectors per invocation
/// reached 15 GB/s, 64 vectors 27 GB/s, 256 vectors 35 GB/s): the longest tile of lines that
/// divides the row, up to [`CPU_TILE_MAX`] (see [`cpu_retile`]), with its invocation count.
/// Lines read whole (forwards, reversed or stepped) or element by element (with a group, each line of
/// the tile is that line of every row of the group: columns of f32 went from 3.5-5.3 to
/// 8.5-10.6 GB/s). Elements narrower than a word get long tiles once they are their own units
/// ([`RowWalk::narrow_units`]); packed into words they kept the walk's tile, a loop of lanes
/// measuring slower (columns of u8, four runs: 1.44-1.91 GB/s with the walk's tile, 1.0-1.4
/// with 8 lines, 0.75-1.35 with 128). Transposed blocks keep theirs. `None` keeps the walk's
/// tile.
fn cpu_tile(w: &RowWalk, invocations: u32) -> Option<(u32, u32)> {
    let whole_lines =
        matches!(w.access, RowAccess::Lines | RowAccess::ReversedLines | RowAccess::SteppedLines)
            && w.group.is_none();
    let whole_elements = w.access == RowAccess::Elements && w.lanes == 1;
    if !(whole_lines || whole_elements) || w.spread {
        return None;
    }
    cpu_retile(w.row_lines, w.tile, invocations, CPU_TILE_MAX, |_| true)
}

/// Whole rows one invocation moves on CubeCL's CPU runtime where a row is shorter than
/// [`CPU_TILE_MAX`] lines: as many as fit in that many lines, dividing the rows and leaving at
/// least 64 invocations (as [`cpu_retile`] does), for fixed walks whose tile is a whole row.
/// `None` keeps one row each. Measured there (two runs each, before -> after): the flip of
/// 512-element rows 21-26 -> 37-41 GB/s, the crop 19-25 -> 40-41, GatherElements 4-9 -> 10-14.
/// A `_` walk keeps one row each: its row count is not known when its kernel is specialized.
fn cpu_row_block(w: &RowWalk) -> Option<u32> {
    if w.dynamic || w.spread || w.tile != w.row_lines || w.access == RowAccess::Transposed {
        return None;
    }
    let rows = w.invocations;
    (2..=CPU_TILE_MAX / w.row_lines.max(1)).rev().find(|&b| rows % b == 0 && rows / b >= 64)
}

/// Queues the row kernel on `data`, the index buffers its reads name (in buffer order; the
/// status buffer stands in for those a walk does not read), and `output`.
///
/// # Safety
/// As for a gather (`GatherKernelDesc::queue`): the buffers hold the words the walk touches. For a `_` walk, `w` is the
/// walk for one count (`RowWalk::with_count`): its invocation limit and buffer lengths come from
/// the plan for that count, which passed every rule when the count was known, and the kernel
/// it launches (compiled for the specialized walk) touches nothing past them.
pub(super) unsafe fn queue(
    client: &Client,
    w: &RowWalk,
    indices: &[&Handle],
    data: &Handle,
    output: &Handle,
    status: &Handle,
) {
    // On the CPU runtime, elements narrower than a word read one by one are loaded and stored
    // as bytes or halfwords (`narrow_units`): the walk's lengths are then in those units.
    let cpu = launch::is_cpu(client);
    let narrow = if cpu { w.cpu_narrow() } else { None };
    // A narrow walk's unit is one element: `4 / lanes` bytes of the walk it came from.
    let unit_bytes = if narrow.is_some() { 4 / w.lanes } else { 4 };
    let w = narrow.as_ref().unwrap_or(w);
    // The specialized walk is what the kernel is compiled for: for a `_` walk, every count
    // shares one compiled kernel, bounded by `limit`, with buffers of this count's lengths.
    // The base is a launch argument (see `rows_kernel`), in two's complement as the kernel's
    // wrapping sums take it; the specialized walk has none.
    let (mut limit, src_units, out_units) = (w.invocations, w.src_words as usize, w.out_words as usize);
    let base = w.base as u32;
    let mut w = w.specialized();
    w.spread = super::tile_spread(client);
    if cpu {
        if let Some((tile, invocations)) = cpu_tile(&w, limit) {
            limit = invocations;
            if !w.dynamic {
                w.invocations = limit;
            }
            w.tile = tile;
        }
        if let Some(block) = cpu_row_block(&w) {
            w.row_block = block;
            w.invocations /= block;
            limit = w.invocations;
        }
    }
    unsafe {
        // SAFETY: (of the caller) the index buffers hold the words the reads touch; a narrow
        // walk's lengths are the same bytes counted in its units.
        let [index0, index1, index2, index3] = index_args(indices, status);
        let data = BufferArg::from_raw_parts(data.clone(), src_units);
        let output = BufferArg::from_raw_parts(output.clone(), out_units);
        let status = BufferArg::from_raw_parts(status.clone(), 2);
        let (count, dim) = (launch::cube_count(client, limit), launch::cube_dim(client));
        let (ni, no) = (w.src_line() as usize, w.line as usize);
        match unit_bytes {
            1 => rows_kernel::launch_unchecked::<u8>(
                client, count, dim, ni, no, data, index0, index1, index2, index3, output, status, limit,
                base, w,
            ),
            2 => rows_kernel::launch_unchecked::<u16>(
                client, count, dim, ni, no, data, index0, index1, index2, index3, output, status, limit,
                base, w,
            ),
            _ => rows_kernel::launch_unchecked::<u32>(
                client, count, dim, ni, no, data, index0, index1, index2, index3, output, status, limit,
                base, w,
            ),
        }
    }
}

/// The row kernel's definition for `w`, as its launcher specializes it off the CPU runtime
/// (for `explain`; tiles as [`super::offline_tile_spread`] says).
pub(super) fn definition(w: &RowWalk) -> KernelDefinition {
    let mut free = w.specialized();
    free.spread = super::offline_tile_spread();
    offline_definition!(
        rows_kernel::RowsKernel<u32>,
        buffers[data index0 index1 index2 index3 output status],
        (),
        (),
        w.src_line() as usize,
        w.line as usize,
        free,
    )
}
