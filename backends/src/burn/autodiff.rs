//! Ops on Burn tensors that track gradients (Burn's `Autodiff` backend over the CubeCL one),
//! with backward passes that are stridex kernels, as `stridex_core::gradient` writes them:
//!
//! - a gather's gradient for its data is the scatter-add of the output's gradient into zeros
//!   (the deterministic scatter: duplicates summed in the indices' order, no atomics);
//! - a slice's is the output's gradient moved back through the window by gathers that read
//!   zero where the window skipped, consecutive ones fused into one chain kernel where they
//!   lower to one ([`window`]);
//! - a chain's is its stages' gradients in reverse order;
//! - a scatter's (`add`, `sub`, `none`) is the output's gradient for the data (cleared where
//!   `none` overwrote) and its gather through the scatter's map for the updates; `mean`, `max`,
//!   `min`, `mul` and `use_init_val: false` build theirs from the forward call's values too
//!   ([`reduced`]).
//!
//! Every op is one node of Burn's graph, [`Backprop`], whose backward pass is a list of
//! [`Step`]s. Everything that can fail is done in the forward call, which returns the `Err`:
//! the gradient's plan, the indices read back and grouped for each scatter (a sync, as the
//! scatters' `apply` takes), the slices' index tensors. The backward pass only registers
//! kernels in Burn's fusion stream, where a device error surfaces as Burn's own do.

mod reduced;
mod window;

use super::fusion;
use super::Fused;
use super::{chain, gather_checked, gather_fused, scatter, slice_checked, slice_fused};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::ops::{
    in_stage, scatter_fault, ChainOp, GatherOp, GroupedIntoZeros, IndexTypes, IntoZeros, ScatterOp, SliceOp,
    SumIntoZeros, Writes,
};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::{BalancedCheckpointing, CheckpointStrategy, NoCheckpointing};
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{binary, unary, Backward, Ops, OpsKind};
use burn_autodiff::Autodiff;
use burn_backend::ops::{FloatTensorOps, IntTensorOps};
use burn_backend::tensor::FloatTensor;
use burn_backend::{Backend, BackendTypes, TensorMetadata};
use burn_cubecl::Cube;
use burn_dispatch::{
    BackendTensor, DispatchAutodiffContext, DispatchKindConversion, DispatchTensor,
    GradientCheckpointingStrategy,
};
use std::sync::Arc;
use stridex_core::gradient;
use stridex_core::{
    ChainDesc, Channels, ConvertPlan, ConvertStage, DType, GatherDesc, GatherPlan, GatherRules, IndexType,
    Operand, OutOfRange, Reduction, ScatterDesc, ScatterPlan, StageDesc, StagePlan, TensorDecl,
};
use window::Steps;

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
    ($strategy:expr, $f:ident $(::<$($t:ty),*>)?($($arg:expr),*)) => {
        match $strategy {
            GradientCheckpointingStrategy::Disabled => $f::<NoCheckpointing $($(, $t)*)?>($($arg),*),
            GradientCheckpointingStrategy::Balanced => $f::<BalancedCheckpointing $($(, $t)*)?>($($arg),*),
        }
    };
}

/// An op's forward pass on the fusion stream, and its backward pass's steps (asked only when
/// the input requires gradients).
trait Differentiable {
    fn forward(&self, input: Fused, float: bool) -> Result<Fused, Error>;
    fn backward(&self, input: &Fused) -> Result<Vec<Box<dyn Step>>, Error>;
}

/// The op on `input`, under autodiff with `strategy`: a float `input` that requires gradients
/// records the op's backward pass; an `Int` one (no gradient) runs as without autodiff.
fn apply(
    op: &dyn Differentiable,
    tensor: Operand,
    input: DispatchTensor,
    strategy: GradientCheckpointingStrategy,
) -> Result<DispatchTensor, Error> {
    with_strategy!(strategy, apply_under(op, tensor, input))
}

fn apply_under<C: CheckpointStrategy>(
    op: &dyn Differentiable,
    tensor: Operand,
    input: DispatchTensor,
) -> Result<DispatchTensor, Error>
where
    DispatchTensor: DispatchKindConversion<Autodiff<Cube, C>>,
{
    let out = match under::<C>(tensor, input)? {
        BackendTensor::Float(input) => BackendTensor::Float(tracked::<C>(op, input)?),
        BackendTensor::Int(input) => BackendTensor::Int(op.forward(input, false)?),
        other => return Err(kind_error(tensor, &other)),
    };
    Ok(wrap::<C>(out))
}

