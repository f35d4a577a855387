//! The scatter op (`scatter!`, `scatter_elements!`, `scatter_nd!`): the runs each index
//! position writes are grouped on the host (`ScatterPlan::group`, in the indices' row-major
//! order), then one kernel applies every run's list (see `kernels::scatter`). Where the
//! kernels can read the indices on the device themselves, nothing is grouped
//! ([`super::scatter_on_device`]); on GPUs, where the runs lie back to back, the device groups
//! them (`kernels::scatter_grouping`).

use super::{check_len, check_type, leading_count, Op, ScatterKind};
use crate::device::{with_client, Device};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::kernels::word_bytes;
use crate::kernels::{OnDevice, ScatterKernel};
use crate::launch;
use crate::tensor::Tensor;
use cubecl::prelude::*;
use cubecl::server::Handle;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::OnceLock;
use stridex_core::kernel::ScatterKernelDesc;
use stridex_core::layout::next_coords;
use stridex_core::{Duplicates, Operand, OutOfRange, ScatterDesc, ScatterFault, ScatterGroups, TensorLayout};

/// A scatter checked against its rules: [`Op`] over the scatter kind. `scatter!`,
/// `scatter_elements!` and `scatter_nd!` build one at compile time; [`ScatterOp::new`] at run
/// time.
///
/// `run` returns the scattered copy of the data (ONNX's semantics); `launch` updates a device
/// buffer in place (a KV cache). Either way the result is bit for bit the serial reference's:
/// updates are applied in the indices' row-major order (under `none`, the last write wins;
/// reductions start from the data), whatever the device and its thread count.
///
/// What every op answers comes from [`Op`]: `plan`, `describe`, `output_shape` (the data's),
/// `kernel_source` (the kernel(s) `run` launches, writing the packed copy; `None`: the runs
/// are empty) and `buffer_bytes` (`Data`, `Indices`, `Updates`: each tensor's elements, in its
/// layout, rounded up to whole 32-bit words; `Output`: the packed copy `run` returns, which is
/// the data's layout where the data is packed). For a scatter whose indices lead with `_`,
/// `launch` and the indices' and updates' `buffer_bytes` need the count (`Err(CountNeeded)`):
/// use [`ScatterOp::launch_at`] and `buffer_bytes_at`; the data's and output's, and
/// `output_shape`, are the same at every count.
pub type ScatterOp<T, I> = Op<ScatterKind, T, I>;

impl<T: Element, I: IndexElement> ScatterOp<T, I> {
    /// Checks `desc` (the same rule functions the macros run) and the Rust types against it.
    pub fn new(desc: ScatterDesc) -> Result<Self, Error> {
        check_type::<T>(Operand::Data, desc.map.data.dtype)?;
        check_type::<T>(Operand::Updates, desc.updates.dtype)?;
        check_type::<I>(Operand::Indices, desc.map.indices.dtype)?;
        let op = Self::__from_checked(desc);
        op.plan()?;
        Ok(op)
    }

    /// This scatter with `count` written as its indices' and updates' leading size, when they
    /// lead with `_` (`None` for fixed sizes: this op serves). Its kernels are this op's (the
    /// `_` rules found them the same at every count but for their launch arguments, and the
    /// record of those seen to run is shared); the kernels that take the count, the owned-row
    /// pair, the line kernel (its lines' length), the device check and the grouping of a sum's
    /// lists on GPUs, take it as a launch argument.
    pub(crate) fn written(&self, count: usize) -> Result<Option<Self>, Error> {
        if !self.is_dynamic() {
            return Ok(None);
        }
        self.plan()?;
        let desc = stridex_core::dynamic::scatter_written(self.desc(), count);
        let op = Op { desc, prepared: OnceLock::new(), verified: self.verified.shared(), types: PhantomData };
        op.plan()?;
        Ok(Some(op))
    }

