//! How a chain runs: one fused row kernel where `ChainKernelDesc` lowers it, else each stage's
//! own kernel, one after another, on intermediates that stay on the device.

use super::{convert, index_bytes, rows, Launch, OpKernel, ScatterKernel};
use crate::error::Error;
use crate::launch::{self, Queued};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{GatherKernelDesc, SliceKernelDesc, Walk};
use stridex_core::{ChainKernelDesc, ChainPlan, DynamicFault, Location, RuleError, StagePlan, Unfused};

/// How a chain runs: one fused kernel, or its stages' kernels one after another; a chain that
/// ends in a scatter, the kernel of the stages before it (fused where they fuse), then the
/// scatter's.
#[derive(Clone, Debug)]
pub enum ChainKernel {
    Fused(ChainKernelDesc),
    Staged(Vec<StageKernel>),
    /// `before`: `None` where the scatter is the only stage (or what precedes it is empty);
    /// `scatter`: its kernel(s) writing the destination in its layout (`None`: its runs are
    /// empty). `ops::chain` runs it: the grouped scatter kernel takes lists grouped on the
    /// host.
    Scattering {
        before: Option<Box<ChainKernel>>,
        scatter: Option<ScatterKernel>,
    },
}

/// A stage's own kernel, as the single op of that stage launches it (`None` for an empty
/// stage output: no kernel).
#[derive(Clone, Debug)]
pub enum StageKernel {
    Gather(Option<GatherKernelDesc>),
    Slice(Option<SliceKernelDesc>),
    /// A `convert` stage on its own (the convert walk of a one-stage chain).
    Convert(Option<ChainKernelDesc>),
}

impl StageKernel {
    fn walk(&self) -> Option<&Walk> {
        match self {
            StageKernel::Gather(k) => k.as_ref().map(|k| &k.walk),
            StageKernel::Slice(k) => k.as_ref().map(|k| &k.walk),
            StageKernel::Convert(k) => k.as_ref().map(|k| &k.walk),
        }
    }
}

impl OpKernel for ChainKernel {
    type Plan = ChainPlan;

    /// `None` for an empty result; the fused kernel where the chain lowers to one.
    fn of(plan: &ChainPlan) -> Option<ChainKernel> {
        if let Some(k) = stridex_core::kernel::ScatterRowsDesc::of_chain(plan) {
            // Fused: the write kernel reads the rows where the slices put them.
            return Some(ChainKernel::Scattering {
                before: None,
                scatter: Some(ScatterKernel::OnDevice(super::OnDevice::Rows(k))),
            });
        }
        if let Some(f) = stridex_core::kernel::GatheredRows::of_chain(plan) {
            // Fused: the gather folded into the scatter's lists, which read the rows in place.
            return Some(ChainKernel::Scattering {
                before: None,
                scatter: Some(ScatterKernel::Grouped(f.kernel)),
            });
        }
        if let Some((_, s)) = plan.scatter() {
            let before = plan.before_scatter().and_then(|p| ChainKernel::of(&p)).map(Box::new);
            return Some(ChainKernel::Scattering { before, scatter: ScatterKernel::writing(s, &s.map.data) });
        }
        match ChainKernelDesc::new(plan) {
            Ok(None) => None,
            Ok(Some(k)) => Some(ChainKernel::Fused(k)),
            Err(_) => Some(ChainKernel::Staged(
                plan.stages
                    .iter()
                    .map(|s| match s {
                        StagePlan::Gather(g) => StageKernel::Gather(GatherKernelDesc::new(g)),
                        StagePlan::Slice(s) => StageKernel::Slice(SliceKernelDesc::new(s)),
                        StagePlan::Convert(c) => StageKernel::Convert(convert_alone(plan, c)),
                        StagePlan::Scatter(_) => unreachable!("a chain that scatters is `Scattering`"),
                    })
                    .collect(),
            )),
        }
    }

