//! The ops a macro (or a runtime builder) produces, and the tensors they return.

use crate::device::{with_client, Device};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::launch;
use std::marker::PhantomData;
use std::sync::OnceLock;
use stridex_core::kernel::{GatherKernelDesc, SliceKernelDesc};
use stridex_core::layout::next_coords;
use stridex_core::{GatherDesc, GatherPlan, Operand, RuleError, SliceDesc, SlicePlan, TensorLayout};

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

    /// The element at `coords`.
    pub fn get(&self, coords: &[usize]) -> T {
        let off: usize = coords.iter().zip(&self.strides).map(|(c, s)| c * s).sum();
        self.data[off]
    }

    /// The elements in row-major order of the shape, whatever the strides.
    pub fn to_row_major(&self) -> Vec<T> {
        if self.shape.contains(&0) {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(self.shape.iter().product());
        let mut c = vec![0; self.shape.len()];
        loop {
            out.push(self.get(&c));
            if !next_coords(&mut c, &self.shape) {
                return out;
            }
        }
    }
}

fn tensor_from_bytes<T: Element>(layout: &TensorLayout, bytes: &[u8]) -> Tensor<T> {
    let len = layout.min_buffer_len().unwrap_or(0);
    Tensor {
        shape: layout.sizes.to_vec(),
        strides: layout.strides.to_vec(),
        data: T::from_bytes(&bytes[..len * T::DTYPE.size()]),
    }
}

fn check_len(tensor: Operand, layout: &TensorLayout, given: usize) -> Result<(), Error> {
    let needed = layout.min_buffer_len().unwrap_or(usize::MAX);
    if given < needed {
        return Err(Error::BufferTooShort { tensor, needed, given });
    }
    Ok(())
}

fn check_type<T: Element>(tensor: Operand, declared: stridex_core::DType) -> Result<(), Error> {
    if declared != T::DTYPE {
        return Err(Error::TypeMismatch { tensor, declared, used: T::DTYPE });
    }
    Ok(())
}

/// Padding slots in the output are zero-initialized so no uninitialized device memory leaks.
fn has_gaps(layout: &TensorLayout) -> bool {
    layout.min_buffer_len() != Some(layout.num_elements())
}

struct PreparedGather {
    plan: GatherPlan,
    kernel: Option<GatherKernelDesc>,
}

/// A gather checked against its rules, with its kernel specialized on the checked constants.
/// `gather!` builds one at compile time; [`GatherOp::new`] at run time.
pub struct GatherOp<T, I> {
    desc: GatherDesc,
    prepared: OnceLock<Result<PreparedGather, RuleError>>,
    types: PhantomData<fn() -> (T, I)>,
}

impl<T: Element, I: IndexElement> GatherOp<T, I> {
    /// Checks `desc` (the same rule functions the macro runs) and the Rust types against it.
    pub fn new(desc: GatherDesc) -> Result<Self, Error> {
        check_type::<T>(Operand::Data, desc.data.dtype)?;
        check_type::<I>(Operand::Indices, desc.indices.dtype)?;
        let op = Self::__from_checked(desc);
        op.prepared()?;
        Ok(op)
    }

    /// For `gather!` expansions: `desc` passed every rule at compile time, with these types.
    #[doc(hidden)]
    pub const fn __from_checked(desc: GatherDesc) -> Self {
        GatherOp { desc, prepared: OnceLock::new(), types: PhantomData }
    }

    fn prepared(&self) -> Result<&PreparedGather, Error> {
        self.prepared
            .get_or_init(|| {
                let plan = self.desc.plan()?;
                Ok(PreparedGather { kernel: GatherKernelDesc::new(&plan), plan })
            })
            .as_ref()
            .map_err(|e| Error::Rule(e.clone()))
    }

    pub fn desc(&self) -> &GatherDesc {
        &self.desc
    }

    /// The validated, normalized form: layouts, normalized axis and batch dims, policy.
    pub fn plan(&self) -> Result<&GatherPlan, Error> {
        Ok(&self.prepared()?.plan)
    }