fn kind_error<B: Backend>(tensor: Operand, t: &BackendTensor<B>) -> Error {
    Error::BurnTensor { tensor, mismatch: format!("a {} tensor, which stridex ops do not move", t.name()) }
}

fn tracked<C: CheckpointStrategy>(op: &dyn Differentiable, input: Tracked) -> Result<Tracked, Error> {
    match Backprop.prepare::<C>([input.node()]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let primal = input.into_primitive();
            let steps = op.backward(&primal)?;
            Ok(prep.finish(Arc::from(steps), op.forward(primal, true)?))
        }
        OpsKind::UnTracked(prep) => Ok(prep.finish(op.forward(input.into_primitive(), true)?)),
    }
}

/// A stridex op as one node of Burn's graph: its backward pass runs its steps in order on the
/// output's gradient.
#[derive(Debug)]
struct Backprop;

impl Backward<Cube, 1> for Backprop {
    type State = Arc<[Box<dyn Step>]>;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let steps = ops.state;
        unary::<Cube, _>(ops.parents, ops.node, grads, |grad| {
            steps.iter().fold(grad, |g, step| step.apply(g))
        });
    }
}

/// One op of a backward pass in Burn's fusion stream: from the gradient of an op's output to
/// that of its input. Its checks were made when it was planned, so it cannot fail.
trait Step: std::fmt::Debug + Send + Sync {
    fn apply(&self, grad: Fused) -> Fused;
}

/// A scatter of the gradient with writes grouped when it was planned: a gather's step (the
/// gradient scatter-added into zeros of the data's sizes) or a `none` scatter's step to its data
/// (zeros of the updates' sizes written into the gradient, clearing what the scatter wrote).
#[derive(Debug)]
struct GroupedScatter<T: 'static, J: 'static> {
    scatter: Arc<ScatterOp<T, J>>,
    writes: Arc<Writes>,
    /// The sizes of the zeros: the data's or the updates'.
    zeros: burn_backend::Shape,
    /// Whether the gradient is the updates (into zeros) or the data (zeros written into it).
    grad_is_updates: bool,
    device: CubeDevice,
}

impl<T: Element, J: IndexElement> Step for GroupedScatter<T, J> {
    fn apply(&self, grad: Fused) -> Fused {
        let zeros = Cube::float_zeros(self.zeros.clone(), &self.device, grad.dtype().into());
        let (data, updates) = if self.grad_is_updates { (zeros, grad) } else { (grad, zeros) };
        scatter::register_grouped(self.scatter.clone(), self.writes.clone(), true, data, updates)
    }
}

/// A gather's step, planned as `plan` at index values `values` (grouped now): the gradient
/// scatter-added into zeros of the data's sizes.
fn scatter_add_step<T: Element, J: IndexElement>(
    plan: &GatherPlan,
    values: &[J],
    device: &CubeDevice,
) -> Result<Box<dyn Step>, Error> {
    if let Some(batched) = gradient::batched_gather_gradient(plan) {
        return batched_scatter_add_step::<T, J>(plan, batched, values, device);
    }
    let (desc, scatter_plan) = gradient::gather_data_gradient(plan, J::DTYPE)
        .map_err(|e| Error::NoGradient { op: "gather".into(), why: e.to_string() })?;
    let scatter: Arc<ScatterOp<T, J>> = fusion::shared(&desc, || ScatterOp::__from_checked(desc));
    let writes = scatter.group(values, scatter_plan.map.data)?;
    Ok(into_zeros(scatter, writes, plan, device))
}