    /// This op as Burn's stream holds it until it runs: its plan and kernels, and its record
    /// of the kernels seen to run (shared, so an op at a count, [`ScatterOp::written`], keeps
    /// its `_` op's and waits on no first launch of its own). Nothing is kept past the run, so
    /// a `_` op applied at many counts keeps no op per count.
    #[cfg(feature = "burn")]
    pub(crate) fn kept(&self) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Op {
            desc: *self.desc(),
            prepared: self.prepared.clone(),
            verified: self.verified.shared(),
            types: PhantomData,
        })
    }

    /// [`ScatterOp::written`] at the count of an indices buffer of `len` elements.
    pub(crate) fn written_for(&self, len: usize) -> Result<Option<Self>, Error> {
        if !self.is_dynamic() {
            return Ok(None);
        }
        self.written(leading_count(Operand::Indices, &self.desc().map.indices, len)?)
    }

    /// Runs on the default device (see [`Device::default_device`]): the data with the updates
    /// scattered into it, packed in the data's sizes. When the indices' leading size is `_`,
    /// the count is the indices' length over the elements of one leading row (a partial row is
    /// an `Err`), and the updates' leading size is that count.
    pub fn run(&self, data: &[T], indices: &[I], updates: &[T]) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, data, indices, updates)
    }

    /// [`ScatterOp::run`] on `device`.
    pub fn run_on(
        &self,
        device: &Device,
        data: &[T],
        indices: &[I],
        updates: &[T],
    ) -> Result<Tensor<T>, Error> {
        if let Some(op) = self.written_for(indices.len())? {
            return op.run_on(device, data, indices, updates);
        }
        let plan = self.plan()?;
        check_len(Operand::Data, &plan.map.data, &self.desc.map.data, data.len())?;
        check_len(Operand::Indices, &plan.map.indices, &self.desc.map.indices, indices.len())?;
        check_len(Operand::Updates, &plan.updates, &self.desc.updates, updates.len())?;
        let output = plan.output;
        let packed: Cow<'_, [T]> = if plan.map.data.is_packed() {
            Cow::Borrowed(&data[..output.num_elements()])
        } else {
            Cow::Owned(packed_copy(&plan.map.data, data))
        };
        let grouped = match self.kernel()? {
            Some(ScatterKernel::OnDevice(k)) => {
                return self.run_on_device(device, k, &packed, indices, updates)
            }
            grouped => grouped,
        };
        // On GPUs the lists are made on the device (`launch` says why).
        if let Some(g) = self.grouping_on(&device.client, &output, false) {
            return self.run_on_device(device, &g, &packed, indices, updates);
        }
        // Grouping checks the indices (under `error`, `duplicates: error`) even where nothing
        // is written.
        let groups = self.group(indices, output)?.groups;
        let Some(k) = grouped.filter(|_| !groups.keys.is_empty()) else {
            return Ok(Tensor::from_bytes(&output, &T::bytes(&packed)));
        };
        let (out_bytes, updates_bytes) = (T::bytes(&packed), T::bytes(updates));
        let out_words = word_bytes(&output, plan.data_type().size()) / 4;
        let bytes = with_client!(device, c => {
            let (queued, dest) = launch::on_device_thread(c, || {
                let dest = launch::upload(c, &out_bytes, out_words);
                let updates = launch::upload(c, &updates_bytes, 0);
                // SAFETY: `groups` came from `group` on the packed output `dest` holds, and
                // the updates were checked against their layout. `k` moves 16- or 8-byte
                // vectors only where `ScatterPlan::runs_in_blocks` found every run whole,
                // block-aligned vectors in both buffers (`ScatterKernelDesc::of`), so no
                // vector load or store passes the end of `dest` or `updates`.
                (unsafe { queue(c, k, &groups, &updates, &dest) }, dest)
            })?;
            let (_, mut bytes) = launch::wait_all(c, queued, vec![dest])?;
            Ok::<_, Error>(bytes.remove(0))
        })?;
        Ok(Tensor::from_bytes(&output, &bytes))
    }

    /// Scatters into `data` in place, on buffers already on the device (`client` must be the
    /// one that made them), laid out as the descriptor says and each at least
    /// [`ScatterOp::buffer_bytes`] long. Mostly the indices are read back to group the runs on
    /// the host, so this waits for the device's earlier work; then it queues the kernel and
    /// returns (the first launch per runtime waits for it too, to confirm CubeCL built and ran
    /// it). A ScatterElements of many lines, whole rows along axis 0 under `none` (a KV
    /// cache) and, on GPUs, runs that lie back to back (an embedding's gradient, grouped on
    /// the device) read their indices on the device instead and queue without waiting (under
    /// `error`, after a check on the device; see docs/rules.md, `scatter-order`). A read of
    /// `data`, or the next launch, sees its writes. A scatter whose indices lead with `_`
    /// takes [`ScatterOp::launch_at`].
    pub fn launch(
        &self,
        client: &Client,
        data: &Handle,
        indices: &Handle,
        updates: &Handle,
    ) -> Result<(), Error> {
        if self.is_dynamic() {
            return Err(Error::CountNeeded { call: "launch" });
        }
        let plan = self.plan()?;
        for (tensor, handle) in
            [(Operand::Data, data), (Operand::Indices, indices), (Operand::Updates, updates)]
        {
            launch::check_handle(client, tensor, handle, self.buffer_bytes(tensor)?)?;
        }
        match ScatterKernel::writing(plan, &plan.map.data) {
            Some(ScatterKernel::OnDevice(k)) => {
                return self.launch_on_device(client, &k, data, indices, updates)
            }
            // On GPUs, where reading the indices back costs more than the kernels, they are
            // grouped where they are.
            Some(ScatterKernel::Grouped(_)) => {
                if let Some(g) = self.grouping_on(client, &plan.map.data, false) {
                    return self.launch_on_device(client, &g, data, indices, updates);
                }
            }
            None => {
                // Nothing is written, yet the indices are checked as `run` checks them.
                if plan.out_of_range == OutOfRange::Error || plan.duplicates == Duplicates::Error {
                    self.group_read_back(client, indices, plan.map.data)?;
                }
                return Ok(());
            }
        }
        let writes = self.group_read_back(client, indices, plan.map.data)?;
        self.launch_writes(client, &writes, updates, data)
    }

    /// [`ScatterOp::launch`] for `count` leading indices rows (and updates rows), when the
    /// indices' leading size is `_` (a KV cache's new tokens: each buffer at least
    /// [`Op::buffer_bytes_at`] for that count); the kernels compiled for one count serve every
    /// count. For fixed sizes, `count` is not read.
    pub fn launch_at(
        &self,
        client: &Client,
        count: usize,
        data: &Handle,
        indices: &Handle,
        updates: &Handle,
    ) -> Result<(), Error> {
        match self.written(count)? {
            Some(op) => op.launch(client, data, indices, updates),
            None => self.launch(client, data, indices, updates),
        }
    }

    /// The grouped kernel of this scatter writing `dest` with its lists grouped on the device,
    /// where `client`'s runtime groups there (`kernels::group_on_device`: GPUs) and the plan
    /// allows it (`OnDevice::grouped`, which says what `into_zeros` asks).
    pub(crate) fn grouping_on(
        &self,
        client: &Client,
        dest: &TensorLayout,
        into_zeros: bool,
    ) -> Option<OnDevice> {
        let plan = self.plan().ok()?;
        crate::kernels::group_on_device(client).then(|| OnDevice::grouped(plan, dest, into_zeros)).flatten()
    }

    /// [`ScatterOp::group`] on the values of an indices buffer on the device (read back: a
    /// round trip), laid out as the descriptor says.
    pub(crate) fn group_read_back(
        &self,
        client: &Client,
        indices: &Handle,
        dest: TensorLayout,
    ) -> Result<Writes, Error> {
        let values = super::read_indices::<I>(client, indices, &self.plan()?.map.indices)?;
        self.group(&values, dest)
    }

    /// The runs `values` (the indices buffer's elements) write in a buffer laid out as `dest`,
    /// grouped in the indices' row-major order; an index out of range under `error`, or a
    /// repeated destination under `duplicates: error`, is an `Err`.
    pub(crate) fn group(&self, values: &[I], dest: TensorLayout) -> Result<Writes, Error> {
        let plan = self.plan()?;
        // Every caller read a buffer checked to hold the indices; a short one is refused
        // here too, rather than read past.
        let needed = plan.map.indices.min_buffer_len().unwrap_or(usize::MAX);
        if values.len() < needed {
            return Err(Error::BufferTooShort { tensor: Operand::Indices, needed, given: values.len() });
        }
        let groups = plan.group(&dest, |i| values[i].value()).map_err(fault)?;
        Ok(Writes { dest, groups })
    }

    /// Applies `writes` to `dest` (a buffer laid out as `writes.dest`); `updates` is laid out
    /// as the descriptor says. Waits for the kernel unless it writes in place on a runtime
    /// where it was seen to run.
    pub(crate) fn launch_writes(
        &self,
        client: &Client,
        writes: &Writes,
        updates: &Handle,
        dest: &Handle,
    ) -> Result<(), Error> {
        launch::check_handle(client, Operand::Updates, updates, self.buffer_bytes(Operand::Updates)?)?;
        // SAFETY: `writes` came from `group`, so its members are runs of the updates' layout,
        // which `updates` was just checked to hold (a caller that moved them, through the
        // unsafe `members_mut`, launches with `launch_writes_from` instead).
        unsafe { self.launch_writes_from(client, writes, updates, dest, false) }
    }

    /// [`ScatterOp::launch_writes`] reading each member's update from `source`, unchecked
    /// (a chain that folds its gather into the lists reads the rows from its data); where
    /// `zero_members`, a member may be `ZERO_MEMBER`, an update of zeros.
    ///
    /// # Safety
    /// Every member of `writes` names a run that lies inside `source` (or is `ZERO_MEMBER`
    /// where `zero_members`: the kernel loads nothing for it).
    pub(crate) unsafe fn launch_writes_from(
        &self,
        client: &Client,
        writes: &Writes,
        source: &Handle,
        dest: &Handle,
        zero_members: bool,
    ) -> Result<(), Error> {
        let plan = self.plan()?;
        // Grouped runs take the grouped kernel, whatever `launch` would choose for `dest`.
        let Some(k) = ScatterKernelDesc::of(plan, &writes.dest)
            .map(|k| ScatterKernel::Grouped(ScatterKernelDesc { zero_members, ..k }))
        else {
            return Ok(());
        };
        if writes.groups.keys.is_empty() {
            return Ok(());
        }
        launch::check_handle(client, Operand::Data, dest, word_bytes(&writes.dest, plan.data_type().size()))?;
        // The kernel has no index to flag (the host checked them), so only its first launch
        // per runtime waits, to confirm CubeCL built and ran it (see `Verified`).
        let in_place = writes.dest == plan.map.data;
        launch::exclusive(|| {
            // SAFETY: (of the caller) every member is a run inside `source`.
            let queued = unsafe { queue(client, &k, &writes.groups, source, dest) };
            match in_place {
                true => self.verified.wait_unless_seen(client, k.tag(), queued),
                false => launch::wait_all(client, queued, vec![]).map(drop),
            }
        })
    }
}

