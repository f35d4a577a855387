//! The backward passes of the scatter reductions whose gradient depends on more than the
//! indices: `mean`, `max`, `min` and `mul`, and any reduction that leaves the data's element
//! out (`use_init_val: false`). Each is built in Burn's stream from the gradient, the forward
//! call's tensors where it needs them (the data, the updates, the result), stridex's scatters
//! through the forward call's own writes (how many updates reached an element, their product),
//! the gather through the scatter's map (an element's value at each update) and Burn's
//! element-wise ops. Nothing is atomic, so every run gives the same bits.
//!
//! With `C` the updates that reached an element, `u` 1 where the reduction starts from the
//! data's element (`use_init_val`), `g` the output's gradient and `gather` through the map:
//!
//! - `add`, `sub` without the data: the data's gradient is `g` where `C = 0`, else 0;
//! - `mean`: the data's is `g / (C + 1)` (with the data) or as for `add`; an update's is
//!   `gather(g / (C + u))`;
//! - `max`, `min`: the gradient goes to the values equal to the result, shared evenly between
//!   ties (PyTorch's `scatter_reduce` rule): with `m` 1 for the data where it equals the result
//!   (and takes part) and `mu` 1 for an update equal to its element's result, `n = m +
//!   scatter_add(mu)`, the data's is `g m / n` and an update's `gather(g / n) mu`;
//! - `mul`: the data's is `g` times the product of its updates; an update's is `gather(g d)`
//!   (`d` the data, or 1 without it) times the product of the other updates to its element,
//!   from the count `Z` of zero updates and the product `P` of the others: `P / u` when
//!   `Z = 0`, `P` for the zero update when `Z = 1`, else 0 (no division by zero).
//!
//! An update the policy dropped (`zero`, `skip`) is in no write, so the scatters skip it, and
//! the gather reads 0 for it: its gradient is 0.
//!
//! The terms that do not depend on the gradient (the counts, the ties, the products) are made
//! once, by whichever of the two steps runs first, and shared with the other.

use super::{no_gradient, CubeDevice, Fused, ScatterSteps, Step};
use crate::burn::scatter;
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::ops::{ScatterOp, Writes};
use burn_backend::ops::{BoolTensorOps, FloatTensorOps};
use burn_backend::{BoolDType, FloatDType, Shape, TensorMetadata};
use burn_cubecl::Cube;
use std::sync::{Arc, OnceLock};
use stridex_core::{DType, Reduction, ScatterPlan};

/// Whether a scatter planned as `plan` takes its backward pass from here.
pub(super) fn needed(plan: &ScatterPlan) -> bool {
    matches!(plan.reduction, Reduction::Mean | Reduction::Max | Reduction::Min | Reduction::Mul)
        || (!plan.use_init_val && plan.reduction != Reduction::None)
}

/// A reduction's backward pass, planned before the forward op joins the stream (everything that
/// can fail is here); [`Planned::steps`] takes the forward call's tensors once it has run.
#[derive(Debug)]
pub(super) struct Planned<T: 'static, I: 'static> {
    reduction: Reduction,
    use_init_val: bool,
    /// The forward scatter's map under `add` in f32, grouped for f32 from the forward call's
    /// index values: how many values reach each element, counted exactly (f16 stops counting
    /// at 2048, bf16 at 256).
    count: Arc<ScatterOp<f32, I>>,
    count_writes: Arc<Writes>,
    /// The forward scatter's map under `add` and `mul` in the element type, run on the forward
    /// call's writes (the same lists under any reduction but `none`): a product's count of zero
    /// updates (compared with 0 and 1 only) and the product of the others.
    add: Arc<ScatterOp<T, I>>,
    mul: Arc<ScatterOp<T, I>>,
    writes: Arc<Writes>,
    /// The gather through the map, as the forward call's policy reads.
    gather: Arc<[Box<dyn Step>]>,
    data: Shape,
    updates: Shape,
    device: CubeDevice,
    /// What both steps compute from the forward call alone, made once by the first that needs it.
    shared: Shared,
}

