//! The row walk: when the innermost output dimension is packed and its rows start on vector
//! line boundaries, the output is rows of whole lines. An invocation moves a tile of lines of one
//! row (or one line of a group of rows), so the division of its position into row coordinates,
//! and the index reads and range checks of a gather (or of every gather of a fused chain), are
//! paid once per tile instead of once per line.
//!
//! Measured on lavapipe (one row per index, f32): one line per invocation reached 0.78x a plain
//! vector copy; four consecutive lines per invocation, 1.15x (the copy itself is one line per
//! invocation, and gains the same way).

use super::{in_output_order, Dim, Moves, ReadDesc, MAX_READS};

/// Rows of a narrow walk's group on CubeCL's CPU runtime ([`RowWalk::cpu_narrow`]): four rows
/// share each index read (columns of u8, four runs each: groups of two rows 2.1-2.4 GB/s, four
/// 2.1-3.4, eight 2.1-2.9, sixteen 2.5).
pub const CPU_NARROW_GROUP_ROWS: u32 = 4;

/// How an output line's elements are read from the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowAccess {
    /// Output line `u` of a row is source line `row + u`: the row is contiguous forwards in the
    /// source and every row starts on a line boundary there too.
    Lines,
    /// Output line `u` is source line `row - u` with its elements in reverse order: the row runs
    /// backwards through the source (a negative slice stride), line-aligned.
    ReversedLines,
    /// Output line `u` is picked from `|elem_stride|` consecutive source lines (a slice step of
    /// 2 or 3 along the row): forwards, lines `row + u * step` on, element `k` at element
    /// `k * step` of them; backwards (a negative step, the row's first element the last of its
    /// line), lines `row - u * step` down, element `k` `k * step` elements before that line's
    /// last. Every line loaded holds an element of the row (the step is at most a line's
    /// elements), and the step is under the words [`RowAccess::Elements`] loads per line (one
    /// per 4-byte element or narrower, two per 8-byte one), so fewer loads move the line.
    SteppedLines,
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
    /// Source stride in source units (lines, or elements for [`RowAccess::Elements`]); signed,
    /// applied in wrapping 32-bit arithmetic.
    pub src: i64,
    /// Each read's index stride, in 32-bit words (signed).
    pub reads: [i64; MAX_READS],
}

