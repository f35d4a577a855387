//! Shorthands of the scatter tests (`scatter_plan.rs`, `scatter_rows.rs`).

use stridex_core::{DType, Dims, Reduction, TensorDecl};

pub fn decl(dtype: DType, sizes: &[usize]) -> TensorDecl {
    TensorDecl::packed(dtype, Dims::new(sizes).unwrap())
}

pub fn strided(dtype: DType, sizes: &[usize], strides: &[usize]) -> TensorDecl {
    TensorDecl { dtype, sizes: Dims::new(sizes).unwrap(), strides: Some(Dims::new(strides).unwrap()) }
}

/// What the random scatters draw: every reduction but `mean`, which the serial models here
/// leave to the device tests (it divides by a count of updates).
pub const DRAWN_REDUCTIONS: [Reduction; 6] =
    [Reduction::None, Reduction::Add, Reduction::Mul, Reduction::Max, Reduction::Min, Reduction::Sub];

/// `to` combined with update `u` (integers standing for any type's values; not `mean`).
pub fn reduce(reduction: Reduction, to: &mut i64, u: i64) {
    *to = match reduction {
        Reduction::None => u,
        Reduction::Add => to.wrapping_add(u),
        Reduction::Mul => to.wrapping_mul(u),
        Reduction::Max => (*to).max(u),
        Reduction::Min => (*to).min(u),
        Reduction::Sub => to.wrapping_sub(u),
        Reduction::Mean => unreachable!("not drawn"),
    }
}
