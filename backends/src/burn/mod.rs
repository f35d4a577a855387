//! Burn interop (feature `burn`, Burn 0.22): ops applied to Burn's `Tensor<D, K>` on a CubeCL
//! device (wgpu, CUDA, CubeCL's CPU runtime), and to `CubeBackend` tensors, on the device
//! buffers Burn holds: no host round trip.
//!
//! A `Tensor` on a CubeCL device lives in Burn's fusion stream (`burn_cubecl::Cube` is
//! `Fusion<CubeBackend>`): there the op is registered as a custom operation (`burn/fusion.rs`),
//! so it runs in order with the ops around it; its checks (shapes, dtypes, and under the
//! `error` policy the index values, which needs a sync) run before it is registered. On
//! `CubeTensor`s (`apply_cube`) it launches at once on Burn's handles.
//!
//! Scatters mostly read their indices back first (their values decide where each update goes),
//! then run in the stream (`burn/scatter.rs`); those whose kernels read the indices on the
//! device (a ScatterElements of many lines, a KV-cache write of whole rows) read nothing back
//! unless `error` asks for a check. A chain that ends in a scatter does not apply here (it
//! writes into a destination: `run_into`, `launch`).
//!
//! On tensors that track gradients (a device made with Burn's `.autodiff()`), gathers
//! (`gather!`, `gather_elements!`, `gather_nd!`), slices, chains and scatters (`add`, `sub`, `none`)
//! have backward passes that are stridex kernels (`burn/autodiff.rs`); what has none yet is
//! an `Err` naming what is missing.

mod autodiff;
mod chain;
mod fusion;
mod scatter;

pub use chain::BurnIndexTensors;
pub use fusion::packed;

/// The Burn crates stridex applies ops to, at the versions it was built with.
pub use {burn_cubecl, burn_fusion, burn_std, burn_tensor};

use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::ops::{GatherOp, SliceOp};
use burn_cubecl::fusion::FusionCubeRuntime;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::Cube;
use burn_fusion::FusionTensor;
use burn_tensor::{BackendPrimitive, Float, Int, Tensor};
use cubecl::client::Client;
use cubecl::server::Handle;
use std::sync::Arc;
use stridex_core::{DType, Operand, OutOfRange, TensorLayout};

/// A tensor in Burn's fusion stream on a CubeCL device.
pub(super) type Fused = FusionTensor<FusionCubeRuntime>;

/// A Burn tensor kind stridex moves: `Float` (f64, f32, f16, bf16 data) and `Int` (integer data
/// and indices). Burn's `Bool` tensors are stored as words on wgpu, not as stridex's bytes.
pub trait BurnKind: burn_tensor::kind::Basic + BackendPrimitive<Cube, Primitive = Fused> {
    #[doc(hidden)]
    const FLOAT: bool;
}

impl BurnKind for Float {
    const FLOAT: bool = true;
}

impl BurnKind for Int {
    const FLOAT: bool = false;
}

impl crate::device::Device {
    /// The Burn device of the same CubeCL device: Burn tensors made on it share stridex's
    /// client, so ops apply to them without a copy.
    pub fn burn_device(&self) -> burn_tensor::Device {
        burn_tensor::Device::from(self.cubecl_device().clone())
    }
}

/// The fusion-stream tensor behind a Burn tensor, or why there is none (a device that is not a
/// CubeCL one, or, for an op without a backward pass, a tensor under autodiff). An `Int`
/// tensor is taken under autodiff too: it has no gradient.
fn into_fused<K: BurnKind, const D: usize>(tensor: Operand, t: Tensor<D, K>) -> Result<Fused, Error> {
    let t = t.into_dispatch();
    if !K::FLOAT {
        return autodiff::int_fused(tensor, t);
    }
    Tensor::<D, K>::from_dispatch(t).try_into_primitive::<Cube>().map_err(|e| Error::BurnTensor {
        tensor,
        mismatch: format!(
            "the Burn tensor is not a CubeCL tensor without autodiff (wgpu, CUDA or CubeCL's CPU \
             runtime): {e:?}"
        ),
    })
}