    fn with_walk(
        &self,
        plan: &ChainPlan,
        at: impl FnOnce(&Walk) -> Result<Walk, Error>,
    ) -> Result<Self, Error> {
        match self {
            ChainKernel::Fused(k) => Ok(ChainKernel::Fused(ChainKernelDesc { walk: at(&k.walk)? })),
            // A `_` chain that scatters: the kernels of the plan at its count, which the rules
            // found the same at every count but for their launch arguments
            // (`dynamic::check_scattering`).
            ChainKernel::Scattering { .. } if plan.scatter().is_some() => {
                ChainKernel::of(plan).ok_or(Error::Rule(RuleError::Dynamic {
                    fault: DynamicFault::Staged { cause: Unfused::EmptyStage { stage: 1 } },
                    at: Location::Chain,
                }))
            }
            // The rules make a `_` chain fuse, or be empty for every count.
            ChainKernel::Staged(_) | ChainKernel::Scattering { .. } => {
                let cause = ChainKernelDesc::new(plan).err().unwrap_or(Unfused::EmptyStage { stage: 1 });
                Err(Error::Rule(RuleError::Dynamic {
                    fault: DynamicFault::Staged { cause },
                    at: Location::Chain,
                }))
            }
        }
    }

    fn index_bytes(plan: &ChainPlan) -> usize {
        let scatter = plan.scatter().map(|(_, s)| index_bytes(&s.map));
        plan.gathers().map(|(_, g)| index_bytes(g)).chain(scatter).max().unwrap_or(0)
    }

    /// A chain that scatters, as a GPU runs it (`ops::chain`): a gather folded into a grouped
    /// scatter runs first, as its own stage, and the scatter's lists are grouped on the device.
    fn offline_definitions(&self, plan: &ChainPlan) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        let (ChainKernel::Scattering { before, scatter }, Some((_, s)), true) =
            (self, plan.scatter(), super::offline_tile_spread())
        else {
            return self.definitions();
        };
        let folded = before.is_none() && stridex_core::kernel::GatheredRows::of_chain(plan).is_some();
        let (before, scatter) = if folded {
            let before = plan.before_scatter().and_then(|p| ChainKernel::of(&p));
            (before.map(|b| b.definitions()), ScatterKernel::writing(s, &s.map.data))
        } else {
            (before.as_ref().map(|b| b.definitions()), scatter.clone())
        };
        let scatter = super::offline_grouping(s, &s.map.data).or_else(|| scatter.map(|k| k.definitions()));
        scattering_definitions(before, scatter)
    }
}

/// A chain that scatters: the definitions of the kernels before the scatter (a fused one
/// headed `before the scatter`), then the scatter's (`None`: its runs are empty), headed
/// `scatter` (and `kernel k of n` where they are several).
fn scattering_definitions(
    before: Option<Vec<(Option<String>, Option<KernelDefinition>)>>,
    scatter: Option<Vec<(Option<String>, Option<KernelDefinition>)>>,
) -> Vec<(Option<String>, Option<KernelDefinition>)> {
    let before = before.unwrap_or_default().into_iter();
    let mut all: Vec<_> =
        before.map(|(heading, d)| (heading.or(Some("before the scatter".into())), d)).collect();
    match scatter {
        Some(s) => all.extend(s.into_iter().map(|(heading, d)| (heading.or(Some("scatter".into())), d))),
        None => all.push((Some("scatter".to_string()), None)),
    }
    all
}

impl Launch for ChainKernelDesc {
    fn walk(&self) -> Option<&Walk> {
        Some(&self.walk)
    }

    /// `inputs`: the data, then the gathers' index buffers in stage order.
    fn queue(&self, client: &Client, inputs: &[&Handle], output: &Handle) -> Vec<Queued> {
        let status = launch::status(client);
        // SAFETY: the walk was lowered from a chain plan whose every stage passed its rules
        // (checked by `chain!` at compile time and again when the op was built), so every data
        // offset it forms from in-range (or clamped, or zeroed) indices lies inside the data's
        // span, and every index read inside its index tensor; the caller checked each buffer
        // against `src_words`, the index layouts and `out_words`. Indices out of range under
        // `error` were refused on the host before this launch.
        match &self.walk {
            Walk::Rows(w) => unsafe { rows::queue(client, w, &inputs[1..], inputs[0], output, &status) },
            Walk::Convert(w) => unsafe {
                convert::queue(client, w, &inputs[1..], inputs[0], output, &status)
            },
            Walk::Slots(_) => unreachable!("a fused chain takes the row or convert walk"),
        }
        vec![Queued::new(status)]
    }

    fn definitions(&self) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        match &self.walk {
            Walk::Rows(w) => vec![(None, Some(rows::definition(w)))],
            Walk::Convert(w) => vec![(None, Some(convert::definition(w)))],
            Walk::Slots(_) => unreachable!("a fused chain takes the row or convert walk"),
        }
    }
}