/// A gather's step on a GPU, where its scatter-add into zeros takes one kernel and its lists
/// can be grouped on the device (`ScatterOp::grouped_into_zeros`: an embedding's gradient): the
/// step reads the index tensor in the stream, and nothing is read back for it. `None`: the
/// step groups the index values on the host ([`scatter_add_step`]).
fn grouped_on_device<T: Element, J: IndexElement>(
    plan: &GatherPlan,
    indices: &Fused,
    device: &CubeDevice,
) -> Option<Box<dyn Step>> {
    if gradient::batched_gather_gradient(plan).is_some() {
        return None;
    }
    let (desc, _) = gradient::gather_data_gradient(plan, J::DTYPE).ok()?;
    let scatter: Arc<ScatterOp<T, J>> = fusion::shared(&desc, || ScatterOp::__from_checked(desc));
    let zeros = scatter.grouped_into_zeros(&device.client())?;
    Some(Box::new(GroupedIntoZerosStep {
        scatter,
        zeros,
        indices: indices.clone(),
        sizes: plan.data.sizes.to_vec(),
    }))
}

/// [`grouped_on_device`]'s step.
#[derive(Debug)]
struct GroupedIntoZerosStep<T: 'static, J: 'static> {
    scatter: Arc<ScatterOp<T, J>>,
    zeros: GroupedIntoZeros,
    indices: Fused,
    /// The data's sizes (the gradient's).
    sizes: Vec<usize>,
}

impl<T: Element, J: IndexElement> Step for GroupedIntoZerosStep<T, J> {
    fn apply(&self, grad: Fused) -> Fused {
        scatter::register_grouped_into_zeros(
            self.scatter.clone(),
            self.zeros.clone(),
            grad,
            self.indices.clone(),
            &self.sizes,
        )
    }
}

/// The gradient scatter-added by `scatter` (its `writes` grouped) into zeros of `plan`'s data:
/// one kernel that writes the whole gradient where the runs lie back to back (an embedding's),
/// else zeros filled and then the scatter.
fn into_zeros<T: Element, K: IndexElement>(
    scatter: Arc<ScatterOp<T, K>>,
    writes: Writes,
    plan: &GatherPlan,
    device: &CubeDevice,
) -> Box<dyn Step> {
    match scatter.sum_into_zeros(writes) {
        SumIntoZeros::OneKernel(zeros) => Box::new(ScatterIntoZeros { scatter, zeros: Arc::new(zeros) }),
        SumIntoZeros::AfterZeroFill(writes) => Box::new(GroupedScatter {
            scatter,
            writes: Arc::new(writes),
            zeros: burn_backend::Shape::from(plan.data.sizes.to_vec()),
            grad_is_updates: true,
            device: device.clone(),
        }),
    }
}

/// A gather's step where one kernel writes the whole gradient: the gradient scatter-added into
/// zeros of the data's sizes, with no zero fill and no read of zeros.
#[derive(Debug)]
struct ScatterIntoZeros<T: 'static, J: 'static> {
    scatter: Arc<ScatterOp<T, J>>,
    zeros: Arc<IntoZeros>,
}

impl<T: Element, J: IndexElement> Step for ScatterIntoZeros<T, J> {
    fn apply(&self, grad: Fused) -> Fused {
        scatter::register_into_zeros(self.scatter.clone(), self.zeros.clone(), true, grad)
    }
}

/// [`scatter_add_step`] for a gather with batch dimensions: a ScatterND-add of tuples that
/// spell the batch out (`gradient::batched_gather_gradient`), grouped from the index values.
fn batched_scatter_add_step<T: Element, J: IndexElement>(
    plan: &GatherPlan,
    batched: Result<(ScatterDesc, ScatterPlan), stridex_core::RuleError>,
    values: &[J],
    device: &CubeDevice,
) -> Result<Box<dyn Step>, Error> {
    let (desc, scatter_plan) =
        batched.map_err(|e| Error::NoGradient { op: "gather".into(), why: e.to_string() })?;
    // An index out of range under `error` is the gather's error, as the forward call reports it.
    if plan.out_of_range == OutOfRange::Error {
        if let e @ Error::IndexOutOfRange { .. } = crate::ops::first_bad_index(plan, values) {
            return Err(e);
        }
    }
    let scatter: Arc<ScatterOp<T, i64>> = fusion::shared(&desc, || ScatterOp::__from_checked(desc));
    let wide: Vec<i128> = values.iter().map(|v| v.value()).collect();
    let writes = scatter.group(&gradient::batched_tuples(plan, &wide), scatter_plan.map.data)?;
    Ok(into_zeros(scatter, writes, plan, device))
}

