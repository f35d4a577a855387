use super::{locate, offline_definition, read_lane, rows, start, Launch, OpKernel};
use crate::error::Error;
use crate::launch::{self, Queued};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{MoveDesc, SliceKernelDesc, Walk};
use stridex_core::SlicePlan;

/// Slice: invocation `ABSOLUTE_POS` writes output word (or vector of words) `ABSOLUTE_POS`.
#[cube(launch_unchecked)]
pub fn slice_kernel<N: Size>(
    input: &[Vector<u32, N>],
    output: &mut [Vector<u32, N>],
    status: &mut [u32],
    limit: u32,
    slots: u32,
    #[comptime] m: MoveDesc,
) {
    let pos = ABSOLUTE_POS;
    // `slots` bounds the output slots of a `_` walk (see `locate`).
    if start(pos, status, limit, m.dynamic, m.invocations) {
        if comptime!(m.lanes == 1) {
            let (valid, forward, backward) = locate(pos, slots, m.clone());
            if valid {
                // Backward steps never exceed forward ones for an element (a window read
                // backwards starts at its end), so the difference does not wrap.
                output[pos] = input[forward - backward];
            }
        } else {
            let lanes = comptime!(m.lanes);
            let bits = comptime!(32 / lanes);
            let mut out = 0u32;
            #[unroll]
            for lane in 0..comptime!(lanes as usize) {
                let (valid, forward, backward) =
                    locate(pos * comptime!(lanes as usize) + lane, slots, m.clone());
                if valid {
                    out |= read_lane(input, forward - backward, lanes) << comptime!(lane as u32 * bits);
                }
            }
            output[pos] = Vector::new(out);
        }
    }
}

impl OpKernel for SliceKernelDesc {
    type Plan = SlicePlan;

    fn of(plan: &SlicePlan) -> Option<Self> {
        SliceKernelDesc::new(plan)
    }

    fn with_walk(
        &self,
        _plan: &Self::Plan,
        at: impl FnOnce(&Walk) -> Result<Walk, Error>,
    ) -> Result<Self, Error> {
        Ok(SliceKernelDesc { walk: at(&self.walk)? })
    }
}

impl Launch for SliceKernelDesc {
    fn walk(&self) -> Option<&Walk> {
        Some(&self.walk)
    }

    /// `inputs`: the input.
    fn queue(&self, client: &Client, inputs: &[&Handle], output: &Handle) -> Vec<Queued> {
        let input = inputs[0];
        let status = launch::status(client);
        // SAFETY: as for a gather (`GatherKernelDesc::queue`): the descriptor comes from a plan
        // that passed every rule (window inside the input, output disjoint), and the buffers
        // hold at least `src_words` and `out_words` words.
        unsafe {
            match &self.walk {
                Walk::Convert(_) => unreachable!("a single op takes the row or slot walk"),
                Walk::Rows(w) => rows::queue(client, w, &[], input, output, &status),
                Walk::Slots(m) => slice_kernel::launch_unchecked(
                    client,
                    launch::cube_count(client, m.invocations),
                    launch::cube_dim(client),
                    m.line as usize,
                    BufferArg::from_raw_parts(input.clone(), m.src_words as usize),
                    BufferArg::from_raw_parts(output.clone(), m.out_words as usize),
                    BufferArg::from_raw_parts(status.clone(), 2),
                    m.invocations,
                    m.out_slots,
                    m.specialized(),
                ),
            }
        }
        vec![Queued::new(status)]
    }

    fn definitions(&self) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        let definition = match &self.walk {
            Walk::Convert(_) => unreachable!("a single op takes the row or slot walk"),
            Walk::Rows(w) => rows::definition(w),
            Walk::Slots(m) => offline_definition!(
                slice_kernel::SliceKernel,
                buffers[input output status],
                (),
                (),
                m.line as usize,
                m.specialized(),
            ),
        };
        vec![(None, Some(definition))]
    }
}
