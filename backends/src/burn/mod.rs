//! Burn interop (feature `burn`): ops applied to Burn tensors of `CubeBackend<R, ..>` for any
//! CubeCL runtime `R`, and of `Fusion<CubeBackend<R, ..>>` (Burn's default `Wgpu`, `Cuda`), on
//! the device buffers Burn holds: no host round trip.
//!
//! On `CubeBackend` the op launches at once on Burn's handles. On `Fusion` it is registered in
//! Burn's fusion stream as a custom operation (`burn/fusion.rs`), so it runs in order with the ops
//! around it; its checks (shapes, dtypes, and under the `error` policy the index values, which
//! needs a sync) run before it is registered.

mod chain;
mod fusion;

pub use chain::BurnIndexTensors;

/// The Burn crates stridex applies ops to, at the versions it was built with.
pub use {burn_cubecl, burn_fusion, burn_tensor};

use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::ops::{ChainOp, GatherOp, IndexTypes, SliceOp};
use burn_cubecl::fusion::FusionCubeRuntime;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use burn_fusion::{Fusion, FusionTensor};
use burn_tensor::backend::Backend;
use burn_tensor::{Float, Int, Tensor, TensorKind, TensorPrimitive};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::{DType, Operand, OutOfRange, TensorLayout};

/// A Burn backend stridex ops apply to. Its float and int tensors share one primitive type
/// (`CubeTensor<R>`, or `FusionTensor<..>` under fusion).
pub trait BurnBackend: Backend {
    type Primitive: Clone + Send + 'static;

    #[doc(hidden)]
    fn gather<T: Element, I: IndexElement>(
        op: &GatherOp<T, I>,
        data: Self::Primitive,
        data_float: bool,
        indices: Self::Primitive,
    ) -> Result<Self::Primitive, Error>;

    #[doc(hidden)]
    fn slice<T: Element>(
        op: &SliceOp<T>,
        input: Self::Primitive,
        float: bool,
    ) -> Result<Self::Primitive, Error>;

    #[doc(hidden)]
    fn chain<T: Element, J: IndexTypes>(
        op: &ChainOp<T, J>,
        data: Self::Primitive,
        data_float: bool,
        indices: Vec<Self::Primitive>,
    ) -> Result<Self::Primitive, Error>;
}

/// A Burn tensor kind stridex moves: `Float` (f64, f32, f16, bf16 data) and `Int` (integer data
/// and indices). Burn's `Bool` tensors are stored as words on wgpu, not as stridex's bytes.
pub trait BurnKind<B: BurnBackend>: TensorKind<B> {
    #[doc(hidden)]
    const FLOAT: bool;
    #[doc(hidden)]
    fn into_burn_primitive<const D: usize>(t: Tensor<B, D, Self>) -> B::Primitive;
    #[doc(hidden)]
    fn from_burn_primitive<const D: usize>(p: B::Primitive) -> Tensor<B, D, Self>;
}

impl<B: BurnBackend<Primitive = <B as burn_tensor::backend::BackendTypes>::FloatTensorPrimitive>> BurnKind<B>
    for Float
{
    const FLOAT: bool = true;
    fn into_burn_primitive<const D: usize>(t: Tensor<B, D, Self>) -> B::Primitive {
        t.into_primitive().tensor()
    }
    fn from_burn_primitive<const D: usize>(p: B::Primitive) -> Tensor<B, D, Self> {
        Tensor::from_primitive(TensorPrimitive::Float(p))
    }
}