/// A gather of the gradient: one of a slice's steps (its index tensor made when it was
/// planned), or a scatter's step to its updates.
#[derive(Debug)]
struct GatherStep<T: 'static, J: 'static> {
    gather: Arc<GatherOp<T, J>>,
    indices: Fused,
    /// The sizes after this gather.
    sizes: Vec<usize>,
}

impl<T: Element, J: IndexElement> Step for GatherStep<T, J> {
    fn apply(&self, grad: Fused) -> Fused {
        fusion::register(self.gather.clone(), true, vec![grad, self.indices.clone()], &self.sizes)
    }
}

/// A `convert` stage's step (the chain's last stage, so its backward pass's first): the stage
/// computed `x * scale[c] + offset[c]`, so the gradient is `grad * scale[c]`, back in the
/// element type the stage received. That is itself a convert, of the gradient with the same
/// scales and no offset: a one-stage chain.
fn convert_back(c: &ConvertPlan) -> Result<Box<dyn Step>, Error> {
    match c.to {
        DType::F32 => convert_back_from::<f32>(c),
        DType::F16 => convert_back_from::<half::f16>(c),
        DType::BF16 => convert_back_from::<half::bf16>(c),
        to => Err(Error::NoGradient {
            op: "chain".into(),
            why: format!("a `convert` to {to} has no backward pass"),
        }),
    }
}

fn convert_back_from<G: Element>(c: &ConvertPlan) -> Result<Box<dyn Step>, Error> {
    let no_gradient = |e: &dyn std::fmt::Display| Error::NoGradient {
        op: "chain".into(),
        why: format!("its `convert` stage's gradient, a convert from {} back to {}: {e}", c.to, c.from),
    };
    let sizes = stridex_core::Dims::new(c.output.sizes.as_slice())
        .ok_or_else(|| no_gradient(&"too many dimensions"))?;
    let desc = ChainDesc {
        data: TensorDecl::packed(G::DTYPE, sizes),
        stages: std::borrow::Cow::Owned(vec![StageDesc::Convert(ConvertStage {
            to: c.from,
            dim: c.dim as i64,
            scale: c.scale,
            offset: Channels::of(&[0.0]),
        })]),
        output: None,
        dynamic_leading: None,
    };
    let op = ChainOp::<G, ()>::new(desc.clone()).map_err(|e| no_gradient(&e))?;
    let op: Arc<ChainOp<G, ()>> = fusion::shared(&desc, || op);
    Ok(Box::new(ConvertBack { op, sizes: c.input.sizes.to_vec() }))
}

/// [`convert_back`]'s step.
#[derive(Debug)]
struct ConvertBack<G: 'static> {
    op: Arc<ChainOp<G, ()>>,
    sizes: Vec<usize>,
}

impl<G: Element> Step for ConvertBack<G> {
    fn apply(&self, grad: Fused) -> Fused {
        fusion::register(self.op.clone(), true, vec![grad], &self.sizes)
    }
}

/// The gradient negated: a `sub` scatter's step to its updates, after the gather.
#[derive(Debug)]
struct Negate;

impl Step for Negate {
    fn apply(&self, grad: Fused) -> Fused {
        Cube::float_neg(grad)
    }
}

/// The gradient of an empty slice: zeros of the input's sizes.
#[derive(Debug)]
struct Zeros {
    shape: burn_backend::Shape,
    device: CubeDevice,
}

impl Step for Zeros {
    fn apply(&self, grad: Fused) -> Fused {
        Cube::float_zeros(self.shape.clone(), &self.device, grad.dtype().into())
    }
}

/// A gather and its indices, as the forward call takes them (their values read back at most
/// once: by the backward pass's planning, which runs first, and the `error`-policy check).
struct GatherAt<'a, T, J> {
    op: &'a GatherOp<T, J>,
    indices: fusion::ReadBack,
}

