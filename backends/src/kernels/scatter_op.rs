//! The kernel(s) a scatter op launches into one destination layout: those that read the
//! indices on the device where they apply (`scatter_on_device`), else the grouped kernel
//! (`scatter`), which applies runs' lists the host grouped. As the op's [`OpKernel`], the one
//! that writes the packed copy `run` returns.

use super::scatter::{self as grouped, ScatterBuffers};
use super::scatter_on_device::OnDevice;
use super::{Launch, OpKernel};
use crate::error::Error;
use crate::launch::Queued;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{ScatterKernelDesc, Walk};
use stridex_core::{ScatterPlan, TensorLayout};

/// The kernel(s) of a scatter op ([`crate::ScatterOp::kernel`]): those that read the indices
/// on the device, or the one that applies the runs' lists grouped on the host.
#[derive(Clone, Debug)]
pub enum ScatterKernel {
    OnDevice(OnDevice),
    Grouped(ScatterKernelDesc),
}

impl ScatterKernel {
    /// The kernel(s) of `plan` writing a buffer laid out as `dest` (`None`: the runs are empty,
    /// nothing is written).
    pub(crate) fn writing(plan: &ScatterPlan, dest: &TensorLayout) -> Option<ScatterKernel> {
        OnDevice::of(plan, dest)
            .map(ScatterKernel::OnDevice)
            .or_else(|| ScatterKernelDesc::of(plan, dest).map(ScatterKernel::Grouped))
    }

    /// Which kernel this is, for the op's record of what ran on a runtime (`Verified`): each
    /// is built, and can fail to build, on its own.
    pub(crate) fn tag(&self) -> u64 {
        match self {
            ScatterKernel::Grouped(k) => grouped::tag(k),
            ScatterKernel::OnDevice(k) => k.tag(),
        }
    }
}

impl Launch for ScatterKernel {
    fn walk(&self) -> Option<&Walk> {
        None
    }

    /// `inputs`: the updates and the indices, for the kernels that read them on the device
    /// (every index they read is kept in bounds there; under `error` they take it as in range,
    /// which `ScatterOp::launch` and `run_on` check before they queue them). The grouped kernel
    /// trusts the lists it is given, so it is queued only by `ops::scatter`, with lists
    /// `ScatterPlan::group` made ([`ScatterKernel::queue_grouped`]).
    fn queue(&self, client: &Client, inputs: &[&Handle], output: &Handle) -> Vec<Queued> {
        match (self, inputs) {
            // SAFETY: (of the caller) the buffers were checked against the plan this kernel was
            // made of, `output` holding the layout it writes.
            (ScatterKernel::OnDevice(k), &[updates, indices]) => unsafe {
                k.queue(client, updates, indices, output)
            },
            _ => unreachable!("the grouped scatter kernel is queued with its lists by ops::scatter"),
        }
    }

    fn definitions(&self) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        match self {
            ScatterKernel::OnDevice(k) => k.definitions(),
            ScatterKernel::Grouped(k) => vec![(None, Some(grouped::definition(k)))],
        }
    }
}

impl ScatterKernel {
    /// Queues the grouped kernel on `groups`' lists (`runs` of them) in `dest`.
    ///
    /// # Safety
    /// `self` is the grouped kernel of a plan and the layout `dest` holds, and the lists came
    /// from `ScatterPlan::group` on that plan and layout: every key is a run of `dest` and every
    /// member a run of the updates (a buffer checked against their layout; after a fold, of the
    /// chain's data, or `ZERO_MEMBER` where `self` has `zero_members`).
    pub(crate) unsafe fn queue_grouped(
        &self,
        client: &Client,
        runs: u32,
        updates: &Handle,
        lists: [&Handle; 3],
        dest: &Handle,
    ) -> Vec<Queued> {
        let ScatterKernel::Grouped(k) = self else { return Vec::new() };
        let [keys, starts, members] = lists;
        let buffers = ScatterBuffers { updates, keys, starts, members, dest };
        // SAFETY: (of the caller) as above.
        vec![unsafe { grouped::queue(client, k, runs, buffers) }]
    }
}

impl OpKernel for ScatterKernel {
    type Plan = ScatterPlan;

    fn of(plan: &ScatterPlan) -> Option<ScatterKernel> {
        ScatterKernel::writing(plan, &plan.output)
    }

    /// A `_` scatter runs as the scatter with its count written (`ScatterOp::written`),
    /// whose kernels are compiled without the count: this kernel never moves.
    fn with_walk(
        &self,
        _: &ScatterPlan,
        _: impl FnOnce(&Walk) -> Result<Walk, Error>,
    ) -> Result<Self, Error> {
        Ok(self.clone())
    }

    fn index_bytes(plan: &ScatterPlan) -> usize {
        super::index_bytes(&plan.map)
    }

    fn updates_bytes(plan: &ScatterPlan) -> usize {
        super::word_bytes(&plan.updates, plan.data_type().size())
    }

    fn offline_definitions(&self, plan: &ScatterPlan) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        super::offline_grouping(plan, &plan.output).unwrap_or_else(|| self.definitions())
    }
}
