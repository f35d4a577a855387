//! A chain: gathers and slices applied one after another, each to the previous one's output.
//! Every stage is checked with the rules of its own rule set on the shape it receives, then the
//! whole chain is lowered to one kernel descriptor: slices compose into strided views, and each
//! gather becomes one index read whose position is affine in the output coordinates and in the
//! values of the reads after it (a gather of a gather reads an index at a position its later
//! gather chose). No intermediate tensor is ever written.
//!
//! A chain may end in a scatter stage: what the stages before it make (or the data, when it is
//! the only stage) are its updates, scattered into a destination the stage declares (`into`)
//! and written there in place. It runs after the stages before it.

use crate::convert::{ConvertPlan, ConvertStage};
use crate::dtype::DType;
use crate::error::{Operand, RuleError};
use crate::gather::{GatherDesc, GatherPlan};
use crate::layout::TensorLayout;
use crate::limits::MAX_GATHERS;
use crate::rules::{Duplicates, GatherForm, GatherRules, OutOfRange, Reduction};
use crate::scatter::{ScatterDesc, ScatterPlan};
use crate::slice::{SliceDesc, SlicePlan, SliceWindow};
use crate::tensor::{OutputDecl, TensorDecl};
use std::borrow::Cow;

/// The most stages a chain has.
pub const MAX_STAGES: usize = 8;

/// A gather stage: the keys of `gather!` but `data` (the previous stage's output) and `output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GatherStage {
    /// Gather, GatherElements or GatherND.
    pub form: GatherForm,
    pub rules: GatherRules,
    pub indices: TensorDecl,
    pub axis: i64,
    pub batch_dims: Option<i64>,
    pub index_dims: Option<usize>,
    pub out_of_range: Option<OutOfRange>,
}

impl GatherStage {
    /// A single gather's keys as a stage (the inverse of [`GatherStage::desc`]): what it
    /// gathers from and into are the chain's business, and a stage has no feature level or
    /// `_` count of its own.
    pub fn of(desc: &GatherDesc) -> GatherStage {
        GatherStage {
            form: desc.form,
            rules: desc.rules,
            indices: desc.indices,
            axis: desc.axis,
            batch_dims: desc.batch_dims,
            index_dims: desc.index_dims,
            out_of_range: desc.out_of_range,
        }
    }

    /// The stage as a single gather of `data` (what it receives) into `output`.
    pub fn desc(&self, data: TensorDecl, output: Option<OutputDecl>) -> GatherDesc {
        GatherDesc {
            form: self.form,
            rules: self.rules,
            data,
            indices: self.indices,
            axis: self.axis,
            batch_dims: self.batch_dims,
            index_dims: self.index_dims,
            out_of_range: self.out_of_range,
            output,
            feature_level: None,
            dynamic_leading: false,
        }
    }
}

/// A scatter stage, the last of a chain: the keys of `scatter!` (or `scatter_elements!`,
/// `scatter_nd!`) but `updates` (what the stages before it make) and with the destination,
/// `scatter!`'s `data`, as `into`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScatterStage {
    /// Scatter (ScatterUpdate), ScatterElements or ScatterND.
    pub form: GatherForm,
    pub rules: GatherRules,
    pub into: TensorDecl,
    pub indices: TensorDecl,
    pub axis: i64,
    pub reduction: Option<Reduction>,
    pub duplicates: Option<Duplicates>,
    pub use_init_val: Option<bool>,
    pub out_of_range: Option<OutOfRange>,
}

impl ScatterStage {
    /// The stage as a single scatter of `updates` (what it receives) into `into`.
    pub fn desc(&self, updates: TensorDecl) -> ScatterDesc {
        let mut desc = ScatterDesc::new(self.form, self.rules, self.into, self.indices, updates, self.axis);
        desc.map.out_of_range = self.out_of_range;
        desc.reduction = self.reduction;
        desc.duplicates = self.duplicates;
        desc.use_init_val = self.use_init_val;
        desc
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StageDesc {
    Gather(GatherStage),
    /// A slice stage: the keys of `slice!` but `input` and `output`.
    Slice(SliceWindow),
    /// The last stage only: the result in another element type (see [`crate::convert`]).
    Convert(ConvertStage),
    /// The last stage only: the result scattered into a destination.
    Scatter(ScatterStage),
}

impl StageDesc {
    pub const fn kind(&self) -> &'static str {
        match self {
            StageDesc::Gather(GatherStage { form: GatherForm::Elements, .. }) => "gather_elements",
            StageDesc::Gather(GatherStage { form: GatherForm::Nd, .. }) => "gather_nd",
            StageDesc::Gather(_) => "gather",
            StageDesc::Slice(_) => "slice",
            StageDesc::Convert(_) => "convert",
            StageDesc::Scatter(ScatterStage { form: GatherForm::Elements, .. }) => "scatter_elements",
            StageDesc::Scatter(ScatterStage { form: GatherForm::Nd, .. }) => "scatter_nd",
            StageDesc::Scatter(_) => "scatter",
        }
    }
}

/// Which tensor of a chain carries its `_` count (see [`crate::dynamic`]): its leading size
/// in the descriptor is [`crate::dynamic::PLACEHOLDER`]. Later tensors that lead with the same
/// count, the indices of a gather_elements stage after it and of a final scatter, take it
/// whatever leading size they are given (the macro writes `_` there, the builder
/// `.dynamic_leading()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChainCount {
    /// The data: `data: f32[_, 3, 512, 512]`.
    Data,
    /// The indices of the gather at `stage` (1-based): `gather { indices: i32[_, 512], .. }`.
    Indices { stage: usize },
}

