//! A fixed-capacity list of dimensions, so descriptors are `Copy` and can be built in `const`
//! context by macro expansions.

use std::fmt;

/// The most dimensions any tensor may have (DirectML's limit, which stridex applies everywhere).
pub const MAX_RANK: usize = 8;

/// A value a [`Dims`] holds: `usize` (sizes, strides) or `i64` (signed window strides).
pub trait DimValue: Copy + fmt::Debug + fmt::Display {
    const ZERO: Self;
}

impl DimValue for usize {
    const ZERO: Self = 0;
}

impl DimValue for i64 {
    const ZERO: Self = 0;
}

/// Up to [`MAX_RANK`] values, one per dimension: the sizes or strides of one tensor.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dims<T = usize> {
    len: u8,
    vals: [T; MAX_RANK],
}

/// Signed values per dimension: slice window strides, ONNX starts and ends.
pub type SignedDims = Dims<i64>;

impl<T: DimValue> Dims<T> {
    pub const EMPTY: Dims<T> = Dims { len: 0, vals: [T::ZERO; MAX_RANK] };

    /// Builds from a slice; `None` when it has more than [`MAX_RANK`] values.
    pub const fn new(values: &[T]) -> Option<Dims<T>> {
        if values.len() > MAX_RANK {
            return None;
        }
        let mut vals = [T::ZERO; MAX_RANK];
        let mut i = 0;
        while i < values.len() {
            vals[i] = values[i];
            i += 1;
        }
        Some(Dims { len: values.len() as u8, vals })
    }

    /// For macro expansions: `Dims::of(&[3, 2])` in a `const`; more than [`MAX_RANK`] values
    /// fails const evaluation (the macro has already refused such a descriptor).
    pub const fn of(values: &[T]) -> Dims<T> {
        match Dims::new(values) {
            Some(d) => d,
            None => panic!("more than 8 dimensions"),
        }
    }

    pub const fn len(&self) -> usize {
        self.len as usize
    }

    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[T] {
        &self.vals[..self.len as usize]
    }

    pub(crate) const fn raw(&self) -> [T; MAX_RANK] {
        self.vals
    }

    pub(crate) const fn set(&mut self, i: usize, v: T) {
        self.vals[i] = v;
    }
}

impl Dims {
    /// The product, saturating at `usize::MAX` (sizes come from users): [`size_product`].
    pub fn product(&self) -> usize {
        size_product(self.as_slice().iter().copied())
    }
}

/// The product of sizes a user wrote, saturating at `usize::MAX`: a zero anywhere makes it
/// zero, whatever the others multiply to (an empty tensor may have sizes of 2^33), and an
/// overflow gives a count no buffer holds and no 32-bit kernel constant takes.
pub fn size_product(sizes: impl IntoIterator<Item = usize>) -> usize {
    sizes.into_iter().fold(1usize, |a, n| a.saturating_mul(n))
}

impl<T: DimValue> std::ops::Deref for Dims<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: DimValue> fmt::Debug for Dims<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl<T: DimValue> fmt::Display for Dims<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, self.as_slice())
    }
}

/// Writes `[a, b, c]`.
pub(crate) fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, xs: &[T]) -> fmt::Result {
    f.write_str("[")?;
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{x}")?;
    }
    f.write_str("]")
}

/// `[a, b, c]` as a String.
pub fn list<T: fmt::Display>(xs: &[T]) -> String {
    struct L<'a, T>(&'a [T]);
    impl<T: fmt::Display> fmt::Display for L<'_, T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_list(f, self.0)
        }
    }
    L(xs).to_string()
}
