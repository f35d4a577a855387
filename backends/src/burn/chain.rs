//! Chains on Burn tensors: the data tensor and one `Int` tensor per gather, each of its own
//! rank, run as the chain's one fused kernel (or its stages) on Burn's buffers.

use super::fusion::{self, OnCube};
use super::{
    as_declared, check_meta, check_rank, from_fused, into_fused, leading, output_tensor, padded, BurnKind,
    Fused, LayOut,
};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::kernels::{ChainKernel, Launch};
use crate::launch;
use crate::ops::{check_read_back, checked_gathers, in_stage};
use crate::ops::{ChainOp, IndexTypes};
use burn_cubecl::tensor::CubeTensor;
use burn_tensor::{Int, Tensor};
use cubecl::client::Client;
use cubecl::server::Handle;
use std::borrow::Cow;
use std::sync::Arc;
use stridex_core::{ChainCount, ChainPlan, Operand, StageDesc};

/// A chain's index tensors in Burn, in stage order, as a tuple: `()`, `(ids,)`, `(ids, cols)`,
/// ... up to four, each an `Int` tensor of any rank (the index type of its gather).
pub trait BurnIndexTensors<I: IndexTypes> {
    /// The tensors' fusion-stream primitives and their ranks, in stage order.
    #[doc(hidden)]
    fn primitives(self) -> Result<Vec<(Fused, usize)>, Error>;
}

impl BurnIndexTensors<()> for () {
    fn primitives(self) -> Result<Vec<(Fused, usize)>, Error> {
        Ok(Vec::new())
    }
}

macro_rules! index_tensors {
    ($(($i:ident, $d:ident, $n:tt)),+) => {
        impl<$($i: IndexElement,)+ $(const $d: usize,)+> BurnIndexTensors<($($i,)+)>
            for ($(Tensor<$d, Int>,)+)
        {
            fn primitives(self) -> Result<Vec<(Fused, usize)>, Error> {
                Ok(vec![$((into_fused(Operand::Indices, self.$n)?, $d)),+])
            }
        }
    };
}

index_tensors!((I0, D0, 0));
index_tensors!((I0, D0, 0), (I1, D1, 1));
index_tensors!((I0, D0, 0), (I1, D1, 1), (I2, D2, 2));
index_tensors!((I0, D0, 0), (I1, D1, 1), (I2, D2, 2), (I3, D3, 3));

impl<T: Element, J: IndexTypes> ChainOp<T, J> {
    /// The chain on Burn tensors (feature `burn`) on a CubeCL device: `data` of kind `Float` or
    /// `Int`, and the gathers' `Int` index tensors in stage order as a tuple (`()`, `(ids,)`,
    /// `(ids, cols)`). One fused kernel (or the stages, intermediates on the device) runs on
    /// the buffers Burn holds, in Burn's fusion stream; shapes, ranks, dtypes and strides are
    /// checked as [`GatherOp::apply`] checks them, an index tensor's mismatch naming its stage.
    ///
    /// [`GatherOp::apply`]: crate::ops::GatherOp::apply
    ///
    /// ```ignore
    /// let last: Tensor<3> = LAST_POSITION.apply(table, (ids,))?;
    /// ```
    pub fn apply<K: BurnKind, const D: usize, const DO: usize>(
        &self,
        data: Tensor<D, K>,
        indices: impl BurnIndexTensors<J>,
    ) -> Result<Tensor<DO, K>, Error> {
        let plan = self.plan()?;
        if plan.scatter().is_some() {
            return Err(Error::DestinationNeeded { call: "apply" });
        }
        check_rank(Operand::Data, &plan.data, D)?;
        check_rank(Operand::Output, &plan.output, DO)?;
        let indices = indices.primitives()?;
        for ((stage, g), &(_, rank)) in plan.gathers().zip(&indices) {
            check_rank(Operand::Indices, &g.indices, rank).map_err(|e| in_stage(stage, e))?;
        }
        let indices = indices.into_iter().map(|(p, _)| p).collect();
        let (data, strategy) = super::autodiff_of(data);
        if let Some(strategy) = strategy {
            return Ok(Tensor::from_dispatch(super::autodiff::chain(self, data, indices, strategy)?));
        }
        let data = super::into_fused(Operand::Data, Tensor::<D, K>::from_dispatch(data))?;
        Ok(from_fused(fused(self, data, K::FLOAT, &fusion::ReadBack::new(indices))?))
    }

    /// The chain on `CubeBackend` tensors, launched at once on their buffers; see
    /// [`GatherOp::apply_cube`](crate::ops::GatherOp::apply_cube).
    pub fn apply_cube(&self, data: CubeTensor, indices: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        if self.plan()?.scatter().is_some() {
            return Err(Error::DestinationNeeded { call: "apply_cube" });
        }
        on_cube(self, data, indices, as_declared)
    }
}

/// The count of a `_` chain: the leading size of the Burn tensor that carries it (the data, or
/// its gather's indices); `None` for fixed sizes.
fn count_of<T: Element, J: IndexTypes>(
    op: &ChainOp<T, J>,
    data: &[usize],
    indices: &[&[usize]],
) -> Option<usize> {
    let desc = op.desc();
    match desc.dynamic_leading? {
        ChainCount::Data => Some(leading(data)),
        ChainCount::Indices { stage } => {
            // A descriptor whose count names no stage is refused by `op.at`, which plans it
            // first: here it only must not index past the stages.
            let before = desc.stages.get(..stage.checked_sub(1)?)?;
            let g = before.iter().filter(|s| matches!(s, StageDesc::Gather(_))).count();
            indices.get(g).map(|s| leading(s))
        }
    }
}