#[cfg(feature = "burn")]
impl<T: Element, I: IndexElement> ScatterOp<T, I> {
    /// `writes` as the scatter-add into zeros takes them: in one kernel where
    /// `ScatterKernelDesc::summing_into_zeros` has one (a gather's gradient whose runs lie back
    /// to back: along axis 0, as an embedding's, or GatherND's leading tuples), else after a
    /// zero fill ([`ScatterOp::launch_writes`]).
    pub(crate) fn sum_into_zeros(&self, writes: Writes) -> SumIntoZeros {
        let Ok(plan) = self.plan() else { return SumIntoZeros::AfterZeroFill(writes) };
        let one_kernel =
            ScatterKernelDesc::summing_into_zeros(plan, &writes.dest).and_then(|(kernel, runs)| {
                Some((kernel, writes.groups.every_run(runs, plan.run_len() / plan.lanes())?))
            });
        match one_kernel {
            Some((kernel, every)) => SumIntoZeros::OneKernel(IntoZeros {
                kernel,
                members: writes.groups.members,
                every,
                dest: writes.dest,
            }),
            None => SumIntoZeros::AfterZeroFill(writes),
        }
    }

    /// The scatter into zeros of `zeros`' writes, on `dest`, a buffer laid out as
    /// [`IntoZeros::dest`] whose contents do not matter: the kernel writes every element (the
    /// runs no position writes as zeros) and reads none. `updates` is laid out as the
    /// descriptor says. Waits for the kernel as [`ScatterOp::launch_writes`] does.
    pub(crate) fn launch_into_zeros(
        &self,
        client: &Client,
        zeros: &IntoZeros,
        updates: &Handle,
        dest: &Handle,
    ) -> Result<(), Error> {
        let plan = self.plan()?;
        launch::check_handle(client, Operand::Updates, updates, self.buffer_bytes(Operand::Updates)?)?;
        launch::check_handle(client, Operand::Data, dest, word_bytes(&zeros.dest, plan.data_type().size()))?;
        let runs = zeros.every.len() - 1;
        if runs == 0 {
            return Ok(());
        }
        let k = ScatterKernel::Grouped(zeros.kernel.clone());
        launch::exclusive(|| {
            let list = |v: &[u32]| launch::upload(client, bytemuck::cast_slice(v), 0);
            let (every, members) = (list(&zeros.every), list(&zeros.members));
            // SAFETY: `sum_into_zeros` took the lists from `group` on this plan and `zeros.dest`,
            // and the kernel from `summing_into_zeros`: its `runs` runs lie back to back and
            // cover `zeros.dest` word for word, so run `g < runs` is in `dest` (checked to hold
            // the layout) and every member is a run of the updates (checked above). `every`
            // has `runs + 1` starts; the kernel reads no key.
            let queued =
                unsafe { k.queue_grouped(client, runs as u32, updates, [&every, &every, &members], dest) };
            self.verified.wait_unless_seen(client, k.tag(), queued)
        })
    }
}

