//! Scatters on Burn tensors. Mostly the index values are read back and grouped on the host
//! first (as `launch` groups them), so an index out of range under `error` or a repeated
//! destination under `duplicates: error` is an `Err` before anything is registered; the kernel
//! then runs on Burn's buffers, in place where Burn holds the data's buffer alone (as its own
//! `select_assign` does), else on a packed copy. The scatters whose kernels read the indices on
//! the device (a ScatterElements of many lines, a KV-cache write, and on GPUs a sum whose runs
//! lie back to back, grouped on the device) need no read-back: they run on the index tensor
//! itself, with no sync, unless `error` asks for a check first.

use super::fusion::{self, OnCube};
use super::{as_declared, check_meta, check_rank, from_fused, into_fused, padded, BurnKind, Fused, LayOut};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::kernels::OnDevice;
use crate::ops::{GroupedIntoZeros, IntoZeros, ScatterOp, Writes};
use burn_cubecl::tensor::CubeTensor;
use burn_tensor::{Int, Tensor};
use std::sync::Arc;
use stridex_core::{Operand, OutOfRange, ScatterPlan, TensorLayout};

impl<T: Element, I: IndexElement> ScatterOp<T, I> {
    /// The scatter on Burn tensors (feature `burn`) on a CubeCL device: `data` and `updates`
    /// of one kind (`Float` or `Int`), `indices` an `Int` tensor of the descriptor's index type
    /// (Burn's default `Int` is i32: declare `indices: i32[..]`). Returns the data with the
    /// updates scattered into it, in Burn's fusion stream, bit for bit [`ScatterOp::run`]'s.
    ///
    /// Mostly the indices are read back first (a sync): their values decide where each update
    /// goes, and an index out of range (under `error`) or a repeated destination (under
    /// `duplicates: error`) is an `Err` here, not a failure inside the stream. A ScatterElements
    /// of many lines and a write of whole rows under `none` (a KV cache) read the indices on
    /// the device instead: under a policy other than `error` nothing is read back and the
    /// scatter joins the stream at once.
    ///
    /// ```ignore
    /// let grad: Tensor<2> = EMBEDDING_GRAD.apply(Tensor::zeros([32000, 1024], &device), ids, rows)?;
    /// ```
    pub fn apply<K: BurnKind, const D: usize, const DI: usize, const DU: usize>(
        &self,
        data: Tensor<D, K>,
        indices: Tensor<DI, Int>,
        updates: Tensor<DU, K>,
    ) -> Result<Tensor<D, K>, Error> {
        // A `_` count is the indices' leading size.
        if let Some(op) = self.written(indices.dims().first().copied().unwrap_or(0))? {
            return op.apply(data, indices, updates);
        }
        let plan = self.plan()?;
        check_rank(Operand::Data, &plan.map.data, D)?;
        check_rank(Operand::Indices, &plan.map.indices, DI)?;
        check_rank(Operand::Updates, &plan.updates, DU)?;
        let indices = into_fused(Operand::Indices, indices)?;
        let (data, strategy) = super::autodiff_of(data);
        if let Some(strategy) = strategy {
            let updates = updates.into_dispatch();
            return Ok(Tensor::from_dispatch(super::autodiff::scatter(
                self, data, indices, updates, strategy,
            )?));
        }
        let data = into_fused(Operand::Data, Tensor::<D, K>::from_dispatch(data))?;
        let updates = into_fused(Operand::Updates, updates)?;
        // On GPUs a sum's lists are grouped on the device too (`ScatterOp::launch`).
        let grouped_on_device = || {
            let device = burn_backend::TensorMetadata::device(&data);
            self.grouping_on(&device.client(), &plan.map.data, false).is_some()
        };
        if plan.out_of_range != OutOfRange::Error
            && (reads_on_device(plan, &plan.map.data) || grouped_on_device())
        {
            return Ok(from_fused(register_on_device(self, data, indices, updates, K::FLOAT)?));
        }
        Ok(from_fused(fused(self, data, &indices, updates, K::FLOAT)?.0))
    }

