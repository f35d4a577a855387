use super::index::{flag_out_of_range, index_of};
use super::{mark_ran, read_lane};
use cubecl::prelude::*;
use stridex_core::kernel::{IndexRead, RowAccess, RowWalk};

/// The row walk (gathers and slices): invocation `ABSOLUTE_POS` writes `tile` output lines of
/// one row, or one line of each row of a group (a slice's transposed blocks, a gather's rows
/// sharing their indices). `data` is read in vectors of `NI` words (the
/// line width for line access, 1 when elements are read one by one); `output` is written in
/// lines of `NO` words. A slice passes `gather: false` and any index array (never read).
///
/// Loads are unconditional: an index out of range reads the axis' first element (always in
/// bounds) and the result is zeroed afterwards. On lavapipe a load under `if` costs a masked
/// per-lane loop; here it is a select.
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
        // A gather's source never runs backwards and a slice has no indices: the third part is
        // the indices word of a gather, the backward source steps of a slice (one variable, so
        // neither kernel declares one it never reads: NVRTC warns on those).
        let (out_row, fwd, second) = row_start(pos / tiles, w.clone(), gather);
        // The tile's first line in its row; its other lines follow it, or lie `tiles` apart.
        let mut first = pos % tiles;
        if comptime!(!w.spread) {
            first *= comptime!(w.tile as usize);
        }
        if comptime!(gather) {
            gather_tile::<NI, NO>(data, indices, output, status, first, (out_row, fwd, second), w, r);
        } else {
            slice_tile::<NI, NO>(data, output, first, (out_row, fwd, second), w);
        }
    }
}

/// Line `first + j * step` of a tile, `j` counting the tile's lines.
#[cube]
fn tile_line(first: usize, #[comptime] j: usize, #[comptime] w: RowWalk) -> usize {
    first + comptime!(if w.spread { j * ((w.row_lines / w.tile) as usize) } else { j })
}

/// A gather's tile: the row's index read once (unless each element has its own), lines read
/// forwards or element by element, zeroed where an index was out of range.
#[cube]
fn gather_tile<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    indices: &Array<u32>,
    output: &mut Array<Vector<u32, NO>>,
    status: &mut Array<u32>,
    first: usize,
    row: (usize, usize, usize),
    #[comptime] w: RowWalk,
    #[comptime] r: IndexRead,
) {
    let (out_row, row_fwd, at) = row;
    let mut fwd = row_fwd;
    let mut ok = true;
    if comptime!(w.elem_index_stride == 0) {
        let (in_range, axis_offset) = index_of(indices, at, r);
        ok = in_range;
        fwd += axis_offset;
    }
    #[unroll]
    for j in 0..comptime!(w.tile as usize) {
        let u = tile_line(first, j, w.clone());
        if comptime!(w.access == RowAccess::Elements) {
            let lines_ok =
                gather_elements::<NI, NO>(data, indices, output, u, (out_row, fwd, at), ok, w.clone(), r);
            ok = ok && lines_ok;
        } else {
            let mut v = line_of::<NI, NO>(data, u, fwd, w.clone());
            if !ok {
                v = Vector::<u32, NO>::new(0u32);
            }
            output[out_row + u] = v;
        }
    }
    flag_out_of_range(status, ok, r);
}

/// A slice's tile: lines forwards or reversed, transposed blocks, or element by element.
#[cube]
fn slice_tile<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    output: &mut Array<Vector<u32, NO>>,
    first: usize,
    row: (usize, usize, usize),
    #[comptime] w: RowWalk,
) {
    let (out_row, fwd, bwd) = row;
    #[unroll]
    for j in 0..comptime!(w.tile as usize) {
        let u = tile_line(first, j, w.clone());
        if comptime!(w.access == RowAccess::Elements) {
            slice_elements::<NI, NO>(data, output, u, row, w.clone());
        } else if comptime!(w.access == RowAccess::Transposed) {
            transposed_block::<NI, NO>(data, output, u, out_row, fwd - bwd, w.clone());
        } else {
            output[out_row + u] = line_of::<NI, NO>(data, u, fwd - bwd, w.clone());
        }
    }
}

