//! The slot walk: any layout. Invocation `p` owns output word (or line of words) `p`, maps each
//! element slot in it back to output coordinates by dividing by constant strides (checking the
//! padding a strided output leaves), and copies the source element there.

use super::{in_output_order, merge, Dim, Moves, MAX_READS};

/// One dimension the kernel walks, outermost (largest output stride) first. Strides are in
/// units: elements, words or lines, per [`MoveDesc::lanes`] and [`MoveDesc::line`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelDim {
    pub size: u32,
    pub out_stride: u32,
    /// Source stride magnitude, and whether the source walks backwards (negative slice stride).
    pub src_stride: u32,
    pub src_backwards: bool,
    /// Stride in 32-bit words of the indices (gather only; 0 when the dim is not an index dim).
    pub index_stride: u32,
    /// Whether a slot can fall outside this dim (output padding): then `c < size` is checked.
    pub check: bool,
}

/// What gather and slice kernels share: how output slots map to source elements.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MoveDesc {
    pub dims: Vec<KernelDim>,
    /// Source unit offset of the first output element.
    pub base: u32,
    /// Elements per 32-bit word: 1 (units are words), 2 or 4 (each invocation assembles one
    /// output word from 16- or 8-bit lanes).
    pub lanes: u32,
    /// Words per unit when `lanes == 1`: 1, 2 or 4 (vectorized lines).
    pub line: u32,
    /// Output slots (units) the output buffer spans.
    pub out_slots: u32,
    /// Invocations: one per output word (lanes > 1) or line.
    pub invocations: u32,
    /// Whether some invocation slots lie past `out_slots` (last partial word).
    pub check_total: bool,
    /// Whether the innermost output stride exceeds 1, leaving padding slots between elements.
    pub check_rem: bool,
    /// Source and output buffer lengths the kernel may touch, in 32-bit words.
    pub src_words: u32,
    pub out_words: u32,
    /// `dims[0]` is a `_` leading dimension: the kernel bounds its invocations and slots by
    /// launch arguments, and the kernel is compiled for [`MoveDesc::specialized`] alone.
    pub dynamic: bool,
}

/// Element offset `e` becomes `e * mul / div` units.
#[derive(Clone, Copy, Debug)]
struct Scale {
    mul: usize,
    div: usize,
}

impl Scale {
    fn apply(self, e: usize) -> usize {
        e * self.mul / self.div
    }
}

impl MoveDesc {
    /// The slot walk for `moves` (a single op: its reads indexed by non-negative strides that
    /// every read shares, each at its own fixed offset from the slot's index position, as a
    /// GatherND tuple's components are), and each read's gathered axis stride in its units.
    pub(super) fn build(moves: &Moves) -> (MoveDesc, Vec<u32>) {
        let (elem_bytes, src, out) = (moves.elem_bytes, moves.src, moves.out);
        let n = moves.reads.len();
        assert!(
            moves.reads.iter().all(|r| r.base >= 0 && r.data >= 0 && r.deps == [0; MAX_READS])
                && moves.dims.iter().all(|d| d.reads[..n].iter().all(|&c| c == d.reads[0])),
            "the slot walk takes single ops only"
        );
        // Output memory order, so consecutive invocations write consecutive addresses.
        let dynamic = moves.dynamic;
        let mut dims = with_unit_inner(in_output_order(&moves.dims, dynamic), dynamic);
        let mut base = usize::try_from(moves.base).expect("a single op's source starts at an offset");
        let mut axis_strides: Vec<usize> = moves.reads.iter().map(|r| r.data as usize).collect();
        let index_words = moves.reads.first().map_or(0, |r| r.index.index_words as usize);
        let mut scale = Scale { mul: 1, div: 1 };
        let lanes;
        if elem_bytes >= 4 {
            // An 8-byte element is two words: one more, innermost, contiguous dimension.
            let w = elem_bytes / 4;
            if w > 1 {
                for d in &mut dims {
                    d.out *= w;
                    d.src *= w as i64;
                }
                dims.push(Dim { size: w, out: 1, src: 1, reads: [0; MAX_READS] });
                dims = merge_after(dims, dynamic);
                base *= w;
                axis_strides.iter_mut().for_each(|a| *a *= w);
                scale.mul = w;
            }
            lanes = 1;
        } else {
            let p = 4 / elem_bytes;
            if divides_run(&dims, base, &axis_strides, p) {
                rescale(&mut dims, &mut base, &mut axis_strides, p);
                dims = tidy(dims, dynamic);
                scale.div = p;
                lanes = 1;
            } else {
                lanes = p;
            }
        }
        let mut line = 1;
        if lanes == 1 {
            for v in [4, 2] {
                if divides_run(&dims, base, &axis_strides, v) {
                    rescale(&mut dims, &mut base, &mut axis_strides, v);
                    dims = tidy(dims, dynamic);
                    scale.div *= v;
                    line = v;
                    break;
                }
            }
        }
        let words_per_unit = |n: usize| {
            if lanes > 1 {
                n.div_ceil(lanes)
            } else {
                n * line
            }
        };
        let src_elems = src.min_buffer_len().unwrap_or(0);
        let out_elems = out.min_buffer_len().unwrap_or(0);
        // Slots in units: elements (lanes > 1: the scale is then 1), or words / lines; an
        // invocation per word of lanes, or per unit.
        let out_slots = scale.apply(out_elems);
        let invocations = out_slots.div_ceil(lanes);
        let slot_range = invocations * lanes;
        let src_words = (src_elems * elem_bytes).div_ceil(4).div_ceil(line) * line;
        let out_words = words_per_unit(out_slots);

        // Which divisions can leave the dimension (padding) and need a bounds check.
        let mut kdims = Vec::with_capacity(dims.len());
        let mut enclosing = out_slots;
        for d in &dims {
            let reach = enclosing.div_ceil(d.out);
            kdims.push(KernelDim {
                size: d.size as u32,
                out_stride: d.out as u32,
                src_stride: d.src.unsigned_abs() as u32,
                src_backwards: d.src < 0,
                index_stride: (d.reads[0] as usize * index_words) as u32,
                // A `_` dimension is bounded by the slot count alone (a launch argument).
                check: reach > d.size && !(dynamic && kdims.is_empty()),
            });
            enclosing = d.out;
        }
        let desc = MoveDesc {
            check_rem: dims.last().is_some_and(|d| d.out > 1),
            // A `_` walk's last word may or may not be partial, by count: always checked.
            check_total: slot_range > out_slots || dynamic,
            dims: kdims,
            base: base as u32,
            lanes: lanes as u32,
            line: line as u32,
            out_slots: out_slots as u32,
            invocations: invocations as u32,
            src_words: src_words.max(line) as u32,
            out_words: out_words.max(line) as u32,
            dynamic,
        };
        (desc, axis_strides.into_iter().map(|a| a as u32).collect())
    }
}