impl Launch for ChainKernel {
    fn walk(&self) -> Option<&Walk> {
        match self {
            ChainKernel::Fused(k) => Some(&k.walk),
            ChainKernel::Staged(_) | ChainKernel::Scattering { .. } => None,
        }
    }

    fn first_walk(&self) -> Option<&Walk> {
        match self {
            ChainKernel::Fused(k) => Some(&k.walk),
            ChainKernel::Staged(s) => s[0].walk(),
            ChainKernel::Scattering { before, .. } => before.as_ref().and_then(|b| b.first_walk()),
        }
    }

    /// The walk that writes the output (a scatter's destination is written in its layout, by
    /// no walk).
    fn last_walk(&self) -> Option<&Walk> {
        match self {
            ChainKernel::Fused(k) => Some(&k.walk),
            ChainKernel::Staged(s) => s.last().and_then(StageKernel::walk),
            ChainKernel::Scattering { .. } => None,
        }
    }

    /// One launch for a fused chain; for a staged one, each stage's kernel on the previous
    /// one's output, in intermediates sized for both the stage that writes them and the one
    /// that reads them (zeroed where a stage writes nothing).
    fn queue(&self, client: &Client, inputs: &[&Handle], output: &Handle) -> Vec<Queued> {
        let stages = match self {
            ChainKernel::Fused(k) => return k.queue(client, inputs, output),
            ChainKernel::Staged(stages) => stages,
            ChainKernel::Scattering { .. } => unreachable!("ops::chain runs a chain that scatters"),
        };
        let mut queued = Vec::new();
        let mut input = inputs[0].clone();
        let mut index = inputs[1..].iter();
        for (i, stage) in stages.iter().enumerate() {
            let out = if i + 1 == stages.len() {
                output.clone()
            } else {
                let written = stage.walk().map_or(0, Walk::out_words);
                let read = stages[i + 1].walk().map_or(0, Walk::src_words);
                let words = written.max(read).max(1) as usize;
                match stage.walk() {
                    Some(_) => client.empty(words * 4),
                    None => launch::upload(client, &[], words),
                }
            };
            match stage {
                StageKernel::Gather(k) => {
                    let index = index.next().expect("one buffer per gather");
                    if let Some(k) = k {
                        queued.extend(k.queue(client, &[&input, index], &out));
                    }
                }
                StageKernel::Slice(Some(k)) => queued.extend(k.queue(client, &[&input], &out)),
                StageKernel::Convert(Some(k)) => queued.extend(k.queue(client, &[&input], &out)),
                StageKernel::Slice(None) | StageKernel::Convert(None) => {}
            }
            input = out;
        }
        queued
    }

    /// A fused chain's one kernel; a staged chain's kernels, each headed `stage k`; a chain that
    /// scatters, the kernels before it, then the scatter's, headed `scatter` (and `kernel k of
    /// n` where it is two).
    fn definitions(&self) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        match self {
            ChainKernel::Fused(k) => k.definitions(),
            ChainKernel::Scattering { before, scatter } => scattering_definitions(
                before.as_ref().map(|b| b.definitions()),
                scatter.as_ref().map(|s| s.definitions()),
            ),
            ChainKernel::Staged(stages) => stages
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let heading = Some(format!("stage {}", i + 1));
                    let definition = match s {
                        StageKernel::Gather(k) => k.as_ref().map(|k| k.definitions().remove(0).1),
                        StageKernel::Slice(k) => k.as_ref().map(|k| k.definitions().remove(0).1),
                        StageKernel::Convert(k) => k.as_ref().map(|k| k.definitions().remove(0).1),
                    };
                    (heading, definition.flatten())
                })
                .collect(),
        }
    }
}

/// The kernel of a staged chain's `convert` stage: the convert walk of a chain of that stage
/// alone, reading the packed intermediate before it.
fn convert_alone(plan: &ChainPlan, c: &stridex_core::ConvertPlan) -> Option<ChainKernelDesc> {
    let alone = ChainPlan {
        data_type: plan.data_type,
        data: c.input,
        stages: vec![StagePlan::Convert(c.clone())],
        output: c.output,
        dynamic_leading: false,
    };
    // One stage with no read lowers unless an offset leaves `i64`, which a packed input that
    // passed the size rules cannot reach.
    ChainKernelDesc::new(&alone).ok().flatten()
}
