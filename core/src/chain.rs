//! A chain: gathers and slices applied one after another, each to the previous one's output.
//! Every stage is checked with the rules of its own rule set on the shape it receives, then the
//! whole chain is lowered to one kernel descriptor: slices compose into strided views, and each
//! gather becomes one index read whose position is affine in the output coordinates and in the
//! values of the reads after it (a gather of a gather reads an index at a position its later
//! gather chose). No intermediate tensor is ever written.

use crate::dtype::DType;
use crate::error::RuleError;
use crate::gather::{GatherDesc, GatherPlan};
use crate::kernel::{Dim, IndexRead, MoveRead, Moves, RowWalk, Walk, MAX_READS};
use crate::layout::TensorLayout;
use crate::rules::{GatherRules, OutOfRange};
use crate::slice::{SliceDesc, SlicePlan, SliceWindow};
use crate::tensor::{OutputDecl, TensorDecl};
use crate::MAX_RANK;
use std::borrow::Cow;

/// The most stages a chain has.
pub const MAX_STAGES: usize = 8;

/// A gather stage: the keys of `gather!` but `data` (the previous stage's output) and `output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GatherStage {
    pub rules: GatherRules,
    pub indices: TensorDecl,
    pub axis: i64,
    pub batch_dims: Option<i64>,
    pub index_dims: Option<usize>,
    pub out_of_range: Option<OutOfRange>,
}

impl GatherStage {
    /// The stage as a single gather of `data` (what it receives) into `output`.
    pub fn desc(&self, data: TensorDecl, output: Option<OutputDecl>) -> GatherDesc {
        GatherDesc {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StageDesc {
    Gather(GatherStage),
    /// A slice stage: the keys of `slice!` but `input` and `output`.
    Slice(SliceWindow),
}

impl StageDesc {
    pub const fn kind(&self) -> &'static str {
        match self {
            StageDesc::Gather(_) => "gather",
            StageDesc::Slice(_) => "slice",
        }
    }
}

/// Which tensor of a chain has its leading size written `_` (see [`crate::dynamic`]): its
/// size in the descriptor is [`crate::dynamic::PLACEHOLDER`].
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
    /// The tensor whose leading size is known only at run time, if any.
    pub dynamic_leading: Option<ChainCount>,
}

/// A validated stage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StagePlan {
    Gather(GatherPlan),
    Slice(SlicePlan),
}

impl StagePlan {
    pub fn output(&self) -> &TensorLayout {
        match self {
            StagePlan::Gather(g) => &g.output,
            StagePlan::Slice(s) => &s.output,
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

impl ChainDesc {
    /// The gathers' index tensors, in stage order.
    pub fn gathers(&self) -> impl Iterator<Item = &GatherStage> {
        self.stages.iter().filter_map(|s| match s {
            StageDesc::Gather(g) => Some(g),
            StageDesc::Slice(_) => None,
        })
    }

    /// Checks each stage with its own rule set on the shape it receives (the data for the first,
    /// the previous stage's output, packed, for the others); with a `_` count, also the rules
    /// that keep it the output's leading size, at the placeholder count.
    pub fn plan(&self) -> Result<ChainPlan, RuleError> {
        match self.dynamic_leading {
            Some(_) => crate::dynamic::chain_plan(self),
            None => self.plan_sizes(),
        }
    }

    /// [`ChainDesc::plan`] of the sizes as written, without the rules of a `_` count (which
    /// [`crate::dynamic::chain_at`] substitutes first).
    pub(crate) fn plan_sizes(&self) -> Result<ChainPlan, RuleError> {
        let n = self.stages.len();
        if n == 0 || n > MAX_STAGES {
            return Err(RuleError::ChainLength { stages: n, max: MAX_STAGES });
        }
        let gathers = self.gathers().count();
        if gathers > MAX_READS {
            return Err(RuleError::ChainGathers { gathers, max: MAX_READS });
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
                StageDesc::Gather(g) => StagePlan::Gather(g.desc(input, output).plan().map_err(in_stage)?),
                StageDesc::Slice(window) => StagePlan::Slice(
                    SliceDesc { input, window, output, feature_level: None, dynamic_leading: false }
                        .plan()
                        .map_err(in_stage)?,
                ),
            };
            input = TensorDecl::packed(dtype, plan.output().sizes);
            stages.push(plan);
        }
        let data = match &stages[0] {
            StagePlan::Gather(g) => g.data,
            StagePlan::Slice(s) => s.input,
        };
        let output = *stages[n - 1].output();
        Ok(ChainPlan { data_type: dtype, data, stages, output, dynamic_leading: false })
    }
}

/// `constant + sum(coords[d] * c_d) + sum(values[j] * r_j)`: a position (coordinate or offset)
/// in terms of the final output's coordinates and the reads' values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Affine {
    constant: i64,
    coords: [i64; MAX_RANK],
    reads: [i64; MAX_READS],
}

impl Affine {
    fn constant(c: i64) -> Affine {
        Affine { constant: c, ..Affine::default() }
    }

    fn coord(d: usize) -> Affine {
        let mut a = Affine::default();
        a.coords[d] = 1;
        a
    }

    fn read(j: usize) -> Affine {
        let mut a = Affine::default();
        a.reads[j] = 1;
        a
    }

