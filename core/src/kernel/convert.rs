//! The convert walk: a chain that ends in `convert` reads elements of one type and writes
//! another, so the row walk's lines of words (the same bytes in and out) do not serve it. The
//! output is cut into rows (its innermost dimensions, see [`crate::convert::word_rows`]); an
//! invocation takes a tile of one row's elements. Row coordinates, the row's index reads and
//! the row's channel (when the channel dimension is not in the row) are found once per tile;
//! each element then finds its source element (with the reads the row's own coordinates
//! index), decodes it to f32, applies its channel's scale and offset, and encodes the result.

use super::{Dim, Moves, ReadDesc, MAX_READS};
use crate::convert::{word_rows, ConvertPlan};
use crate::dtype::DType;
use crate::Channels;

/// A dimension of the convert walk. Output strides are in output elements, source strides in
/// source elements and read strides in 32-bit index words; signed strides are applied in
/// wrapping 32-bit arithmetic, as in the row walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvertDim {
    pub size: u32,
    pub out_stride: u32,
    pub src: i64,
    pub reads: [i64; MAX_READS],
    /// The channel dimension: its coordinate picks the scale and the offset.
    pub channel: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvertWalk {
    /// Row dimensions, outermost first (empty: one row).
    pub outer: Vec<ConvertDim>,
    /// The dimensions of a row, outermost first; their output strides are packed (a row is
    /// contiguous in the output) unless the result is 32-bit and the row has one dimension.
    pub inner: Vec<ConvertDim>,
    /// Elements per row.
    pub row_len: u32,
    /// Elements per invocation: divides `row_len` unless the walk is one row whose last word
    /// is half full (then elements past the row are skipped); even for a 16-bit result.
    pub tile: u32,
    /// Output words per vector store: 4, 2 or 1. Above 1 only where rows are packed in the
    /// output and every tile starts on a vector boundary.
    pub line: u32,
    /// The index reads in the order they happen; `per_element` ones are indexed by a row's
    /// coordinates (their `elem` is unused: the inner dimensions carry the strides).
    pub reads: Vec<ReadDesc>,
    /// Source element of the first output element, before the reads move it.
    pub base: i64,
    pub from: DType,
    pub to: DType,
    /// Channels with their own scale and offset (1: the same for every element).
    pub channels: u32,
    pub scale: Channels,
    pub offset: Channels,
    pub invocations: u32,
    /// `outer[0]` is a `_` leading dimension (see [`super::RowWalk::dynamic`]).
    pub dynamic: bool,
    pub src_words: u32,
    pub out_words: u32,
}

impl ConvertWalk {
    /// Output elements per 32-bit word: 1 for f32, 2 for f16 and bf16.
    pub fn out_lanes(&self) -> u32 {
        (4 / self.to.size()) as u32
    }

    /// Output elements per vector store.
    pub fn line_elems(&self) -> u32 {
        self.line * self.out_lanes()
    }

    /// Whether some channel's scale is zero (either sign) and the data is a float, which may be
    /// infinite or NaN. Such an element's product with a zero scale is NaN, which the kernel
    /// then makes itself: a shader compiler that may assume no infinities or NaNs (WGSL and
    /// Vulkan allow it; lavapipe does) folds `x * 0.0` to `0.0`.
    pub fn zero_scale_on_floats(&self) -> bool {
        self.from.is_float() && self.scale.bits().iter().any(|&b| b & 0x7fff_ffff == 0)
    }