/// The autodiff strategy of a Burn tensor made under autodiff (`None`: made without it), and
/// the tensor.
fn autodiff_of<K: BurnKind, const D: usize>(
    t: Tensor<D, K>,
) -> (burn_dispatch::DispatchTensor, Option<burn_dispatch::GradientCheckpointingStrategy>) {
    let t = t.into_dispatch();
    match t.autodiff {
        burn_dispatch::DispatchAutodiffContext::Enabled(strategy) => (t, Some(strategy)),
        burn_dispatch::DispatchAutodiffContext::Disabled => (t, None),
    }
}

fn from_fused<K: BurnKind, const D: usize>(t: Fused) -> Tensor<D, K> {
    Tensor::from_primitive::<Cube>(t)
}

/// stridex's element type of a Burn dtype (`None`: none moves it).
fn dtype_of(d: burn_tensor::DType) -> Option<DType> {
    use burn_tensor::DType as B;
    Some(match d {
        B::F64 => DType::F64,
        B::F32 => DType::F32,
        B::F16 => DType::F16,
        B::BF16 => DType::BF16,
        B::I64 => DType::I64,
        B::I32 => DType::I32,
        B::I16 => DType::I16,
        B::I8 => DType::I8,
        B::U64 => DType::U64,
        B::U32 => DType::U32,
        B::U16 => DType::U16,
        B::U8 => DType::U8,
        _ => return None,
    })
}

fn check_rank(tensor: Operand, layout: &TensorLayout, rank: usize) -> Result<(), Error> {
    if layout.rank() != rank {
        return Err(Error::BurnTensor {
            tensor,
            mismatch: format!(
                "the op's `{tensor}` has rank {}, but the Burn tensor type has rank {rank}",
                layout.rank()
            ),
        });
    }
    Ok(())
}

/// A Burn tensor's dtype and shape against the descriptor's.
fn check_meta(
    tensor: Operand,
    dtype: burn_tensor::DType,
    shape: &[usize],
    declared: DType,
    layout: &TensorLayout,
) -> Result<(), Error> {
    if dtype_of(dtype) != Some(declared) {
        return Err(Error::BurnTensor {
            tensor,
            mismatch: format!("the Burn tensor holds {dtype:?}, but the op's `{tensor}` is {declared}"),
        });
    }
    if shape != layout.sizes.as_slice() {
        return Err(Error::BurnTensor {
            tensor,
            mismatch: format!(
                "the Burn tensor has shape {}, but the op's `{tensor}` is {}",
                stridex_core::dims::list(shape),
                stridex_core::dims::list(&layout.sizes)
            ),
        });
    }
    Ok(())
}

/// A Burn view's strides against the descriptor's (sizes of 1 take any stride).
fn check_strides(tensor: Operand, strides: &[usize], layout: &TensorLayout) -> Result<(), Error> {
    let same =
        layout.sizes.iter().zip(layout.strides.iter()).zip(strides).all(|((&n, &s), &t)| n <= 1 || s == t);
    if !same {
        return Err(Error::BurnTensor {
            tensor,
            mismatch: format!(
                "the Burn tensor is laid out with strides {}, but the op's `{tensor}` declares {}; declare the view's strides in the descriptor (`{tensor}: T[..] strides [..]`), or pack the tensor first (`stridex::burn::packed`; on CUDA, Burn's `into_contiguous` keeps rows padded)",
                stridex_core::dims::list(strides),
                stridex_core::dims::list(&layout.strides)
            ),
        });
    }
    Ok(())
}

