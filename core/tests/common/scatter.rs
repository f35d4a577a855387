//! Shorthands of the scatter tests (`scatter_plan.rs`, `scatter_rows.rs`).

use super::reference as r;
use stridex_core::{DType, Dims, Reduction, ScatterGroups, ScatterPlan, TensorDecl, TensorLayout};

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

/// Index values as the device reads them: one little-endian 32-bit word each, or two for a
/// 64-bit index type (`words` of them).
pub fn index_words(values: &[i128], words: usize) -> Vec<u32> {
    values
        .iter()
        .flat_map(|&v| {
            let w = v as i64 as u64;
            [w as u32, (w >> 32) as u32].into_iter().take(words)
        })
        .collect()
}

/// Every write of a whole-element scatter's groups (`lane_words` off), in the order a kernel
/// applies them: `write(j, to, within)` for list entry `j` (`groups.members[j]`), destination
/// element `to` of `dest`, and the element's offset `within` its run in the updates' strides
/// (add it to the member's first element, `members[j] * lanes`).
pub fn each_write(
    plan: &ScatterPlan,
    dest: &TensorLayout,
    groups: &ScatterGroups,
    mut write: impl FnMut(usize, usize, usize),
) {
    let lanes = plan.lanes();
    let free: Vec<_> = plan.free_strides(dest).collect();
    let free_sizes: Vec<usize> = free.iter().map(|f| f.0).collect();
    for (g, &key) in groups.keys.iter().enumerate() {
        for j in groups.starts[g] as usize..groups.starts[g + 1] as usize {
            for c in r::coords(&free_sizes) {
                let along = |pick: fn(&(usize, usize, usize)) -> usize| {
                    c.iter().zip(&free).map(|(c, f)| c * pick(f)).sum::<usize>()
                };
                write(j, key as usize * lanes + along(|f| f.2), along(|f| f.1));
            }
        }
    }
}