    /// The walk of `moves` (the chain lowered to the source, `dims_of[i]` telling which
    /// output dimension `moves.dims[i]` is) ending in `convert`; `None` when a 16-bit result
    /// has no rows of whole words once a `_` dimension is kept apart, or a count passes `u32`.
    pub(crate) fn build(moves: &Moves, dims_of: &[usize], convert: &ConvertPlan) -> Option<ConvertWalk> {
        let index_words = |j: usize| moves.reads[j].index.index_words as i64;
        let channel_dim = (convert.channels > 1).then_some(convert.dim);
        let mut dims: Vec<ConvertDim> = moves
            .dims
            .iter()
            .zip(dims_of)
            .map(|(d, &o): (&Dim, &usize)| {
                let mut reads = [0; MAX_READS];
                for (j, r) in reads.iter_mut().enumerate().take(moves.reads.len()) {
                    *r = d.reads[j] * index_words(j);
                }
                ConvertDim {
                    size: d.size as u32,
                    out_stride: d.out as u32,
                    src: d.src,
                    reads,
                    channel: Some(o) == channel_dim,
                }
            })
            .collect();
        // Output memory order; a `_` dimension stays first.
        let lead = usize::from(moves.dynamic).min(dims.len());
        dims[lead..].sort_by_key(|d| std::cmp::Reverse(d.out_stride));
        let row_dims = if convert.to.size() == 2 {
            word_rows(&convert.output, moves.dynamic)?
        } else {
            usize::from(dims.len() > lead)
        };
        let inner = dims.split_off(dims.len() - row_dims);
        let row_len: usize = inner.iter().map(|d| d.size as usize).product();
        let lanes = 4 / convert.to.size();
        // Up to 16 elements a tile, unrolled.
        let tile =
            [16usize, 8, 4, 2, 1].into_iter().find(|&t| t % lanes == 0 && row_len % t == 0).unwrap_or(lanes);
        // Rows packed in the output (a 16-bit result's always are; an f32 one's when its one
        // row dimension is contiguous): tiles store whole vectors where each starts on one.
        let packed = lanes == 2 || inner.len() != 1 || inner[0].out_stride == 1;
        let line = [4usize, 2, 1]
            .into_iter()
            .find(|&l| {
                let per = l * lanes;
                l == 1
                    || (packed
                        && row_len % tile == 0
                        && tile % per == 0
                        && dims.iter().all(|d| d.out_stride as usize % per == 0))
            })
            .unwrap_or(1);
        let rows: usize = dims.iter().map(|d| d.size as usize).product();
        let invocations = u32::try_from(rows.checked_mul(row_len.div_ceil(tile))?).ok()?;
        let mut per_element = [false; MAX_READS];
        for (j, r) in moves.reads.iter().enumerate() {
            per_element[j] =
                inner.iter().any(|d| d.reads[j] != 0) || (0..j).any(|i| r.deps[i] != 0 && per_element[i]);
        }
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
                    data: r.data,
                    elem: 0,
                    per_element: per_element[j],
                }
            })
            .collect();
        let (src_words, out_words) = words(moves.src, moves.out, convert.from, convert.to, line)?;
        Some(ConvertWalk {
            outer: dims,
            inner,
            row_len: u32::try_from(row_len).ok()?,
            tile: tile as u32,
            line: line as u32,
            reads,
            base: moves.base,
            from: convert.from,
            to: convert.to,
            channels: convert.channels as u32,
            scale: convert.scale,
            offset: convert.offset,
            invocations,
            dynamic: moves.dynamic,
            src_words,
            out_words,
        })
    }

    /// Whether the channel is a coordinate of the row (picked per element) rather than of the
    /// row's position (picked once per tile).
    pub fn channel_in_row(&self) -> bool {
        self.inner.iter().any(|d| d.channel)
    }

    /// The walk as the kernel is specialized on it: without its base (a launch argument) or,
    /// for a `_` walk, its count (see [`super::RowWalk::specialized`]).
    pub fn specialized(&self) -> ConvertWalk {
        let mut w = self.clone();
        w.base = 0;
        if w.dynamic {
            if let Some(d) = w.outer.first_mut() {
                d.size = 0;
            }
            (w.invocations, w.src_words, w.out_words) = (0, 0, 0);
        }
        w
    }

    /// A `_` walk (planned at [`crate::limits::PLACEHOLDER`]) for `count` leading steps, with
    /// the buffers of the plan for that count.
    pub fn with_count(
        &self,
        count: usize,
        src: &crate::TensorLayout,
        out: &crate::TensorLayout,
    ) -> Option<ConvertWalk> {
        let per_step = self.invocations as usize / crate::limits::PLACEHOLDER;
        let mut w = self.clone();
        w.outer.first_mut()?.size = u32::try_from(count).ok()?;
        w.invocations = u32::try_from(count.checked_mul(per_step)?).ok()?;
        (w.src_words, w.out_words) = words(src, out, self.from, self.to, self.line as usize)?;
        Some(w)
    }
}

/// 32-bit words of the source and output buffers (at least one each: loads are unconditional;
/// the output's in whole vectors of `line` words).
fn words(
    src: &crate::TensorLayout,
    out: &crate::TensorLayout,
    from: DType,
    to: DType,
    line: usize,
) -> Option<(u32, u32)> {
    let src = u32::try_from(super::buffer_words(src, from.size(), 1)).ok()?;
    Some((src, u32::try_from(super::buffer_words(out, to.size(), line)).ok()?))
}
