//! Scatters whose kernels read the indices on the device, so the host neither reads them back
//! nor groups them: a ScatterElements of many lines (`ScatterLinesDesc`: each line of
//! positions walked in order by one invocation), a scatter of whole rows along axis 0 under
//! `none` (`ScatterRowsDesc`: each row claimed by its last writer with an integer atomic
//! maximum, then written by it) and, on GPUs, runs that lie back to back
//! (`ScatterGroupingDesc`: the lists grouped on the device). Under `error` the packed indices
//! are checked on the device first, and read back only to name a bad one (strided ones are
//! read back and checked); nothing is written before that check passes.

use super::scatter::ScatterOp;
use super::{check_indices, read_indices};
use crate::device::{with_client, Device};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::kernels::scatter_on_device::OnDevice;
use crate::kernels::{scatter_lines, word_bytes};
use crate::launch;
use crate::tensor::Tensor;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::IndexRead;
use stridex_core::OutOfRange;

impl<T: Element, I: IndexElement> ScatterOp<T, I> {
    /// `run_on` by kernels `k` that read the indices on the device: checked here under
    /// `error`, then uploaded as they are.
    pub(super) fn run_on_device(
        &self,
        device: &Device,
        k: &OnDevice,
        packed: &[T],
        indices: &[I],
        updates: &[T],
    ) -> Result<Tensor<T>, Error> {
        let plan = self.plan()?;
        if plan.out_of_range == OutOfRange::Error {
            check_indices(&plan.map, indices)?;
        }
        let output = plan.output;
        let (out_bytes, index_bytes, updates_bytes) =
            (T::bytes(packed), I::bytes(indices), T::bytes(updates));
        let out_words = word_bytes(&output, plan.data_type().size()) / 4;
        let bytes = with_client!(device, c => {
            let (queued, dest) = launch::on_device_thread(c, || {
                let dest = launch::upload(c, &out_bytes, out_words);
                let updates = launch::upload(c, &updates_bytes, 0);
                let indices = launch::upload(c, &index_bytes, 0);
                // SAFETY: the kernels were made for this plan writing `output`, the layout of
                // `dest`; `run_on` held the indices and updates to their layouts.
                (unsafe { k.queue(c, &updates, &indices, &dest) }, dest)
            })?;
            let (_, mut bytes) = launch::wait_all(c, queued, vec![dest])?;
            Ok::<_, Error>(bytes.remove(0))
        })?;
        Ok(Tensor::from_bytes(&output, &bytes))
    }

    /// `launch` by kernels that read the indices on the device, on buffers `launch` checked.
    /// Waits only on the first launch per runtime (see `Verified`), and under `error` for the
    /// check.
    pub(super) fn launch_on_device(
        &self,
        client: &Client,
        k: &OnDevice,
        data: &Handle,
        indices: &Handle,
        updates: &Handle,
    ) -> Result<(), Error> {
        self.check_on_device(client, k.check(), indices)?;
        launch::exclusive(|| {
            // SAFETY: `k` was made for this plan writing the data's layout, and `launch` checked
            // each buffer against `buffer_bytes` of its layout (a chain's fused rows write:
            // `ScatterStageRun::run` checked the destination and the indices, and `updates` is
            // the chain's data, which `launch_scattering` checked against the chain's data
            // layout, where `k` reads the slices' rows).
            let queued = unsafe { k.queue(client, updates, indices, data) };
            self.verified.wait_unless_seen(client, k.tag(), queued)
        })
    }

    /// Under `error`, every index checked before anything is written: on the device where
    /// `check` has the read (packed indices; read back only to name a bad one), else on the host.
    fn check_on_device(
        &self,
        client: &Client,
        check: Option<(IndexRead, u32)>,
        indices: &Handle,
    ) -> Result<(), Error> {
        let plan = self.plan()?;
        if plan.out_of_range != OutOfRange::Error {
            return Ok(());
        }
        let flagged = match check {
            Some((read, count)) => launch::exclusive(|| {
                // SAFETY: the indices buffer was checked against their packed layout of
                // `count` indices before this call: by `launch` (`check_handle`), or on a
                // chain's fused rows write by `ScatterStageRun::run` (`check_handle` against
                // `op.buffer_bytes(Operand::Indices)`).
                let queued = unsafe { scatter_lines::queue_check(client, read, count, indices) };
                Ok::<_, Error>(launch::wait_all(client, vec![queued], vec![])?.0)
            })?,
            None => true,
        };
        if flagged {
            check_indices(&plan.map, &read_indices::<I>(client, indices, &plan.map.indices)?)?;
            if check.is_some() {
                // The device flagged an index the host finds in range: nothing is written.
                return Err(Error::Device(
                    "the index check flagged an out-of-range index, but the host found none".into(),
                ));
            }
        }
        Ok(())
    }
}
