//! Tensors in memory (docs/rules.md, "Tensors in memory"): sizes, strides, minimum buffer length, and the
//! no-overlap rule for outputs.

use crate::dims::Dims;

/// Sizes and element strides of one tensor, outermost dimension first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorLayout {
    pub sizes: Dims,
    pub strides: Dims,
}

/// What a layout looks like in memory, for messages and for choosing fast paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutKind {
    /// Row-major, no gaps (the default when no strides are given).
    Packed,
    /// Every element stored once, no gaps, in another dimension order (column-major, NHWC...).
    Permuted,
    /// Some dimension of size > 1 has stride 0: elements repeat (inputs only).
    Broadcast,
    /// Gaps between elements (strides larger than packed).
    Padded,
    /// Dimensions overlap in memory without a zero stride (inputs only).
    Overlapping,
    /// Strides interleave, so disjointness cannot be shown by nesting (inputs only; it may or
    /// may not overlap).
    Interleaved,
}

/// Two coordinates of an output that map to one element offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// Found by example: both coordinates write `offset`.
    Collision { a: Vec<usize>, b: Vec<usize>, offset: usize },
    /// No collision was found, but the strides interleave, so disjointness cannot be shown by
    /// nesting; too large to check one by one.
    Unproven,
}

impl TensorLayout {
    /// Row-major strides for `sizes` (last stride 1).
    pub const fn packed(sizes: Dims) -> TensorLayout {
        let n = sizes.len();
        let mut strides = sizes;
        let mut acc = 1usize;
        let mut i = n;
        while i > 0 {
            i -= 1;
            // `Dims` derefs to a slice, but not in const context.
            let s = sizes.raw()[i];
            strides.set(i, acc);
            acc = acc.saturating_mul(if s == 0 { 1 } else { s });
        }
        TensorLayout { sizes, strides }
    }

    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    pub fn num_elements(&self) -> usize {
        self.sizes.product()
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.contains(&0)
    }

    /// Elements a buffer must hold: `1 + sum((size - 1) * stride)` (DirectML's
    /// `DMLCalcBufferTensorSize` in elements), 0 for an empty tensor. `None` on overflow.
    pub fn min_buffer_len(&self) -> Option<usize> {
        if self.is_empty() {
            return Some(0);
        }
        let mut last = 0usize;
        for (&n, &s) in self.sizes.iter().zip(self.strides.iter()) {
            last = last.checked_add((n - 1).checked_mul(s)?)?;
        }
        last.checked_add(1)
    }

    /// Element offset of `coords` (one per dimension).
    pub fn offset(&self, coords: &[usize]) -> usize {
        coords.iter().zip(self.strides.iter()).map(|(c, s)| c * s).sum()
    }

    /// The elements of one row (every dimension after the first) where that row is packed
    /// (the strides of size-1 dimensions play no part); `None` when it is not, or its count
    /// overflows.
    pub fn packed_row_span(&self) -> Option<usize> {
        let mut span = 1usize;
        for d in (1..self.rank()).rev() {
            if self.sizes[d] > 1 && self.strides[d] != span {
                return None;
            }
            span = span.checked_mul(self.sizes[d])?;
        }
        Some(span)
    }

    pub fn is_packed(&self) -> bool {
        self.kind() == LayoutKind::Packed
    }

    pub fn kind(&self) -> LayoutKind {
        let packed = TensorLayout::packed(self.sizes);
        let same = self
            .sizes
            .iter()
            .zip(self.strides.iter().zip(packed.strides.iter()))
            .all(|(&n, (&s, &p))| n <= 1 || s == p);
        if same || self.is_empty() {
            return LayoutKind::Packed;
        }
        if self.sizes.iter().zip(self.strides.iter()).any(|(&n, &s)| n > 1 && s == 0) {
            return LayoutKind::Broadcast;
        }
        match self.check_disjoint() {
            Err(Overlap::Collision { .. }) => LayoutKind::Overlapping,
            Err(Overlap::Unproven) => LayoutKind::Interleaved,
            Ok(()) if self.min_buffer_len() == Some(self.num_elements()) => LayoutKind::Permuted,
            Ok(()) => LayoutKind::Padded,
        }
    }

    /// Dimensions with more than one element, ordered by stride, innermost first.
    fn nesting_order(&self) -> Vec<usize> {
        let mut dims: Vec<usize> = (0..self.rank()).filter(|&i| self.sizes[i] > 1).collect();
        dims.sort_by_key(|&i| (self.strides[i], std::cmp::Reverse(i)));
        dims
    }

    /// True when each stride is at least the span of all smaller-stride dimensions: then no two
    /// coordinates share an offset, and an offset maps back to coordinates by repeated division.
    pub fn is_nested(&self) -> bool {
        let mut span = 1usize;
        for i in self.nesting_order() {
            if self.strides[i] < span {
                return false;
            }
            // Saturating: a layout not yet checked for size may hold any numbers.
            span = span.saturating_add(self.strides[i].saturating_mul(self.sizes[i] - 1));
        }
        true
    }

