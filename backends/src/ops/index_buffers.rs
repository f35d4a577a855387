//! A chain's index buffers on the host: their types as a tuple, and each buffer with its type
//! erased (its bytes, and how to read a value back).

use crate::element::IndexElement;
use std::borrow::Cow;
use stridex_core::DType;

/// The index types of a chain's gathers, in stage order: `()`, `(I0,)`, `(I0, I1)`, ... up to
/// four (the most gathers a chain has).
pub trait IndexTypes: 'static {
    const DTYPES: &'static [DType];
}

/// A chain's index buffers on the host, in stage order: `()`, `(&ids,)`, `(&ids, &cols)`, ...
/// where each is anything that derefs to a slice of its index type (`&Vec<i64>`, `&[i32]`,
/// `&[u32; 4]`).
pub trait IndexBuffers<'a, I: IndexTypes> {
    #[doc(hidden)]
    fn buffers(self) -> Vec<IndexBuffer<'a>>;
}

/// One index buffer with its type erased (its bytes, and how to read a value back).
#[doc(hidden)]
pub struct IndexBuffer<'a> {
    pub(super) bytes: Cow<'a, [u8]>,
    pub(super) len: usize,
    width: usize,
    value: fn(&[u8]) -> i128,
}

impl<'a> IndexBuffer<'a> {
    fn of<I: IndexElement>(values: &'a [I]) -> IndexBuffer<'a> {
        IndexBuffer {
            bytes: I::bytes(values),
            len: values.len(),
            width: I::DTYPE.size(),
            value: decoder(I::DTYPE),
        }
    }

    pub(super) fn value(&self, i: usize) -> i128 {
        (self.value)(&self.bytes[i * self.width..(i + 1) * self.width])
    }
}

impl IndexTypes for () {
    const DTYPES: &'static [DType] = &[];
}

impl IndexBuffers<'_, ()> for () {
    fn buffers(self) -> Vec<IndexBuffer<'static>> {
        Vec::new()
    }
}

macro_rules! index_tuples {
    ($(($($i:ident $a:ident $n:tt),+))*) => {$(
        impl<$($i: IndexElement),+> IndexTypes for ($($i,)+) {
            const DTYPES: &'static [DType] = &[$($i::DTYPE),+];
        }

        impl<'a, $($i: IndexElement, $a: AsRef<[$i]> + ?Sized),+> IndexBuffers<'a, ($($i,)+)> for ($(&'a $a,)+) {
            fn buffers(self) -> Vec<IndexBuffer<'a>> {
                vec![$(IndexBuffer::of::<$i>(self.$n.as_ref())),+]
            }
        }
    )*};
}

index_tuples! {
    (I0 A0 0)
    (I0 A0 0, I1 A1 1)
    (I0 A0 0, I1 A1 1, I2 A2 2)
    (I0 A0 0, I1 A1 1, I2 A2 2, I3 A3 3)
}

/// Index bytes read back from a device, as a buffer of `dtype`.
pub(super) fn erased(dtype: DType, bytes: &[u8]) -> IndexBuffer<'_> {
    let width = dtype.size();
    IndexBuffer { bytes: Cow::Borrowed(bytes), len: bytes.len() / width, width, value: decoder(dtype) }
}

/// How to read one index of `dtype` (an index type's: i32, u32, u64, else i64) from its bytes,
/// in the native order the buffers hold. No allocation: the host's `error` checks and a folded
/// gather read every index one at a time, and a `Vec` per index (`Element::from_bytes`) cost
/// more than the launch they guard.
fn decoder(dtype: DType) -> fn(&[u8]) -> i128 {
    fn value<I: IndexElement + bytemuck::Pod>(b: &[u8]) -> i128 {
        bytemuck::pod_read_unaligned::<I>(b).value()
    }
    match dtype {
        DType::I32 => value::<i32>,
        DType::U32 => value::<u32>,
        DType::U64 => value::<u64>,
        _ => value::<i64>,
    }
}

impl<'a> IndexBuffer<'a> {
    /// An index buffer of `dtype` as bytes (test support: chains with types chosen at run time).
    #[cfg(feature = "test-support")]
    pub(super) fn of_bytes(dtype: DType, bytes: &'a [u8]) -> IndexBuffer<'a> {
        erased(dtype, bytes)
    }
}
