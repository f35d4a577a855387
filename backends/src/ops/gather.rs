use super::{
    check_len, check_type, has_gaps, launch_on, leading_count, prepare, run_kernel, walk_at, word_bytes,
    Cell, Prepared, Verified,
};
use crate::device::Device;
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::tensor::Tensor;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::OnceLock;
use stridex_core::kernel::GatherKernelDesc;
use stridex_core::layout::next_coords;
use stridex_core::{GatherDesc, GatherPlan, Operand, OutOfRange};

/// A gather checked against its rules, with its kernel specialized on the checked constants.
/// `gather!` builds one at compile time; [`GatherOp::new`] (or `Gather`'s builder) at run time.
///
/// An op is `Send + Sync`: a `static` op serves every thread. Its plan and kernel descriptor
/// are built once, on first use; CubeCL compiles the kernel once per device.
pub struct GatherOp<T, I> {
    desc: GatherDesc,
    prepared: Cell<GatherPlan, GatherKernelDesc>,
    verified: Verified,
    types: PhantomData<fn() -> (T, I)>,
}

impl<T, I> std::fmt::Debug for GatherOp<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatherOp").field("desc", &self.desc).finish_non_exhaustive()
    }
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
        GatherOp { desc, prepared: OnceLock::new(), verified: Verified::new(), types: PhantomData }
    }

    pub(super) fn prepared(&self) -> Result<&Prepared<GatherPlan, GatherKernelDesc>, Error> {
        prepare(&self.prepared, || self.desc.plan(), GatherKernelDesc::new)
    }

    pub fn desc(&self) -> &GatherDesc {
        &self.desc
    }

    /// The validated, normalized form: layouts, normalized axis and batch dims, policy.
    pub fn plan(&self) -> Result<&GatherPlan, Error> {
        Ok(&self.prepared()?.plan)
    }

    /// A text a person reads: the rule set, every tensor's sizes, strides and minimum buffer,
    /// the output, the out-of-range policy, and for small outputs (up to
    /// 64 elements) a grid of which input element each output element reads.
    pub fn describe(&self) -> String {
        match self.prepared() {
            Ok(p) => stridex_core::describe::gather(&self.desc, &p.plan),
            Err(e) => format!("{:?}\n  broken: {e}", self.desc),
        }
    }

    /// The output's shape, as `run` returns it (for an op whose leading size is `_`,
    /// [`Error::CountNeeded`]: see [`GatherOp::output_shape_at`]).
    pub fn output_shape(&self) -> Result<&[usize], Error> {
        let plan = self.plan()?;
        if plan.dynamic_leading {
            return Err(Error::CountNeeded { call: "output_shape" });
        }
        Ok(plan.output.sizes.as_slice())
    }

    /// The output's shape for `count` leading indices rows (`indices: i64[_, ..]`); for an op
    /// of fixed sizes, its one shape.
    pub fn output_shape_at(&self, count: usize) -> Result<Vec<usize>, Error> {
        Ok(self.at(Some(count), "output_shape_at")?.0.output.sizes.to_vec())
    }

    /// Whether the indices' leading size is `_`, known at run time.
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
    ) -> Result<(Cow<'_, GatherPlan>, Option<Cow<'_, GatherKernelDesc>>), Error> {
        let p = self.prepared()?;
        p.at(
            p.plan.dynamic_leading,
            count,
            call,
            |n| stridex_core::dynamic::gather_at(&self.desc, n),
            |plan| &plan.output,
            |k, plan, n| {
                let walk = walk_at(&k.walk, n, &plan.data, &plan.output, plan.data_type.size())?;
                Ok(GatherKernelDesc { walk, index: k.index })
            },
        )
    }

    /// The count of a `_` op's indices buffer (`None` for fixed sizes).
    pub(super) fn count_of(&self, indices: &[I]) -> Result<Option<usize>, Error> {
        if !self.desc.dynamic_leading {
            return Ok(None);
        }
        leading_count(Operand::Indices, &self.desc.indices.sizes, indices.len()).map(Some)
    }

    /// The constants the kernel is specialized on (`None` for an empty output).
    pub fn kernel(&self) -> Result<Option<&GatherKernelDesc>, Error> {
        Ok(self.prepared()?.kernel.as_ref())
    }

    /// The generated kernel source in `dialect` (`None` for an empty output: no kernel).
    pub fn kernel_source(&self, dialect: crate::Dialect) -> Result<Option<String>, Error> {
        self.kernel()?.map(|k| crate::explain::source(crate::explain::Kernel::Gather(k), dialect)).transpose()
    }

    /// Runs on the default device (see [`Device::default_device`]).
    pub fn run(&self, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, data, indices)
    }

    /// Runs on `device`. When the indices' leading size is `_`, the count is the indices'
    /// length over the elements of one leading row (a partial row is an `Err`), and the
    /// output's leading size is that count.
    pub fn run_on(&self, device: &Device, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        let (plan, kernel) = self.at(self.count_of(indices)?, "run")?;
        check_len(Operand::Data, &plan.data, data.len())?;
        check_len(Operand::Indices, &plan.indices, indices.len())?;
        let Some(kernel) = kernel else {
            // Empty output: nothing to gather, no launch.
            return Ok(Tensor::from_bytes(&plan.output, &[]));
        };
        let inputs = [(&*T::bytes(data), kernel.walk.src_words() as usize), (&*I::bytes(indices), 0)];
        let (flagged, bytes) = run_kernel(device, &*kernel, &inputs, has_gaps(&plan.output))?;
        if flagged {
            return Err(first_bad_index(&plan, indices));
        }
        Ok(Tensor::from_bytes(&plan.output, &bytes))
    }

    #[cfg(feature = "test-support")]
    pub(super) fn check_lens(&self, data: &[T], indices: &[I]) -> Result<(), Error> {
        let (plan, _) = self.at(self.count_of(indices)?, "run")?;
        check_len(Operand::Data, &plan.data, data.len())?;
        check_len(Operand::Indices, &plan.indices, indices.len())
    }

    /// Bytes a device buffer needs for [`GatherOp::launch`] (`Operand::Data`, `Indices` or
    /// `Output`): the tensor's elements, rounded up to whole 32-bit words (and, for data and
    /// output, to the kernel's vector width). A `u8[3, 5, 5]` tensor needs 76 bytes, not 75.
    ///
    /// Kernels write whole 32-bit words: for 1- and 2-byte elements, bytes of a padded output
    /// that lie between elements, and those after the last element in its word, are written
    /// as zero. Padding between wider elements is left as it was.
    pub fn buffer_bytes(&self, tensor: Operand) -> Result<usize, Error> {
        let (plan, kernel) = self.at(None, "buffer_bytes")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// [`GatherOp::buffer_bytes`] for `count` leading indices rows when the indices' leading
    /// size is `_` (for fixed sizes, `count` is not read).
    pub fn buffer_bytes_at(&self, count: usize, tensor: Operand) -> Result<usize, Error> {
        let (plan, kernel) = self.at(Some(count), "buffer_bytes_at")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// Bytes a buffer for `tensor` needs for the launch of `plan` and `kernel` (from `at`).
    pub(crate) fn bytes(plan: &GatherPlan, kernel: Option<&GatherKernelDesc>, tensor: Operand) -> usize {
        match (tensor, kernel) {
            (Operand::Indices, _) => word_bytes(&plan.indices, I::INDEX.words() * 4),
            (Operand::Output, Some(k)) => k.walk.out_words() as usize * 4,
            (Operand::Output, None) => word_bytes(&plan.output, T::DTYPE.size()),
            (_, Some(k)) => k.walk.src_words() as usize * 4,
            (_, None) => word_bytes(&plan.data, T::DTYPE.size()),
        }
    }

    /// Launches on buffers already on the device (`client` must be the one that made them):
    /// `data` and `indices` laid out as the descriptor says, each at least
    /// [`GatherOp::buffer_bytes`] long. Returns once the kernel is queued, except under the
    /// `error` policy, where it waits so that an index out of range comes back as `Err` (the
    /// indices are then read back to name it), and on the op's first launch on a runtime, which
    /// waits to confirm the kernel built and ran. An op whose leading size is `_` takes
    /// [`GatherOp::launch_at`].
    pub fn launch(
        &self,
        client: &cubecl::client::Client,
        data: &cubecl::server::Handle,
        indices: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(None, "launch")?;
        self.launch_with(client, &plan, kernel.as_deref(), data, indices, output)
    }

    /// [`GatherOp::launch`] for `count` leading indices rows, when the indices' leading size is
    /// `_` (buffers of at least [`GatherOp::buffer_bytes_at`] for that count); one compiled
    /// kernel serves every count. For fixed sizes, `count` is not read.
    pub fn launch_at(
        &self,
        client: &cubecl::client::Client,
        count: usize,
        data: &cubecl::server::Handle,
        indices: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(Some(count), "launch_at")?;
        self.launch_with(client, &plan, kernel.as_deref(), data, indices, output)
    }

    /// Launches `kernel` (from `at`, with its `plan`) on device buffers, each checked against
    /// the bytes that launch needs.
    pub(crate) fn launch_with(
        &self,
        client: &cubecl::client::Client,
        plan: &GatherPlan,
        kernel: Option<&GatherKernelDesc>,
        data: &cubecl::server::Handle,
        indices: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let Some(kernel) = kernel else { return Ok(()) };
        let bytes = |tensor| Self::bytes(plan, Some(kernel), tensor);
        let inputs = [
            (Operand::Data, data, bytes(Operand::Data)),
            (Operand::Indices, indices, bytes(Operand::Indices)),
        ];
        let output = (output, bytes(Operand::Output));
        let error_policy = plan.out_of_range == OutOfRange::Error;
        if launch_on(client, kernel, &inputs, output, error_policy, &self.verified)? {
            let bytes = crate::launch::exclusive(|| crate::launch::read(client, indices.clone()))?;
            let n = plan.indices.min_buffer_len().unwrap_or(0) * I::INDEX.words() * 4;
            return Err(first_bad_index(plan, &I::from_bytes(&bytes[..n])));
        }
        Ok(())
    }
}

/// The first index, row-major over the indices tensor, outside `[-s, s-1]` (or `[0, s-1]` for
/// unsigned types). Called after the kernel raised its flag.
pub(crate) fn first_bad_index<I: IndexElement>(plan: &GatherPlan, indices: &[I]) -> Error {
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
