//! Declared tensors (what a descriptor says) and the rules every tensor shares.

use crate::dims::{Dims, MAX_RANK};
use crate::dtype::DType;
use crate::error::{Operand, RuleError};
use crate::layout::TensorLayout;
pub use crate::limits::MAX_WORDS;
use crate::rules::RuleSet;

/// A tensor as a descriptor declares it: element type, sizes and optional strides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorDecl {
    pub dtype: DType,
    pub sizes: Dims,
    /// `None`: packed row-major.
    pub strides: Option<Dims>,
}

/// The output of an op, as declared. Its type is the data type; a declared type must match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OutputDecl {
    pub dtype: Option<DType>,
    pub sizes: Dims,
    pub strides: Option<Dims>,
}

impl TensorDecl {
    pub const fn packed(dtype: DType, sizes: Dims) -> TensorDecl {
        TensorDecl { dtype, sizes, strides: None }
    }
}

/// Turns a size or stride list into [`Dims`]: more than [`MAX_RANK`] values break the rank rule.
pub fn dims(tensor: Operand, values: &[usize]) -> Result<Dims, RuleError> {
    Dims::new(values).ok_or(RuleError::Rank {
        tensor,
        rank: values.len(),
        min: 0,
        max: MAX_RANK,
        rules: RuleSet::Layout,
    })
}

/// Turns a stride list into [`Dims`]: more than [`MAX_RANK`] values cannot be one per dimension.
pub fn strides(tensor: Operand, sizes: usize, values: &[usize]) -> Result<Dims, RuleError> {
    Dims::new(values).ok_or(RuleError::StridesLen { tensor, sizes, strides: values.len() })
}

/// The layout of a declared tensor: strides must be one per dimension.
pub fn layout(tensor: Operand, sizes: Dims, strides: Option<Dims>) -> Result<TensorLayout, RuleError> {
    match strides {
        None => Ok(TensorLayout::packed(sizes)),
        Some(s) if s.len() == sizes.len() => Ok(TensorLayout { sizes, strides: s }),
        Some(s) => Err(RuleError::StridesLen { tensor, sizes: sizes.len(), strides: s.len() }),
    }
}

/// Kernels address buffers with 32-bit offsets, in elements (8- and 16-bit lanes) or in words.
pub fn check_addressable(tensor: Operand, layout: &TensorLayout, elem_bytes: usize) -> Result<(), RuleError> {
    let fits = layout.min_buffer_len().is_some_and(|n| {
        n <= u32::MAX as usize && n.checked_mul(elem_bytes).is_some_and(|b| b.div_ceil(4) <= MAX_WORDS)
    });
    if fits {
        Ok(())
    } else {
        Err(RuleError::TooLarge { tensor, elements: layout.min_buffer_len(), elem_bytes })
    }
}

/// The no-overlap rule for outputs (docs/rules.md, `layout-output-disjoint`).
pub fn check_output_layout(layout: &TensorLayout) -> Result<(), RuleError> {
    layout
        .check_disjoint()
        .map_err(|overlap| RuleError::OutputOverlap { overlap, strides: layout.strides.to_vec() })
}

pub fn check_rank(tensor: Operand, rank: usize, min: usize, rules: RuleSet) -> Result<(), RuleError> {
    if rank < min || rank > MAX_RANK {
        return Err(RuleError::Rank { tensor, rank, min, max: MAX_RANK, rules });
    }
    Ok(())
}

/// The declared output must have the data type and the inferred shape.
pub fn check_output_decl(data: DType, decl: &OutputDecl, inferred: Dims) -> Result<(), RuleError> {
    if let Some(t) = decl.dtype {
        if t != data {
            return Err(RuleError::OutputDType { data, output: t });
        }
    }
    if decl.sizes != inferred {
        return Err(RuleError::OutputShape { declared: decl.sizes.to_vec(), inferred: inferred.to_vec() });
    }
    Ok(())
}