/// `handle` when it holds `bytes`; else a copy padded to `bytes` (Burn sizes a buffer to its
/// elements, and a kernel reading whole vector lines may need a few bytes more). The copy goes
/// through the host: only odd sizes take it.
fn padded(client: &Client, handle: &Handle, bytes: usize) -> Result<Handle, Error> {
    if handle.size_in_used() as usize >= bytes {
        return Ok(handle.clone());
    }
    let mut data = crate::launch::exclusive(|| crate::launch::read(client, handle.clone()))?.to_vec();
    data.resize(bytes, 0);
    Ok(client.create_from_slice(&data))
}

fn output_tensor(like: &CubeTensor, handle: Handle, layout: &TensorLayout) -> CubeTensor {
    let shape = burn_tensor::Shape::from(layout.sizes.to_vec());
    let strides = burn_std::Strides::from(layout.strides.to_vec());
    CubeTensor::new(
        like.client.clone(),
        handle,
        burn_std::Metadata::new(shape, strides),
        like.device.clone(),
        like.dtype,
    )
}

/// How a `CubeBackend` tensor meets its descriptor's strides: as declared (a mismatch is an
/// `Err`: [`as_declared`]), or, for the tensors Burn's fusion stream hands over, made contiguous
/// where they are not (`fusion::laid_out`).
type LayOut = fn(Operand, CubeTensor, &TensorLayout) -> Result<CubeTensor, Error>;

/// As declared, but for a packed descriptor meeting a tensor whose rows Burn padded (on CUDA
/// every tensor whose rows are not whole aligned blocks): the same values in the same order,
/// so it is packed first ([`packed`]). Any other layout is the caller's view, and must be
/// declared.
fn as_declared(tensor: Operand, t: CubeTensor, layout: &TensorLayout) -> Result<CubeTensor, Error> {
    match check_strides(tensor, t.meta.strides(), layout) {
        Ok(()) => Ok(t),
        Err(_) if layout.is_packed() && row_major_padded(t.meta.shape(), t.meta.strides()) => packed(t),
        Err(e) => Err(e),
    }
}

/// Whether `strides` lay `sizes` out row-major with padding after rows: the innermost stride
/// 1, each outer one at least the span of the dimensions inside it (sizes of 1 take any).
fn row_major_padded(sizes: &[usize], strides: &[usize]) -> bool {
    let mut span: Option<usize> = None;
    for (&n, &s) in sizes.iter().zip(strides).rev().filter(|&(&n, _)| n > 1) {
        match span {
            None if s != 1 => return false,
            Some(inner) if s < inner => return false,
            _ => {}
        }
        span = s.checked_mul(n);
        if span.is_none() {
            return false;
        }
    }
    true
}

/// The gather on `CubeBackend` tensors, launched at once on Burn's handles.
fn gather_on_cube<T: Element, J: IndexElement>(
    op: &GatherOp<T, J>,
    data: CubeTensor,
    indices: CubeTensor,
    lay_out: LayOut,
) -> Result<CubeTensor, Error> {
    // A storage-tiled tensor (laid out for one matmul) is read in rows again first.
    let (data, indices) = (burn_cubecl::kernel::untile(data), burn_cubecl::kernel::untile(indices));
    let (plan, kernel) = op.at(Some(leading(indices.meta.shape())), "apply")?;
    check_meta(Operand::Data, data.dtype, data.meta.shape(), T::DTYPE, &plan.data)?;
    let data = lay_out(Operand::Data, data, &plan.data)?;
    check_meta(Operand::Indices, indices.dtype, indices.meta.shape(), J::DTYPE, &plan.indices)?;
    let indices = lay_out(Operand::Indices, indices, &plan.indices)?;
    let client = &data.client;
    let bytes = |t| GatherOp::<T, J>::bytes(&plan, kernel.as_deref(), t);
    let d = padded(client, &data.handle, bytes(Operand::Data))?;
    let ix = padded(client, &indices.handle, bytes(Operand::Indices))?;
    let out = client.empty(bytes(Operand::Output).max(4));
    op.launch_with(client, &plan, kernel.as_deref(), &d, &ix, &out)?;
    Ok(output_tensor(&data, out, &plan.output))
}