/// True when `v` consecutive elements always travel together: the innermost dim is contiguous
/// in output and source, not an index dim, a multiple of `v` long, and every other offset is a
/// multiple of `v` (so whole words or lines can be copied, aligned).
fn divides_run(dims: &[Dim], base: usize, axis_strides: &[usize], v: usize) -> bool {
    let Some((inner, rest)) = dims.split_last() else {
        return false;
    };
    inner.out == 1
        && inner.src == 1
        && inner.reads[0] == 0
        && inner.size % v == 0
        && base % v == 0
        && axis_strides.iter().all(|a| a % v == 0)
        && rest.iter().all(|d| d.out % v == 0 && d.src.unsigned_abs() as usize % v == 0)
}

fn rescale(dims: &mut [Dim], base: &mut usize, axis_strides: &mut [usize], v: usize) {
    let last = dims.len() - 1;
    for (i, d) in dims.iter_mut().enumerate() {
        if i == last {
            d.size /= v;
        } else {
            d.out /= v;
            d.src /= v as i64;
        }
    }
    *base /= v;
    axis_strides.iter_mut().for_each(|a| *a /= v);
}

/// Drops dims that rescaling left with one element (never a `_` dimension, whatever its
/// count), then merges what became contiguous.
fn tidy(dims: Vec<Dim>, dynamic: bool) -> Vec<Dim> {
    let kept = dims.into_iter().enumerate().filter(|(i, d)| d.size > 1 || (dynamic && *i == 0));
    with_unit_inner(merge_after(kept.map(|(_, d)| d).collect(), dynamic), dynamic)
}

/// A `_` dimension is never the innermost one: the walk's choices (whole words, lines) would
/// then depend on the count. When it is all that is left, slots of one unit each follow it.
fn with_unit_inner(mut dims: Vec<Dim>, dynamic: bool) -> Vec<Dim> {
    if dynamic && dims.len() == 1 {
        dims.push(Dim { size: 1, out: 1, src: 0, reads: [0; MAX_READS] });
    }
    dims
}

/// [`merge`], keeping a `_` leading dimension (`dynamic`: `dims[0]`) on its own.
fn merge_after(mut dims: Vec<Dim>, dynamic: bool) -> Vec<Dim> {
    if !dynamic || dims.is_empty() {
        return merge(dims);
    }
    let rest = dims.split_off(1);
    dims.extend(merge(rest));
    dims
}

impl MoveDesc {
    /// The walk as the kernel is specialized on it: for a `_` walk, without what depends on
    /// the count, so every count shares one compiled kernel.
    pub fn specialized(&self) -> MoveDesc {
        let mut m = self.clone();
        if m.dynamic {
            if let Some(d) = m.dims.first_mut() {
                d.size = 0;
            }
            (m.out_slots, m.invocations, m.src_words, m.out_words) = (0, 0, 0, 0);
        }
        m
    }

    /// A `_` walk for `count` leading steps, with the buffers of the plan for that count;
    /// `None` when a length passes `u32`.
    pub fn with_count(
        &self,
        count: usize,
        src: &crate::TensorLayout,
        out: &crate::TensorLayout,
        elem_bytes: usize,
    ) -> Option<MoveDesc> {
        let (lanes, line) = (self.lanes as usize, self.line as usize);
        let out_elems = out.min_buffer_len()?;
        // Units: elements when lanes are assembled, else words or lines (exact: the walk was
        // chosen because whole words or lines travel together).
        let out_slots = if lanes > 1 { out_elems } else { out_elems * elem_bytes / (4 * line) };
        let invocations = out_slots.div_ceil(lanes);
        let out_words = if lanes > 1 { out_slots.div_ceil(lanes) } else { out_slots * line };
        let src_words = (src.min_buffer_len()? * elem_bytes).div_ceil(4).div_ceil(line) * line;
        let mut m = self.clone();
        m.dims[0].size = u32::try_from(count).ok()?;
        m.out_slots = u32::try_from(out_slots).ok()?;
        m.invocations = u32::try_from(invocations).ok()?;
        m.src_words = u32::try_from(src_words.max(line)).ok()?;
        m.out_words = u32::try_from(out_words.max(line)).ok()?;
        Some(m)
    }
}
