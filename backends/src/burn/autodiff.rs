//! Ops on Burn tensors that track gradients (Burn's `Autodiff` backend over the CubeCL one),
//! with backward passes that are stridex kernels, as `stridex_core::gradient` writes them:
//!
//! - a gather's gradient for its data is the scatter-add of the output's gradient into zeros
//!   (the deterministic scatter: duplicates summed in the indices' order, no atomics);
//! - a slice's is the output's gradient moved back through the window by gathers that read
//!   zero where the window skipped.
//!
//! Everything that can fail is done in the forward call, which returns the `Err`: the
//! gradient's plan, the indices read back and grouped for the scatter (a sync, as the
//! scatters' `apply` takes), the slice's index tensors. The backward pass only registers
//! kernels in Burn's fusion stream, where a device error surfaces as Burn's own do.

use super::fusion;
use super::Fused;
use super::{gather_fused, leading, scatter, slice_fused};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::ops::{GatherOp, ScatterOp, SliceOp, Writes};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::{BalancedCheckpointing, CheckpointStrategy, NoCheckpointing};
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{unary, Backward, Ops, OpsKind};
use burn_autodiff::Autodiff;
use burn_backend::ops::{FloatTensorOps, IntTensorOps};
use burn_backend::tensor::FloatTensor;
use burn_backend::{Backend, BackendTypes, TensorData, TensorMetadata};
use burn_cubecl::Cube;
use burn_dispatch::{
    BackendTensor, DispatchAutodiffContext, DispatchKindConversion, DispatchTensor,
    GradientCheckpointingStrategy,
};
use std::sync::Arc;
use stridex_core::gradient::{self, SliceGradient};
use stridex_core::{DType, Operand};

/// A tracked float tensor of the CubeCL backend (the same type under either checkpointing
/// strategy).
type Tracked = FloatTensor<Autodiff<Cube>>;
type CubeDevice = <Cube as BackendTypes>::Device;

/// A dispatch tensor's CubeCL backend tensor under autodiff with strategy `C`.
fn under<C: CheckpointStrategy>(
    tensor: Operand,
    t: DispatchTensor,
) -> Result<BackendTensor<Autodiff<Cube, C>>, Error>
where
    DispatchTensor: DispatchKindConversion<Autodiff<Cube, C>>,
{
    <DispatchTensor as DispatchKindConversion<Autodiff<Cube, C>>>::try_into_backend(t).map_err(|e| {
        Error::BurnTensor {
            tensor,
            mismatch: format!("not a CubeCL tensor (wgpu, CUDA or CubeCL's CPU runtime): {e}"),
        }
    })
}

fn wrap<C: CheckpointStrategy>(t: BackendTensor<Autodiff<Cube, C>>) -> DispatchTensor
where
    DispatchTensor: DispatchKindConversion<Autodiff<Cube, C>>,
{
    <DispatchTensor as DispatchKindConversion<Autodiff<Cube, C>>>::from_backend(t)
}

/// An `Int` tensor's fusion-stream tensor, whether or not it was made under autodiff (an index
/// tensor has no gradient either way).
pub(super) fn int_fused(tensor: Operand, t: DispatchTensor) -> Result<Fused, Error> {
    fn int<B: Backend + BackendTypes<IntTensorPrimitive = Fused>>(
        t: Result<BackendTensor<B>, String>,
    ) -> Result<Fused, String> {
        match t? {
            BackendTensor::Int(t) => Ok(t),
            other => Err(format!("an `Int` tensor was expected, not a {} one", other.name())),
        }
    }
    let mismatch = |e: Error| e.to_string();
    match t.autodiff {
        DispatchAutodiffContext::Disabled => {
            int(<DispatchTensor as DispatchKindConversion<Cube>>::try_into_backend(t))
        }
        DispatchAutodiffContext::Enabled(GradientCheckpointingStrategy::Disabled) => {
            int(under::<NoCheckpointing>(tensor, t).map_err(mismatch))
        }
        DispatchAutodiffContext::Enabled(GradientCheckpointingStrategy::Balanced) => {
            int(under::<BalancedCheckpointing>(tensor, t).map_err(mismatch))
        }
    }
    .map_err(|mismatch| Error::BurnTensor { tensor, mismatch })
}

/// Runs `f` with the checkpointing strategy of `strategy` as a type.
macro_rules! with_strategy {
    ($strategy:expr, $f:ident::<$($t:ty),*>($($arg:expr),*)) => {
        match $strategy {
            GradientCheckpointingStrategy::Disabled => $f::<NoCheckpointing, $($t),*>($($arg),*),
            GradientCheckpointingStrategy::Balanced => $f::<BalancedCheckpointing, $($t),*>($($arg),*),
        }
    };
}

