use super::gather::read_index;
use super::{mark_ran, read_lane};
use cubecl::prelude::*;
use stridex_core::kernel::{IndexRead, RowAccess, RowWalk};

/// The row walk (gathers and slices): invocation `ABSOLUTE_POS` writes `tile` output lines of
/// one row. `data` is read in vectors of `NI` words (the line width for line access, 1 when
/// elements are read one by one); `output` is written in lines of `NO` words. A slice passes
/// `gather: false` and any index array (never read).
#[cube(launch_unchecked)]
pub fn rows_kernel<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    indices: &Array<u32>,
    output: &mut Array<Vector<u32, NO>>,
    status: &mut Array<u32>,
    #[comptime] w: RowWalk,
    #[comptime] gather: bool,
    #[comptime] r: IndexRead,
) {
    let pos = ABSOLUTE_POS;
    mark_ran(pos, status);
    if pos < comptime!(w.invocations as usize) {
        let tiles = comptime!((w.row_lines / w.tile) as usize);
        let (out_row, mut fwd, bwd, at) = row_start(pos / tiles, w.clone());
        // The tile's first line in its row; its other lines follow it, or lie `tiles` apart.
        let mut first = pos % tiles;
        if comptime!(!w.spread) {
            first *= comptime!(w.tile as usize);
        }
        let mut ok = true;
        if comptime!(gather && w.elem_index_stride == 0) {
            let (in_range, axis_offset) = read_index(indices, at, status, r);
            ok = in_range;
            fwd += axis_offset;
        }
        #[unroll]
        for j in 0..comptime!(w.tile as usize) {
            let step = comptime!(if w.spread { j * ((w.row_lines / w.tile) as usize) } else { j });
            let u = first + step;
            let mut v = Vector::<u32, NO>::new(0u32);
            if comptime!(w.access == RowAccess::Elements) {
                v = elements_line::<NI, NO>(data, indices, status, u, fwd, bwd, at, ok, w.clone(), gather, r);
            } else if ok {
                v = line_of::<NI, NO>(data, u, fwd - bwd, w.clone());
            }
            output[out_row + u] = v;
        }
    }
}

/// Where row `row` starts: its first output line, its source position (forward and backward
/// parts, in source units) and its indices word.
#[cube]
fn row_start(row: usize, #[comptime] w: RowWalk) -> (usize, usize, usize, usize) {
    let n = comptime!(w.outer.len());
    let mut rem = row;
    let mut out = 0usize;
    let mut fwd = 0usize;
    if comptime!(w.base != 0) {
        fwd = comptime!(w.base as usize);
    }
    let mut bwd = 0usize;
    let mut at = 0usize;
    // Innermost dimension first; the outermost takes what is left, undivided.
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
        if comptime!(d.src_stride != 0) {
            if comptime!(d.src_backwards) {
                bwd += c * comptime!(d.src_stride as usize);
            } else {
                fwd += c * comptime!(d.src_stride as usize);
            }
        }
        if comptime!(d.index_stride != 0) {
            at += c * comptime!(d.index_stride as usize);
        }
    }
    (out, fwd, bwd, at)
}

/// Output line `u` of a row whose source starts at `src` (lines): one source line, forwards or
/// reversed.
#[cube]
fn line_of<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    u: usize,
    src: usize,
    #[comptime] w: RowWalk,
) -> Vector<u32, NO> {
    let line = comptime!(w.line as usize);
    let mut v = Vector::<u32, NO>::new(0u32);
    if comptime!(w.access == RowAccess::Lines) {
        let x = data[src + u];
        #[unroll]
        for c in 0..line {
            v[c] = x[c];
        }
    } else {
        // The source line holds the output line's elements last first.
        let x = data[src - u];
        #[unroll]
        for c in 0..line {
            if comptime!(w.elem_words == 2) {
                v[c] = x[comptime!((line / 2 - 1 - c / 2) * 2 + c % 2)];
            } else {
                v[c] = reverse_lanes(x[comptime!(line - 1 - c)], w.lanes);
            }
        }
    }
    v
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

/// Output line `u` of a row, element by element: for each element its source element (the row's
/// plus `e * elem_stride`), and, when the row runs along the indices, its own index.
#[allow(clippy::too_many_arguments)]
#[cube]
fn elements_line<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    indices: &Array<u32>,
    status: &mut Array<u32>,
    u: usize,
    fwd: usize,
    bwd: usize,
    at: usize,
    row_ok: bool,
    #[comptime] w: RowWalk,
    #[comptime] gather: bool,
    #[comptime] r: IndexRead,
) -> Vector<u32, NO> {
    let lanes = comptime!(w.lanes as usize);
    let per_line = comptime!((w.line * w.lanes / w.elem_words) as usize);
    let first = u * per_line;
    let mut v = Vector::<u32, NO>::new(0u32);
    #[unroll]
    for k in 0..per_line {
        let e = first + k;
        let mut ok = row_ok;
        let mut src = fwd;
        if comptime!(gather && w.elem_index_stride != 0) {
            let (in_range, axis_offset) =
                read_index(indices, at + e * comptime!(w.elem_index_stride as usize), status, r);
            ok = in_range;
            src += axis_offset;
        }
        if comptime!(w.elem_stride != 0 && !w.elem_backwards) {
            src += e * comptime!(w.elem_stride as usize);
        }
        let mut back = bwd;
        if comptime!(w.elem_stride != 0 && w.elem_backwards) {
            back += e * comptime!(w.elem_stride as usize);
        }
        if ok {
            let at_elem = src - back;
            if comptime!(w.elem_words == 2) {
                v[comptime!(2 * k)] = data[2 * at_elem][0];
                v[comptime!(2 * k + 1)] = data[2 * at_elem + 1][0];
            } else if comptime!(lanes == 1) {
                v[k] = data[at_elem][0];
            } else {
                let word = comptime!(k / lanes);
                let shift = comptime!(((k % lanes) * (32 / lanes)) as u32);
                v[word] = v[word] | (read_lane(data, at_elem, w.lanes) << shift);
            }
        }
    }
    v
}