/// A reduction's terms that do not depend on the gradient, each made once for both steps.
#[derive(Debug, Default)]
struct Shared {
    /// How many updates reached each element (f32).
    counts: OnceLock<Fused>,
    /// `max`, `min`: the data's and the updates' 0/1 masks of the values equal to the result
    /// (the gradient's float type), and how many there are per element (f32).
    ties: OnceLock<(Fused, Fused, Fused)>,
    /// `mul`: each element's product of its nonzero updates, and its count of zero updates.
    product: OnceLock<(Fused, Fused)>,
}

/// The forward call's tensors, kept where the gradient needs their values.
#[derive(Debug, Clone)]
pub(super) struct Saved {
    data: Fused,
    updates: Fused,
    output: Fused,
}

impl<T: Element, I: IndexElement> Planned<T, I> {
    /// The backward pass of `op`, whose forward call read index `values` and grouped them as
    /// `writes`; `gather` is the map's gather under the call's policy.
    pub(super) fn new(
        op: &ScatterOp<T, I>,
        values: &[I],
        writes: Arc<Writes>,
        gather: Vec<Box<dyn Step>>,
        device: &CubeDevice,
    ) -> Result<Self, Error> {
        let plan = op.plan()?;
        let desc_under = |reduction: Reduction| {
            let mut desc = *op.desc();
            desc.reduction = Some(reduction);
            desc.use_init_val = None;
            desc.duplicates = None;
            desc
        };
        let refused = |reduction: Reduction, e: &dyn std::fmt::Display| {
            no_gradient(format!("its gradient scatters under `{}`, which {e}", reduction.name()))
        };
        let under = |reduction| -> Result<Arc<ScatterOp<T, I>>, Error> {
            let desc = desc_under(reduction);
            let scatter = ScatterOp::new(desc).map_err(|e| refused(reduction, &e))?;
            Ok(crate::burn::fusion::shared(&desc, || scatter))
        };
        let mut desc = desc_under(Reduction::Add);
        (desc.map.data.dtype, desc.updates.dtype) = (DType::F32, DType::F32);
        let count = ScatterOp::<f32, I>::new(desc).map_err(|e| refused(Reduction::Add, &e))?;
        let count: Arc<ScatterOp<f32, I>> = crate::burn::fusion::shared(&desc, || count);
        let count_writes = Arc::new(count.group(values, count.plan()?.map.data)?);
        let add = under(Reduction::Add)?;
        Ok(Planned {
            reduction: plan.reduction,
            use_init_val: plan.use_init_val,
            count,
            count_writes,
            add: add.clone(),
            // Only `mul` reads it.
            mul: if plan.reduction == Reduction::Mul { under(Reduction::Mul)? } else { add.clone() },
            writes,
            gather: Arc::from(gather),
            data: Shape::from(plan.map.data.sizes.to_vec()),
            updates: Shape::from(plan.updates.sizes.to_vec()),
            device: device.clone(),
            shared: Shared::default(),
        })
    }

    /// Whether the gradient reads the forward call's values (the data, updates and result):
    /// then the forward call must keep them.
    pub(super) fn needs_values(&self) -> bool {
        matches!(self.reduction, Reduction::Max | Reduction::Min | Reduction::Mul)
    }

    /// The steps to the data and to the updates, on the forward call's tensors (`None` where
    /// [`Self::needs_values`] is false).
    pub(super) fn steps(self, saved: Option<Saved>) -> ScatterSteps {
        let planned = Arc::new(self);
        let to_data: Box<dyn Step> =
            Box::new(Reduced { planned: planned.clone(), saved: saved.clone(), to_updates: false });
        let to_updates: Box<dyn Step> = Box::new(Reduced { planned, saved, to_updates: true });
        (Arc::from(vec![to_data]), Arc::from(vec![to_updates]))
    }

