//! Element types of data and index tensors.

use std::fmt;

/// The element type of a data tensor. Kernels move bits, so every type works on every backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    /// One byte per element, 0 or 1.
    Bool,
}

impl DType {
    pub const ALL: [DType; 13] = [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U64,
        DType::U32,
        DType::U16,
        DType::U8,
        DType::Bool,
    ];

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::F64 | DType::I64 | DType::U64 => 8,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// The name used in descriptors (`f32[3, 2]`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::I16 => "i16",
            DType::I8 => "i8",
            DType::U64 => "u64",
            DType::U32 => "u32",
            DType::U16 => "u16",
            DType::U8 => "u8",
            DType::Bool => "bool",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// A floating-point type: one whose elements may be infinite or NaN, and whose sums round.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F64 | DType::F32 | DType::F16 | DType::BF16)
    }

    pub const fn is_integer(self) -> bool {
        matches!(
            self,
            DType::I64
                | DType::I32
                | DType::I16
                | DType::I8
                | DType::U64
                | DType::U32
                | DType::U16
                | DType::U8
        )
    }

    /// The index type this dtype names, if stridex reads indices of that type.
    pub const fn as_index(self) -> Option<IndexType> {
        match self {
            DType::I32 => Some(IndexType::I32),
            DType::I64 => Some(IndexType::I64),
            DType::U32 => Some(IndexType::U32),
            DType::U64 => Some(IndexType::U64),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The element type of an indices tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    I32,
    I64,
    U32,
    U64,
}

impl IndexType {
    pub const ALL: [IndexType; 4] = [IndexType::I32, IndexType::I64, IndexType::U32, IndexType::U64];

    pub const fn dtype(self) -> DType {
        match self {
            IndexType::I32 => DType::I32,
            IndexType::I64 => DType::I64,
            IndexType::U32 => DType::U32,
            IndexType::U64 => DType::U64,
        }
    }

    pub const fn is_signed(self) -> bool {
        matches!(self, IndexType::I32 | IndexType::I64)
    }

    /// 32-bit words per index.
    pub const fn words(self) -> usize {
        match self {
            IndexType::I32 | IndexType::U32 => 1,
            IndexType::I64 | IndexType::U64 => 2,
        }
    }
}

impl fmt::Display for IndexType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dtype().name())
    }
}