impl<T: Element, J: IndexElement> Differentiable for GatherAt<'_, T, J> {
    fn forward(&self, data: Fused, float: bool) -> Result<Fused, Error> {
        gather_fused(self.op, data, float, &self.indices)
    }

    fn backward(&self, data: &Fused) -> Result<Vec<Box<dyn Step>>, Error> {
        // Checked first: the planning below reads as many index values as the plan says.
        let plan = gather_checked(self.op, data, &self.indices.tensors()[0])?;
        if let Some(step) = grouped_on_device::<T, J>(&plan, &self.indices.tensors()[0], &data.device()) {
            return Ok(vec![step]);
        }
        let values = J::from_bytes(self.indices.bytes(0)?);
        Ok(vec![scatter_add_step::<T, J>(&plan, &values, &data.device())?])
    }
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
    apply(&GatherAt { op, indices: fusion::ReadBack::new(vec![indices]) }, Operand::Data, data, strategy)
}

impl<T: Element> Differentiable for SliceOp<T> {
    fn forward(&self, input: Fused, float: bool) -> Result<Fused, Error> {
        slice_fused(self, input, float)
    }

    fn backward(&self, input: &Fused) -> Result<Vec<Box<dyn Step>>, Error> {
        // Checked first: the steps are sized by the plan, whatever the tensor's shape.
        let plan = slice_checked(self, input)?;
        let mut steps = Steps::<T>::new();
        steps.slice(&plan, &input.device())?;
        Ok(steps.finish())
    }
}

/// The slice of `input` (under autodiff with `strategy`); a float `input` that requires
/// gradients gets the window's backward pass.
pub(super) fn slice<T: Element>(
    op: &SliceOp<T>,
    input: DispatchTensor,
    strategy: GradientCheckpointingStrategy,
) -> Result<DispatchTensor, Error> {
    apply(op, Operand::Input, input, strategy)
}

/// A chain and its gathers' indices, as the forward call takes them (read back at most once
/// each, as a gather's).
struct ChainAt<'a, T: 'static, J> {
    op: &'a ChainOp<T, J>,
    indices: fusion::ReadBack,
}

impl<T: Element, J: IndexTypes> Differentiable for ChainAt<'_, T, J> {
    fn forward(&self, data: Fused, float: bool) -> Result<Fused, Error> {
        chain::fused(self.op, data, float, &self.indices)
    }

    /// The stages' steps, last stage first.
    fn backward(&self, data: &Fused) -> Result<Vec<Box<dyn Step>>, Error> {
        // Checked first: the planning below reads as many index values as the plan says.
        let plan = chain::checked(self.op, data, self.indices.tensors())?;
        let device = data.device();
        let mut gathers = self.indices.tensors().len();
        let mut steps = Steps::<T>::new();
        for (i, stage) in plan.stages.iter().enumerate().rev() {
            let stage_error = |e| in_stage(i + 1, e);
            match stage {
                StagePlan::Slice(s) => steps.slice(s, &device).map_err(stage_error)?,
                StagePlan::Gather(g) => {
                    gathers -= 1;
                    let at = self.indices.bytes(gathers).map_err(stage_error)?;
                    let step = match g.index_type {
                        IndexType::I32 => scatter_add_step::<T, i32>(g, &i32::from_bytes(at), &device),
                        IndexType::I64 => scatter_add_step::<T, i64>(g, &i64::from_bytes(at), &device),
                        IndexType::U32 => scatter_add_step::<T, u32>(g, &u32::from_bytes(at), &device),
                        IndexType::U64 => scatter_add_step::<T, u64>(g, &u64::from_bytes(at), &device),
                    };
                    steps.push(step.map_err(stage_error)?);
                }
                StagePlan::Convert(c) => steps.push(convert_back(c).map_err(stage_error)?),
                // Refused before the forward call (`chain::fused`).
                StagePlan::Scatter(_) => return Err(Error::DestinationNeeded { call: "apply" }),
            }
        }
        Ok(steps.finish())
    }
}

/// The chain on `data` (under autodiff with `strategy`); a float `data` that requires gradients
/// gets its stages' backward passes, last stage first.
pub(super) fn chain<T: Element, J: IndexTypes>(
    op: &ChainOp<T, J>,
    data: DispatchTensor,
    indices: Vec<Fused>,
    strategy: GradientCheckpointingStrategy,
) -> Result<DispatchTensor, Error> {
    apply(&ChainAt { op, indices: fusion::ReadBack::new(indices) }, Operand::Data, data, strategy)
}