    /// The output rule: no two coordinates may map to one offset (parallel writes would race).
    pub fn check_disjoint(&self) -> Result<(), Overlap> {
        if self.is_empty() || self.is_nested() {
            return Ok(());
        }
        // Common cases first, so the message names the dimensions at fault.
        let order = self.nesting_order();
        let unit = |i: usize| {
            let mut c = vec![0; self.rank()];
            c[i] = 1;
            c
        };
        for (k, &i) in order.iter().enumerate() {
            if self.strides[i] == 0 {
                return Err(Overlap::Collision { a: vec![0; self.rank()], b: unit(i), offset: 0 });
            }
            if let Some(&j) = order[..k].iter().find(|&&j| self.strides[j] == self.strides[i]) {
                return Err(Overlap::Collision { a: unit(j), b: unit(i), offset: self.strides[i] });
            }
        }
        const BRUTE_FORCE_LIMIT: usize = 1 << 20;
        if self.num_elements() > BRUTE_FORCE_LIMIT {
            return Err(Overlap::Unproven);
        }
        // Offset -> row-major position of the first coordinate seen there.
        let mut seen = std::collections::HashMap::new();
        let mut coords = vec![0usize; self.rank()];
        for position in 0.. {
            let off = self.offset(&coords);
            if let Some(&first) = seen.get(&off) {
                return Err(Overlap::Collision { a: self.coords_of(first), b: coords, offset: off });
            }
            seen.insert(off, position);
            if !next_coords(&mut coords, &self.sizes) {
                break;
            }
        }
        // Disjoint but interleaved: the kernels map offsets back to coordinates by division,
        // which needs nesting.
        Err(Overlap::Unproven)
    }

    /// The coordinates of row-major position `position`.
    fn coords_of(&self, mut position: usize) -> Vec<usize> {
        let mut c = vec![0; self.rank()];
        for i in (0..self.rank()).rev() {
            c[i] = position % self.sizes[i];
            position /= self.sizes[i];
        }
        c
    }
}

/// Advances row-major coordinates; false after the last one.
pub fn next_coords(coords: &mut [usize], sizes: &[usize]) -> bool {
    for i in (0..coords.len()).rev() {
        coords[i] += 1;
        if coords[i] < sizes[i] {
            return true;
        }
        coords[i] = 0;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(sizes: &[usize], strides: &[usize]) -> TensorLayout {
        TensorLayout { sizes: Dims::new(sizes).unwrap(), strides: Dims::new(strides).unwrap() }
    }

    #[test]
    fn packed_strides_match_the_seed() {
        // Seed 004: 1x1x3x5 packed NCHW is {15,15,5,1}; 2x2x3 DHW is {6,3,1}.
        let t = TensorLayout::packed(Dims::new(&[1, 1, 3, 5]).unwrap());
        assert_eq!(t.strides.as_slice(), &[15, 15, 5, 1]);
        let dhw = TensorLayout::packed(Dims::new(&[2, 2, 3]).unwrap());
        assert_eq!(dhw.strides.as_slice(), &[6, 3, 1]);
        assert_eq!(dhw.offset(&[1, 0, 1]), 7);
    }

    #[test]
    fn seed_layouts_have_the_seed_buffer_sizes() {
        assert_eq!(layout(&[2, 3], &[3, 1]).min_buffer_len(), Some(6));
        assert_eq!(layout(&[2, 3], &[1, 2]).min_buffer_len(), Some(6));
        assert_eq!(layout(&[2, 3], &[0, 1]).min_buffer_len(), Some(3));
        assert_eq!(layout(&[2, 3], &[5, 1]).min_buffer_len(), Some(8));
        assert_eq!(layout(&[1, 1, 3, 5], &[15, 1, 5, 1]).min_buffer_len(), Some(15));
        assert_eq!(layout(&[2, 0, 3], &[3, 3, 1]).min_buffer_len(), Some(0));
    }

    #[test]
    fn kinds() {
        assert_eq!(layout(&[2, 3], &[3, 1]).kind(), LayoutKind::Packed);
        assert_eq!(layout(&[2, 3], &[1, 2]).kind(), LayoutKind::Permuted);
        assert_eq!(layout(&[1, 1, 3, 5], &[15, 1, 5, 1]).kind(), LayoutKind::Packed);
        assert_eq!(layout(&[1, 3, 3, 5], &[45, 1, 15, 3]).kind(), LayoutKind::Permuted);
        assert_eq!(layout(&[2, 3], &[0, 1]).kind(), LayoutKind::Broadcast);
        assert_eq!(layout(&[2, 3], &[5, 1]).kind(), LayoutKind::Padded);
        assert_eq!(layout(&[2, 3], &[1, 1]).kind(), LayoutKind::Overlapping);
        assert_eq!(layout(&[2, 3], &[3, 2]).kind(), LayoutKind::Interleaved);
        // Unchecked numbers do not overflow.
        assert_eq!(layout(&[2, 3], &[usize::MAX, 1]).kind(), LayoutKind::Padded);
    }

    #[test]
    fn overlap_is_reported_with_coordinates() {
        assert_eq!(layout(&[2, 3], &[5, 1]).check_disjoint(), Ok(()));
        assert_eq!(
            layout(&[2, 3], &[0, 1]).check_disjoint(),
            Err(Overlap::Collision { a: vec![0, 0], b: vec![1, 0], offset: 0 })
        );
        assert_eq!(
            layout(&[2, 3], &[1, 1]).check_disjoint(),
            Err(Overlap::Collision { a: vec![0, 1], b: vec![1, 0], offset: 1 })
        );
        assert_eq!(
            layout(&[2, 3], &[2, 1]).check_disjoint(),
            Err(Overlap::Collision { a: vec![0, 2], b: vec![1, 0], offset: 2 })
        );
        // Disjoint but interleaved (offsets 0,2,4,3,5,7): not provable by nesting.
        assert_eq!(layout(&[2, 3], &[3, 2]).check_disjoint(), Err(Overlap::Unproven));
    }
}