impl<B: BurnBackend<Primitive = <B as burn_tensor::backend::BackendTypes>::IntTensorPrimitive>> BurnKind<B>
    for Int
{
    const FLOAT: bool = false;
    fn into_burn_primitive<const D: usize>(t: Tensor<B, D, Self>) -> B::Primitive {
        t.into_primitive()
    }
    fn from_burn_primitive<const D: usize>(p: B::Primitive) -> Tensor<B, D, Self> {
        Tensor::from_primitive(p)
    }
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
                "the Burn tensor is laid out with strides {}, but the op's `{tensor}` declares {}; declare the view's strides in the descriptor (`{tensor}: T[..] strides [..]`), or make the tensor contiguous first (`burn_cubecl::kernel::into_contiguous`)",
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
fn padded<R: Runtime>(client: &ComputeClient<R>, handle: &Handle, bytes: usize) -> Result<Handle, Error> {
    if handle.size_in_used() as usize >= bytes {
        return Ok(handle.clone());
    }
    let mut data = crate::launch::exclusive(|| crate::launch::read(client, handle.clone()))?.to_vec();
    data.resize(bytes, 0);
    Ok(client.create_from_slice(&data))
}

fn output_tensor<R: CubeRuntime>(
    like: &CubeTensor<R>,
    handle: Handle,
    layout: &TensorLayout,
) -> CubeTensor<R> {
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
type LayOut<R> = fn(Operand, CubeTensor<R>, &TensorLayout) -> Result<CubeTensor<R>, Error>;

fn as_declared<R: CubeRuntime>(
    tensor: Operand,
    t: CubeTensor<R>,
    layout: &TensorLayout,
) -> Result<CubeTensor<R>, Error> {
    check_strides(tensor, t.meta.strides(), layout)?;
    Ok(t)
}

/// The gather on `CubeBackend` tensors, launched at once on Burn's handles.
fn gather_on_cube<R: CubeRuntime, T: Element, J: IndexElement>(
    op: &GatherOp<T, J>,
    data: CubeTensor<R>,
    indices: CubeTensor<R>,
    lay_out: LayOut<R>,
) -> Result<CubeTensor<R>, Error> {
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
fn slice_on_cube<R: CubeRuntime, T: Element>(
    op: &SliceOp<T>,
    input: CubeTensor<R>,
    lay_out: LayOut<R>,
) -> Result<CubeTensor<R>, Error> {
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

impl<R: CubeRuntime, F: FloatElement, I: IntElement, BT: BoolElement> BurnBackend
    for CubeBackend<R, F, I, BT>
{
    type Primitive = CubeTensor<R>;

    fn gather<T: Element, J: IndexElement>(
        op: &GatherOp<T, J>,
        data: CubeTensor<R>,
        _data_float: bool,
        indices: CubeTensor<R>,
    ) -> Result<CubeTensor<R>, Error> {
        gather_on_cube(op, data, indices, as_declared)
    }

    fn slice<T: Element>(
        op: &SliceOp<T>,
        input: CubeTensor<R>,
        _float: bool,
    ) -> Result<CubeTensor<R>, Error> {
        slice_on_cube(op, input, as_declared)
    }

    fn chain<T: Element, J: IndexTypes>(
        op: &ChainOp<T, J>,
        data: CubeTensor<R>,
        _data_float: bool,
        indices: Vec<CubeTensor<R>>,
    ) -> Result<CubeTensor<R>, Error> {
        chain::on_cube(op, data, indices, as_declared)
    }
}

type Fused<R> = FusionTensor<FusionCubeRuntime<R>>;

/// The count of a `_` op's launch: the leading size of the Burn tensor that carries it (the
/// indices of a gather, the input of a slice); an op of fixed sizes does not read it.
fn leading(shape: &[usize]) -> usize {
    shape.first().copied().unwrap_or(0)
}

impl<R: CubeRuntime, F: FloatElement, I: IntElement, BT: BoolElement> BurnBackend
    for Fusion<CubeBackend<R, F, I, BT>>
where
    CubeBackend<R, F, I, BT>: burn_fusion::FusionBackend<FusionRuntime = FusionCubeRuntime<R>>,
{
    type Primitive = Fused<R>;

    fn gather<T: Element, J: IndexElement>(
        op: &GatherOp<T, J>,
        data: Fused<R>,
        data_float: bool,
        indices: Fused<R>,
    ) -> Result<Fused<R>, Error> {
        let (plan, _) = op.at(Some(leading(&indices.shape)), "apply")?;
        check_meta(Operand::Data, data.dtype, &data.shape, T::DTYPE, &plan.data)?;
        fusion::check_packed(Operand::Data, &plan.data)?;
        check_meta(Operand::Indices, indices.dtype, &indices.shape, J::DTYPE, &plan.indices)?;
        fusion::check_packed(Operand::Indices, &plan.indices)?;
        if plan.out_of_range == OutOfRange::Error && !plan.output.is_empty() {
            let values = J::from_bytes(&fusion::read_back::<R, F, I, BT>(&indices)?);
            if let e @ Error::IndexOutOfRange { .. } = crate::ops::gather::first_bad_index(&plan, &values) {
                return Err(e);
            }
        }
        let op: &'static GatherOp<T, J> = fusion::shared(op.desc(), || GatherOp::__from_checked(*op.desc()));
        Ok(fusion::register::<R, F, I, BT, _>(op, data_float, vec![data, indices], &plan.output.sizes))
    }

    fn slice<T: Element>(op: &SliceOp<T>, input: Fused<R>, float: bool) -> Result<Fused<R>, Error> {
        let (plan, _) = op.at(Some(leading(&input.shape)), "apply")?;
        check_meta(Operand::Input, input.dtype, &input.shape, T::DTYPE, &plan.input)?;
        fusion::check_packed(Operand::Input, &plan.input)?;
        let op: &'static SliceOp<T> = fusion::shared(op.desc(), || SliceOp::__from_checked(*op.desc()));
        Ok(fusion::register::<R, F, I, BT, _>(op, float, vec![input], &plan.output.sizes))
    }

    fn chain<T: Element, J: IndexTypes>(
        op: &ChainOp<T, J>,
        data: Fused<R>,
        data_float: bool,
        indices: Vec<Fused<R>>,
    ) -> Result<Fused<R>, Error> {
        chain::fused::<R, F, I, BT, T, J>(op, data, data_float, indices)
    }
}

impl<T: Element, J: IndexElement> GatherOp<T, J> {
    /// The gather on Burn tensors (feature `burn`), on the device buffers Burn holds: `data` of
    /// kind `Float` (f64, f32, f16, bf16) or `Int` (integers), `indices` an `Int` tensor of the
    /// descriptor's index type. Shapes, dtypes and strides are checked against the descriptor
    /// (an `Err` naming the mismatch); the result is a new tensor that owns its buffer.
    ///
    /// ```ignore
    /// let rows: Tensor<B, 2> = EMBED.apply(table, ids)?;
    /// ```
    pub fn apply<B, K, const D: usize, const DI: usize, const DO: usize>(
        &self,
        data: Tensor<B, D, K>,
        indices: Tensor<B, DI, Int>,
    ) -> Result<Tensor<B, DO, K>, Error>
    where
        B: BurnBackend,
        K: BurnKind<B>,
        Int: BurnKind<B>,
    {
        let plan = self.plan()?;
        check_rank(Operand::Data, &plan.data, D)?;
        check_rank(Operand::Indices, &plan.indices, DI)?;
        check_rank(Operand::Output, &plan.output, DO)?;
        let y = B::gather(self, K::into_burn_primitive(data), K::FLOAT, Int::into_burn_primitive(indices))?;
        Ok(K::from_burn_primitive(y))
    }
}

impl<T: Element> SliceOp<T> {
    /// The slice on a Burn tensor (feature `burn`); see [`GatherOp::apply`].
    pub fn apply<B, K, const D: usize>(&self, input: Tensor<B, D, K>) -> Result<Tensor<B, D, K>, Error>
    where
        B: BurnBackend,
        K: BurnKind<B>,
    {
        let plan = self.plan()?;
        check_rank(Operand::Input, &plan.input, D)?;
        let y = B::slice(self, K::into_burn_primitive(input), K::FLOAT)?;
        Ok(K::from_burn_primitive(y))
    }
}