/// Where row `row` starts: its first output line, its forward source steps (from the base, in
/// source units), and its indices word (a gather) or backward source steps (a slice).
#[cube]
fn row_start(row: usize, #[comptime] w: RowWalk, #[comptime] gather: bool) -> (usize, usize, usize) {
    let n = comptime!(w.outer.len());
    let mut rem = row;
    let mut out = 0usize;
    let mut fwd = 0usize;
    if comptime!(w.base != 0) {
        fwd = comptime!(w.base as usize);
    }
    let mut second = 0usize;
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
                second += c * comptime!(d.src_stride as usize);
            } else {
                fwd += c * comptime!(d.src_stride as usize);
            }
        }
        if comptime!(gather && d.index_stride != 0) {
            second += c * comptime!(d.index_stride as usize);
        }
    }
    (out, fwd, second)
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

/// Line `u` of the group's rows, as 4x4 blocks: source line `src + e * elem_stride + b` holds
/// element `e` of rows `4b..4b+3`, one per component.
#[cube]
fn transposed_block<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    output: &mut Array<Vector<u32, NO>>,
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
            let mut v = Vector::<u32, NO>::new(0u32);
            v[0] = x0[k];
            v[1] = x1[k];
            v[2] = x2[k];
            v[3] = x3[k];
            output[out_row + u + comptime!((4 * b + k) * g.out_stride as usize)] = v;
        }
    }
}

/// Line `u` of a gather's row, element by element: each element's source is the row's plus
/// `e * elem_stride`, and, when the row runs along the indices, its own index. With a group,
/// the indices are read once for the group's rows. Returns whether every index was in range.
#[allow(clippy::too_many_arguments)]
#[cube]
fn gather_elements<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    indices: &Array<u32>,
    output: &mut Array<Vector<u32, NO>>,
    u: usize,
    row: (usize, usize, usize),
    row_ok: bool,
    #[comptime] w: RowWalk,
    #[comptime] r: IndexRead,
) -> bool {
    let mut all_ok = row_ok;
    if comptime!(w.group.is_some()) {
        all_ok = grouped_lines::<NI, NO>(data, indices, output, u, row, w, r);
    } else {
        let (out_row, fwd, at) = row;
        let per_line = comptime!((w.line * w.lanes / w.elem_words) as usize);
        let first = u * per_line;
        let mut v = Vector::<u32, NO>::new(0u32);
        #[unroll]
        for k in 0..per_line {
            let e = first + k;
            let mut src = fwd;
            if comptime!(w.elem_stride != 0) {
                src += e * comptime!(w.elem_stride as usize);
            }
            let mut ok = row_ok;
            if comptime!(w.elem_index_stride != 0) {
                let (in_range, axis_offset) =
                    index_of(indices, at + e * comptime!(w.elem_index_stride as usize), r);
                ok = in_range;
                src += axis_offset;
                all_ok = all_ok && in_range;
            }
            place_element::<NI, NO>(&mut v, k, data, src, w.clone());
            if !ok {
                zero_element::<NO>(&mut v, k, w.clone());
            }
        }
        output[out_row + u] = v;
    }
    all_ok
}

/// Line `u` of a slice's row, element by element: element `e` is `e * elem_stride` source
/// elements from the row's, forwards or backwards.
#[cube]
fn slice_elements<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    output: &mut Array<Vector<u32, NO>>,
    u: usize,
    row: (usize, usize, usize),
    #[comptime] w: RowWalk,
) {
    let (out_row, fwd, bwd) = row;
    let per_line = comptime!((w.line * w.lanes / w.elem_words) as usize);
    let first = u * per_line;
    let mut v = Vector::<u32, NO>::new(0u32);
    #[unroll]
    for k in 0..per_line {
        let e = first + k;
        let mut src = fwd;
        let mut back = bwd;
        if comptime!(w.elem_stride != 0) {
            if comptime!(w.elem_backwards) {
                back += e * comptime!(w.elem_stride as usize);
            } else {
                src += e * comptime!(w.elem_stride as usize);
            }
        }
        place_element::<NI, NO>(&mut v, k, data, src - back, w.clone());
    }
    output[out_row + u] = v;
}