/// A chain as a descriptor states it: the data, the stages in order, and optionally the final
/// output's layout (as `gather!`'s `output`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChainDesc {
    pub data: TensorDecl,
    pub stages: Cow<'static, [StageDesc]>,
    pub output: Option<OutputDecl>,
    /// The tensor that carries the count known only at run time, if any.
    pub dynamic_leading: Option<ChainCount>,
}

/// A validated stage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StagePlan {
    Gather(GatherPlan),
    Slice(SlicePlan),
    Convert(ConvertPlan),
    /// Boxed: a scatter's plan holds its map's and its own dimensions.
    Scatter(Box<ScatterPlan>),
}

impl StagePlan {
    pub fn output(&self) -> &TensorLayout {
        match self {
            StagePlan::Gather(g) => &g.output,
            StagePlan::Slice(s) => &s.output,
            StagePlan::Convert(c) => &c.output,
            // The destination, in its own layout: the scatter writes it in place.
            StagePlan::Scatter(s) => &s.map.data,
        }
    }

    /// What the stage reads: its input layout.
    pub fn input(&self) -> &TensorLayout {
        match self {
            StagePlan::Gather(g) => &g.data,
            StagePlan::Slice(s) => &s.input,
            StagePlan::Convert(c) => &c.input,
            StagePlan::Scatter(s) => &s.updates,
        }
    }
}

/// A chain that satisfies every rule of every stage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChainPlan {
    pub data_type: DType,
    pub data: TensorLayout,
    pub stages: Vec<StagePlan>,
    /// The last stage's output: the chain's result.
    pub output: TensorLayout,
    /// The output's leading size is the `_` count: this plan is for the placeholder (or, at
    /// run time, for one count; see [`crate::dynamic::chain_at`]).
    pub dynamic_leading: bool,
}

impl ChainPlan {
    /// The gathers, each with its 1-based stage number, in stage order.
    pub fn gathers(&self) -> impl Iterator<Item = (usize, &GatherPlan)> {
        self.stages.iter().enumerate().filter_map(|(i, s)| match s {
            StagePlan::Gather(g) => Some((i + 1, g)),
            _ => None,
        })
    }

    /// The scatter stage that ends the chain, if any, with its 1-based stage number.
    pub fn scatter(&self) -> Option<(usize, &ScatterPlan)> {
        match self.stages.last() {
            Some(StagePlan::Scatter(s)) => Some((self.stages.len(), s)),
            _ => None,
        }
    }

    /// Index tensors the chain reads: one per gather, then the scatter's.
    pub fn index_tensors(&self) -> usize {
        self.gathers().count() + usize::from(self.scatter().is_some())
    }

    /// The stages before a final scatter, as a chain of their own (`None`: the scatter is the
    /// only stage, and its updates are the data).
    pub fn before_scatter(&self) -> Option<ChainPlan> {
        let (stage, _) = self.scatter()?;
        (stage > 1).then(|| ChainPlan {
            data_type: self.data_type,
            data: self.data,
            stages: self.stages[..stage - 1].to_vec(),
            output: *self.stages[stage - 2].output(),
            dynamic_leading: false,
        })
    }

    /// The `convert` stage that ends the chain, if any.
    pub fn convert(&self) -> Option<&ConvertPlan> {
        match self.stages.last() {
            Some(StagePlan::Convert(c)) => Some(c),
            _ => None,
        }
    }

    /// The result's element type: the data's, or a `convert` stage's.
    pub fn output_type(&self) -> DType {
        self.convert().map_or(self.data_type, |c| c.to)
    }
}

impl ChainDesc {
    /// The gathers' index tensors, in stage order.
    pub fn gathers(&self) -> impl Iterator<Item = &GatherStage> {
        self.stages.iter().filter_map(|s| match s {
            StageDesc::Gather(g) => Some(g),
            _ => None,
        })
    }

    /// The scatter stage that ends the chain, if any.
    pub fn scatter(&self) -> Option<&ScatterStage> {
        match self.stages.last() {
            Some(StageDesc::Scatter(s)) => Some(s),
            _ => None,
        }
    }