/// The chain on `CubeBackend` tensors, launched at once on Burn's handles.
fn on_cube<T: Element, J: IndexTypes>(
    op: &ChainOp<T, J>,
    data: CubeTensor,
    indices: Vec<CubeTensor>,
    lay_out: LayOut,
) -> Result<CubeTensor, Error> {
    let data = burn_cubecl::kernel::untile(data);
    let indices: Vec<CubeTensor> = indices.into_iter().map(burn_cubecl::kernel::untile).collect();
    let shapes: Vec<&[usize]> = indices.iter().map(|t| t.meta.shape().as_slice()).collect();
    let count = count_of(op, data.meta.shape(), &shapes);
    let (plan, kernel) = op.at(count, "apply")?;
    check_meta(Operand::Data, data.dtype, data.meta.shape(), T::DTYPE, &plan.data)?;
    let data = lay_out(Operand::Data, data, &plan.data)?;
    // Each index tensor against its gather, an `Err` naming the stage.
    let indices = (plan.gathers().zip(indices))
        .map(|((stage, g), t)| {
            check_meta(Operand::Indices, t.dtype, t.meta.shape(), g.index_type.dtype(), &g.indices)
                .and_then(|()| lay_out(Operand::Indices, t, &g.indices))
                .map_err(|e| in_stage(stage, e))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let client = &data.client;
    let kernel = kernel.as_deref();
    let d = padded(client, &data.handle, ChainOp::<T, J>::bytes(&plan, kernel, Operand::Data))?;
    let ix = (indices.iter().enumerate())
        .map(|(g, t)| padded(client, &t.handle, ChainOp::<T, J>::index_bytes_of(&plan, g)?))
        .collect::<Result<Vec<_>, Error>>()?;
    let out = match kernel {
        Some(kernel) => output_buffer(client, &plan, kernel),
        None => client.empty(4),
    };
    let ix: Vec<&Handle> = ix.iter().collect();
    match count {
        Some(n) => op.launch_at(client, n, &d, &ix, &out)?,
        None => op.launch(client, &d, &ix, &out)?,
    }
    Ok(output_tensor(&data, out, &plan.output))
}

impl<T: Element, J: IndexTypes> OnCube for Arc<ChainOp<T, J>> {
    const NAME: &'static str = "stridex_chain";
    fn run(&self, inputs: Vec<CubeTensor>) -> Result<CubeTensor, Error> {
        let mut inputs = inputs.into_iter();
        let data = inputs.next().expect("the data");
        on_cube(self, data, inputs.collect(), fusion::laid_out)
    }
}

/// The chain joins Burn's fusion stream after its checks (index values under `error` read
/// back first: an error inside the stream would surface only when the result is read).
pub(super) fn fused<T: Element, J: IndexTypes>(
    op: &ChainOp<T, J>,
    data: Fused,
    data_float: bool,
    read: &fusion::ReadBack,
) -> Result<Fused, Error> {
    let indices = read.tensors();
    let plan = checked(op, &data, indices)?;
    let checked = checked_gathers(&plan);
    if !checked.is_empty() {
        let bytes = checked.iter().map(|&g| read.bytes(g)).collect::<Result<Vec<_>, Error>>()?;
        check_read_back(&plan, &checked, &bytes)?;
    }
    let op: Arc<ChainOp<T, J>> = fusion::shared(op.desc(), || ChainOp::__from_checked(op.desc().clone()));
    let mut inputs = vec![data];
    inputs.extend(indices.iter().cloned());
    Ok(fusion::register(op, data_float, inputs, &plan.output.sizes))
}

/// The chain's plan for the stream's tensors ([`plan_for`]), after their dtypes, shapes and
/// strides are checked against it: what [`fused`] and a backward pass's planning (which reads
/// each gather's indices by the plan's counts) both check first.
pub(super) fn checked<'a, T: Element, J: IndexTypes>(
    op: &'a ChainOp<T, J>,
    data: &Fused,
    indices: &[Fused],
) -> Result<Cow<'a, ChainPlan>, Error> {
    let plan = plan_for(op, data, indices)?;
    check_meta(Operand::Data, data.dtype, &data.shape, T::DTYPE, &plan.data)?;
    fusion::check_packed(Operand::Data, &plan.data)?;
    for ((stage, g), t) in plan.gathers().zip(indices) {
        check_meta(Operand::Indices, t.dtype, &t.shape, g.index_type.dtype(), &g.indices)
            .and_then(|()| fusion::check_packed(Operand::Indices, &g.indices))
            .map_err(|e| in_stage(stage, e))?;
    }
    Ok(plan)
}

/// The chain's plan for the stream's tensors (at the count they carry, for a `_` chain; the
/// op's own, borrowed, otherwise).
pub(super) fn plan_for<'a, T: Element, J: IndexTypes>(
    op: &'a ChainOp<T, J>,
    data: &Fused,
    indices: &[Fused],
) -> Result<Cow<'a, ChainPlan>, Error> {
    let shapes: Vec<&[usize]> = indices.iter().map(|t| t.shape.as_slice()).collect();
    Ok(op.at(count_of(op, &data.shape, &shapes), "apply")?.0)
}

/// An output buffer for a chain's kernel: zeroed where its layout leaves gaps.
fn output_buffer(client: &Client, plan: &ChainPlan, kernel: &ChainKernel) -> Handle {
    match kernel.last_walk() {
        Some(w) => {
            launch::output(client, w, plan.output.min_buffer_len() != Some(plan.output.num_elements()))
        }
        None => launch::upload(client, &[], 1),
    }
}
