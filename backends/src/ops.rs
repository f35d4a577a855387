//! The ops a macro (or a runtime builder) produces, and the tensors they return.

use crate::device::{with_client, Device};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::launch;
use std::any::TypeId;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};
use stridex_core::kernel::{GatherKernelDesc, SliceKernelDesc};
use stridex_core::layout::next_coords;
use stridex_core::{
    GatherDesc, GatherPlan, Operand, OutOfRange, RuleError, SliceDesc, SlicePlan, TensorLayout,
};

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

/// The runtimes on which an op's kernel has been seen to run. CubeCL drops a launch whose
/// kernel fails to build with only a log line; building is deterministic, so the first launch
/// per runtime waits for the status word and later ones need not.
struct Verified(Mutex<Vec<TypeId>>);

impl Verified {
    const fn new() -> Verified {
        Verified(Mutex::new(Vec::new()))
    }

    /// True when `R` was confirmed before.
    fn seen<R: 'static>(&self) -> bool {
        self.0.lock().is_ok_and(|v| v.contains(&TypeId::of::<R>()))
    }

    fn confirm<R: 'static>(&self) {
        if let Ok(mut v) = self.0.lock() {
            if !v.contains(&TypeId::of::<R>()) {
                v.push(TypeId::of::<R>());
            }
        }
    }
}

/// An op's validated plan and kernel descriptor, built on first use (the macro already checked
/// the same rules at compile time; building them again is cheap and keeps the unchecked launch's
/// bounds derived by one code path).
struct Prepared<P, K> {
    plan: P,
    kernel: Option<K>,
}

type Cell<P, K> = OnceLock<Result<Prepared<P, K>, RuleError>>;

fn prepare<P, K>(
    cell: &Cell<P, K>,
    plan: impl FnOnce() -> Result<P, RuleError>,
    kernel: impl FnOnce(&P) -> Option<K>,
) -> Result<&Prepared<P, K>, Error> {
    cell.get_or_init(|| plan().map(|plan| Prepared { kernel: kernel(&plan), plan }))
        .as_ref()
        .map_err(|e| Error::Rule(e.clone()))
}

