use super::{
    check_len, check_type, has_gaps, launch_on, leading_count, prepare, run_kernel, walk_at, word_bytes,
    Cell, Prepared, Verified,
};
use crate::device::Device;
use crate::element::Element;
use crate::error::Error;
use crate::tensor::Tensor;
use std::borrow::Cow;
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

    /// The output's shape, as `run` returns it (for an op whose leading size is `_`,
    /// [`Error::CountNeeded`]: see [`SliceOp::output_shape_at`]).
    pub fn output_shape(&self) -> Result<&[usize], Error> {
        let plan = self.plan()?;
        if plan.dynamic_leading {
            return Err(Error::CountNeeded { call: "output_shape" });
        }
        Ok(plan.output.sizes.as_slice())
    }

    /// The output's shape for an input of `count` leading rows (`input: f32[_, ..]`); for an op
    /// of fixed sizes, its one shape.
    pub fn output_shape_at(&self, count: usize) -> Result<Vec<usize>, Error> {
        Ok(self.at(Some(count), "output_shape_at")?.0.output.sizes.to_vec())
    }

    /// Whether the input's leading size is `_`, known at run time.
    pub fn is_dynamic(&self) -> bool {
        self.desc.dynamic_leading
    }

    /// The plan and kernel of one launch: the op's own, or, when its leading size is `_`,
    /// those for `count` (`None`: `call` was made without one, an `Err` for a `_` op).
    #[allow(clippy::type_complexity)]
    pub(crate) fn at(
        &self,
        count: Option<usize>,
        call: &'static str,
    ) -> Result<(Cow<'_, SlicePlan>, Option<Cow<'_, SliceKernelDesc>>), Error> {
        let p = self.prepared()?;
        p.at(
            p.plan.dynamic_leading,
            count,
            call,
            |n| stridex_core::dynamic::slice_at(&self.desc, n),
            |plan| &plan.output,
            |k, plan, n| {
                let walk = walk_at(&k.walk, n, &plan.input, &plan.output, plan.data_type.size())?;
                Ok(SliceKernelDesc { walk })
            },
        )
    }

    /// The count of a `_` op's input buffer (`None` for fixed sizes).
    pub(super) fn count_of(&self, input: &[T]) -> Result<Option<usize>, Error> {
        if !self.desc.dynamic_leading {
            return Ok(None);
        }
        leading_count(Operand::Input, &self.desc.input.sizes, input.len()).map(Some)
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

    /// Runs on `device`. When the input's leading size is `_`, the count is the input's length
    /// over the elements of one leading row (a partial row is an `Err`).
    pub fn run_on(&self, device: &Device, input: &[T]) -> Result<Tensor<T>, Error> {
        let (plan, kernel) = self.at(self.count_of(input)?, "run")?;
        check_len(Operand::Input, &plan.input, input.len())?;
        let Some(kernel) = kernel else {
            return Ok(Tensor::from_bytes(&plan.output, &[]));
        };
        let inputs = [(&*T::bytes(input), kernel.walk.src_words() as usize)];
        let (_, bytes) = run_kernel(device, &*kernel, &inputs, has_gaps(&plan.output))?;
        Ok(Tensor::from_bytes(&plan.output, &bytes))
    }

    /// Bytes a device buffer needs for [`SliceOp::launch`] (`Operand::Input` or `Output`); see
    /// [`crate::GatherOp::buffer_bytes`].
    pub fn buffer_bytes(&self, tensor: Operand) -> Result<usize, Error> {
        let (plan, kernel) = self.at(None, "buffer_bytes")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// [`SliceOp::buffer_bytes`] for an input of `count` leading rows when its leading size is
    /// `_` (for fixed sizes, `count` is not read).
    pub fn buffer_bytes_at(&self, count: usize, tensor: Operand) -> Result<usize, Error> {
        let (plan, kernel) = self.at(Some(count), "buffer_bytes_at")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// Bytes a buffer for `tensor` needs for the launch of `plan` and `kernel` (from `at`).
    pub(crate) fn bytes(plan: &SlicePlan, kernel: Option<&SliceKernelDesc>, tensor: Operand) -> usize {
        match (tensor, kernel) {
            (Operand::Output, Some(k)) => k.walk.out_words() as usize * 4,
            (Operand::Output, None) => word_bytes(&plan.output, T::DTYPE.size()),
            (_, Some(k)) => k.walk.src_words() as usize * 4,
            (_, None) => word_bytes(&plan.input, T::DTYPE.size()),
        }
    }

    /// Launches on buffers already on the device; see [`crate::GatherOp::launch`]. An op whose
    /// leading size is `_` takes [`SliceOp::launch_at`].
    pub fn launch(
        &self,
        client: &cubecl::client::Client,
        input: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(None, "launch")?;
        self.launch_with(client, &plan, kernel.as_deref(), input, output)
    }

    /// [`SliceOp::launch`] for an input of `count` leading rows, when its leading size is `_`;
    /// one compiled kernel serves every count. For fixed sizes, `count` is not read.
    pub fn launch_at(
        &self,
        client: &cubecl::client::Client,
        count: usize,
        input: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(Some(count), "launch_at")?;
        self.launch_with(client, &plan, kernel.as_deref(), input, output)
    }

    /// Launches `kernel` (from `at`, with its `plan`) on device buffers, each checked against
    /// the bytes that launch needs.
    pub(crate) fn launch_with(
        &self,
        client: &cubecl::client::Client,
        plan: &SlicePlan,
        kernel: Option<&SliceKernelDesc>,
        input: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let Some(kernel) = kernel else { return Ok(()) };
        let bytes = |tensor| Self::bytes(plan, Some(kernel), tensor);
        let inputs = [(Operand::Input, input, bytes(Operand::Input))];
        launch_on(client, kernel, &inputs, (output, bytes(Operand::Output)), false, &self.verified)?;
        Ok(())
    }
}
