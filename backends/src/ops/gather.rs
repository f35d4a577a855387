//! The gather op: what only a gather has (its data and indices
//! buffers, and naming the first index out of range after its kernel raised the flag).

use super::{
    check_len, check_type, first_bad_index, leading_count, GatherKind, IntoSlice, NewTensor, Op, Sink,
};
use crate::device::Device;
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::launch;
use crate::tensor::Tensor;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::GatherKernelDesc;
use stridex_core::{GatherDesc, GatherPlan, Operand, OutOfRange};

/// A gather checked against its rules, with its kernel specialized on the checked constants.
/// `gather!` builds one at compile time; [`GatherOp::new`] (or `Gather`'s builder) at run time.
pub type GatherOp<T, I> = Op<GatherKind, T, I>;

impl<T: Element, I: IndexElement> GatherOp<T, I> {
    /// Checks `desc` (the same rule functions the macro runs) and the Rust types against it.
    pub fn new(desc: GatherDesc) -> Result<Self, Error> {
        check_type::<T>(Operand::Data, desc.data.dtype)?;
        check_type::<I>(Operand::Indices, desc.indices.dtype)?;
        let op = Self::__from_checked(desc);
        op.plan()?;
        Ok(op)
    }

    /// The count of a `_` op's indices buffer (`None` for fixed sizes).
    pub(super) fn count_of(&self, indices: &[I]) -> Result<Option<usize>, Error> {
        if !self.is_dynamic() {
            return Ok(None);
        }
        leading_count(Operand::Indices, &self.desc().indices, indices.len()).map(Some)
    }

    /// Runs on the default device (see [`Device::default_device`]).
    pub fn run(&self, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, data, indices)
    }

    /// Runs on `device`. When the indices' leading size is `_`, the count is the indices'
    /// length over the elements of one leading row (a partial row is an `Err`), and the
    /// output's leading size is that count.
    pub fn run_on(&self, device: &Device, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        self.run_to(device, data, indices, NewTensor)
    }

    /// [`GatherOp::run`] into `out`, which holds exactly the output's buffer (the elements
    /// `run`'s tensor would hold, in its strides; for a `_` op, at the count the indices give):
    /// no tensor is allocated, so a server loop can reuse one buffer. A wrong length is an `Err`
    /// before anything runs.
    pub fn run_into(&self, data: &[T], indices: &[I], out: &mut [T]) -> Result<(), Error> {
        self.run_into_on(Device::default_device()?, data, indices, out)
    }

    /// [`GatherOp::run_into`] on `device`.
    pub fn run_into_on(
        &self,
        device: &Device,
        data: &[T],
        indices: &[I],
        out: &mut [T],
    ) -> Result<(), Error> {
        self.run_to(device, data, indices, IntoSlice(out))
    }

    fn run_to<S: Sink<T>>(
        &self,
        device: &Device,
        data: &[T],
        indices: &[I],
        sink: S,
    ) -> Result<S::Out, Error> {
        let (plan, kernel) = self.checked_at(data, indices)?;
        sink.check(&plan.output)?;
        let Some(kernel) = kernel else {
            // Empty output: nothing to gather, no launch.
            return sink.finish(&plan.output, &[]);
        };
        let (flagged, bytes) =
            self.run_bytes(device, &plan, &kernel, &[&T::bytes(data), &I::bytes(indices)])?;
        if flagged {
            return Err(first_bad_index(&plan, indices));
        }
        sink.finish(&plan.output, &bytes)
    }

    /// The plan and kernel for host buffers, checked against their lengths.
    pub(super) fn checked_at(&self, data: &[T], indices: &[I]) -> Result<super::At<'_, GatherKind>, Error> {
        let at = self.at(self.count_of(indices)?, "run")?;
        check_len(Operand::Data, &at.0.data, &self.desc().data, data.len())?;
        check_len(Operand::Indices, &at.0.indices, &self.desc().indices, indices.len())?;
        Ok(at)
    }

    /// Launches on buffers already on the device (`client` must be the one that made them):
    /// `data` and `indices` laid out as the descriptor says, each at least
    /// [`Op::buffer_bytes`] long. Returns once the kernel is queued, except under the `error`
    /// policy, where it waits so that an index out of range comes back as `Err` (the indices
    /// are then read back to name it), and on the op's first launch on a runtime, which waits
    /// to confirm the kernel built and ran. An op whose leading size is `_` takes
    /// [`GatherOp::launch_at`].
    pub fn launch(
        &self,
        client: &Client,
        data: &Handle,
        indices: &Handle,
        output: &Handle,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(None, "launch")?;
        self.launch_with(client, &plan, kernel.as_deref(), data, indices, output)
    }

    /// [`GatherOp::launch`] for `count` leading indices rows, when the indices' leading size is
    /// `_` (buffers of at least [`Op::buffer_bytes_at`] for that count); one compiled kernel
    /// serves every count. For fixed sizes, `count` is not read.
    pub fn launch_at(
        &self,
        client: &Client,
        count: usize,
        data: &Handle,
        indices: &Handle,
        output: &Handle,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(Some(count), "launch_at")?;
        self.launch_with(client, &plan, kernel.as_deref(), data, indices, output)
    }

    /// Launches `kernel` (from `at`, with its `plan`) on device buffers, each checked against
    /// the bytes that launch needs.
    pub(crate) fn launch_with(
        &self,
        client: &Client,
        plan: &GatherPlan,
        kernel: Option<&GatherKernelDesc>,
        data: &Handle,
        indices: &Handle,
        output: &Handle,
    ) -> Result<(), Error> {
        let Some(kernel) = kernel else { return Ok(()) };
        let bytes = |tensor| Self::bytes(plan, Some(kernel), tensor);
        let inputs = [
            (Operand::Data, data, bytes(Operand::Data)),
            (Operand::Indices, indices, bytes(Operand::Indices)),
        ];
        let error_policy = plan.out_of_range == OutOfRange::Error;
        let flagged = launch::exclusive(|| {
            self.queue_checked(client, kernel, &inputs, (output, bytes(Operand::Output)), error_policy)
        })?;
        if flagged {
            return Err(first_bad_index(plan, &super::read_indices::<I>(client, indices, &plan.indices)?));
        }
        Ok(())
    }
}
