//! A fixed-capacity list of dimensions, so descriptors are `Copy` and can be built in `const`
//! context by macro expansions.

use std::fmt;

/// The most dimensions any tensor may have (DirectML's limit, which stridex applies everywhere).
pub const MAX_RANK: usize = 8;

/// Up to [`MAX_RANK`] unsigned values: the sizes or strides of one tensor.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dims {
    len: u8,
    vals: [usize; MAX_RANK],
}

impl Dims {
    pub const EMPTY: Dims = Dims { len: 0, vals: [0; MAX_RANK] };

    /// Builds from a slice; `None` when it has more than [`MAX_RANK`] values.
    pub const fn new(values: &[usize]) -> Option<Dims> {
        if values.len() > MAX_RANK {
            return None;
        }
        let mut vals = [0; MAX_RANK];
        let mut i = 0;
        while i < values.len() {
            vals[i] = values[i];
            i += 1;
        }
        Some(Dims { len: values.len() as u8, vals })
    }

    pub const fn len(&self) -> usize {
        self.len as usize
    }

    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[usize] {
        &self.vals[..self.len as usize]
    }

    pub fn push(&mut self, v: usize) -> Result<(), usize> {
        if self.len() == MAX_RANK {
            return Err(v);
        }
        self.vals[self.len()] = v;
        self.len += 1;
        Ok(())
    }

    /// The product, saturating at `usize::MAX` (sizes come from users).
    pub fn product(&self) -> usize {
        self.as_slice().iter().fold(1usize, |a, &n| a.saturating_mul(n))
    }
}

impl std::ops::Deref for Dims {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        self.as_slice()
    }
}

impl fmt::Debug for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl fmt::Display for Dims {
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

impl Dims {
    pub(crate) const fn raw(&self) -> [usize; MAX_RANK] {
        self.vals
    }

    pub(crate) const fn set(&mut self, i: usize, v: usize) {
        self.vals[i] = v;
    }
}

impl Dims {
    /// For macro expansions: `Dims::of(&[3, 2])` in a `const`; more than [`MAX_RANK`] values
    /// fails const evaluation (the macro has already refused such a descriptor).
    pub const fn of(values: &[usize]) -> Dims {
        match Dims::new(values) {
            Some(d) => d,
            None => panic!("more than 8 dimensions"),
        }
    }
}

/// Up to [`MAX_RANK`] signed values: slice window strides, ONNX starts and ends.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignedDims {
    len: u8,
    vals: [i64; MAX_RANK],
}

impl SignedDims {
    pub const fn new(values: &[i64]) -> Option<SignedDims> {
        if values.len() > MAX_RANK {
            return None;
        }
        let mut vals = [0; MAX_RANK];
        let mut i = 0;
        while i < values.len() {
            vals[i] = values[i];
            i += 1;
        }
        Some(SignedDims { len: values.len() as u8, vals })
    }

    /// For macro expansions, like [`Dims::of`].
    pub const fn of(values: &[i64]) -> SignedDims {
        match SignedDims::new(values) {
            Some(d) => d,
            None => panic!("more than 8 values"),
        }
    }

    pub fn as_slice(&self) -> &[i64] {
        &self.vals[..self.len as usize]
    }
}

impl std::ops::Deref for SignedDims {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        self.as_slice()
    }
}

impl fmt::Debug for SignedDims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl fmt::Display for SignedDims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, self.as_slice())
    }
}
