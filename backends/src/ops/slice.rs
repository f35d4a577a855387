use super::{
    check_len, check_type, has_gaps, launch_on, prepare, run_kernel, word_bytes, Cell, Prepared, Verified,
};
use crate::device::Device;
use crate::element::Element;
use crate::error::Error;
use crate::tensor::Tensor;
use std::marker::PhantomData;
use std::sync::OnceLock;
use stridex_core::kernel::SliceKernelDesc;
use stridex_core::{Operand, SliceDesc, SlicePlan};

/// A slice checked against its rules, with its kernel specialized on the checked constants.
/// `Send + Sync`, like [`crate::GatherOp`].
pub struct SliceOp<T> {
    desc: SliceDesc,
    prepared: Cell<SlicePlan, SliceKernelDesc>,
    verified: Verified,
    types: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for SliceOp<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SliceOp").field("desc", &self.desc).finish_non_exhaustive()
    }
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
        SliceOp { desc, prepared: OnceLock::new(), verified: Verified::new(), types: PhantomData }
    }

    pub(super) fn prepared(&self) -> Result<&Prepared<SlicePlan, SliceKernelDesc>, Error> {
        prepare(&self.prepared, || self.desc.plan(), SliceKernelDesc::new)
    }

    pub fn desc(&self) -> &SliceDesc {
        &self.desc
    }

    pub fn plan(&self) -> Result<&SlicePlan, Error> {
        Ok(&self.prepared()?.plan)
    }

    /// A text a person reads: the rule set, every tensor's sizes, strides and minimum buffer,
    /// the output, the out-of-range policy, and for small outputs (up to
    /// 64 elements) a grid of which input element each output element reads.
    pub fn describe(&self) -> String {
        match self.prepared() {
            Ok(p) => stridex_core::describe::slice(&self.desc, &p.plan),
            Err(e) => format!("{:?}\n  broken: {e}", self.desc),
        }
    }

    /// The output's shape, as `run` returns it.
    pub fn output_shape(&self) -> Result<&[usize], Error> {
        Ok(self.plan()?.output.sizes.as_slice())
    }

    pub fn kernel(&self) -> Result<Option<&SliceKernelDesc>, Error> {
        Ok(self.prepared()?.kernel.as_ref())
    }

    /// The generated kernel source in `dialect` (`None` for an empty output: no kernel).
    pub fn kernel_source(&self, dialect: crate::Dialect) -> Result<Option<String>, Error> {
        self.kernel()?.map(|k| crate::explain::source(crate::explain::Kernel::Slice(k), dialect)).transpose()
    }

    pub fn run(&self, input: &[T]) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, input)
    }

    pub fn run_on(&self, device: &Device, input: &[T]) -> Result<Tensor<T>, Error> {
        let p = self.prepared()?;
        check_len(Operand::Input, &p.plan.input, input.len())?;
        let Some(kernel) = &p.kernel else {
            return Ok(Tensor::from_bytes(&p.plan.output, &[]));
        };
        let inputs = [(&*T::bytes(input), kernel.walk.src_words() as usize)];
        let (_, bytes) = run_kernel(device, kernel, &inputs, has_gaps(&p.plan.output))?;
        Ok(Tensor::from_bytes(&p.plan.output, &bytes))
    }

    /// Bytes a device buffer needs for [`SliceOp::launch`] (`Operand::Input` or `Output`); see
    /// [`crate::GatherOp::buffer_bytes`].
    pub fn buffer_bytes(&self, tensor: Operand) -> Result<usize, Error> {
        let p = self.prepared()?;
        Ok(match (tensor, &p.kernel) {
            (Operand::Output, Some(k)) => k.walk.out_words() as usize * 4,
            (Operand::Output, None) => word_bytes(&p.plan.output, T::DTYPE.size()),
            (_, Some(k)) => k.walk.src_words() as usize * 4,
            (_, None) => word_bytes(&p.plan.input, T::DTYPE.size()),
        })
    }

    /// Launches on buffers already on the device; see [`crate::GatherOp::launch`].
    pub fn launch<R: cubecl::Runtime>(
        &self,
        client: &cubecl::client::ComputeClient<R>,
        input: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let p = self.prepared()?;
        let Some(kernel) = &p.kernel else { return Ok(()) };
        let inputs = [(Operand::Input, input, self.buffer_bytes(Operand::Input)?)];
        launch_on(
            client,
            kernel,
            &inputs,
            (output, self.buffer_bytes(Operand::Output)?),
            false,
            &self.verified,
        )?;
        Ok(())
    }
}
