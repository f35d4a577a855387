use super::index::read_index;
use super::{index_bytes, locate, offline_definition, read_lane, rows, start, Launch, OpKernel};
use crate::error::Error;
use crate::launch::{self, Queued};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{GatherKernelDesc, IndexRead, MoveDesc, Walk};
use stridex_core::GatherPlan;

/// Gather: invocation `ABSOLUTE_POS` writes output word (or vector of words) `ABSOLUTE_POS`.
#[allow(clippy::too_many_arguments)]
#[cube(launch_unchecked)]
pub fn gather_kernel<N: Size>(
    data: &[Vector<u32, N>],
    indices: &[u32],
    output: &mut [Vector<u32, N>],
    status: &mut [u32],
    limit: u32,
    slots: u32,
    #[comptime] m: MoveDesc,
    #[comptime] r: Vec<IndexRead>,
) {
    let pos = ABSOLUTE_POS;
    // `slots` bounds the output slots of a `_` walk (see `locate`).
    if start(pos, status, limit, m.dynamic, m.invocations) {
        if comptime!(m.lanes == 1) {
            let (valid, src, index) = locate(pos, slots, m.clone());
            if valid {
                let (ok, axis_offset) = read_indices(indices, index, status, r);
                let mut v = Vector::<u32, N>::new(0u32);
                if ok {
                    v = data[src + axis_offset];
                }
                output[pos] = v;
            }
        } else {
            gather_lanes(data, indices, output, status, pos, slots, m, r);
        }
    }
}

/// 8- and 16-bit elements that do not travel in whole words: assemble one output word.
#[allow(clippy::too_many_arguments)]
#[cube]
fn gather_lanes<N: Size>(
    data: &[Vector<u32, N>],
    indices: &[u32],
    output: &mut [Vector<u32, N>],
    status: &mut [u32],
    pos: usize,
    slots: u32,
    #[comptime] m: MoveDesc,
    #[comptime] r: Vec<IndexRead>,
) {
    let lanes = comptime!(m.lanes);
    let bits = comptime!(32 / lanes);
    let mut out = 0u32;
    #[unroll]
    for lane in 0..comptime!(lanes as usize) {
        let (valid, src, index) = locate(pos * comptime!(lanes as usize) + lane, slots, m.clone());
        if valid {
            let (ok, axis_offset) = read_indices(indices, index, status, r.clone());
            if ok {
                out |= read_lane(data, src + axis_offset, lanes) << comptime!(lane as u32 * bits);
            }
        }
    }
    output[pos] = Vector::new(out);
}

/// Every index of the slot's element (one, or a GatherND tuple's components, each at its own
/// offset from `index`): whether all were in range, and the source offset they add up to.
// CubeCL unrolls a comptime range, not an iterator over a comptime list.
#[allow(clippy::needless_range_loop)]
#[cube]
fn read_indices(
    indices: &[u32],
    index: usize,
    status: &mut [u32],
    #[comptime] r: Vec<IndexRead>,
) -> (bool, usize) {
    let mut ok = true;
    let mut offset = 0usize;
    #[unroll]
    for j in 0..comptime!(r.len()) {
        let read = comptime!(r[j]);
        let (in_range, axis_offset) =
            read_index(indices, index + comptime!(read.offset as usize), status, read);
        ok = ok && in_range;
        offset += axis_offset;
    }
    (ok, offset)
}

impl OpKernel for GatherKernelDesc {
    type Plan = GatherPlan;

    fn of(plan: &GatherPlan) -> Option<Self> {
        GatherKernelDesc::new(plan)
    }

    fn with_walk(
        &self,
        _plan: &Self::Plan,
        at: impl FnOnce(&Walk) -> Result<Walk, Error>,
    ) -> Result<Self, Error> {
        Ok(GatherKernelDesc { walk: at(&self.walk)?, reads: self.reads.clone() })
    }

    fn index_bytes(plan: &GatherPlan) -> usize {
        index_bytes(plan)
    }
}

impl Launch for GatherKernelDesc {
    fn walk(&self) -> Option<&Walk> {
        Some(&self.walk)
    }

    /// `inputs`: the data, then the indices.
    fn queue(&self, client: &Client, inputs: &[&Handle], output: &Handle) -> Vec<Queued> {
        let (data, indices) = (inputs[0], inputs[1]);
        let status = launch::status(client);
        let index_words = indices.size_in_used() as usize / 4;
        // SAFETY: `launch_unchecked` skips bounds checks. The kernel reads data words below
        // `src_words`, index words below the indices' minimum length, and writes output words
        // below `out_words`: the descriptor was derived from a plan that passed every rule of
        // stridex-core (checked by the macro at compile time and again when the op was built;
        // for a `_` op, at this launch's count, when it was known: see `rows::queue`), and the
        // caller checked each buffer against those lengths (`check_handle`, or `upload`'s
        // sizing). An out-of-range index is clamped (`clamp`) or read as index 0 with its
        // `ok` false (`zero`, `error`: `index_of`), so the kernel's read stays at an offset
        // of the axis's first element, which is in the buffer even for an empty axis:
        // `buffer_words` keeps at least one element.
        unsafe {
            match &self.walk {
                Walk::Convert(_) => unreachable!("a single op takes the row or slot walk"),
                Walk::Rows(w) => rows::queue(client, w, &[indices], data, output, &status),
                Walk::Slots(m) => gather_kernel::launch_unchecked(
                    client,
                    launch::cube_count(client, m.invocations),
                    launch::cube_dim(client),
                    m.line as usize,
                    BufferArg::from_raw_parts(data.clone(), m.src_words as usize),
                    BufferArg::from_raw_parts(indices.clone(), index_words),
                    BufferArg::from_raw_parts(output.clone(), m.out_words as usize),
                    BufferArg::from_raw_parts(status.clone(), 2),
                    m.invocations,
                    m.out_slots,
                    m.specialized(),
                    self.reads.clone(),
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
                gather_kernel::GatherKernel,
                buffers[data indices output status],
                (),
                (),
                m.line as usize,
                m.specialized(),
                self.reads.clone(),
            ),
        };
        vec![(None, Some(definition))]
    }
}