/// A scatter on `data` and `updates` (under autodiff with `strategy`): float tensors that
/// require gradients get its backward pass, under any reduction.
pub(super) fn scatter<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: DispatchTensor,
    indices: Fused,
    updates: DispatchTensor,
    strategy: GradientCheckpointingStrategy,
) -> Result<DispatchTensor, Error> {
    with_strategy!(strategy, scatter_under::<T, I>(op, data, indices, updates))
}

fn scatter_under<C: CheckpointStrategy, T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: DispatchTensor,
    indices: Fused,
    updates: DispatchTensor,
) -> Result<DispatchTensor, Error>
where
    DispatchTensor: DispatchKindConversion<Autodiff<Cube, C>>,
{
    let out = match (under::<C>(Operand::Data, data)?, under::<C>(Operand::Updates, updates)?) {
        (BackendTensor::Float(d), BackendTensor::Float(u)) => {
            BackendTensor::Float(tracked_scatter::<C, T, I>(op, d, indices, u)?)
        }
        (BackendTensor::Int(d), BackendTensor::Int(u)) => {
            BackendTensor::Int(scatter::fused(op, d, &indices, u, false)?.0)
        }
        (BackendTensor::Float(_) | BackendTensor::Int(_), other) => {
            return Err(kind_error(Operand::Updates, &other))
        }
        (other, _) => return Err(kind_error(Operand::Data, &other)),
    };
    Ok(wrap::<C>(out))
}

fn tracked_scatter<C: CheckpointStrategy, T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    data: Tracked,
    indices: Fused,
    updates: Tracked,
) -> Result<Tracked, Error> {
    match ScatterBackprop.prepare::<C>([data.node(), updates.node()]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let plan = op.plan()?;
            differentiable(plan)?;
            let (data, updates) = (data.into_primitive(), updates.into_primitive());
            // The backward pass is planned before the forward op joins the stream: a scatter
            // whose gradient its index values rule out is refused with nothing queued.
            let (values, writes) = scatter::prepare(op, &data, &indices, &updates)?;
            let device = data.device();
            if !reduced::needed(plan) {
                let state = scatter_steps(op, &indices, &values, writes.clone(), &device)?;
                return Ok(prep.finish(state, scatter::register(op, writes, true, data, updates)));
            }
            let planned =
                reduced::Planned::new(op, &values, writes.clone(), map_gather(op, &indices)?, &device)?;
            // The values the gradient reads are kept (the data is then written on a copy).
            let kept = planned.needs_values().then(|| (data.clone(), updates.clone()));
            let output = scatter::register(op, writes, true, data, updates);
            let saved = kept.map(|(d, u)| reduced::Planned::<T, I>::saved(&d, &u, &output));
            Ok(prep.finish(planned.steps(saved), output))
        }
        OpsKind::UnTracked(prep) => {
            let (data, updates) = (data.into_primitive(), updates.into_primitive());
            Ok(prep.finish(scatter::fused(op, data, &indices, updates, true)?.0))
        }
    }
}

/// A scatter's two backward passes: to its data and to its updates.
type ScatterSteps = (Arc<[Box<dyn Step>]>, Arc<[Box<dyn Step>]>);

