//! The scatter kernel's constants: the free dimensions of a destination run (sizes, and the
//! strides of the updates and of the destination written), in kernel units, the element's
//! arithmetic and the reduction.

use crate::dtype::DType;
use crate::layout::TensorLayout;
use crate::rules::Reduction;
use crate::scatter::ScatterPlan;

/// One free dimension of a run, in kernel units (32-bit words for 8- and 16-bit elements,
/// elements otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScatterDim {
    /// Units of the run after this dimension: the divisor of an invocation's place in its run.
    pub step: u32,
    pub updates_stride: u32,
    pub dest_stride: u32,
}

/// A scatter kernel, specialized on a plan and the layout it writes. Invocation `p` takes unit
/// `p % run` of run `p / run`; the run's list of updates is a launch argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScatterKernelDesc {
    pub dims: Vec<ScatterDim>,
    /// Units per run.
    pub run: u32,
    /// Elements per unit: 4 (8-bit), 2 (16-bit) or 1.
    pub lanes: u32,
    /// 32-bit words per unit: 2 for 64-bit elements, else 1.
    pub words: u32,
    pub dtype: DType,
    /// What the kernel computes: bool's `add` and `mul` are `max` and `min` of 0 and 1 (NumPy's
    /// `or` and `and`, which ONNX's reference uses).
    pub reduction: Reduction,
}

impl ScatterKernelDesc {
    /// The kernel of `plan` writing `dest` (the packed output, or the data in place); `None`
    /// when a run is empty (nothing is written).
    pub fn of(plan: &ScatterPlan, dest: &TensorLayout) -> Option<ScatterKernelDesc> {
        let run = plan.run_len();
        if run == 0 {
            return None;
        }
        let lanes = plan.lanes();
        let mut step = run / lanes;
        let dims = plan
            .free_strides(dest)
            .map(|(size, updates, dest)| {
                // The plan checked that every stride of an 8- or 16-bit run is whole words
                // but the innermost, packed one (whose size is whole words).
                step = if dest == 1 && updates == 1 { step / (size / lanes) } else { step / size };
                let unit = |s: usize| if s == 1 { 1 } else { (s / lanes) as u32 };
                ScatterDim { step: step as u32, updates_stride: unit(updates), dest_stride: unit(dest) }
            })
            .collect();
        let dtype = plan.data_type();
        let reduction = match (dtype, plan.reduction) {
            (DType::Bool, Reduction::Add) => Reduction::Max,
            (DType::Bool, Reduction::Mul) => Reduction::Min,
            (_, r) => r,
        };
        Some(ScatterKernelDesc {
            dims,
            run: (run / lanes) as u32,
            lanes: lanes as u32,
            words: dtype.size().div_ceil(4) as u32,
            dtype,
            reduction,
        })
    }
}