    /// The scatter on `CubeBackend` tensors (Burn's CubeCL backend without fusion), launched at
    /// once on their buffers; the views' strides must be the descriptor's. The result is the
    /// data's own tensor, written in place, where Burn holds its buffer alone; else a packed
    /// copy.
    pub fn apply_cube(
        &self,
        data: CubeTensor,
        indices: CubeTensor,
        updates: CubeTensor,
    ) -> Result<CubeTensor, Error> {
        if let Some(op) = self.written(indices.meta.shape().first().copied().unwrap_or(0))? {
            return op.apply_cube(data, indices, updates);
        }
        let plan = self.plan()?;
        let data = burn_cubecl::kernel::untile(data);
        let indices = burn_cubecl::kernel::untile(indices);
        check_meta(Operand::Data, data.dtype, data.meta.shape(), T::DTYPE, &plan.map.data)?;
        let data = as_declared(Operand::Data, data, &plan.map.data)?;
        check_meta(Operand::Indices, indices.dtype, indices.meta.shape(), I::DTYPE, &plan.map.indices)?;
        let indices = as_declared(Operand::Indices, indices, &plan.map.indices)?;
        // In place, or on a packed copy that is laid out as the data: `launch` reads the indices
        // on the device (checking them there under `error`).
        if reads_on_device(plan, &plan.map.data) && (data.can_mut() || plan.map.data.is_packed()) {
            return scatter_on_device(self, data, updates, indices, as_declared);
        }
        let dest = if data.can_mut() { plan.map.data } else { plan.output };
        let writes = self.group_read_back(&indices.client, &indices.handle, dest)?;
        scatter_on_cube(self, data, updates, &writes, as_declared)
    }
}

/// The scatter in the stream, after its checks, with the index values it read back and the
/// writes it grouped from them (for the packed data).
pub(super) fn fused<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: Fused,
    indices: &Fused,
    updates: Fused,
    float: bool,
) -> Result<(Fused, Vec<I>, Arc<Writes>), Error> {
    let (values, writes) = prepare(op, &data, indices, &updates)?;
    Ok((register(op, writes.clone(), float, data, updates), values, writes))
}

/// What [`fused`] does before the op joins the stream: the tensors checked against the plan,
/// the index values read back and the writes grouped. A caller that may still refuse the call
/// (a backward pass that cannot be planned) does so between this and [`register`].
pub(super) fn prepare<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: &Fused,
    indices: &Fused,
    updates: &Fused,
) -> Result<(Vec<I>, Arc<Writes>), Error> {
    let plan = op.plan()?;
    check_stream_operands(op, data, indices, updates)?;
    // In the stream the data is packed, so its layout is the one written.
    let values = I::from_bytes(&fusion::read_back(indices)?);
    let writes = Arc::new(op.group(&values, plan.map.data)?);
    Ok((values, writes))
}

/// The stream's tensors checked against `op`'s plan: dtypes and shapes, and each declared
/// packed (a tensor in the stream is contiguous).
fn check_stream_operands<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: &Fused,
    indices: &Fused,
    updates: &Fused,
) -> Result<(), Error> {
    let plan = op.plan()?;
    for (tensor, t, dtype, layout) in [
        (Operand::Data, data, T::DTYPE, &plan.map.data),
        (Operand::Indices, indices, I::DTYPE, &plan.map.indices),
        (Operand::Updates, updates, T::DTYPE, &plan.updates),
    ] {
        check_meta(tensor, t.dtype, &t.shape, dtype, layout)?;
        fusion::check_packed(tensor, layout)?;
    }
    Ok(())
}

/// `op` joins the stream with the writes [`prepare`] grouped.
pub(super) fn register<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    writes: Arc<Writes>,
    float: bool,
    data: Fused,
    updates: Fused,
) -> Fused {
    let op: Arc<ScatterOp<T, I>> = op.kept();
    register_grouped(op, writes, float, data, updates)
}

/// Registers `op` in the stream with its writes grouped for the packed data (`data` and
/// `updates` checked against its plan, as `apply` and the gathers' backward pass do first).
pub(super) fn register_grouped<T: Element, I: IndexElement>(
    op: Arc<ScatterOp<T, I>>,
    writes: Arc<Writes>,
    float: bool,
    data: Fused,
    updates: Fused,
) -> Fused {
    let sizes = data.shape.to_vec();
    fusion::register(OnStream { op, writes }, float, vec![data, updates], &sizes)
}

/// Registers the scatter into zeros of `zeros`' writes (a gather's gradient: `updates` into
/// zeros of the data's sizes), a fresh tensor that the kernel writes whole, with no zero fill
/// (`updates` checked against `op`'s plan, as the gathers' backward pass does first).
pub(super) fn register_into_zeros<T: Element, I: IndexElement>(
    op: Arc<ScatterOp<T, I>>,
    zeros: Arc<IntoZeros>,
    float: bool,
    updates: Fused,
) -> Fused {
    let sizes = zeros.dest().sizes.to_vec();
    fusion::register(IntoZerosStream { op, zeros }, float, vec![updates], &sizes)
}