/// The steps of a scatter at index `values` (read back by its forward call): the updates'
/// gradient is the gather of the output's gradient through the scatter's map (the elements
/// each update went to); the data's is the output's gradient, with the written elements
/// cleared under `none` (their values were replaced). Under `skip`, a dropped update's is zero
/// ([`unsigned_gather`]); under `none`, so is a replaced one's ([`last_writes`]). Under `sub`
/// the data's passes through and the updates' is negated. The other reductions, and any
/// without the data's element, are [`reduced`]'s.
fn scatter_steps<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    indices: &Fused,
    values: &[I],
    writes: Arc<Writes>,
    device: &CubeDevice,
) -> Result<ScatterSteps, Error> {
    let plan = op.plan()?;
    let sizes = plan.updates.sizes.to_vec();
    // Under `none`, the positions a later write to the same destination replaced.
    let replaced = match plan.reduction {
        Reduction::None => plan.replaced(&plan.map.data, |i| values[i].value()).map_err(scatter_fault)?,
        _ => Vec::new(),
    };
    let map = op.desc().map;
    let to_updates: Vec<Box<dyn Step>> = if !replaced.is_empty() {
        if plan.out_of_range == OutOfRange::Clamp {
            return Err(no_gradient(
                "repeated destinations under `reduction: none` with `out_of_range: clamp`: the replaced updates' gradient of zero is not written for `clamp` yet; use `zero`, `skip` or `error`".into(),
            ));
        }
        if plan.out_of_range == OutOfRange::Skip {
            // Every negative index was dropped: read as unsigned, it reads zero too.
            match I::INDEX {
                IndexType::I32 | IndexType::U32 => {
                    let bits = u32::from_bytes(&I::bytes(values));
                    last_writes(unsigned_gather::<T, u32>(map)?, bits, &replaced, sizes, device)?
                }
                IndexType::I64 | IndexType::U64 => {
                    let bits = u64::from_bytes(&I::bytes(values));
                    last_writes(unsigned_gather::<T, u64>(map)?, bits, &replaced, sizes, device)?
                }
            }
        } else {
            // `error` (all in range) or `zero`: the same gather under `zero`, where a negative
            // index still counts from the end.
            if I::INDEX == IndexType::I32 && plan.map.data.sizes.iter().any(|&n| n as u64 > i32::MAX as u64) {
                return Err(no_gradient(
                    "repeated destinations under `reduction: none` on an axis longer than i32::MAX: the replaced updates' gradient of zero is not written there yet".into(),
                ));
            }
            let mut zeroing = map;
            zeroing.out_of_range = Some(OutOfRange::Zero);
            let gather = GatherOp::<T, I>::new(zeroing).map_err(|e| {
                no_gradient(format!("the updates' gradient, a gather through the scatter's map: {e}"))
            })?;
            last_writes(fusion::shared(&zeroing, || gather), values.to_vec(), &replaced, sizes, device)?
        }
    } else {
        map_gather(op, indices)?
    };
    // `sub` takes each update away: its gradient is the negated gather.
    let mut to_updates = to_updates;
    if plan.reduction == Reduction::Sub {
        to_updates.push(Box::new(Negate));
    }
    let to_data: Vec<Box<dyn Step>> = match plan.reduction {
        Reduction::Add | Reduction::Sub => Vec::new(),
        Reduction::None => {
            // The same scatter, with the forward call's writes, writes zeros where it wrote
            // (the last write of several is one).
            let op: Arc<ScatterOp<T, I>> = op.kept();
            let updates = burn_backend::Shape::from(plan.updates.sizes.to_vec());
            vec![Box::new(GroupedScatter {
                scatter: op,
                writes,
                zeros: updates,
                grad_is_updates: false,
                device: device.clone(),
            })]
        }
        // The others' steps are `reduced`'s.
        r => {
            return Err(no_gradient(format!(
                "`reduction: {}` takes its backward pass from its values",
                r.name()
            )))
        }
    };
    Ok((Arc::from(to_data), Arc::from(to_updates)))
}

/// The gather through a scatter's map (where no later write replaced an update): each
/// update's element of a tensor of the data's sizes, read as the scatter's policy wrote it (a
/// dropped update reads zero: [`unsigned_gather`] under `skip`).
fn map_gather<T: Element, I: IndexElement>(
    op: &ScatterOp<T, I>,
    indices: &Fused,
) -> Result<Vec<Box<dyn Step>>, Error> {
    let plan = op.plan()?;
    let (map, sizes, indices) = (op.desc().map, plan.updates.sizes.to_vec(), indices.clone());
    if plan.out_of_range == OutOfRange::Skip {
        return Ok(match I::INDEX {
            IndexType::I32 | IndexType::U32 => {
                vec![Box::new(UnsignedGatherStep { gather: unsigned_gather::<T, u32>(map)?, indices, sizes })]
            }
            IndexType::I64 | IndexType::U64 => {
                vec![Box::new(UnsignedGatherStep { gather: unsigned_gather::<T, u64>(map)?, indices, sizes })]
            }
        });
    }
    let mut map = map;
    map.out_of_range = Some(plan.out_of_range);
    let gather = GatherOp::<T, I>::new(map).map_err(|e| {
        no_gradient(format!("the updates' gradient, a gather through the scatter's map: {e}"))
    })?;
    let gather = fusion::shared(&map, || gather);
    Ok(vec![Box::new(GatherStep { gather, indices, sizes })])
}