    /// `self * k`; `None` when a coefficient leaves `i64` (a huge step: no buffer a kernel
    /// addresses holds such offsets, and the chain then runs stage by stage).
    fn scaled(self, k: i64) -> Option<Affine> {
        let mut a = self;
        a.constant = a.constant.checked_mul(k)?;
        for c in a.coords.iter_mut().chain(a.reads.iter_mut()) {
            *c = c.checked_mul(k)?;
        }
        Some(a)
    }

    /// `self + o`; `None` when a coefficient leaves `i64`.
    fn plus(self, o: Affine) -> Option<Affine> {
        let mut a = self;
        a.constant = a.constant.checked_add(o.constant)?;
        for (c, d) in a.coords.iter_mut().zip(o.coords) {
            *c = c.checked_add(d)?;
        }
        for (r, q) in a.reads.iter_mut().zip(o.reads) {
            *r = r.checked_add(q)?;
        }
        Some(a)
    }
}

/// A gather's index read, found walking the chain back from its output.
struct Read {
    index: IndexRead,
    stage: u32,
    buffer: u32,
    /// Index elements into the gather's index layout.
    offset: Affine,
}

/// The chain's kernel descriptor (`None` for an empty output: nothing to launch).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChainKernelDesc {
    pub walk: Walk,
}

impl ChainKernelDesc {
    /// The fused kernel of `plan`: `Ok(None)` for an empty output, `Err(())` when the chain
    /// cannot be fused into the row walk (an intermediate tensor is empty, the output's
    /// innermost dimension is not whole aligned lines, or a step so large that an offset
    /// coefficient leaves `i64`): it then runs stage by stage.
    #[allow(clippy::result_unit_err)]
    pub fn new(plan: &ChainPlan) -> Result<Option<ChainKernelDesc>, ()> {
        if plan.output.is_empty() {
            return Ok(None);
        }
        let n = plan.stages.len();
        if plan.stages[..n - 1].iter().any(|s| s.output().is_empty()) {
            return Err(());
        }
        // The last stage's output coordinates are the output's; walk back to the data.
        let out_rank = plan.output.rank();
        let mut y: Vec<Affine> = (0..out_rank).map(Affine::coord).collect();
        let mut reads: Vec<Read> = Vec::new();
        let buffers: Vec<usize> = plan
            .stages
            .iter()
            .scan(0, |g, s| {
                let b = *g;
                *g += usize::from(matches!(s, StagePlan::Gather(_)));
                Some(b)
            })
            .collect();
        for (s, stage) in plan.stages.iter().enumerate().rev() {
            y = match stage {
                StagePlan::Slice(p) => {
                    let (offsets, sizes, strides) = p.window.as_ref().ok_or(())?;
                    (0..p.input.rank())
                        .map(|i| {
                            let start =
                                offsets[i] as i64 + if strides[i] < 0 { sizes[i] as i64 - 1 } else { 0 };
                            Affine::constant(start).plus(y[i].scaled(strides[i])?)
                        })
                        .collect::<Option<Vec<Affine>>>()
                        .ok_or(())?
                }
                StagePlan::Gather(p) => {
                    let j = reads.len();
                    if p.axis_size == 0 {
                        // Nothing to read from: every index is out of range.
                        return Err(());
                    }
                    let mut offset = Affine::default();
                    let mut x = vec![Affine::default(); p.data.rank()];
                    for d in &p.dims {
                        offset =
                            offset.plus(y[d.output_dim].scaled(d.index_stride as i64).ok_or(())?).ok_or(())?;
                        if let Some(i) = d.data_dim {
                            x[i] = y[d.output_dim];
                        }
                    }
                    x[p.axis] = Affine::read(j);
                    reads.push(Read {
                        index: IndexRead {
                            index_type: p.index_type,
                            policy: p.out_of_range,
                            axis_size: p.axis_size as u32,
                            axis_stride: 0,
                            index_words: p.index_type.words() as u32,
                        },
                        stage: s as u32 + 1,
                        buffer: buffers[s] as u32,
                        offset,
                    });
                    x
                }
            };
        }
        // `y` now holds the data's coordinates: its element offset through the data's strides.
        let data_offset = y
            .iter()
            .zip(plan.data.strides.iter())
            .try_fold(Affine::default(), |acc, (c, &s)| acc.plus(c.scaled(s as i64)?))
            .ok_or(())?;
        let dims: Vec<Dim> = (0..out_rank)
            .filter(|&d| plan.output.sizes[d] > 1)
            .map(|d| {
                let mut r = [0; MAX_READS];
                for (j, read) in reads.iter().enumerate() {
                    r[j] = read.offset.coords[d];
                }
                Dim {
                    size: plan.output.sizes[d],
                    out: plan.output.strides[d],
                    src: data_offset.coords[d],
                    reads: r,
                }
            })
            .collect();
        let moves = Moves {
            dims,
            base: data_offset.constant,
            reads: reads
                .iter()
                .enumerate()
                .map(|(j, r)| MoveRead {
                    index: r.index,
                    buffer: r.buffer,
                    stage: r.stage,
                    base: r.offset.constant,
                    deps: r.offset.reads,
                    data: data_offset.reads[j],
                })
                .collect(),
            elem_bytes: plan.data_type.size(),
            src: &plan.data,
            out: &plan.output,
            dynamic: plan.dynamic_leading,
        };
        let walk = RowWalk::build(&moves).ok_or(())?;
        Ok(Some(ChainKernelDesc { walk: Walk::Rows(walk) }))
    }
}
