//! The kernels of a scatter that reads its indices on the device (see
//! `ops::scatter_on_device`): the line kernel or the owned-row pair, as one choice.

use super::{scatter_lines, scatter_rows};
use crate::launch::Queued;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{IndexRead, ScatterLinesDesc, ScatterRowsDesc};
use stridex_core::{ScatterPlan, TensorLayout};

/// The kernels of a scatter that reads its indices on the device.
#[derive(Clone, Debug)]
pub enum OnDevice {
    Lines(ScatterLinesDesc),
    Rows(ScatterRowsDesc),
}

impl OnDevice {
    /// The kernels of `plan` writing `dest`, where they apply.
    pub(crate) fn of(plan: &ScatterPlan, dest: &TensorLayout) -> Option<OnDevice> {
        ScatterLinesDesc::of(plan, dest)
            .map(OnDevice::Lines)
            .or_else(|| ScatterRowsDesc::of(plan, dest).map(OnDevice::Rows))
    }

    /// Which kernels these are (see `ScatterKernel::tag`). The rows pair reading a chain's
    /// data (`of_chain`) is specialized on where it reads, which two chains with the same
    /// scatter (a K and a V write) differ in: its tag is its descriptor's hash, high bit set.
    pub(crate) fn tag(&self) -> u64 {
        match self {
            OnDevice::Lines(_) => 1,
            OnDevice::Rows(k) if k.updates_base == 0 && k.updates_row == k.run => 2,
            OnDevice::Rows(k) => {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                k.hash(&mut h);
                h.finish() | 1 << 63
            }
        }
    }

    /// Under `error`, the device check of the packed indices (`None`: read back to check).
    pub(crate) fn check(&self) -> Option<(IndexRead, u32)> {
        match self {
            OnDevice::Lines(k) => k.check,
            OnDevice::Rows(k) => k.check,
        }
    }

    /// Queues the kernels.
    ///
    /// # Safety
    /// The buffers were checked against the plan the kernels were made of, `dest` holding the
    /// layout they write (see each kernel's `queue`).
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
        }
    }
}