#[cfg(feature = "burn")]
impl<T: Element, I: IndexElement> ScatterOp<T, I> {
    /// The kernel that sums this scatter's updates into zeros of its data in one pass, with
    /// its lists grouped on the device from the indices, where `client`'s runtime groups
    /// there (GPUs) and the plan allows both (`ScatterGroupingDesc::of`,
    /// `ScatterKernelDesc::summing_into_zeros`: a gather's gradient along axis 0).
    pub(crate) fn grouped_into_zeros(&self, client: &Client) -> Option<GroupedIntoZeros> {
        let plan = self.plan().ok()?;
        self.grouping_on(client, &plan.map.data, true).map(GroupedIntoZeros)
    }

    /// The sum into zeros of `zeros`, on `dest`, a buffer of the data's layout whose contents do
    /// not matter (the kernel writes every element and reads none), grouping `indices` on the
    /// device first. No index is checked: a gather's gradient runs after its forward call
    /// checked them (under `error`, the same indices; the grouping reads each as in range and
    /// bounds it by the axis), and under the other policies the read applies the policy as the
    /// forward did. `updates` and `indices` are laid out as the descriptor says. Waits
    /// as [`ScatterOp::launch_writes`] does.
    pub(crate) fn launch_grouped_into_zeros(
        &self,
        client: &Client,
        zeros: &GroupedIntoZeros,
        indices: &Handle,
        updates: &Handle,
        dest: &Handle,
    ) -> Result<(), Error> {
        let plan = self.plan()?;
        launch::check_handle(client, Operand::Indices, indices, self.buffer_bytes(Operand::Indices)?)?;
        launch::check_handle(client, Operand::Updates, updates, self.buffer_bytes(Operand::Updates)?)?;
        launch::check_handle(
            client,
            Operand::Data,
            dest,
            word_bytes(&plan.map.data, plan.data_type().size()),
        )?;
        let k = &zeros.0;
        launch::exclusive(|| {
            // SAFETY: `grouped_into_zeros` made the kernels for this plan writing the data's
            // layout, which `dest` was checked to hold; its runs, back to back, cover it word for
            // word (`summing_into_zeros`), so every word is written. The indices and updates were
            // checked against their layouts above.
            let queued = unsafe { k.queue(client, updates, indices, dest) };
            self.verified.wait_unless_seen(client, k.tag(), queued)
        })
    }
}