/// The data written by `writes`: in place when its buffer is Burn's alone and laid out as
/// `writes` says, else on a packed copy (then `writes` must be for the packed layout).
fn scatter_on_cube<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: CubeTensor,
    updates: CubeTensor,
    writes: &Writes,
    lay_out: LayOut,
) -> Result<CubeTensor, Error> {
    let plan = op.plan()?;
    let updates = laid_out_updates::<T>(plan, updates, lay_out)?;
    let data = burn_cubecl::kernel::untile(data);
    let dest = if data.can_mut() && writes.dest() == &plan.map.data {
        lay_out(Operand::Data, data, &plan.map.data)?
    } else if writes.dest() == &plan.output {
        packed_copy(data)?
    } else {
        return Err(Error::BurnTensor {
            tensor: Operand::Data,
            mismatch: "the strided data is shared, so it cannot be written in place".into(),
        });
    };
    let u = padded(&dest.client, &updates.handle, op.buffer_bytes(Operand::Updates)?)?;
    op.launch_writes(&dest.client, writes, &u, &dest.handle)?;
    Ok(dest)
}

/// `updates`, checked against `plan`'s (dtype and sizes), laid out as `plan` says.
fn laid_out_updates<T: Element>(
    plan: &ScatterPlan,
    updates: CubeTensor,
    lay_out: LayOut,
) -> Result<CubeTensor, Error> {
    let updates = burn_cubecl::kernel::untile(updates);
    check_meta(Operand::Updates, updates.dtype, updates.meta.shape(), T::DTYPE, &plan.updates)?;
    lay_out(Operand::Updates, updates, &plan.updates)
}

/// Whether `plan` writing `dest` takes the kernels that read the indices on the device.
fn reads_on_device(plan: &ScatterPlan, dest: &TensorLayout) -> bool {
    OnDevice::of(plan, dest).is_some()
}

/// `op` in the stream on the index tensor itself, with its kernels that read it on the device
/// (its policy is not `error`: nothing to check on the host first).
fn register_on_device<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: Fused,
    indices: Fused,
    updates: Fused,
    float: bool,
) -> Result<Fused, Error> {
    check_stream_operands(op, &data, &indices, &updates)?;
    let op: Arc<ScatterOp<T, I>> = op.kept();
    let sizes = data.shape.to_vec();
    Ok(fusion::register(OnDeviceStream { op }, float, vec![data, updates, indices], &sizes))
}

/// The data written by the kernels that read `indices` on the device: in place where Burn
/// holds its buffer alone, else on a packed copy (the caller made sure that copy is laid out
/// as the data).
fn scatter_on_device<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: CubeTensor,
    updates: CubeTensor,
    indices: CubeTensor,
    lay_out: LayOut,
) -> Result<CubeTensor, Error> {
    let plan = op.plan()?;
    let updates = laid_out_updates::<T>(plan, updates, lay_out)?;
    let indices = lay_out(Operand::Indices, burn_cubecl::kernel::untile(indices), &plan.map.indices)?;
    let data = burn_cubecl::kernel::untile(data);
    let dest =
        if data.can_mut() { lay_out(Operand::Data, data, &plan.map.data)? } else { packed_copy(data)? };
    let client = &dest.client;
    let u = padded(client, &updates.handle, op.buffer_bytes(Operand::Updates)?)?;
    let i = padded(client, &indices.handle, op.buffer_bytes(Operand::Indices)?)?;
    op.launch(client, &dest.handle, &i, &u)?;
    Ok(dest)
}

/// A packed tensor of `data`'s values in a buffer of its own (the layout the writes were grouped
/// for), copied by stridex's slice kernel whatever `data`'s layout. Burn's own copy (`copy`)
/// allocates as Burn does: on CUDA with rows padded (a `[5, 3]` f32 copy has strides `[4, 1]`),
/// and writes grouped for the packed layout then landed in the padding and the wrong rows.
fn packed_copy(data: CubeTensor) -> Result<CubeTensor, Error> {
    fusion::packed_operand(Operand::Data, data)
}

/// A scatter as Burn's fusion stream runs it, with its writes grouped before it was registered.
struct OnStream<T: 'static, I: 'static> {
    op: Arc<ScatterOp<T, I>>,
    writes: Arc<Writes>,
}

