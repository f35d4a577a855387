//! The row walk: when the innermost output dimension is packed and its rows start on vector
//! line boundaries, the output is rows of whole lines. An invocation moves a tile of lines of one
//! row (or one line of a group of rows), so the division of its position into row coordinates,
//! and a gather's index reads and range checks, are paid once per tile instead of once per line.
//!
//! Measured on lavapipe (one row per index, f32): one line per invocation reached 0.78x a plain
//! vector copy; four consecutive lines per invocation, 1.15x (the copy itself is one line per
//! invocation, and gains the same way).

use super::{in_output_order, Dim, Moves};

/// How an output line's elements are read from the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowAccess {
    /// Output line `u` of a row is source line `row + u`: the row is contiguous forwards in the
    /// source and every row starts on a line boundary there too.
    Lines,
    /// Output line `u` is source line `row - u` with its elements in reverse order: the row runs
    /// backwards through the source (a negative slice stride), line-aligned.
    ReversedLines,
    /// Each element is read on its own, from 32-bit words: element `e` of a row is at source
    /// element `row + e * elem_stride` (backwards when `elem_backwards`), and, when
    /// `elem_index_stride` is not 0, takes its own index from word `e * elem_index_stride`
    /// past the row's indices (a gather along the innermost output dimension). With a group,
    /// the indices are read once for all the group's rows.
    Elements,
    /// 4x4 blocks transposed in registers (4-byte elements, lines of 4): the group's rows are
    /// consecutive in the source (a layout permuted from channels-last), so element `e` of rows
    /// `4b..4b+3` of the group is one source line, `e * elem_stride + b` lines past the row's.
    /// Four line loads and four line stores move a block, as many as a copy of it; a group of 16
    /// rows uses each 64-byte source cache line whole.
    Transposed,
}

/// A dimension of the rows (every output dimension but the innermost).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowDim {
    pub size: u32,
    /// Output stride in output lines.
    pub out_stride: u32,
    /// Source stride magnitude in source units (lines, or elements for [`RowAccess::Elements`]).
    pub src_stride: u32,
    pub src_backwards: bool,
    /// Indices stride in 32-bit words.
    pub index_stride: u32,
}

/// Rows an invocation moves together, consecutive along one row dimension, and that dimension's
/// strides per row (the dimension itself appears in [`RowWalk::outer`] with its size divided by
/// `rows` and its strides multiplied by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowGroup {
    pub rows: u32,
    pub out_stride: u32,
    pub src_stride: u32,
    pub src_backwards: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowWalk {
    /// Row dimensions, outermost first (empty: a single row).
    pub outer: Vec<RowDim>,
    pub group: Option<RowGroup>,
    /// Output lines per row.
    pub row_lines: u32,
    /// Output lines of a row per invocation (divides `row_lines`).
    pub tile: u32,
    /// Whether an invocation's lines are spread through its row (`row_lines / tile` apart, so
    /// neighbouring invocations touch neighbouring lines: coalesced on GPUs) or consecutive
    /// (best on CPU devices such as lavapipe). Chosen per backend at launch.
    pub spread: bool,
    /// 32-bit words per output line (and per source line, for line access): 1, 2 or 4.
    pub line: u32,
    /// Elements per word: 1 (4- and 8-byte elements), 2 or 4.
    pub lanes: u32,
    /// Words per element: 1 or 2 (8-byte elements; `lanes` is then 1).
    pub elem_words: u32,
    pub access: RowAccess,
    pub elem_stride: u32,
    pub elem_backwards: bool,
    pub elem_index_stride: u32,
    /// Source position of the first row's first line (line access, in lines) or element
    /// ([`RowAccess::Elements`]).
    pub base: u32,
    pub invocations: u32,
    /// Source and output buffer words the kernel may touch (multiples of their vector widths).
    pub src_words: u32,
    pub out_words: u32,
}

impl RowWalk {
    /// Elements per output line.
    pub fn line_elems(&self) -> u32 {
        self.line * self.lanes / self.elem_words
    }

    /// Words per source vector: `line` for line access, 1 when elements are read one by one.
    pub fn src_line(&self) -> u32 {
        match self.access {
            RowAccess::Elements => 1,
            _ => self.line,
        }
    }

