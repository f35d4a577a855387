//! Shared by the integration tests: the naive reference, random descriptor generators and the
//! walks' host models (from `core/tests/common`), and the property-test strategies.

#![allow(dead_code, unused_macros)]

/// Calls `$f::<T>` for the Rust type of data type `$t`.
macro_rules! with_data_type {
    ($t:expr, $f:ident ( $($arg:expr),* ) $(, $i:ty)?) => {
        match $t {
            stridex::DType::F64 => $f::<f64 $(, $i)?>($($arg),*),
            stridex::DType::F32 => $f::<f32 $(, $i)?>($($arg),*),
            stridex::DType::F16 => $f::<stridex::half::f16 $(, $i)?>($($arg),*),
            stridex::DType::BF16 => $f::<stridex::half::bf16 $(, $i)?>($($arg),*),
            stridex::DType::I64 => $f::<i64 $(, $i)?>($($arg),*),
            stridex::DType::I32 => $f::<i32 $(, $i)?>($($arg),*),
            stridex::DType::I16 => $f::<i16 $(, $i)?>($($arg),*),
            stridex::DType::I8 => $f::<i8 $(, $i)?>($($arg),*),
            stridex::DType::U64 => $f::<u64 $(, $i)?>($($arg),*),
            stridex::DType::U32 => $f::<u32 $(, $i)?>($($arg),*),
            stridex::DType::U16 => $f::<u16 $(, $i)?>($($arg),*),
            stridex::DType::U8 => $f::<u8 $(, $i)?>($($arg),*),
            stridex::DType::Bool => $f::<bool $(, $i)?>($($arg),*),
        }
    };
}

/// `$f::<T, I>(args)` for the element type `$t` and the index type `$i` (dtypes at run time).
macro_rules! with_types {
    ($t:expr, $i:expr, $f:ident ( $($arg:expr),* )) => {
        match $i {
            stridex::DType::I32 => with_data_type!($t, $f($($arg),*), i32),
            stridex::DType::I64 => with_data_type!($t, $f($($arg),*), i64),
            stridex::DType::U32 => with_data_type!($t, $f($($arg),*), u32),
            stridex::DType::U64 => with_data_type!($t, $f($($arg),*), u64),
            other => unreachable!("index type {other}"),
        }
    };
}

// The reference, the generators and the row walk's host model are core's (its own tests run
// them without a device); the suite runs the kernels against them.
#[path = "../../../core/tests/common/chains.rs"]
pub mod chains;
#[path = "../../../core/tests/common/generate.rs"]
pub mod generate;
#[macro_use]
#[path = "../../../core/tests/common/host_model.rs"]
pub mod host_model;
pub mod props;
#[path = "../../../core/tests/common/reference.rs"]
pub mod reference;
