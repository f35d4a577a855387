//! The kernels of a scatter that reads its indices on the device (see
//! `ops::scatter_on_device`): the line kernel, the owned-row pair, or (on GPUs) the grouping
//! kernels and the grouped kernel over every run, as one choice.

use super::scatter::{self as grouped, ScatterBuffers};
use super::{scatter_grouping, scatter_lines, scatter_rows};
use crate::launch::Queued;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{
    IndexRead, ScatterGroupingDesc, ScatterKernelDesc, ScatterLinesDesc, ScatterRowsDesc,
};
use stridex_core::{ScatterPlan, TensorLayout};

/// The kernels of a scatter that reads its indices on the device.
#[derive(Clone, Debug)]
pub enum OnDevice {
    /// A ScatterElements of many lines: each line walked in order (`kernels::scatter_lines`).
    Lines(ScatterLinesDesc),
    /// Whole rows along axis 0 under `none`: each claimed by its last writer, then written
    /// (`kernels::scatter_rows`).
    Rows(ScatterRowsDesc),
    /// The runs' lists grouped from the indices on the device, then the grouped kernel (its
    /// `every_run` form) applying them: what a GPU runs where the host would group.
    Grouped(ScatterGroupingDesc, ScatterKernelDesc),
}

impl OnDevice {
    /// The kernels of `plan` writing `dest` that every runtime takes, where they apply.
    pub(crate) fn of(plan: &ScatterPlan, dest: &TensorLayout) -> Option<OnDevice> {
        ScatterLinesDesc::of(plan, dest)
            .map(OnDevice::Lines)
            .or_else(|| ScatterRowsDesc::of(plan, dest).map(OnDevice::Rows))
    }

    /// The grouped kernel of `plan` writing `dest`, over every run, with its lists grouped on
    /// the device, where the plan allows it (`ScatterGroupingDesc::of`: runs back to back, one
    /// index per position). `into_zeros`: the sum into a fresh buffer that writes each of its
    /// words (`ScatterKernelDesc::summing_into_zeros`, a gather's gradient), else the kernel
    /// of `ScatterKernelDesc::of`. Runtimes choose it (`kernels::group_on_device`); this only
    /// says it applies.
    pub(crate) fn grouped(plan: &ScatterPlan, dest: &TensorLayout, into_zeros: bool) -> Option<OnDevice> {
        let d = ScatterGroupingDesc::of(plan, dest)?;
        let k = match into_zeros {
            // Its runs are the ones grouped: then every word of `dest` is written.
            true => ScatterKernelDesc::summing_into_zeros(plan, dest)
                .and_then(|(k, runs)| (runs == d.runs as usize).then_some(k))?,
            false => ScatterKernelDesc::of(plan, dest)?,
        };
        Some(OnDevice::Grouped(d, ScatterKernelDesc { every_run: true, ..k }))
    }

    /// Which kernels these are (see `ScatterKernel::tag`). The rows pair reading a chain's
    /// data (`of_chain`) is specialized on where it reads, which two chains with the same
    /// scatter (a K and a V write) differ in: its tag is the hash of what it is compiled on
    /// (`ScatterRowsDesc::specialized`: not the count, which a `_` chain's counts share), high
    /// bit set.
    /// The grouping kernels' tag carries the hash of what they are compiled on
    /// (`ScatterGroupingDesc::specialized`: not the count of positions, so a `_` scatter's
    /// counts share it).
    pub(crate) fn tag(&self) -> u64 {
        fn hash(k: &impl std::hash::Hash) -> u64 {
            use std::hash::Hasher;
            let mut h = std::collections::hash_map::DefaultHasher::new();
            k.hash(&mut h);
            h.finish()
        }
        match self {
            OnDevice::Lines(_) => 1,
            OnDevice::Rows(k) if k.updates_base == 0 && k.updates_row == k.run => 2,
            OnDevice::Rows(k) => hash(&k.specialized()) | 1 << 63,
            // Bits 8 to 61 of the hash, above the grouped kernel's variant and below the flags.
            OnDevice::Grouped(d, k) => {
                grouped::tag(k)
                    | GROUPED_ON_DEVICE
                    | ((hash(&d.specialized()) << 8) & (GROUPED_ON_DEVICE - 1))
            }
        }
    }

    /// Under `error`, the device check of the packed indices (`None`: read back to check).
    pub(crate) fn check(&self) -> Option<(IndexRead, u32)> {
        match self {
            OnDevice::Lines(k) => k.check,
            OnDevice::Rows(k) => k.check,
            OnDevice::Grouped(d, _) => d.check,
        }
    }

    /// Queues the kernels.
    ///
    /// # Safety
    /// The buffers were checked against the plan the kernels were made of, `dest` holding the
    /// layout they write (see each kernel's `queue`; for `Grouped`, `OnDevice::grouped` made
    /// both for that plan and layout).
    pub(crate) unsafe fn queue(
        &self,
        client: &Client,
        updates: &Handle,
        indices: &Handle,
        dest: &Handle,
    ) -> Vec<Queued> {
        match self {
            // SAFETY: (of the caller) as each kernel's `queue` asks.
            OnDevice::Lines(k) => vec![unsafe { scatter_lines::queue(client, k, updates, indices, dest) }],
            OnDevice::Rows(k) => unsafe { scatter_rows::queue(client, k, updates, indices, dest) },
            OnDevice::Grouped(d, k) => {
                // SAFETY: (of the caller) `OnDevice::grouped` made `d` and `k` of one plan and
                // `dest`'s layout. The grouping reads `d.positions` packed indices, inside
                // `indices` (`scatter_grouping::queue` says how its own buffers stay in
                // bounds). `k` reads no key (`every_run`): its run `g < d.runs` lies in `dest`,
                // the runs back to back (`ScatterGroupingDesc::of`), and reads the members of
                // `every[g] .. every[g + 1]` clamped to `every[d.runs]`, at most `d.positions`
                // (one count per position), the words of `members`: each a position's update
                // (`members_kernel` writes none past the positions) or zero, inside `updates`.
                let (lists, mut queued) = unsafe { scatter_grouping::queue(client, d, indices) };
                let (keys, starts, members) = (&lists.every, &lists.every, &lists.members);
                let buffers = ScatterBuffers { updates, keys, starts, members, dest };
                queued.push(unsafe { grouped::queue(client, k, d.runs, buffers) });
                queued
            }
        }
    }

    /// The kernels' definitions, each headed where there are two (for `explain`).
    pub(crate) fn definitions(&self) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        match self {
            OnDevice::Lines(k) => vec![(None, Some(scatter_lines::definition(k)))],
            OnDevice::Rows(k) => {
                let [claim, write] = scatter_rows::definitions(k);
                vec![
                    (Some("kernel 1 of 2: each row claimed for its last writer".into()), Some(claim)),
                    (Some("kernel 2 of 2: each claimed row written".into()), Some(write)),
                ]
            }
            OnDevice::Grouped(d, k) => scatter_grouping::definitions(d, grouped::definition(k)),
        }
    }
}

/// The tag bit of the grouping kernels with the grouped kernel over every run (see
/// `Verified`): each can fail to build.
const GROUPED_ON_DEVICE: u64 = 1 << 62;