/// A gather's gradient in one kernel, its lists grouped on the device
/// ([`ScatterOp::grouped_into_zeros`]).
#[cfg(feature = "burn")]
#[derive(Clone, Debug)]
pub(crate) struct GroupedIntoZeros(OnDevice);

/// How a scatter-add into zeros runs ([`ScatterOp::sum_into_zeros`]).
#[cfg(feature = "burn")]
#[derive(Debug)]
pub(crate) enum SumIntoZeros {
    /// One kernel writes the whole destination ([`ScatterOp::launch_into_zeros`]).
    OneKernel(IntoZeros),
    /// Zeros filled first, then [`ScatterOp::launch_writes`] on them.
    AfterZeroFill(Writes),
}

/// A scatter's writes as the scatter into zeros takes them ([`ScatterOp::sum_into_zeros`]): each
/// run's list of updates, for every run of the layout written, in order.
#[cfg(feature = "burn")]
#[derive(Debug)]
pub(crate) struct IntoZeros {
    /// `ScatterKernelDesc::summing_into_zeros`'s kernel for this plan and `dest`.
    kernel: ScatterKernelDesc,
    dest: TensorLayout,
    /// `ScatterGroups::every_run`'s starts: run `g`'s list is `members[every[g]..every[g + 1]]`.
    every: Vec<u32>,
    members: Vec<u32>,
}