/// Rows an invocation moves together, consecutive along one row dimension, and that dimension's
/// strides per row (the dimension itself appears in [`RowWalk::outer`] with its size divided by
/// `rows` and its strides multiplied by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowGroup {
    pub rows: u32,
    pub out_stride: u32,
    /// Source units per row of the group (signed; unused by transposed blocks, whose rows are
    /// a line's components).
    pub src: i64,
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
    /// Whole rows an invocation moves one after the other (dividing the rows; 1 but where a
    /// launch chose more, with `tile == row_lines`): short rows on CubeCL's CPU runtime.
    pub row_block: u32,
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
    /// Source elements per element of a row ([`RowAccess::Elements`] and
    /// [`RowAccess::SteppedLines`], signed), or source lines per element
    /// ([`RowAccess::Transposed`]).
    pub elem_stride: i64,
    /// The index reads, in the order they happen (a read may depend on earlier ones).
    pub reads: Vec<ReadDesc>,
    /// Source position of the first row's first line (line access, in lines) or element
    /// ([`RowAccess::Elements`]), before the reads move it; signed.
    pub base: i64,
    pub invocations: u32,
    /// `outer[0]` is a `_` leading dimension: its size is the count, the kernel bounds its
    /// invocations by a launch argument, and the kernel is compiled for [`RowWalk::specialized`].
    pub dynamic: bool,
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

    /// Whether any read happens per element of a row.
    pub fn reads_per_element(&self) -> bool {
        self.reads.iter().any(|r| r.per_element)
    }

    /// The row walk for `moves`, or `None` when the innermost output dimension is not packed
    /// into whole, aligned lines.
    pub(crate) fn build(moves: &Moves) -> Option<RowWalk> {
        let eb = moves.elem_bytes;
        let mut dims = in_output_order(&moves.dims, moves.dynamic);
        if dims.is_empty() {
            // A single element: one row of one.
            dims.push(Dim { size: 1, out: 1, src: 0, reads: [0; MAX_READS] });
        }
        if moves.dynamic && dims.len() == 1 {
            // Only the `_` dimension is left (`[count]`): rows of one element each, so it stays
            // a row dimension, the outermost.
            dims.push(Dim { size: 1, out: 1, src: 0, reads: [0; MAX_READS] });
        }
        let (inner, outer) = dims.split_last()?;
        if inner.out != 1 {
            return None;
        }
        // The widest output line that whole rows fill and every row starts on.
        let line = [4usize, 2, 1].into_iter().find(|&l| {
            let bytes = l * 4;
            bytes >= eb && (inner.size * eb) % bytes == 0 && outer.iter().all(|d| (d.out * eb) % bytes == 0)
        })?;
        let e = line * 4 / eb;
        let aligned = |v: i64| v.rem_euclid(e as i64) == 0;

        // Which reads happen per element: those indexed by the innermost coordinate, and those
        // that depend on such a read.
        let mut per_element = [false; MAX_READS];
        for (j, r) in moves.reads.iter().enumerate() {
            per_element[j] = inner.reads[j] != 0 || (0..j).any(|i| r.deps[i] != 0 && per_element[i]);
        }
        let any_per_element = per_element.iter().any(|&p| p);
        let rows_aligned = |first: i64, skip: Option<usize>| {
            aligned(first)
                && moves.reads.iter().all(|r| aligned(r.data))
                && outer.iter().enumerate().all(|(i, d)| Some(i) == skip || aligned(d.src))
        };
        let base = moves.base;
        // A row dimension that is contiguous in the source, for transposed blocks (slices).
        let transposable = (moves.reads.is_empty()
            && eb == 4
            && line == 4
            && inner.src > 0
            && aligned(inner.src))
        .then(|| {
            outer.iter().rposition(|d| d.src == 1 && d.size % 4 == 0).filter(|&t| !(moves.dynamic && t == 0))
        })
        .flatten()
        .filter(|&t| rows_aligned(base, Some(t)));
        let access = if !any_per_element && inner.src == 1 && rows_aligned(base, None) {
            RowAccess::Lines
        } else if !any_per_element && inner.src == -1 && rows_aligned(base + 1, None) {
            RowAccess::ReversedLines
        } else if transposable.is_some() {
            RowAccess::Transposed
        } else if !any_per_element
            && (2..=(e as i64).min(3)).contains(&inner.src.abs())
            && inner.src.abs() < (e * eb.div_ceil(4)) as i64
            && rows_aligned(if inner.src > 0 { base } else { base + 1 }, None)
        {
            RowAccess::SteppedLines
        } else {
            RowAccess::Elements
        };
        let unit = if access == RowAccess::Elements { 1 } else { e as i64 };
        // The source line holding the first output element: for reversed lines, the line it
        // ends (`base + 1` is a line boundary there), which holds the first output line.
        let first = base.div_euclid(unit);
        let row_lines = inner.size / e;

        // Rows moved together: transposed blocks of rows, or (one gather along the row) up to
        // eight rows that share the row's indices.
        let single_gather_along_row = moves.reads.len() == 1 && per_element[0];
        let group_dim = match access {
            // Up to 16 rows (four blocks): a 64-byte cache line of the source is used whole.
            RowAccess::Transposed => transposable
                .map(|t| (t, [16, 8, 4].into_iter().find(|&n| outer[t].size % n == 0).unwrap_or(4))),
            RowAccess::Elements if single_gather_along_row => {
                // At least 2: a line holds at most 16 elements (`e`).
                let rows = (32 / e).min(8);
                outer
                    .iter()
                    .rposition(|d| d.reads.iter().all(|&r| r == 0) && d.size % rows == 0)
                    .filter(|&g| !(moves.dynamic && g == 0))
                    .map(|g| (g, rows))
            }
            _ => None,
        };
        let mut outer: Vec<Dim> = outer.to_vec();
        let group = group_dim.map(|(g, rows)| {
            let d = outer[g];
            outer[g] =
                Dim { size: d.size / rows, out: d.out * rows, src: d.src * rows as i64, reads: d.reads };
            RowGroup { rows: rows as u32, out_stride: (d.out * eb / (line * 4)) as u32, src: d.src / unit }
        });
        // Elements one invocation reads: at most 32, so the unrolled kernel stays small (measured
        // on columns of f32: groups of 4 rows 0.47x a copy, 8 rows 0.55-0.62x, 16 rows 0.40x).
        // A group takes tiles of one line, `e * rows` <= 32 elements by its choice of `rows`.
        let elems = |k: usize| match access {
            RowAccess::Elements => k * e,
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
        let words = |layout: &crate::TensorLayout, l: usize| super::buffer_words(layout, eb, l);
        let index_words = |j: usize| moves.reads[j].index.index_words as i64;
        let reads = moves
            .reads
            .iter()
            .enumerate()
            .map(|(j, r)| {
                let mut deps = [0; MAX_READS];
                for (i, d) in deps.iter_mut().enumerate().take(j) {
                    *d = r.deps[i] * index_words(j);
                }
                ReadDesc {
                    index: r.index,
                    buffer: r.buffer,
                    stage: r.stage,
                    base: r.base * index_words(j),
                    deps,
                    data: r.data / unit,
                    elem: inner.reads[j] * index_words(j),
                    per_element: per_element[j],
                }
            })
            .collect();
        Some(RowWalk {
            outer: outer
                .iter()
                .map(|d| {
                    let mut reads = [0; MAX_READS];
                    for (j, r) in reads.iter_mut().enumerate().take(moves.reads.len()) {
                        *r = d.reads[j] * index_words(j);
                    }
                    RowDim {
                        size: d.size as u32,
                        out_stride: (d.out * eb / (line * 4)) as u32,
                        src: d.src / unit,
                        reads,
                    }
                })
                .collect(),
            group,
            row_lines: row_lines as u32,
            tile: tile as u32,
            row_block: 1,
            spread: false,
            line: line as u32,
            lanes: (4 / eb).max(1) as u32,
            elem_words: (eb / 4).max(1) as u32,
            access,
            elem_stride: match access {
                RowAccess::Elements | RowAccess::Transposed => inner.src / unit,
                RowAccess::SteppedLines => inner.src,
                _ => 0,
            },
            reads,
            base: first,
            invocations,
            dynamic: moves.dynamic,
            src_words: words(moves.src, src_line) as u32,
            out_words: words(moves.out, line) as u32,
        })
    }
}

