//! Rust element types and their bytes on the device.

use half::{bf16, f16};
use stridex_core::{DType, IndexType};

/// A type that can be the element of a data tensor. Kernels move its bits unchanged.
pub trait Element: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    const DTYPE: DType;
    /// The element bytes, little-endian, as the device stores them.
    fn bytes(data: &[Self]) -> std::borrow::Cow<'_, [u8]>;
    /// Elements back from device bytes (`bytes.len()` is a multiple of the element size).
    fn from_bytes(bytes: &[u8]) -> Vec<Self>;
    /// [`Element::from_bytes`] into `out`, which holds `bytes.len()` / size elements.
    fn write_bytes(bytes: &[u8], out: &mut [Self]) {
        out.copy_from_slice(&Self::from_bytes(bytes));
    }
}

/// A type that can be the element of an indices tensor.
pub trait IndexElement: Element {
    const INDEX: IndexType;
    /// The index value, exactly (u64 and i64 fit in i128).
    fn value(self) -> i128;
}

macro_rules! pod_element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn bytes(data: &[Self]) -> std::borrow::Cow<'_, [u8]> {
                std::borrow::Cow::Borrowed(bytemuck::cast_slice(data))
            }
            fn from_bytes(bytes: &[u8]) -> Vec<Self> {
                bytemuck::pod_collect_to_vec(bytes)
            }
            fn write_bytes(bytes: &[u8], out: &mut [Self]) {
                bytemuck::cast_slice_mut::<Self, u8>(out).copy_from_slice(bytes);
            }
        }
    )*};
}

pod_element!(
    f64 => F64, f32 => F32, f16 => F16, bf16 => BF16,
    i64 => I64, i32 => I32, i16 => I16, i8 => I8,
    u64 => U64, u32 => U32, u16 => U16, u8 => U8,
);

/// One byte per element, 0 or 1 (ONNX's bool). Zeroed output (the `zero` policy) reads false.
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn bytes(data: &[Self]) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Owned(data.iter().map(|&b| u8::from(b)).collect())
    }
    fn from_bytes(bytes: &[u8]) -> Vec<Self> {
        bytes.iter().map(|&b| b != 0).collect()
    }
    fn write_bytes(bytes: &[u8], out: &mut [Self]) {
        for (o, &b) in out.iter_mut().zip(bytes) {
            *o = b != 0;
        }
    }
}

macro_rules! index_element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl IndexElement for $t {
            const INDEX: IndexType = IndexType::$d;
            fn value(self) -> i128 {
                self as i128
            }
        }
    )*};
}

index_element!(i32 => I32, i64 => I64, u32 => U32, u64 => U64);