    pub(super) fn saved(data: &Fused, updates: &Fused, output: &Fused) -> Saved {
        Saved { data: data.clone(), updates: updates.clone(), output: output.clone() }
    }
}

/// One of a reduction's two steps.
#[derive(Debug)]
struct Reduced<T: 'static, I: 'static> {
    planned: Arc<Planned<T, I>>,
    saved: Option<Saved>,
    to_updates: bool,
}

impl<T: Element, I: IndexElement> Step for Reduced<T, I> {
    fn apply(&self, g: Fused) -> Fused {
        let ops = Ops::<T, I> { p: &self.planned, float: g.dtype().into() };
        let p = &self.planned;
        match (p.reduction, &self.saved) {
            (Reduction::Max | Reduction::Min, Some(s)) => ops.extremum(g, s, self.to_updates),
            (Reduction::Mul, Some(s)) => ops.product(g, s, self.to_updates),
            (Reduction::Mean, _) => ops.mean(g, self.to_updates),
            // `add` and `sub` without the data.
            (Reduction::Sub, _) if self.to_updates => Cube::float_neg(ops.gather(g)),
            _ if self.to_updates => ops.gather(g),
            _ => ops.unreached(g),
        }
    }
}

/// The tensor arithmetic of a step, in the gradient's float type.
struct Ops<'a, T: 'static, I: 'static> {
    p: &'a Planned<T, I>,
    float: FloatDType,
}