    /// The row walk for `moves` and the gathered axis' stride in its source units, or `None`
    /// when the innermost output dimension is not packed into whole, aligned lines.
    pub(super) fn build(moves: &Moves) -> Option<(RowWalk, u32)> {
        let eb = moves.elem_bytes;
        let dims = in_output_order(&moves.dims);
        let (inner, outer) = dims.split_last()?;
        // The row kernel reads a gather's source forwards only (its `second` accumulator holds
        // the indices word); a gather over a reversed source takes the slot walk.
        let gather = moves.index_words > 0;
        if inner.out != 1 || (gather && dims.iter().any(|d| d.src < 0)) {
            return None;
        }
        // The widest output line that whole rows fill and every row starts on.
        let line = [4usize, 2, 1].into_iter().find(|&l| {
            let bytes = l * 4;
            bytes >= eb && (inner.size * eb) % bytes == 0 && outer.iter().all(|d| (d.out * eb) % bytes == 0)
        })?;
        let e = line * 4 / eb;
        let aligned = |v: i64| v.rem_euclid(e as i64) == 0;
        let rows_aligned = |first: i64, skip: Option<usize>| {
            aligned(first)
                && aligned(moves.axis_stride as i64)
                && outer.iter().enumerate().all(|(i, d)| Some(i) == skip || aligned(d.src))
        };
        let base = moves.base as i64;
        // A row dimension that is contiguous in the source, for transposed blocks.
        let transposable = (eb == 4 && line == 4 && inner.index == 0 && inner.src > 0 && aligned(inner.src))
            .then(|| outer.iter().rposition(|d| d.src == 1 && d.index == 0 && d.size % 4 == 0 && d.size > 1))
            .flatten()
            .filter(|&t| rows_aligned(base, Some(t)));
        let access = if inner.index == 0 && inner.src == 1 && rows_aligned(base, None) {
            RowAccess::Lines
        } else if inner.index == 0 && inner.src == -1 && rows_aligned(base + 1, None) {
            RowAccess::ReversedLines
        } else if transposable.is_some() && !gather {
            RowAccess::Transposed
        } else {
            RowAccess::Elements
        };
        let unit = if access == RowAccess::Elements { 1 } else { e as i64 };
        let first = match access {
            // The source line holding the first output line's elements, last element first.
            RowAccess::ReversedLines => (base + 1) / unit - 1,
            _ => base / unit,
        };
        let row_lines = inner.size / e;

        // Rows moved together: transposed blocks of rows, or (a gather along the row) up to
        // eight rows that share the row's indices.
        let group_dim = match access {
            // Up to 16 rows (four blocks): a 64-byte cache line of the source is used whole.
            RowAccess::Transposed => transposable
                .map(|t| (t, [16, 8, 4].into_iter().find(|&n| outer[t].size % n == 0).unwrap_or(4))),
            RowAccess::Elements if inner.index != 0 => {
                let rows = (32 / e).min(8);
                outer
                    .iter()
                    .rposition(|d| d.index == 0 && d.size % rows == 0)
                    .filter(|_| rows > 1)
                    .map(|g| (g, rows))
            }
            _ => None,
        };
        let mut outer: Vec<Dim> = outer.to_vec();
        let group = group_dim.map(|(g, rows)| {
            let d = outer[g];
            outer[g] = Dim { size: d.size / rows, out: d.out * rows, src: d.src * rows as i64, index: 0 };
            RowGroup {
                rows: rows as u32,
                out_stride: (d.out * eb / (line * 4)) as u32,
                src_stride: (d.src.unsigned_abs() / unit as u64) as u32,
                src_backwards: d.src < 0,
            }
        });
        // Elements one invocation reads: at most 32, so the unrolled kernel stays small (measured
        // on columns of f32: groups of 4 rows 0.47x a copy, 8 rows 0.55-0.62x, 16 rows 0.40x).
        let elems = |k: usize| match access {
            RowAccess::Elements => k * e * group.map_or(1, |g| g.rows as usize),
            _ => 0,
        };
        let max_tile = if group.is_some() { 1 } else { 4 };
        let tile = [4usize, 2, 1]
            .into_iter()
            .find(|&k| k <= max_tile && row_lines % k == 0 && elems(k) <= 32)
            .unwrap_or(1);
        let rows: usize = outer.iter().map(|d| d.size).product();
        let invocations = u32::try_from(rows * row_lines / tile).ok()?;
        let src_line = if access == RowAccess::Elements { 1 } else { line };
        // At least one element and one line: loads are unconditional, and an empty gathered axis
        // still reads (and then zeroes) element 0.
        let words = |layout: &crate::TensorLayout, l: usize| {
            ((layout.min_buffer_len().unwrap_or(0) * eb).div_ceil(4).max(eb / 4)).div_ceil(l).max(1) * l
        };
        let elements = access == RowAccess::Elements;
        let walk = RowWalk {
            outer: outer
                .iter()
                .map(|d| RowDim {
                    size: d.size as u32,
                    out_stride: (d.out * eb / (line * 4)) as u32,
                    src_stride: (d.src.unsigned_abs() / unit as u64) as u32,
                    src_backwards: d.src < 0,
                    index_stride: (d.index * moves.index_words) as u32,
                })
                .collect(),
            group,
            row_lines: row_lines as u32,
            tile: tile as u32,
            spread: false,
            line: line as u32,
            lanes: (4 / eb).max(1) as u32,
            elem_words: (eb / 4).max(1) as u32,
            access,
            elem_stride: match access {
                RowAccess::Elements => inner.src.unsigned_abs() as u32,
                RowAccess::Transposed => (inner.src / unit) as u32,
                _ => 0,
            },
            elem_backwards: elements && inner.src < 0,
            elem_index_stride: if elements { (inner.index * moves.index_words) as u32 } else { 0 },
            base: u32::try_from(first).ok()?,
            invocations,
            src_words: words(moves.src, src_line) as u32,
            out_words: words(moves.out, line) as u32,
        };
        Some((walk, (moves.axis_stride / unit as usize) as u32))
    }
}