/// Line `u` of each of the group's rows, which share their indices: each element's index is
/// read and checked once, then used for every row.
#[cube]
fn grouped_lines<NI: Size, NO: Size>(
    data: &Array<Vector<u32, NI>>,
    indices: &Array<u32>,
    output: &mut Array<Vector<u32, NO>>,
    u: usize,
    row: (usize, usize, usize),
    #[comptime] w: RowWalk,
    #[comptime] r: IndexRead,
) -> bool {
    // Only gathers group rows, so the source never runs backwards.
    let (out_row, fwd, at) = row;
    let g = comptime!(w.group.unwrap());
    let per_line = comptime!((w.line * w.lanes / w.elem_words) as usize);
    let first = u * per_line;
    let mut offsets = Array::<u32>::new(per_line);
    let mut oks = Array::<bool>::new(per_line);
    let mut all_ok = true;
    #[unroll]
    for k in 0..per_line {
        let e = first + k;
        let (in_range, axis_offset) = index_of(indices, at + e * comptime!(w.elem_index_stride as usize), r);
        let mut off = axis_offset;
        if comptime!(w.elem_stride != 0) {
            off += e * comptime!(w.elem_stride as usize);
        }
        offsets[k] = u32::cast_from(off);
        oks[k] = in_range;
        all_ok = all_ok && in_range;
    }
    #[unroll]
    for row_in_group in 0..comptime!(g.rows as usize) {
        let src = fwd + comptime!(row_in_group * g.src_stride as usize);
        let mut v = Vector::<u32, NO>::new(0u32);
        #[unroll]
        for k in 0..per_line {
            place_element::<NI, NO>(&mut v, k, data, src + usize::cast_from(offsets[k]), w.clone());
            if !oks[k] {
                zero_element::<NO>(&mut v, k, w.clone());
            }
        }
        output[out_row + u + comptime!(row_in_group * g.out_stride as usize)] = v;
    }
    all_ok
}

/// Reads source element `at` into element slot `k` of output line `v`.
#[cube]
fn place_element<NI: Size, NO: Size>(
    v: &mut Vector<u32, NO>,
    #[comptime] k: usize,
    data: &Array<Vector<u32, NI>>,
    at: usize,
    #[comptime] w: RowWalk,
) {
    let lanes = comptime!(w.lanes as usize);
    if comptime!(w.elem_words == 2) {
        v[comptime!(2 * k)] = data[2 * at][0];
        v[comptime!(2 * k + 1)] = data[2 * at + 1][0];
    } else if comptime!(lanes == 1) {
        v[k] = data[at][0];
    } else {
        let word = comptime!(k / lanes);
        v[word] = v[word] | (read_lane(data, at, w.lanes) << comptime!(((k % lanes) * (32 / lanes)) as u32));
    }
}

/// Clears element slot `k` of output line `v` (an index out of range).
#[cube]
fn zero_element<NO: Size>(v: &mut Vector<u32, NO>, #[comptime] k: usize, #[comptime] w: RowWalk) {
    let lanes = comptime!(w.lanes as usize);
    if comptime!(w.elem_words == 2) {
        v[comptime!(2 * k)] = 0u32;
        v[comptime!(2 * k + 1)] = 0u32;
    } else if comptime!(lanes == 1) {
        v[k] = 0u32;
    } else {
        let word = comptime!(k / lanes);
        let bits = comptime!(32 / lanes);
        let mask = comptime!((((1u64 << bits) - 1) << ((k % lanes) * bits)) as u32);
        v[word] = v[word] & comptime!(!mask);
    }
}