impl<T: Element, I: IndexElement> Ops<'_, T, I> {
    fn bool_dtype(&self) -> BoolDType {
        burn_backend::get_or_init_device_settings::<Cube>(&self.p.device).bool_dtype
    }

    fn zeros(&self, shape: &Shape) -> Fused {
        Cube::float_zeros(shape.clone(), &self.p.device, self.float)
    }

    /// `updates` (the updates' shape) reduced into `base` by `op` (of the element type) through
    /// the forward call's writes.
    fn scatter(&self, op: Arc<ScatterOp<T, I>>, base: Fused, updates: Fused) -> Fused {
        scatter::register_grouped(op, self.p.writes.clone(), true, base, updates)
    }

    /// `t` (the data's shape) read at each update's element.
    fn gather(&self, t: Fused) -> Fused {
        self.p.gather.iter().fold(t, |t, step| step.apply(t))
    }

    fn f32(&self, t: Fused) -> Fused {
        Cube::float_cast(t, FloatDType::F32)
    }

    /// An f32 tensor of the updates' shape summed per element, exactly, into f32 zeros.
    fn count(&self, per_update: Fused) -> Fused {
        let zeros = Cube::float_zeros(self.p.data.clone(), &self.p.device, FloatDType::F32);
        scatter::register_grouped(self.p.count.clone(), self.p.count_writes.clone(), true, zeros, per_update)
    }

    /// How many updates reached each element (f32).
    fn counts(&self) -> Fused {
        let ones = || Cube::float_ones(self.p.updates.clone(), &self.p.device, FloatDType::F32);
        self.p.shared.counts.get_or_init(|| self.count(ones())).clone()
    }

    /// `g / n` in f32 (`n` f32, at least 1), back in the gradient's type.
    fn share(&self, g: Fused, n: Fused) -> Fused {
        Cube::float_cast(Cube::float_div(self.f32(g), Cube::float_clamp_min(n, 1.0.into())), self.float)
    }

    /// `g` where no update reached the element, else 0.
    fn unreached(&self, g: Fused) -> Fused {
        let reached = Cube::float_greater_elem(self.counts(), 0.0.into(), self.bool_dtype());
        Cube::float_mask_fill(g, reached, 0.0.into())
    }

    fn mean(&self, g: Fused, to_updates: bool) -> Fused {
        let with_data = if self.p.use_init_val { 1.0 } else { 0.0 };
        if !to_updates && !self.p.use_init_val {
            return self.unreached(g);
        }
        // An element no update reached has a count of 0: any divisor of 1 or more serves it.
        let share = self.share(g, Cube::float_add_scalar(self.counts(), with_data.into()));
        if to_updates {
            self.gather(share)
        } else {
            share
        }
    }

    fn extremum(&self, g: Fused, s: &Saved, to_updates: bool) -> Fused {
        let (at_data, at_updates, ties) = self.p.shared.ties.get_or_init(|| self.ties(s)).clone();
        let share = self.share(g, ties);
        if to_updates {
            Cube::float_mul(self.gather(share), at_updates)
        } else {
            Cube::float_mul(share, at_data)
        }
    }

    /// [`Shared::ties`] of the forward call's tensors.
    fn ties(&self, s: &Saved) -> (Fused, Fused, Fused) {
        let bools = self.bool_dtype();
        let mut at_data =
            Cube::bool_into_float(Cube::float_equal(s.data.clone(), s.output.clone(), bools), self.float);
        if !self.p.use_init_val {
            let reached = Cube::float_greater_elem(self.counts(), 0.0.into(), bools);
            at_data = Cube::float_mask_fill(at_data, reached, 0.0.into());
        }
        let tied = Cube::float_equal(s.updates.clone(), self.gather(s.output.clone()), bools);
        let at_updates = Cube::bool_into_float(tied.clone(), self.float);
        // Ties counted in f32; a NaN result equals nothing: its count is 0, and a divisor of 1
        // keeps 0s.
        let ties = Cube::float_add(
            self.f32(at_data.clone()),
            self.count(Cube::bool_into_float(tied, FloatDType::F32)),
        );
        (at_data, at_updates, ties)
    }

    /// The updates' zero mask and their values with 1 for 0 (the gradient's float type).
    fn nonzero(&self, s: &Saved) -> (Fused, Fused) {
        let is_zero = Cube::float_equal_elem(s.updates.clone(), 0.0.into(), self.bool_dtype());
        let nonzero = Cube::float_mask_fill(s.updates.clone(), is_zero.clone(), 1.0.into());
        (is_zero, nonzero)
    }

    /// [`Shared::product`] of the forward call's tensors.
    fn products(&self, s: &Saved) -> (Fused, Fused) {
        let (is_zero, nonzero) = self.nonzero(s);
        let ones = Cube::float_ones(self.p.data.clone(), &self.p.device, self.float);
        let product = self.scatter(self.p.mul.clone(), ones, nonzero);
        let zeros = self.scatter(
            self.p.add.clone(),
            self.zeros(&self.p.data),
            Cube::bool_into_float(is_zero, self.float),
        );
        (product, zeros)
    }

    fn product(&self, g: Fused, s: &Saved, to_updates: bool) -> Fused {
        if !to_updates && !self.p.use_init_val {
            return self.unreached(g);
        }
        let bools = self.bool_dtype();
        // The product of each element's nonzero updates, and how many were zero.
        let (product, zeros) = self.p.shared.product.get_or_init(|| self.products(s)).clone();
        if !to_updates {
            let any_zero = Cube::float_greater_elem(zeros, 0.0.into(), bools);
            return Cube::float_mul(g, Cube::float_mask_fill(product, any_zero, 0.0.into()));
        }
        let (is_zero, nonzero) = self.nonzero(s);
        let base = if self.p.use_init_val { Cube::float_mul(g, s.data.clone()) } else { g };
        let (product, zeros) = (self.gather(product), self.gather(zeros));
        // A nonzero update: the others' product is P / u where no update was zero, else 0.
        let others_nonzero = Cube::float_mask_fill(
            Cube::float_div(product.clone(), nonzero),
            Cube::float_not_equal_elem(zeros.clone(), 0.0.into(), bools),
            0.0.into(),
        );
        // The zero update: P where it was the only zero, else 0.
        let others_zero =
            Cube::float_mask_fill(product, Cube::float_not_equal_elem(zeros, 1.0.into(), bools), 0.0.into());
        let others = Cube::float_mask_where(others_nonzero, is_zero, others_zero);
        Cube::float_mul(self.gather(base), others)
    }
}