impl<T, I> std::fmt::Debug for OnStream<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnStream").field("op", &self.op).field("writes", &self.writes).finish()
    }
}

impl<T: Element, I: IndexElement> OnCube for OnStream<T, I> {
    const NAME: &'static str = "stridex_scatter";
    const DATA_INPUTS: usize = 2;
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let [data, updates]: [CubeTensor; 2] = inputs.try_into().expect("data and updates");
        scatter_on_cube(&self.op, data, updates, &self.writes, fusion::laid_out)
    }
}

/// A scatter into zeros as Burn's fusion stream runs it ([`register_into_zeros`]).
struct IntoZerosStream<T: 'static, I: 'static> {
    op: Arc<ScatterOp<T, I>>,
    zeros: Arc<IntoZeros>,
}

impl<T, I> std::fmt::Debug for IntoZerosStream<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntoZerosStream").field("op", &self.op).field("zeros", &self.zeros).finish()
    }
}

impl<T: Element, I: IndexElement> OnCube for IntoZerosStream<T, I> {
    const NAME: &'static str = "stridex_scatter_into_zeros";
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let [updates]: [CubeTensor; 1] = inputs.try_into().expect("updates");
        let updates = laid_out_updates::<T>(self.op.plan()?, updates, fusion::laid_out)?;
        let client = &updates.client;
        let u = padded(client, &updates.handle, self.op.buffer_bytes(Operand::Updates)?)?;
        let dest = client.empty(self.op.buffer_bytes(Operand::Data)?.max(4));
        self.op.launch_into_zeros(client, &self.zeros, &u, &dest)?;
        Ok(super::output_tensor(&updates, dest, self.zeros.dest()))
    }
}

/// A gather's gradient into zeros, its lists grouped on the device from the index tensor
/// (GPUs; [`register_grouped_into_zeros`]).
struct GroupedIntoZerosStream<T: 'static, I: 'static> {
    op: Arc<ScatterOp<T, I>>,
    zeros: GroupedIntoZeros,
}

impl<T, I> std::fmt::Debug for GroupedIntoZerosStream<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupedIntoZerosStream").field("op", &self.op).field("zeros", &self.zeros).finish()
    }
}

impl<T: Element, I: IndexElement> OnCube for GroupedIntoZerosStream<T, I> {
    const NAME: &'static str = "stridex_scatter_grouped_into_zeros";
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let [updates, indices]: [CubeTensor; 2] = inputs.try_into().expect("updates and indices");
        let plan = self.op.plan()?;
        let updates = laid_out_updates::<T>(plan, updates, fusion::laid_out)?;
        let indices =
            fusion::laid_out(Operand::Indices, burn_cubecl::kernel::untile(indices), &plan.map.indices)?;
        let client = &updates.client;
        let u = padded(client, &updates.handle, self.op.buffer_bytes(Operand::Updates)?)?;
        let i = padded(client, &indices.handle, self.op.buffer_bytes(Operand::Indices)?)?;
        let dest = client.empty(self.op.buffer_bytes(Operand::Data)?.max(4));
        self.op.launch_grouped_into_zeros(client, &self.zeros, &i, &u, &dest)?;
        Ok(super::output_tensor(&updates, dest, &plan.map.data))
    }
}

/// `grad` scatter-added by `op` into zeros of its data's sizes in the stream, grouping `indices`
/// on the device (`zeros` from [`ScatterOp::grouped_into_zeros`]).
pub(super) fn register_grouped_into_zeros<T: Element, I: IndexElement>(
    op: Arc<ScatterOp<T, I>>,
    zeros: GroupedIntoZeros,
    grad: Fused,
    indices: Fused,
    sizes: &[usize],
) -> Fused {
    fusion::register(GroupedIntoZerosStream { op, zeros }, true, vec![grad, indices], sizes)
}

/// A scatter as Burn's fusion stream runs it, reading its index tensor on the device.
struct OnDeviceStream<T: 'static, I: 'static> {
    op: Arc<ScatterOp<T, I>>,
}

impl<T, I> std::fmt::Debug for OnDeviceStream<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDeviceStream").field("op", &self.op).finish()
    }
}

impl<T: Element, I: IndexElement> OnCube for OnDeviceStream<T, I> {
    const NAME: &'static str = "stridex_scatter_on_device";
    const DATA_INPUTS: usize = 2;
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let [data, updates, indices]: [CubeTensor; 3] = inputs.try_into().expect("data, updates and indices");
        scatter_on_device(&self.op, data, updates, indices, fusion::laid_out)
    }
}