impl RowWalk {
    /// The walk as the kernel is specialized on it: without its base, which the kernel takes
    /// as a launch argument (a constant base lets NVRTC fold it out of a 32-bit offset before
    /// widening, which reads gigabytes off the buffer when the sum wraps below zero), and, for
    /// a `_` walk, without what depends on the count (the leading size, the invocation limit,
    /// the buffer lengths), so every count shares one compiled kernel.
    pub fn specialized(&self) -> RowWalk {
        let mut w = self.clone();
        w.base = 0;
        if w.dynamic {
            if let Some(d) = w.outer.first_mut() {
                d.size = 0;
            }
            w.invocations = 0;
            w.src_words = 0;
            w.out_words = 0;
        }
        w
    }

    /// The walk over storage units as wide as its elements (8 or 16 bits) instead of 32-bit
    /// words, for a runtime whose kernels load and store single bytes (CubeCL's CPU runtime,
    /// where a word load, a shift and a mask per element cost more than the element). `None`
    /// unless elements narrower than a word are read one by one, or when the buffers' units
    /// pass `u32`. An element walk's offsets already count elements: only the line (`line *
    /// lanes` units), the lanes (one unit per element) and the buffer lengths (in units)
    /// change.
    pub fn narrow_units(&self) -> Option<RowWalk> {
        if self.access != RowAccess::Elements || self.lanes == 1 {
            return None;
        }
        let mut w = self.clone();
        w.line = w.line.checked_mul(w.lanes)?;
        w.src_words = w.src_words.checked_mul(w.lanes)?;
        w.out_words = w.out_words.checked_mul(w.lanes)?;
        w.lanes = 1;
        Some(w)
    }

    /// The walk with groups of `rows` rows sharing their indices, where it has groups of
    /// fewer and the grouped dimension divides: `None` otherwise. The grouped dimension is the
    /// row dimension whose strides are the group's times its rows (no other dimension of more
    /// than one row can have them: its rows would land on the group's).
    pub fn regroup(&self, rows: u32) -> Option<RowWalk> {
        let g = self.group?;
        if rows <= g.rows || rows % g.rows != 0 {
            return None;
        }
        let k = rows / g.rows;
        let at = self.outer.iter().rposition(|d| {
            d.reads.iter().all(|&r| r == 0)
                && Some(d.out_stride) == g.out_stride.checked_mul(g.rows)
                && Some(d.src) == g.src.checked_mul(g.rows as i64)
        })?;
        if (self.dynamic && at == 0) || self.outer[at].size % k != 0 {
            return None;
        }
        let mut w = self.clone();
        let d = &mut w.outer[at];
        d.size /= k;
        d.out_stride = d.out_stride.checked_mul(k)?;
        d.src = d.src.checked_mul(k as i64)?;
        w.group = Some(RowGroup { rows, ..g });
        w.invocations /= k;
        Some(w)
    }

    /// The walk CubeCL's CPU runtime launches where elements narrower than a word are read
    /// one by one: in units of one element ([`Self::narrow_units`]), its groups regrouped to
    /// [`CPU_NARROW_GROUP_ROWS`] rows where they can be ([`Self::regroup`]). `None`: the
    /// runtime launches the walk as it is.
    pub fn cpu_narrow(&self) -> Option<RowWalk> {
        self.narrow_units().map(|n| n.regroup(CPU_NARROW_GROUP_ROWS).unwrap_or(n))
    }

    /// A `_` walk (planned at [`crate::limits::PLACEHOLDER`]) for `count` leading steps, with
    /// the buffers of the plan for that count; `None` when its invocations pass `u32`.
    pub fn with_count(
        &self,
        count: usize,
        src: &crate::TensorLayout,
        out: &crate::TensorLayout,
        elem_bytes: usize,
    ) -> Option<RowWalk> {
        let per_step = self.invocations as usize / crate::limits::PLACEHOLDER;
        let mut w = self.clone();
        w.outer.first_mut()?.size = u32::try_from(count).ok()?;
        w.invocations = u32::try_from(count.checked_mul(per_step)?).ok()?;
        w.src_words = u32::try_from(super::buffer_words(src, elem_bytes, self.src_line() as usize)).ok()?;
        w.out_words = u32::try_from(super::buffer_words(out, elem_bytes, self.line as usize)).ok()?;
        Some(w)
    }
}