/// The slice on a `CubeBackend` tensor, launched at once on Burn's handle.
fn slice_on_cube<T: Element>(
    op: &SliceOp<T>,
    input: CubeTensor,
    lay_out: LayOut,
) -> Result<CubeTensor, Error> {
    let input = burn_cubecl::kernel::untile(input);
    let (plan, kernel) = op.at(Some(leading(input.meta.shape())), "apply")?;
    check_meta(Operand::Input, input.dtype, input.meta.shape(), T::DTYPE, &plan.input)?;
    let input = lay_out(Operand::Input, input, &plan.input)?;
    let client = &input.client;
    let bytes = |t| SliceOp::<T>::bytes(&plan, kernel.as_deref(), t);
    let d = padded(client, &input.handle, bytes(Operand::Input))?;
    let out = client.empty(bytes(Operand::Output).max(4));
    op.launch_with(client, &plan, kernel.as_deref(), &d, &out)?;
    Ok(output_tensor(&input, out, &plan.output))
}

/// The count of a `_` op's launch: the leading size of the Burn tensor that carries it (the
/// indices of a gather, the input of a slice); an op of fixed sizes does not read it.
fn leading(shape: &[usize]) -> usize {
    shape.first().copied().unwrap_or(0)
}

/// The gather joins Burn's fusion stream after its checks (index values under `error` read back
/// first: an error inside the stream would surface only when the result is read).
fn gather_fused<T: Element, J: IndexElement>(
    op: &GatherOp<T, J>,
    data: Fused,
    data_float: bool,
    read: &fusion::ReadBack,
) -> Result<Fused, Error> {
    let indices = read.tensors()[0].clone();
    let plan = gather_checked(op, &data, &indices)?;
    if plan.out_of_range == OutOfRange::Error && !plan.output.is_empty() {
        let values = J::from_bytes(read.bytes(0)?);
        if let e @ Error::IndexOutOfRange { .. } = crate::ops::first_bad_index(&plan, &values) {
            return Err(e);
        }
    }
    let op: Arc<GatherOp<T, J>> = fusion::shared(op.desc(), || GatherOp::__from_checked(*op.desc()));
    Ok(fusion::register(op, data_float, vec![data, indices], &plan.output.sizes))
}

/// The gather's plan for the stream's `data` and `indices` (at the count they carry), after
/// their dtypes, shapes and strides are checked against it: what [`gather_fused`] and a
/// backward pass's planning (which reads the indices by the plan's count) both check first.
fn gather_checked<'a, T: Element, J: IndexElement>(
    op: &'a GatherOp<T, J>,
    data: &Fused,
    indices: &Fused,
) -> Result<std::borrow::Cow<'a, stridex_core::GatherPlan>, Error> {
    let (plan, _) = op.at(Some(leading(&indices.shape)), "apply")?;
    check_meta(Operand::Data, data.dtype, &data.shape, T::DTYPE, &plan.data)?;
    fusion::check_packed(Operand::Data, &plan.data)?;
    check_meta(Operand::Indices, indices.dtype, &indices.shape, J::DTYPE, &plan.indices)?;
    fusion::check_packed(Operand::Indices, &plan.indices)?;
    Ok(plan)
}

/// The slice's plan for the stream's `input`, after its dtype, shape and strides are checked.
fn slice_checked<'a, T: Element>(
    op: &'a SliceOp<T>,
    input: &Fused,
) -> Result<std::borrow::Cow<'a, stridex_core::SlicePlan>, Error> {
    let (plan, _) = op.at(Some(leading(&input.shape)), "apply")?;
    check_meta(Operand::Input, input.dtype, &input.shape, T::DTYPE, &plan.input)?;
    fusion::check_packed(Operand::Input, &plan.input)?;
    Ok(plan)
}

fn slice_fused<T: Element>(op: &SliceOp<T>, input: Fused, float: bool) -> Result<Fused, Error> {
    let plan = slice_checked(op, &input)?;
    let op: Arc<SliceOp<T>> = fusion::shared(op.desc(), || SliceOp::__from_checked(*op.desc()));
    Ok(fusion::register(op, float, vec![input], &plan.output.sizes))
}