/// The gather of a scatter's map with its indices read as unsigned `U` (of their width) under
/// `zero`: a negative index is then past the end and reads zero, where a signed gather would
/// read `-1` as the last element. It gives the gradient of updates the scatter dropped
/// (`skip`) or replaced (`none`, by a later write) a value of zero.
fn unsigned_gather<T: Element, U: IndexElement>(map: GatherDesc) -> Result<Arc<GatherOp<T, U>>, Error> {
    let mut map = map;
    map.out_of_range = Some(OutOfRange::Zero);
    map.indices.dtype = U::DTYPE;
    if map.rules == GatherRules::Onnx {
        // ONNX gathers take signed indices only; the other rule sets read any index type the
        // same way for these maps.
        map.rules = GatherRules::OpenVino;
    }
    let gather = GatherOp::<T, U>::new(map)
        .map_err(|e| no_gradient(format!("the updates' gradient, a gather of unsigned indices: {e}")))?;
    Ok(fusion::shared(&map, || gather))
}

/// The updates' step of a `none` scatter with repeated destinations: `gather` (under `zero`)
/// at index values `bits` with each replaced position's index (`replaced`, offsets) set to
/// the largest value of its type, past any axis, uploaded as a tensor, so only the last write
/// to a destination gets its gradient.
fn last_writes<T: Element, K: IndexElement>(
    gather: Arc<GatherOp<T, K>>,
    mut bits: Vec<K>,
    replaced: &[usize],
    sizes: Vec<usize>,
    device: &CubeDevice,
) -> Result<Vec<Box<dyn Step>>, Error> {
    let width = K::DTYPE.size();
    // Little-endian all-ones, the top bit clear for a signed type.
    let mut max = vec![0xFF; width];
    if K::INDEX.is_signed() {
        max[width - 1] = 0x7F;
    }
    let past_any_axis = K::from_bytes(&max)[0];
    for &at in replaced {
        bits[at] = past_any_axis;
    }
    let dtype = match K::INDEX {
        IndexType::I32 => burn_tensor::DType::I32,
        IndexType::I64 => burn_tensor::DType::I64,
        IndexType::U32 => burn_tensor::DType::U32,
        IndexType::U64 => burn_tensor::DType::U64,
    };
    let shape = gather.plan()?.indices.sizes.to_vec();
    let data = burn_tensor::TensorData::from_bytes_vec(K::bytes(&bits).into_owned(), shape, dtype);
    let indices = Cube::int_from_data(data, device);
    Ok(vec![Box::new(GatherStep { gather, indices, sizes })])
}

/// A gather of the gradient at signed indices read as unsigned ([`unsigned_gather`]).
#[derive(Debug)]
struct UnsignedGatherStep<T: 'static, U: 'static> {
    gather: Arc<GatherOp<T, U>>,
    indices: Fused,
    sizes: Vec<usize>,
}

impl<T: Element, U: IndexElement> Step for UnsignedGatherStep<T, U> {
    fn apply(&self, grad: Fused) -> Fused {
        fusion::register(
            fusion::AsUnsigned(self.gather.clone()),
            true,
            vec![grad, self.indices.clone()],
            &self.sizes,
        )
    }
}

fn no_gradient(why: String) -> Error {
    Error::NoGradient { op: "scatter".into(), why }
}

/// Whether a scatter planned as `plan` has a backward pass, checked before it runs: every
/// reduction of a float type has one (a scatter under autodiff moves floats).
fn differentiable(plan: &ScatterPlan) -> Result<(), Error> {
    match plan.data_type() {
        // f64 is left out: no test here checks an f64 scatter's gradients.
        float if float.is_float() && float != DType::F64 => Ok(()),
        other => Err(no_gradient(format!("{other} elements have no gradient"))),
    }
}

/// A scatter as one node of Burn's graph, with two parents: the data and the updates.
#[derive(Debug)]
struct ScatterBackprop;

impl Backward<Cube, 2> for ScatterBackprop {
    type State = ScatterSteps;

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (to_data, to_updates) = ops.state;
        let run = |steps: &[Box<dyn Step>], grad: Fused| steps.iter().fold(grad, |g, step| step.apply(g));
        binary::<Cube, _, _>(ops.parents, ops.node, grads, |g| run(&to_data, g), |g| run(&to_updates, g));
    }
}