#[cfg(feature = "burn")]
impl IntoZeros {
    /// The layout written (the data's, packed).
    pub(crate) fn dest(&self) -> &TensorLayout {
        &self.dest
    }
}

/// A scatter's writes into one layout: the runs each index position writes, grouped by
/// [`ScatterOp::group`] (for `launch_writes`, which may trust them).
#[derive(Debug)]
pub(crate) struct Writes {
    dest: TensorLayout,
    groups: ScatterGroups,
}

impl Writes {
    /// The layout written.
    #[cfg_attr(not(feature = "burn"), allow(dead_code))]
    pub(crate) fn dest(&self) -> &TensorLayout {
        &self.dest
    }

    /// Each listed position's first updates unit (see `ScatterGroups::members`), for a caller
    /// that moves them to where the updates lie (`GatheredRows::fold`).
    ///
    /// # Safety
    /// [`ScatterOp::launch_writes`] reads each member's run from the updates buffer it checked
    /// against the plan's updates layout: once a member is moved elsewhere (into a chain's data,
    /// or `ZERO_MEMBER`), these writes may go only to [`ScatterOp::launch_writes_from`], with a
    /// source that holds every run they name.
    pub(crate) unsafe fn members_mut(&mut self) -> &mut [u32] {
        &mut self.groups.members
    }
}

/// Uploads the runs' lists and queues the grouped kernel on them.
///
/// # Safety
/// `groups` came from `ScatterPlan::group` on the plan `k` was made of and on the layout `dest`
/// holds (the packed output `run` uploaded, or a buffer `launch_writes_from` checked against
/// that layout's length), so every key is a run of `dest`; every member is a run inside
/// `updates` (checked against the updates' layout, or moved into the data by a fold), or
/// `ZERO_MEMBER` where `k` takes it as zeros (`zero_members`: nothing is loaded for it).
unsafe fn queue(
    client: &Client,
    k: &ScatterKernel,
    groups: &ScatterGroups,
    updates: &Handle,
    dest: &Handle,
) -> Vec<launch::Queued> {
    let list = |v: &[u32]| launch::upload(client, bytemuck::cast_slice(v), 0);
    let (keys, starts, members) = (list(&groups.keys), list(&groups.starts), list(&groups.members));
    // SAFETY: (of the caller) keys and members are in-bounds runs; `keys` holds one word per
    // run.
    unsafe { k.queue_grouped(client, groups.keys.len() as u32, updates, [&keys, &starts, &members], dest) }
}

pub(crate) fn fault(f: ScatterFault) -> Error {
    match f {
        ScatterFault::OutOfRange { position, value, axis_size } => {
            Error::IndexOutOfRange { position, value, axis_size }
        }
        ScatterFault::Duplicate { first, second } => Error::DuplicateIndex { first, second },
    }
}

/// The elements of `layout` in `data`, packed row-major.
fn packed_copy<T: Copy>(layout: &TensorLayout, data: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(layout.num_elements());
    if layout.is_empty() {
        return out;
    }
    let mut c = vec![0; layout.rank()];
    loop {
        out.push(data[layout.offset(&c)]);
        if !next_coords(&mut c, &layout.sizes) {
            return out;
        }
    }
}