/// A gather checked against its rules, with its kernel specialized on the checked constants.
/// `gather!` builds one at compile time; [`GatherOp::new`] at run time.
pub struct GatherOp<T, I> {
    desc: GatherDesc,
    prepared: Cell<GatherPlan, GatherKernelDesc>,
    verified: Verified,
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
        GatherOp { desc, prepared: OnceLock::new(), verified: Verified::new(), types: PhantomData }
    }

    fn prepared(&self) -> Result<&Prepared<GatherPlan, GatherKernelDesc>, Error> {
        prepare(&self.prepared, || self.desc.plan(), GatherKernelDesc::new)
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

    /// The generated kernel source in `dialect` (`None` for an empty output: no kernel).
    pub fn kernel_source(&self, dialect: crate::Dialect) -> Result<Option<String>, Error> {
        self.kernel()?.map(|k| crate::explain::source(crate::explain::Kernel::Gather(k), dialect)).transpose()
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
        let bytes = with_client!(device, c => {
            let (queued, out_h) = launch::on_device_thread(c, || {
                let data_h = launch::upload(c, &T::bytes(data), kernel.walk.src_words() as usize);
                let index_h = launch::upload(c, &I::bytes(indices), 0);
                let out_h = launch::output(c, &kernel.walk, has_gaps(&p.plan.output));
                (launch::gather(c, kernel, &data_h, &index_h, &out_h), out_h)
            })?;
            let (flagged, mut out) = queued.wait(c, vec![out_h])?;
            if flagged {
                return Err(first_bad_index(&p.plan, indices));
            }
            Ok(out.remove(0))
        })?;
        Ok(tensor_from_bytes(&p.plan.output, &bytes))
    }

    /// Bytes a device buffer needs for [`GatherOp::launch`] (`Operand::Data`, `Indices` or
    /// `Output`): the tensor's elements, rounded up to whole 32-bit words (and, for data and
    /// output, to the kernel's vector width).
    ///
    /// Kernels write whole 32-bit words: for 1- and 2-byte elements, bytes of a padded output
    /// that lie between elements, and those after the last element in its word, are written
    /// as zero. Padding between wider elements is left as it was.
    pub fn buffer_bytes(&self, tensor: Operand) -> Result<usize, Error> {
        let p = self.prepared()?;
        let words = |layout: &TensorLayout, bytes: usize| layout.min_buffer_len().unwrap_or(0) * bytes;
        Ok(match (tensor, &p.kernel) {
            (Operand::Indices, _) => words(&p.plan.indices, I::INDEX.words() * 4).div_ceil(4) * 4,
            (Operand::Output, Some(k)) => k.walk.out_words() as usize * 4,
            (Operand::Output, None) => words(&p.plan.output, T::DTYPE.size()).div_ceil(4) * 4,
            (_, Some(k)) => k.walk.src_words() as usize * 4,
            (_, None) => words(&p.plan.data, T::DTYPE.size()).div_ceil(4) * 4,
        })
    }

    /// Test support: [`GatherOp::run_on`] with every buffer between guard regions, which must
    /// come back untouched (and inputs unchanged). Not a stable API.
    #[doc(hidden)]
    pub fn __run_guarded(&self, device: &Device, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        let p = self.prepared()?;
        check_len(Operand::Data, &p.plan.data, data.len())?;
        check_len(Operand::Indices, &p.plan.indices, indices.len())?;
        let Some(kernel) = &p.kernel else { return Ok(tensor_from_bytes(&p.plan.output, &[])) };
        let mut data_bytes = T::bytes(data).into_owned();
        data_bytes.resize(self.buffer_bytes(Operand::Data)?, 0);
        let mut index_bytes = I::bytes(indices).into_owned();
        index_bytes.resize(self.buffer_bytes(Operand::Indices)?.max(4), 0);
        let bytes = with_client!(device, c => {
            let d = launch::guarded(c, &data_bytes);
            let i = launch::guarded(c, &index_bytes);
            let o = launch::guarded(c, &vec![0; self.buffer_bytes(Operand::Output)?]);
            let (flagged, _) = launch::gather(c, kernel, &d.view, &i.view, &o.view).wait(c, vec![])?;
            let unchanged = launch::unguard(c, d, Operand::Data)? == data_bytes
                && launch::unguard(c, i, Operand::Indices)? == index_bytes;
            let out = launch::unguard(c, o, Operand::Output)?;
            if !unchanged {
                return Err(Error::Device("an input buffer was written".into()));
            }
            if flagged {
                return Err(first_bad_index(&p.plan, indices));
            }
            Ok(out)
        })?;
        Ok(tensor_from_bytes(&p.plan.output, &bytes))
    }

    /// Launches on buffers already on the device (`client` must be the one that made them):
    /// `data` and `indices` laid out as the descriptor says, `output` at least
    /// [`GatherOp::buffer_bytes`] long. Returns once the kernel is queued, except under the
    /// `error` policy, where it waits so that an index out of range comes back as `Err` (the
    /// indices are then read back to name it), and on the op's first launch on a runtime, which
    /// waits to confirm the kernel built and ran.
    pub fn launch<R: cubecl::Runtime>(
        &self,
        client: &cubecl::client::ComputeClient<R>,
        data: &cubecl::server::Handle,
        indices: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let p = self.prepared()?;
        let Some(kernel) = &p.kernel else { return Ok(()) };
        launch::check_handle(Operand::Data, data, self.buffer_bytes(Operand::Data)?)?;
        launch::check_handle(Operand::Indices, indices, self.buffer_bytes(Operand::Indices)?)?;
        launch::check_handle(Operand::Output, output, self.buffer_bytes(Operand::Output)?)?;
        let wait = p.plan.out_of_range == OutOfRange::Error || !self.verified.seen::<R>();
        let flagged = launch::exclusive(|| {
            let queued = launch::gather(client, kernel, data, indices, output);
            if !wait {
                return Ok(false);
            }
            let (flagged, _) = queued.wait(client, vec![])?;
            self.verified.confirm::<R>();
            Ok::<_, Error>(flagged)
        })?;
        if flagged {
            let bytes = launch::exclusive(|| launch::read(client, indices.clone()))?;
            let n = p.plan.indices.min_buffer_len().unwrap_or(0) * I::INDEX.words() * 4;
            return Err(first_bad_index(&p.plan, &I::from_bytes(&bytes[..n])));
        }
        Ok(())
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

/// A slice checked against its rules, with its kernel specialized on the checked constants.
pub struct SliceOp<T> {
    desc: SliceDesc,
    prepared: Cell<SlicePlan, SliceKernelDesc>,
    verified: Verified,
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
        SliceOp { desc, prepared: OnceLock::new(), verified: Verified::new(), types: PhantomData }
    }

    fn prepared(&self) -> Result<&Prepared<SlicePlan, SliceKernelDesc>, Error> {
        prepare(&self.prepared, || self.desc.plan(), SliceKernelDesc::new)
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
            return Ok(tensor_from_bytes(&p.plan.output, &[]));
        };
        let bytes = with_client!(device, c => {
            let (queued, out_h) = launch::on_device_thread(c, || {
                let in_h = launch::upload(c, &T::bytes(input), kernel.walk.src_words() as usize);
                let out_h = launch::output(c, &kernel.walk, has_gaps(&p.plan.output));
                (launch::slice(c, kernel, &in_h, &out_h), out_h)
            })?;
            let (_, mut out) = queued.wait(c, vec![out_h])?;
            Ok::<_, Error>(out.remove(0))
        })?;
        Ok(tensor_from_bytes(&p.plan.output, &bytes))
    }

    /// Bytes a device buffer needs for [`SliceOp::launch`] (`Operand::Input` or `Output`).
    pub fn buffer_bytes(&self, tensor: Operand) -> Result<usize, Error> {
        let p = self.prepared()?;
        let bytes =
            |layout: &TensorLayout| (layout.min_buffer_len().unwrap_or(0) * T::DTYPE.size()).div_ceil(4) * 4;
        Ok(match (tensor, &p.kernel) {
            (Operand::Output, Some(k)) => k.walk.out_words() as usize * 4,
            (Operand::Output, None) => bytes(&p.plan.output),
            (_, Some(k)) => k.walk.src_words() as usize * 4,
            (_, None) => bytes(&p.plan.input),
        })
    }

    /// Test support: [`SliceOp::run_on`] with guard regions; see `GatherOp::__run_guarded`.
    #[doc(hidden)]
    pub fn __run_guarded(&self, device: &Device, input: &[T]) -> Result<Tensor<T>, Error> {
        let p = self.prepared()?;
        check_len(Operand::Input, &p.plan.input, input.len())?;
        let Some(kernel) = &p.kernel else { return Ok(tensor_from_bytes(&p.plan.output, &[])) };
        let mut in_bytes = T::bytes(input).into_owned();
        in_bytes.resize(self.buffer_bytes(Operand::Input)?, 0);
        let bytes = with_client!(device, c => {
            let i = launch::guarded(c, &in_bytes);
            let o = launch::guarded(c, &vec![0; self.buffer_bytes(Operand::Output)?]);
            let _ = launch::slice(c, kernel, &i.view, &o.view).wait(c, vec![])?;
            if launch::unguard(c, i, Operand::Input)? != in_bytes {
                return Err(Error::Device("the input buffer was written".into()));
            }
            launch::unguard(c, o, Operand::Output)
        })?;
        Ok(tensor_from_bytes(&p.plan.output, &bytes))
    }

    /// Launches on buffers already on the device; see [`GatherOp::launch`].
    pub fn launch<R: cubecl::Runtime>(
        &self,
        client: &cubecl::client::ComputeClient<R>,
        input: &cubecl::server::Handle,
        output: &cubecl::server::Handle,
    ) -> Result<(), Error> {
        let p = self.prepared()?;
        let Some(kernel) = &p.kernel else { return Ok(()) };
        launch::check_handle(Operand::Input, input, self.buffer_bytes(Operand::Input)?)?;
        launch::check_handle(Operand::Output, output, self.buffer_bytes(Operand::Output)?)?;
        let wait = !self.verified.seen::<R>();
        launch::exclusive(|| {
            let queued = launch::slice(client, kernel, input, output);
            if wait {
                queued.wait(client, vec![])?;
                self.verified.confirm::<R>();
            }
            Ok(())
        })
    }
}