impl<T: Element, J: IndexElement> GatherOp<T, J> {
    /// The gather on Burn tensors (feature `burn`) on a CubeCL device, on the device buffers
    /// Burn holds: `data` of kind `Float` (f64, f32, f16, bf16) or `Int` (integers), `indices`
    /// an `Int` tensor of the descriptor's index type (Burn's default `Int` is i32 on CubeCL
    /// devices: declare `indices: i32[..]`). Shapes, dtypes and strides are checked against
    /// the descriptor (an `Err` naming the mismatch); the result is a new tensor in Burn's
    /// fusion stream, in order with the ops around it.
    ///
    /// On a device under Burn's autodiff (`Device::autodiff()`), a `data` that requires
    /// gradients gets a backward pass: the scatter-add of the output's gradient (the
    /// deterministic scatter, so the same bits on every run; with `batch_dims`, a ScatterND-add
    /// within each batch). Its checks run here: a gather whose gradient no scatter computes
    /// (GatherND's `batch_dims`, f64 data) is an `Err` naming the rule,
    /// and the indices are read back (a sync) and grouped for the backward pass now.
    ///
    /// ```ignore
    /// let rows: Tensor<2> = EMBED.apply(table, ids)?;
    /// ```
    pub fn apply<K: BurnKind, const D: usize, const DI: usize, const DO: usize>(
        &self,
        data: Tensor<D, K>,
        indices: Tensor<DI, Int>,
    ) -> Result<Tensor<DO, K>, Error> {
        let plan = self.plan()?;
        check_rank(Operand::Data, &plan.data, D)?;
        check_rank(Operand::Indices, &plan.indices, DI)?;
        check_rank(Operand::Output, &plan.output, DO)?;
        let (data, strategy) = autodiff_of(data);
        if let Some(strategy) = strategy {
            return Ok(Tensor::from_dispatch(autodiff::gather(
                self,
                data,
                indices.into_dispatch(),
                strategy,
            )?));
        }
        let data = into_fused(Operand::Data, Tensor::<D, K>::from_dispatch(data))?;
        let indices = into_fused(Operand::Indices, indices)?;
        Ok(from_fused(gather_fused(self, data, K::FLOAT, &fusion::ReadBack::new(vec![indices]))?))
    }

    /// The gather on `CubeBackend` tensors (Burn's CubeCL backend without fusion), launched at
    /// once on their buffers; the views' strides must be the descriptor's.
    pub fn apply_cube(&self, data: CubeTensor, indices: CubeTensor) -> Result<CubeTensor, Error> {
        gather_on_cube(self, data, indices, as_declared)
    }
}

impl<T: Element> SliceOp<T> {
    /// The slice on a Burn tensor (feature `burn`); see [`GatherOp::apply`]. Under autodiff its
    /// backward pass moves the output's gradient back through the window (zero where the
    /// window skipped), by gathers along the dimensions the window changes.
    pub fn apply<K: BurnKind, const D: usize>(&self, input: Tensor<D, K>) -> Result<Tensor<D, K>, Error> {
        let plan = self.plan()?;
        check_rank(Operand::Input, &plan.input, D)?;
        let (input, strategy) = autodiff_of(input);
        if let Some(strategy) = strategy {
            return Ok(Tensor::from_dispatch(autodiff::slice(self, input, strategy)?));
        }
        let input = into_fused(Operand::Input, Tensor::<D, K>::from_dispatch(input))?;
        Ok(from_fused(slice_fused(self, input, K::FLOAT)?))
    }

    /// The slice on a `CubeBackend` tensor; see [`GatherOp::apply_cube`].
    pub fn apply_cube(&self, input: CubeTensor) -> Result<CubeTensor, Error> {
        slice_on_cube(self, input, as_declared)
    }
}
