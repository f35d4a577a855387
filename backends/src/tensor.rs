//! The tensor an op returns: its shape, its strides and the buffer those strides index.

use crate::element::Element;
use stridex_core::layout::next_coords;
use stridex_core::TensorLayout;

/// A result tensor: its logical shape, its strides, and the buffer those strides index
/// (`1 + sum((size - 1) * stride)` elements; for a packed output, the elements row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor<T> {
    shape: Vec<usize>,
    strides: Vec<usize>,
    data: Vec<T>,
}

impl<T: Copy> Tensor<T> {
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// The output buffer as laid out (row-major unless the descriptor gave output strides;
    /// padding between elements reads as zero).
    pub fn data(&self) -> &[T] {
        &self.data
    }

    pub fn into_data(self) -> Vec<T> {
        self.data
    }

    /// The element at `coords`, or `None` when `coords` has the wrong rank or lies outside the
    /// shape.
    pub fn get(&self, coords: &[usize]) -> Option<T> {
        if coords.len() != self.shape.len() || coords.iter().zip(&self.shape).any(|(c, s)| c >= s) {
            return None;
        }
        let off: usize = coords.iter().zip(&self.strides).map(|(c, s)| c * s).sum();
        self.data.get(off).copied()
    }

    /// The elements in row-major order of the shape, whatever the strides.
    pub fn to_row_major(&self) -> Vec<T> {
        if self.shape.contains(&0) {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(self.shape.iter().product());
        let mut c = vec![0; self.shape.len()];
        loop {
            let off: usize = c.iter().zip(&self.strides).map(|(c, s)| c * s).sum();
            out.push(self.data[off]);
            if !next_coords(&mut c, &self.shape) {
                return out;
            }
        }
    }
}

impl<T: Element> Tensor<T> {
    /// The tensor of `layout` from device bytes (at least the layout's span).
    pub(crate) fn from_bytes(layout: &TensorLayout, bytes: &[u8]) -> Tensor<T> {
        let len = layout.min_buffer_len().unwrap_or(0);
        Tensor {
            shape: layout.sizes.to_vec(),
            strides: layout.strides.to_vec(),
            data: T::from_bytes(&bytes[..len * T::DTYPE.size()]),
        }
    }
}
