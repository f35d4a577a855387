//! Ranges in the `s![..]` style of ndarray and Burn (`s[.., 1..9;2, ..;-1]`), lowered to the
//! SLICE1 window they select.
//!
//! Per dimension: `..`, `a..`, `..b`, `a..b`, `a..=b`, each with an optional `;step`. Bounds may
//! be negative (counted from the end). A negative step walks the range backwards, as ndarray
//! does: `0..4;-1` is 3, 2, 1, 0, and `..;-2` on 5 elements is 4, 2, 0. (NumPy differs: its
//! `a:b:-1` starts at `a` and walks down to `b`, so `[3:0:-1]` is 3, 2, 1.) Dimensions after the
//! last range are taken whole, as Burn's `s!` does (ndarray wants one per dimension). A single
//! index `i`, which ndarray uses to drop a dimension, is refused: a slice keeps its rank.

use crate::dims::{Dims, SignedDims};
pub use crate::error::RangeFault;
use crate::error::RuleError;

/// One dimension's range as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceRange {
    pub start: Option<i64>,
    pub end: Option<i64>,
    /// `a..=b`.
    pub inclusive: bool,
    pub step: i64,
}

impl SliceRange {
    /// `..`: the whole dimension.
    pub const FULL: SliceRange = SliceRange { start: None, end: None, inclusive: false, step: 1 };

    /// `start..end`.
    pub const fn new(start: i64, end: i64) -> SliceRange {
        SliceRange { start: Some(start), end: Some(end), inclusive: false, step: 1 }
    }

    pub const fn from(start: i64) -> SliceRange {
        SliceRange { start: Some(start), end: None, inclusive: false, step: 1 }
    }

    pub const fn to(end: i64) -> SliceRange {
        SliceRange { start: None, end: Some(end), inclusive: false, step: 1 }
    }

    /// `..;step`
    pub const fn step(self, step: i64) -> SliceRange {
        SliceRange { step, ..self }
    }
}

/// The SLICE1 window of `ranges` on an input of `sizes`.
pub fn window(sizes: &[usize], ranges: &[SliceRange]) -> Result<(Dims, Dims, SignedDims), RuleError> {
    if ranges.len() > sizes.len() {
        return Err(RuleError::RangeCount { ranges: ranges.len(), rank: sizes.len() });
    }
    let (mut offsets, mut counts, mut strides) = (Vec::new(), Vec::new(), Vec::new());
    for (dim, &n) in sizes.iter().enumerate() {
        let r = ranges.get(dim).copied().unwrap_or(SliceRange::FULL);
        let fault = |fault| RuleError::Range { dim, fault };
        if r.step == 0 {
            return Err(fault(RangeFault::StepZero));
        }
        // In i128: a size past i64::MAX (refused later by the layout rules) or a bound near
        // i64::MIN must not overflow here.
        let bound = |b: i64, max: i128| {
            let v = if b < 0 { i128::from(b) + n as i128 } else { i128::from(b) };
            if (0..=max).contains(&v) {
                Ok(v as usize)
            } else {
                Err(fault(RangeFault::BoundOutside { bound: b, size: n }))
            }
        };
        let start = r.start.map_or(Ok(0), |b| bound(b, n as i128))?;
        let end = match r.end {
            None => n,
            Some(b) if r.inclusive => bound(b, n as i128 - 1)? + 1,
            Some(b) => bound(b, n as i128)?,
        };
        if end <= start {
            return Err(fault(RangeFault::Empty { start, end }));
        }
        // The window covers start..end; a negative stride starts at its end (SLICE1's
        // CopyStart), which is ndarray's backwards walk.
        offsets.push(start);
        counts.push(end - start);
        strides.push(r.step);
    }
    Ok((Dims::of(&offsets), Dims::of(&counts), SignedDims::of(&strides)))
}