    /// The stages before a final scatter, as a chain of their own (`None`: no scatter, or the
    /// scatter is the only stage), with the chain's `_` count (on the data, or on a gather's
    /// indices, which come before the scatter).
    pub fn before_scatter(&self) -> Option<ChainDesc> {
        self.scatter()?;
        let n = self.stages.len();
        (n > 1).then(|| ChainDesc {
            data: self.data,
            stages: self.stages[..n - 1].to_vec().into(),
            output: None,
            dynamic_leading: self.dynamic_leading,
        })
    }

    /// The final scatter stage as a single scatter, its updates what `plan` (this chain's plan)
    /// gives it: the data as declared, or the previous stage's output, packed.
    pub fn scatter_desc(&self, plan: &ChainPlan) -> Option<ScatterDesc> {
        let s = self.scatter()?;
        let n = self.stages.len();
        let updates = match n {
            1 => self.data,
            _ => TensorDecl::packed(self.data.dtype, plan.stages.get(n - 2)?.output().sizes),
        };
        Some(s.desc(updates))
    }

    /// The element types of the index tensors the chain reads: each gather's, then the
    /// scatter's, in stage order.
    pub fn index_dtypes(&self) -> Vec<DType> {
        let scatter = self.scatter().map(|s| s.indices.dtype);
        self.gathers().map(|g| g.indices.dtype).chain(scatter).collect()
    }

    /// [`ChainDesc::plan`] of the sizes as written, without the rules of a `_` count (which
    /// [`crate::dynamic::chain_at`] substitutes first).
    pub(crate) fn plan_sizes(&self) -> Result<ChainPlan, RuleError> {
        let n = self.stages.len();
        if n == 0 || n > MAX_STAGES {
            return Err(RuleError::ChainLength { stages: n, max: MAX_STAGES });
        }
        let gathers = self.gathers().count();
        if gathers > MAX_GATHERS {
            return Err(RuleError::ChainGathers { gathers, max: MAX_GATHERS });
        }
        if let Some(i) = self.stages[..n - 1].iter().position(|s| matches!(s, StageDesc::Convert(_))) {
            return Err(RuleError::ConvertNotLast { stage: i + 1, stages: n });
        }
        if let Some(i) = self.stages[..n - 1].iter().position(|s| matches!(s, StageDesc::Scatter(_))) {
            return Err(RuleError::ScatterNotLast { stage: i + 1, stages: n });
        }
        if self.scatter().is_some() && self.output.is_some() {
            return Err(RuleError::ScatterChainOutput);
        }
        let dtype = self.data.dtype;
        let mut input = self.data;
        let mut stages = Vec::with_capacity(n);
        for (i, stage) in self.stages.iter().enumerate() {
            let output = if i + 1 == n { self.output } else { None };
            let in_stage = |error: RuleError| RuleError::Stage {
                stage: i + 1,
                kind: stage.kind(),
                input: input.sizes.to_vec(),
                error: Box::new(error),
            };
            let plan = match *stage {
                StageDesc::Gather(g) => {
                    StagePlan::Gather(g.desc(input, output).plan_sizes().map_err(in_stage)?)
                }
                StageDesc::Slice(window) => StagePlan::Slice(
                    SliceDesc { input, window, output, feature_level: None, dynamic_leading: false }
                        .plan_sizes()
                        .map_err(in_stage)?,
                ),
                StageDesc::Convert(c) => {
                    let layout = crate::tensor::layout(Operand::Data, input.sizes, input.strides)
                        .and_then(|l| {
                            crate::tensor::check_addressable(Operand::Data, &l, dtype.size())?;
                            Ok(l)
                        })
                        .map_err(in_stage)?;
                    StagePlan::Convert(c.plan(dtype, layout, output.as_ref()).map_err(in_stage)?)
                }
                // The stage's updates: the data as declared, or the previous stage's output.
                StageDesc::Scatter(s) if s.into.dtype != dtype => {
                    return Err(in_stage(RuleError::ScatterIntoType { into: s.into.dtype, updates: dtype }))
                }
                StageDesc::Scatter(s) => {
                    let plan = s.desc(input).plan().map_err(|e| match e {
                        RuleError::UpdatesShape { op, declared, expected } => {
                            RuleError::ScatterStageUpdates { op, received: declared, expected }
                        }
                        e => e,
                    });
                    StagePlan::Scatter(Box::new(plan.map_err(in_stage)?))
                }
            };
            input = TensorDecl::packed(dtype, plan.output().sizes);
            stages.push(plan);
        }
        let data = *stages[0].input();
        let output = *stages[n - 1].output();
        Ok(ChainPlan { data_type: dtype, data, stages, output, dynamic_leading: false })
    }
}