/// The gather of `data` (under autodiff with `strategy`) at `indices`; a float `data` that
/// requires gradients gets the scatter-add backward pass.
pub(super) fn gather<T: Element, J: IndexElement>(
    op: &GatherOp<T, J>,
    data: DispatchTensor,
    indices: DispatchTensor,
    strategy: GradientCheckpointingStrategy,
) -> Result<DispatchTensor, Error> {
    let indices = int_fused(Operand::Indices, indices)?;
    with_strategy!(strategy, gather_under::<T, J>(op, data, indices))
}

fn gather_under<C: CheckpointStrategy, T: Element, J: IndexElement>(
    op: &GatherOp<T, J>,
    data: DispatchTensor,
    indices: Fused,
) -> Result<DispatchTensor, Error>
where
    DispatchTensor: DispatchKindConversion<Autodiff<Cube, C>>,
{
    let out = match under::<C>(Operand::Data, data)? {
        BackendTensor::Float(data) => BackendTensor::Float(tracked_gather::<C, T, J>(op, data, indices)?),
        BackendTensor::Int(data) => BackendTensor::Int(gather_fused(op, data, false, indices)?),
        other => return Err(kind_error(Operand::Data, &other)),
    };
    Ok(wrap::<C>(out))
}

fn kind_error<B: Backend>(tensor: Operand, t: &BackendTensor<B>) -> Error {
    Error::BurnTensor { tensor, mismatch: format!("a {} tensor, which stridex ops do not move", t.name()) }
}

fn tracked_gather<C: CheckpointStrategy, T: Element, J: IndexElement>(
    op: &GatherOp<T, J>,
    data: Tracked,
    indices: Fused,
) -> Result<Tracked, Error> {
    match GatherGradient::<T, J>::new().prepare::<C>([data.node()]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let (plan, _) = op.at(Some(leading(&indices.shape)), "apply")?;
            let no_gradient = |why: String| Error::NoGradient { op: "gather".into(), why };
            let (desc, scatter_plan) =
                gradient::gather_data_gradient(&plan, J::DTYPE).map_err(|e| no_gradient(e.to_string()))?;
            let scatter: &'static ScatterOp<T, J> = fusion::shared(&desc, || ScatterOp::__from_checked(desc));
            // The writes are grouped now, so the backward pass has nothing left that can fail.
            let values = J::from_bytes(&fusion::read_back(&indices)?);
            let writes = scatter.group(&values, scatter_plan.map.data)?;
            let primal = data.into_primitive();
            let state = GatherState {
                scatter,
                writes: Arc::new(writes),
                shape: primal.shape(),
                device: primal.device(),
            };
            Ok(prep.finish(state, gather_fused(op, primal, true, indices)?))
        }
        OpsKind::UnTracked(prep) => Ok(prep.finish(gather_fused(op, data.into_primitive(), true, indices)?)),
    }
}

/// The slice of `input` (under autodiff with `strategy`); a float `input` that requires
/// gradients gets the window's backward pass.
pub(super) fn slice<T: Element>(
    op: &SliceOp<T>,
    input: DispatchTensor,
    strategy: GradientCheckpointingStrategy,
) -> Result<DispatchTensor, Error> {
    with_strategy!(strategy, slice_under::<T>(op, input))
}

fn slice_under<C: CheckpointStrategy, T: Element>(
    op: &SliceOp<T>,
    input: DispatchTensor,
) -> Result<DispatchTensor, Error>
where
    DispatchTensor: DispatchKindConversion<Autodiff<Cube, C>>,
{
    let out = match under::<C>(Operand::Input, input)? {
        BackendTensor::Float(input) => BackendTensor::Float(tracked_slice::<C, T>(op, input)?),
        BackendTensor::Int(input) => BackendTensor::Int(slice_fused(op, input, false)?),
        other => return Err(kind_error(Operand::Input, &other)),
    };
    Ok(wrap::<C>(out))
}