    /// The constants the kernel is specialized on (`None` for an empty output).
    pub fn kernel(&self) -> Result<Option<&GatherKernelDesc>, Error> {
        Ok(self.prepared()?.kernel.as_ref())
    }

    /// Runs on the default device (see [`Device::default_device`]).
    pub fn run(&self, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, data, indices)
    }

    pub fn run_on(&self, device: &Device, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        let p = self.prepared()?;
        check_len(Operand::Data, &p.plan.data, data.len())?;
        check_len(Operand::Indices, &p.plan.indices, indices.len())?;
        let Some(kernel) = &p.kernel else {
            // Empty output: nothing to gather, no launch.
            return Ok(tensor_from_bytes(&p.plan.output, &[]));
        };
        let (bytes, flagged) = with_client!(device, c => launch::gather(
            c,
            kernel,
            &T::bytes(data),
            &I::bytes(indices),
            has_gaps(&p.plan.output),
        ))?;
        if flagged {
            return Err(first_bad_index(&p.plan, indices));
        }
        Ok(tensor_from_bytes(&p.plan.output, &bytes))
    }
}

/// The first index, row-major over the indices tensor, outside `[-s, s-1]` (or `[0, s-1]` for
/// unsigned types). Called after the kernel raised its flag.
fn first_bad_index<I: IndexElement>(plan: &GatherPlan, indices: &[I]) -> Error {
    let s = plan.axis_size as i128;
    let layout = &plan.indices;
    let mut c = vec![0; layout.rank()];
    loop {
        let v = indices[layout.offset(&c)].value();
        if v < -s || v >= s {
            return Error::IndexOutOfRange { position: c, value: v, axis_size: plan.axis_size };
        }
        if !next_coords(&mut c, &layout.sizes) {
            break;
        }
    }
    Error::Device("the kernel flagged an out-of-range index, but the host found none".into())
}

struct PreparedSlice {
    plan: SlicePlan,
    kernel: Option<SliceKernelDesc>,
}

/// A slice checked against its rules, with its kernel specialized on the checked constants.
pub struct SliceOp<T> {
    desc: SliceDesc,
    prepared: OnceLock<Result<PreparedSlice, RuleError>>,
    types: PhantomData<fn() -> T>,
}

impl<T: Element> SliceOp<T> {
    pub fn new(desc: SliceDesc) -> Result<Self, Error> {
        check_type::<T>(Operand::Input, desc.input.dtype)?;
        let op = Self::__from_checked(desc);
        op.prepared()?;
        Ok(op)
    }

    #[doc(hidden)]
    pub const fn __from_checked(desc: SliceDesc) -> Self {
        SliceOp { desc, prepared: OnceLock::new(), types: PhantomData }
    }

    fn prepared(&self) -> Result<&PreparedSlice, Error> {
        self.prepared
            .get_or_init(|| {
                let plan = self.desc.plan()?;
                Ok(PreparedSlice { kernel: SliceKernelDesc::new(&plan), plan })
            })
            .as_ref()
            .map_err(|e| Error::Rule(e.clone()))
    }

    pub fn desc(&self) -> &SliceDesc {
        &self.desc
    }

    pub fn plan(&self) -> Result<&SlicePlan, Error> {
        Ok(&self.prepared()?.plan)
    }

    pub fn kernel(&self) -> Result<Option<&SliceKernelDesc>, Error> {
        Ok(self.prepared()?.kernel.as_ref())
    }

    pub fn run(&self, input: &[T]) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, input)
    }

    pub fn run_on(&self, device: &Device, input: &[T]) -> Result<Tensor<T>, Error> {
        let p = self.prepared()?;
        check_len(Operand::Input, &p.plan.input, input.len())?;
        let Some(kernel) = &p.kernel else {
            return Ok(tensor_from_bytes(&p.plan.output, &[]));
        };
        let bytes =
            with_client!(device, c => launch::slice(c, kernel, &T::bytes(input), has_gaps(&p.plan.output)))?;
        Ok(tensor_from_bytes(&p.plan.output, &bytes))
    }
}
