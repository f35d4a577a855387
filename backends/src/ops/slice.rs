//! The slice op: what only a slice has, its one input buffer.

use super::{check_len, check_type, leading_count, IntoSlice, NewTensor, Op, Sink, SliceKind};
use crate::device::Device;
use crate::element::Element;
use crate::error::Error;
use crate::launch;
use crate::tensor::Tensor;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::SliceKernelDesc;
use stridex_core::{Operand, SliceDesc, SlicePlan};

/// A slice checked against its rules, with its kernel specialized on the checked constants.
/// `slice!` builds one at compile time; [`SliceOp::new`] (or `Slice`'s builder) at run time.
pub type SliceOp<T> = Op<SliceKind, T, ()>;

impl<T: Element> SliceOp<T> {
    /// Checks `desc` (the same rule functions the macro runs) and the element type against it.
    pub fn new(desc: SliceDesc) -> Result<Self, Error> {
        check_type::<T>(Operand::Input, desc.input.dtype)?;
        let op = Self::__from_checked(desc);
        op.plan()?;
        Ok(op)
    }

    /// Runs on the default device (see [`Device::default_device`]).
    pub fn run(&self, input: &[T]) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, input)
    }

    /// Runs on `device`. When the input's leading size is `_`, the count is the input's length
    /// over the elements of one leading row (a partial row is an `Err`).
    pub fn run_on(&self, device: &Device, input: &[T]) -> Result<Tensor<T>, Error> {
        self.run_to(device, input, NewTensor)
    }

    /// [`SliceOp::run`] into `out`, which holds exactly the output's buffer; see
    /// [`crate::GatherOp::run_into`].
    pub fn run_into(&self, input: &[T], out: &mut [T]) -> Result<(), Error> {
        self.run_into_on(Device::default_device()?, input, out)
    }

    /// [`SliceOp::run_into`] on `device`.
    pub fn run_into_on(&self, device: &Device, input: &[T], out: &mut [T]) -> Result<(), Error> {
        self.run_to(device, input, IntoSlice(out))
    }

    fn run_to<S: Sink<T>>(&self, device: &Device, input: &[T], sink: S) -> Result<S::Out, Error> {
        let (plan, kernel) = self.checked_at(input)?;
        sink.check(&plan.output)?;
        let Some(kernel) = kernel else {
            return sink.finish(&plan.output, &[]);
        };
        let (_, bytes) = self.run_bytes(device, &plan, &kernel, &[&T::bytes(input)])?;
        sink.finish(&plan.output, &bytes)
    }

    /// The plan and kernel for a host input, checked against its length.
    pub(super) fn checked_at(&self, input: &[T]) -> Result<super::At<'_, SliceKind>, Error> {
        let count = match self.is_dynamic() {
            true => Some(leading_count(Operand::Input, &self.desc().input, input.len())?),
            false => None,
        };
        let at = self.at(count, "run")?;
        check_len(Operand::Input, &at.0.input, &self.desc().input, input.len())?;
        Ok(at)
    }

    /// Launches on buffers already on the device; see [`crate::GatherOp::launch`]. An op whose
    /// leading size is `_` takes [`SliceOp::launch_at`].
    pub fn launch(&self, client: &Client, input: &Handle, output: &Handle) -> Result<(), Error> {
        let (plan, kernel) = self.at(None, "launch")?;
        self.launch_with(client, &plan, kernel.as_deref(), input, output)
    }

    /// [`SliceOp::launch`] for an input of `count` leading rows, when its leading size is `_`;
    /// one compiled kernel serves every count. For fixed sizes, `count` is not read.
    pub fn launch_at(
        &self,
        client: &Client,
        count: usize,
        input: &Handle,
        output: &Handle,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(Some(count), "launch_at")?;
        self.launch_with(client, &plan, kernel.as_deref(), input, output)
    }

    /// Launches `kernel` (from `at`, with its `plan`) on device buffers, each checked against
    /// the bytes that launch needs.
    pub(crate) fn launch_with(
        &self,
        client: &Client,
        plan: &SlicePlan,
        kernel: Option<&SliceKernelDesc>,
        input: &Handle,
        output: &Handle,
    ) -> Result<(), Error> {
        let Some(kernel) = kernel else { return Ok(()) };
        let bytes = |tensor| Self::bytes(plan, Some(kernel), tensor);
        let inputs = [(Operand::Input, input, bytes(Operand::Input))];
        launch::exclusive(|| {
            self.queue_checked(client, kernel, &inputs, (output, bytes(Operand::Output)), false)
        })?;
        Ok(())
    }
}