fn tracked_slice<C: CheckpointStrategy, T: Element>(
    op: &SliceOp<T>,
    input: Tracked,
) -> Result<Tracked, Error> {
    match SliceGradientOp::<T>::new().prepare::<C>([input.node()]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let primal = input.into_primitive();
            let (plan, _) = op.at(Some(leading(&primal.shape)), "apply")?;
            let device = primal.device();
            let steps = match gradient::slice_input_gradient(&plan) {
                SliceGradient::Zeros => None,
                SliceGradient::Gathers(gathers) => {
                    let mut sizes = plan.output.sizes.to_vec();
                    let mut steps = Vec::with_capacity(gathers.len());
                    for g in &gathers {
                        steps.push(SliceStep::new(g, &mut sizes, &device)?);
                    }
                    Some(steps)
                }
            };
            let state = SliceState { steps, shape: primal.shape(), device };
            Ok(prep.finish(state, slice_fused(op, primal, true)?))
        }
        OpsKind::UnTracked(prep) => Ok(prep.finish(slice_fused(op, input.into_primitive(), true)?)),
    }
}

/// The backward pass of a gather: the scatter-add of the output's gradient into zeros.
#[derive(Debug)]
struct GatherGradient<T: 'static, J: 'static>(std::marker::PhantomData<fn() -> (T, J)>);

impl<T, J> GatherGradient<T, J> {
    fn new() -> Self {
        GatherGradient(std::marker::PhantomData)
    }
}

#[derive(Debug)]
struct GatherState<T: 'static, J: 'static> {
    scatter: &'static ScatterOp<T, J>,
    writes: Arc<Writes>,
    shape: burn_backend::Shape,
    device: CubeDevice,
}

impl<T, J> Clone for GatherState<T, J> {
    fn clone(&self) -> Self {
        GatherState {
            scatter: self.scatter,
            writes: self.writes.clone(),
            shape: self.shape.clone(),
            device: self.device.clone(),
        }
    }
}

impl<T: Element, J: IndexElement> Backward<Cube, 1> for GatherGradient<T, J> {
    type State = GatherState<T, J>;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let GatherState { scatter, writes, shape, device } = ops.state;
        unary::<Cube, _>(ops.parents, ops.node, grads, |grad| {
            let zeros = Cube::float_zeros(shape, &device, grad.dtype().into());
            scatter::register_grouped(scatter, writes, true, zeros, grad)
        });
    }
}

/// One gather of a slice's backward pass, with its index tensor made in the forward call.
#[derive(Clone, Debug)]
struct SliceStep<T: 'static> {
    gather: &'static GatherOp<T, i32>,
    indices: Fused,
    /// The sizes after this step.
    sizes: Vec<usize>,
}

impl<T: Element> SliceStep<T> {
    /// The step of `g` on a tensor of `sizes` (updated to the sizes after it).
    fn new(g: &gradient::AxisInverse, sizes: &mut [usize], device: &CubeDevice) -> Result<Self, Error> {
        let too_long = || Error::NoGradient {
            op: "slice".into(),
            why: format!(
                "dimension {} has {} elements, more than i32 indices reach",
                g.axis,
                g.sources.len()
            ),
        };
        let desc = g.gather(T::DTYPE, DType::I32, sizes).ok_or_else(too_long)?;
        let op = GatherOp::<T, i32>::new(desc)?;
        let values =
            g.indices().map(|i| i32::try_from(i).map_err(|_| too_long())).collect::<Result<Vec<_>, _>>()?;
        let indices = Cube::int_from_data(TensorData::new(values, [g.sources.len()]), device);
        if indices.dtype != burn_backend::DType::I32 {
            return Err(Error::NoGradient {
                op: "slice".into(),
                why: format!("the device stores i32 indices as {:?}", indices.dtype),
            });
        }
        sizes[g.axis] = g.sources.len();
        let desc = *op.desc();
        let gather = fusion::shared(&desc, || op);
        Ok(SliceStep { gather, indices, sizes: sizes.to_vec() })
    }
}

#[derive(Debug)]
struct SliceGradientOp<T: 'static>(std::marker::PhantomData<fn() -> T>);

impl<T> SliceGradientOp<T> {
    fn new() -> Self {
        SliceGradientOp(std::marker::PhantomData)
    }
}

#[derive(Clone, Debug)]
struct SliceState<T: 'static> {
    /// `None`: the output is empty, so the gradient is zero.
    steps: Option<Vec<SliceStep<T>>>,
    shape: burn_backend::Shape,
    device: CubeDevice,
}

impl<T: Element> Backward<Cube, 1> for SliceGradientOp<T> {
    type State = SliceState<T>;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let SliceState { steps, shape, device } = ops.state;
        unary::<Cube, _>(ops.parents, ops.node, grads, |grad| match steps {
            None => Cube::float_zeros(shape, &device, grad.dtype().into()),
            Some(steps) => steps.into_iter().fold(grad, |g, step| {
                fusion::register(step.gather, true, vec![g, step.indices], &step.sizes)
            }),
        });
    }
}
