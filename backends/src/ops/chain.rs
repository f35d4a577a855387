//! A chain of gathers and slices (and last, a convert or a scatter) as one op: fused into one row-walk kernel where
//! [`ChainKernelDesc`] can lower it, else run stage by stage on the device (intermediates stay
//! on the device; only the result comes back). Its index buffers (one per
//! gather, in stage order), and the `error` policy checked on the host before a launch.

use super::error_policy::{check_error_policies, check_read_back, checked_gathers, in_stage};
use super::{
    check_len, check_type, leading_count, ChainKind, IndexBuffer, IndexBuffers, IndexTypes, IntoSlice,
    NewTensor, Op, ScatterOp, Sink,
};
use crate::device::Device;
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::kernels::{ChainKernel, OnDevice};
use crate::launch;
use crate::tensor::Tensor;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{GatheredRows, ScatterRowsDesc};
use stridex_core::{
    ChainCount, ChainDesc, ChainPlan, DType, IndexType, Operand, RuleError, ScatterDesc, StageDesc,
};

/// A chain of gathers and slices checked stage by stage, run as one kernel where it fuses.
/// `chain!` builds one at compile time; [`ChainOp::new`] (or `Chain`'s builder) at run time.
/// `T` is the data's element type, `I` the tuple of the gathers' index types in stage order,
/// and `O` the result's element type: `T`, or the type a final `convert` stage writes.
pub type ChainOp<T, I, O = T> = Op<ChainKind<O>, T, I>;

impl<T: Element, I: IndexTypes, O: Element> ChainOp<T, I, O> {
    /// Checks `desc` (every stage with the rules of its rule set) and the Rust types against it.
    pub fn new(desc: ChainDesc) -> Result<Self, Error> {
        check_type::<T>(Operand::Data, desc.data.dtype)?;
        let declared: Vec<DType> = desc.index_dtypes();
        if declared != I::DTYPES {
            return Err(Error::IndexTypes { declared, used: I::DTYPES.to_vec() });
        }
        let op = Self::__from_checked(desc);
        check_type::<O>(Operand::Output, op.plan()?.output_type())?;
        Ok(op)
    }

    /// Whether the chain runs as one kernel. A chain runs stage by stage (intermediates on the
    /// device) when an intermediate tensor is empty, or when its output rows are not whole
    /// 32-bit words (1- and 2-byte elements in an odd innermost size). A chain that ends in a
    /// scatter is fused when no intermediate is written: its slices before a write of whole
    /// rows read in place (`ScatterRowsDesc::of_chain`; the write is still its claim and write
    /// kernels), a gather of rows folded into the lists of a grouped scatter
    /// (`GatheredRows::of_chain`), or a scatter alone. This is the form the descriptor compiles,
    /// the same on every device: on GPUs a gather folded into a grouped scatter runs as its two
    /// stages all the same, which measured faster there (`docs/rules.md`, `chain-scatter`),
    /// and [`crate::Op::kernel_source`] under `STRIDEX_TILE=spread` shows those stages.
    pub fn is_fused(&self) -> Result<bool, Error> {
        Ok(match self.kernel()? {
            Some(ChainKernel::Fused(_)) => true,
            Some(ChainKernel::Scattering { before, .. }) => before.is_none(),
            _ => false,
        })
    }

    /// Runs on the default device (see [`Device::default_device`]). `indices` are the gathers'
    /// index buffers in stage order, as a tuple: `()`, `(&ids,)`, `(&ids, &cols)`.
    pub fn run<'a>(&self, data: &[T], indices: impl IndexBuffers<'a, I>) -> Result<Tensor<O>, Error> {
        self.run_on(Device::default_device()?, data, indices)
    }

    pub fn run_on<'a>(
        &self,
        device: &Device,
        data: &[T],
        indices: impl IndexBuffers<'a, I>,
    ) -> Result<Tensor<O>, Error> {
        self.run_buffers(device, data, indices.buffers(), NewTensor)
    }

    /// [`ChainOp::run`] into `out`, which holds exactly the output's buffer; see
    /// [`crate::GatherOp::run_into`]. For a chain that ends in a scatter, `out` holds the
    /// destination (`into`, in its layout) and is updated in place; `run` has no destination
    /// for it ([`Error::DestinationNeeded`]).
    pub fn run_into<'a>(
        &self,
        data: &[T],
        indices: impl IndexBuffers<'a, I>,
        out: &mut [O],
    ) -> Result<(), Error> {
        self.run_into_on(Device::default_device()?, data, indices, out)
    }

    /// [`ChainOp::run_into`] on `device`.
    pub fn run_into_on<'a>(
        &self,
        device: &Device,
        data: &[T],
        indices: impl IndexBuffers<'a, I>,
        out: &mut [O],
    ) -> Result<(), Error> {
        self.run_buffers(device, data, indices.buffers(), IntoSlice(out))
    }

    /// `run_on` with the index buffers' types erased (checked against the plan's), into `sink`.
    pub(super) fn run_buffers<S: Sink<O>>(
        &self,
        device: &Device,
        data: &[T],
        indices: Vec<IndexBuffer<'_>>,
        sink: S,
    ) -> Result<S::Out, Error> {
        if self.plan()?.scatter().is_some() {
            return self.run_scattering(device, data, indices, sink);
        }
        let lens: Vec<usize> = indices.iter().map(|b| b.len).collect();
        let (plan, kernel) = self.at(self.count_of(data.len(), &lens)?, "run")?;
        self.check_host_buffers(&plan, data.len(), &indices, &sink)?;
        let Some(kernel) = kernel.as_deref() else {
            return sink.finish(&plan.output, &[]);
        };
        let data = T::bytes(data);
        let mut inputs: Vec<&[u8]> = vec![&data];
        inputs.extend(indices.iter().map(|b| &*b.bytes));
        let (_, bytes) = self.run_bytes(device, &plan, kernel, &inputs)?;
        sink.finish(&plan.output, &bytes)
    }

    /// Bytes the index buffer of the chain's `gather`-th gather (0-based, stage order) needs;
    /// one past the last gather, a final scatter stage's indices.
    pub fn index_buffer_bytes(&self, gather: usize) -> Result<usize, Error> {
        Self::index_bytes_of(&self.at(None, "index_buffer_bytes")?.0, gather)
    }

    /// [`ChainOp::index_buffer_bytes`] for a `_` count of `count`.
    pub fn index_buffer_bytes_at(&self, count: usize, gather: usize) -> Result<usize, Error> {
        Self::index_bytes_of(&self.at(Some(count), "index_buffer_bytes_at")?.0, gather)
    }

    /// Launches on buffers already on the device (`client` must be the one that made them):
    /// `data` laid out as the descriptor says and the gathers' index buffers in stage order,
    /// each at least its `buffer_bytes` / `index_buffer_bytes` long. Under the `error` policy
    /// the index buffers of those gathers are read back and checked before anything is queued
    /// (so an index out of range is an `Err` naming its stage, and no kernel ran). A staged
    /// chain allocates its intermediates on `client`. A chain that ends in a scatter writes
    /// `output`, its destination laid out as `into` says, in place: its last index buffer is
    /// the scatter's, checked as `ScatterOp::launch` checks it.
    pub fn launch(
        &self,
        client: &Client,
        data: &Handle,
        indices: &[&Handle],
        output: &Handle,
    ) -> Result<(), Error> {
        if self.plan()?.scatter().is_some() {
            let (plan, kernel) = self.at(None, "launch")?;
            return self.launch_scattering(client, None, (&plan, kernel.as_deref()), data, indices, output);
        }
        launch::exclusive(|| self.launch_locked(client, None, data, indices, output, false))
    }

    /// [`ChainOp::launch`] for a `_` count of `count` (buffers of at least
    /// [`Op::buffer_bytes_at`] / [`ChainOp::index_buffer_bytes_at`] for that count); one
    /// compiled kernel serves every count. For fixed sizes, `count` is not read.
    pub fn launch_at(
        &self,
        client: &Client,
        count: usize,
        data: &Handle,
        indices: &[&Handle],
        output: &Handle,
    ) -> Result<(), Error> {
        if self.plan()?.scatter().is_some() {
            let (plan, kernel) = self.at(Some(count), "launch_at")?;
            let at = (&*plan, kernel.as_deref());
            return self.launch_scattering(client, Some(count), at, data, indices, output);
        }
        launch::exclusive(|| self.launch_locked(client, Some(count), data, indices, output, false))
    }

    /// A host run's buffers against `plan` (the op's, or a `_` op's at its count): the data's
    /// length, one index buffer per gather (then the scatter's) of its layout's length, the
    /// sink's, and the indices of every `error`-policy gather, checked on the host.
    fn check_host_buffers<S: Sink<O>>(
        &self,
        plan: &ChainPlan,
        data_len: usize,
        indices: &[IndexBuffer<'_>],
        sink: &S,
    ) -> Result<(), Error> {
        check_len(Operand::Data, &plan.data, &self.desc().data, data_len)?;
        let expected = plan.index_tensors();
        if indices.len() != expected {
            return Err(Error::IndexBufferCount { expected, given: indices.len() });
        }
        for (((stage, g), buffer), decl) in plan.gathers().zip(indices).zip(self.desc().gathers()) {
            check_len(Operand::Indices, &g.indices, &decl.indices, buffer.len)
                .map_err(|e| in_stage(stage, e))?;
        }
        if let (Some((stage, s)), Some(decl), Some(buffer)) =
            (plan.scatter(), self.desc().scatter(), indices.last())
        {
            check_len(Operand::Indices, &s.map.indices, &decl.indices, buffer.len)
                .map_err(|e| in_stage(stage, e))?;
        }
        sink.check(&plan.output)?;
        check_error_policies(plan, |g| &indices[g])
    }

    /// `run_into` of a chain that ends in a scatter: the sink's values are the destination,
    /// uploaded, updated in place by [`ChainOp::launch_scattering`] and read back.
    fn run_scattering<S: Sink<O>>(
        &self,
        device: &Device,
        data: &[T],
        indices: Vec<IndexBuffer<'_>>,
        sink: S,
    ) -> Result<S::Out, Error> {
        let Some(dest) = sink.destination() else { return Err(Error::DestinationNeeded { call: "run" }) };
        let lens: Vec<usize> = indices.iter().map(|b| b.len).collect();
        let count = self.count_of(data.len(), &lens)?;
        let (plan, kernel) = self.at(count, "run")?;
        self.check_host_buffers(&plan, data.len(), &indices, &sink)?;
        let bytes = |t| Self::bytes(&plan, kernel.as_deref(), t);
        let (data_words, out_words) = (bytes(Operand::Data) / 4, bytes(Operand::Output) / 4);
        let client = device.client();
        let out = device.on_stream(|| {
            let d = launch::upload(client, &T::bytes(data), data_words);
            let ix: Vec<Handle> = indices.iter().map(|b| launch::upload(client, &b.bytes, 0)).collect();
            let out = launch::upload(client, &dest, out_words);
            let at = (&*plan, kernel.as_deref());
            self.launch_scattering(client, count, at, &d, &ix.iter().collect::<Vec<_>>(), &out)?;
            launch::exclusive(|| launch::read(client, out))
        })?;
        sink.finish(&plan.output, &out)
    }

    /// `launch` of a chain that ends in a scatter: the stages before it (one op of their own,
    /// fused where they fuse) write the updates into an intermediate buffer (the data is the
    /// updates where the scatter is the only stage), then the scatter writes them into
    /// `output`, the destination, in place, with everything `ScatterOp::launch` does (its
    /// index checks, the kernels that read the indices on the device where they apply). With
    /// a `_` count, both run at `count` (nothing runs at 0), each op kept once for every count;
    /// `(plan, kernel)` are the chain's at that count (`Op::at`, planned once by the caller).
    fn launch_scattering(
        &self,
        client: &Client,
        count: Option<usize>,
        (plan, kernel): (&ChainPlan, Option<&ChainKernel>),
        data: &Handle,
        indices: &[&Handle],
        output: &Handle,
    ) -> Result<(), Error> {
        let call = if count.is_some() { "launch_at" } else { "launch" };
        let bytes = |t| Self::bytes(plan, kernel, t);
        let expected = plan.index_tensors();
        let (Some((stage, s)), Some((scatter_indices, before_indices))) =
            (plan.scatter(), indices.split_last())
        else {
            return Err(Error::IndexBufferCount { expected, given: indices.len() });
        };
        if indices.len() != expected {
            return Err(Error::IndexBufferCount { expected, given: indices.len() });
        }
        // The chain's buffers under the chain's names (the inner ops check them again, as their
        // own data, updates and indices, which then holds).
        launch::check_handle(client, Operand::Data, data, bytes(Operand::Data))?;
        launch::check_handle(client, Operand::Output, output, bytes(Operand::Output))?;
        launch::check_handle(
            client,
            Operand::Indices,
            scatter_indices,
            Self::index_bytes_of(plan, expected - 1)?,
        )
        .map_err(|e| in_stage(stage, e))?;
        // The single scatter, kept once: a `_` one (its sizes the op's, at the placeholder),
        // run at `count` (`ScatterOp::written`).
        let mut desc =
            self.desc().scatter_desc(self.plan()?).ok_or(Error::DestinationNeeded { call: "launch" })?;
        desc.map.dynamic_leading = self.is_dynamic();
        let (dest, at) = (output, *scatter_indices);
        let intermediate;
        let updates = if let Some(k) = ScatterRowsDesc::of_chain(plan) {
            // Fused: slices, then whole rows written at their slots, read from the data itself.
            Updates::SlicedRows(k)
        } else if let (Some(f), [gather_indices], false) =
            (GatheredRows::of_chain(plan), before_indices, crate::kernels::tile_spread(client))
        {
            // Fused: the gather folded into the scatter's lists, which read the rows in place.
            // Not on GPUs: on an H200 the fused MoE combine took 2.4 to 3.4x as long as its two
            // stages, whether those grouped on the device or on the host (bench/RESULTS-cuda.md),
            // so the gather runs first there. On lavapipe the fused form is 1.7x faster.
            launch::check_handle(client, Operand::Indices, gather_indices, Self::index_bytes_of(plan, 0)?)
                .map_err(|e| in_stage(1, e))?;
            Updates::GatheredRows(f, gather_indices)
        } else if let Some(before) = self.desc().before_scatter() {
            let op: std::sync::Arc<ChainOp<T, (), T>> =
                super::shared(&before, || ChainOp::__from_checked(before.clone()));
            let (before_plan, before_kernel) = op.at(count, call)?;
            let bytes = ChainOp::<T, (), T>::bytes(&before_plan, before_kernel.as_deref(), Operand::Output);
            intermediate = client.empty(bytes.max(4));
            launch::exclusive(|| {
                op.launch_locked(client, count, data, before_indices, &intermediate, false)
            })?;
            Updates::Buffer(&intermediate)
        } else {
            Updates::Buffer(data)
        };
        // A count of 0 scatters no position (`chain_at` empties them); the stages before ran
        // for their checks (under `error`, their fixed indices), writing nothing.
        if count == Some(0) && self.is_dynamic() {
            return Ok(());
        }
        let scatter = ScatterStageRun { plan, stage, desc, count, client, dest, indices: at, data };
        match s.map.index_type {
            IndexType::I32 => scatter.run::<T, i32>(updates),
            IndexType::I64 => scatter.run::<T, i64>(updates),
            IndexType::U32 => scatter.run::<T, u32>(updates),
            IndexType::U64 => scatter.run::<T, u64>(updates),
        }
    }
}

/// Where a chain's scatter stage reads its updates.
enum Updates<'a> {
    /// A buffer of them, packed: the output of the stages before it, or the data itself where
    /// the scatter is the only stage. The scatter runs as its single op would.
    Buffer(&'a Handle),
    /// Rows of the data where the slices before it put them (`ScatterRowsDesc::of_chain`).
    SlicedRows(ScatterRowsDesc),
    /// Rows of the data the gather before it picks, by the gather's indices on the device
    /// (`GatheredRows::of_chain`).
    GatheredRows(GatheredRows, &'a Handle),
}

/// A chain's scatter stage (stage `stage`) as the single scatter `desc`, kept for reuse
/// (so its first launch per runtime is the one that waits), on the chain's buffers: `dest`,
/// its `indices`, and the chain's `data`.
struct ScatterStageRun<'a> {
    plan: &'a ChainPlan,
    stage: usize,
    desc: ScatterDesc,
    /// A `_` chain's count: the kept scatter (a `_` one) runs at it.
    count: Option<usize>,
    client: &'a Client,
    dest: &'a Handle,
    indices: &'a Handle,
    data: &'a Handle,
}

impl ScatterStageRun<'_> {
    /// Runs the scatter on `updates`; its errors are the stage's, and a gather's folded into it
    /// are stage 1's.
    fn run<T: Element, J: IndexElement>(self, updates: Updates<'_>) -> Result<(), Error> {
        let ScatterStageRun { plan, stage, desc, count, client, dest, indices, data } = self;
        let kept: std::sync::Arc<ScatterOp<T, J>> = super::shared(&desc, || ScatterOp::__from_checked(desc));
        let staged = |e| in_stage(stage, e);
        let written = match count {
            Some(count) => kept.written(count).map_err(staged)?,
            None => None,
        };
        let op = written.as_ref().unwrap_or(&kept);
        match updates {
            Updates::Buffer(updates) => op.launch(client, dest, indices, updates).map_err(staged),
            Updates::SlicedRows(k) => {
                launch::check_handle(client, Operand::Output, dest, op.buffer_bytes(Operand::Data)?)
                    .map_err(staged)?;
                launch::check_handle(client, Operand::Indices, indices, op.buffer_bytes(Operand::Indices)?)
                    .map_err(staged)?;
                // `k` reads rows inside the chain's data (each is a slice window's, which the
                // slice rules keep inside its input; `data` was checked against the chain's
                // data), and writes the destination as `ScatterRowsDesc::of` on the scatter's
                // plan would.
                op.launch_on_device(client, &OnDevice::Rows(k), dest, indices, data).map_err(staged)
            }
            Updates::GatheredRows(f, gather_indices) => {
                gathered_rows(plan, stage, op, &f, client, [dest, indices, gather_indices, data])
            }
        }
    }
}

/// A fused gather-then-scatter chain (`GatheredRows::of_chain`): both index buffers read back
/// in one round trip, the gather's checked under `error` (stage 1 fails first, as run stage
/// by stage), the scatter's grouped as its op groups them, then each member moved to its
/// gathered row in `data` and the grouped kernel run on the data itself. An error of the
/// gather's is stage 1's, the others the scatter's (stage `stage`).
fn gathered_rows<T: Element, J: IndexElement>(
    plan: &ChainPlan,
    stage: usize,
    op: &ScatterOp<T, J>,
    f: &GatheredRows,
    client: &Client,
    [dest, indices, gather_indices, data]: [&Handle; 4],
) -> Result<(), Error> {
    let staged = |e| in_stage(stage, e);
    let s = op.plan()?;
    launch::check_handle(client, Operand::Indices, indices, op.buffer_bytes(Operand::Indices)?)
        .map_err(staged)?;
    let read = launch::exclusive(|| launch::read_all(client, vec![gather_indices.clone(), indices.clone()]))
        .map_err(staged)?;
    let checked = checked_gathers(plan);
    if !checked.is_empty() {
        // Its error names the gather's stage.
        check_read_back(plan, &checked, &read[..1])?;
    }
    let Some((_, g)) = plan.gathers().next() else { return Err(Error::DestinationNeeded { call: "launch" }) };
    let gathered = super::index_buffers::erased(g.index_type.dtype(), &read[0]);
    let values = super::index_values::<J>(&read[1], &s.map.indices);
    let mut writes = op.group(&values, s.map.data).map_err(staged)?;
    // Every gather index is in range (checked above under `error`), clamped into it, or (under
    // `zero`) out of range and an update of zeros.
    // SAFETY: the moved writes go to `launch_writes_from` below, with the data as their source.
    let members = unsafe { writes.members_mut() };
    f.fold(members, |p| gathered.value(p)).map_err(|(p, value)| {
        in_stage(1, Error::IndexOutOfRange { position: vec![p], value, axis_size: f.axis_size() })
    })?;
    // SAFETY: each member now names data row `g[p]`, normalized into the gather's axis, whose
    // run lies in the data's span (`GatheredRows::of_chain`: rows packed as the updates'),
    // or is `ZERO_MEMBER` where the kernel takes it as zeros (`f.kernel.zero_members`), and
    // `data` was checked against the chain's data.
    unsafe { op.launch_writes_from(client, &writes, data, dest, f.kernel.zero_members) }.map_err(staged)
}

impl<T, I, O: 'static> ChainOp<T, I, O> {
    /// The count of a `_` chain from the length of the buffer that carries it (`None` for fixed
    /// sizes): the data's, or the index buffer of its gather (`indices`, in gather order).
    pub(crate) fn count_of(&self, data: usize, indices: &[usize]) -> Result<Option<usize>, Error> {
        // The rules first: they put the count on the data or on a gather's indices.
        self.plan()?;
        let desc = self.desc();
        match desc.dynamic_leading {
            None => Ok(None),
            Some(ChainCount::Data) => leading_count(Operand::Data, &desc.data, data).map(Some),
            Some(ChainCount::Indices { stage }) => {
                let g = desc.stages[..stage - 1].iter().filter(|s| matches!(s, StageDesc::Gather(_))).count();
                let Some(StageDesc::Gather(decl)) = desc.stages.get(stage - 1) else {
                    return Err(Error::Rule(RuleError::Dynamic {
                        fault: stridex_core::DynamicFault::NoGatherAt { stage },
                        at: stridex_core::Location::Chain,
                    }));
                };
                let given = *indices.get(g).ok_or(Error::IndexBufferCount {
                    expected: desc.gathers().count(),
                    given: indices.len(),
                })?;
                leading_count(Operand::Indices, &decl.indices, given)
                    .map(Some)
                    .map_err(|e| in_stage(stage, e))
            }
        }
    }

    pub(crate) fn index_bytes_of(plan: &ChainPlan, gather: usize) -> Result<usize, Error> {
        let count = plan.gathers().count();
        if let (true, Some((_, s))) = (gather == count, plan.scatter()) {
            return Ok(crate::kernels::index_bytes(&s.map));
        }
        let (_, g) = plan
            .gathers()
            .nth(gather)
            .ok_or_else(|| Error::IndexBufferCount { expected: count, given: gather.saturating_add(1) })?;
        Ok(crate::kernels::index_bytes(g))
    }

    /// [`ChainOp::launch`] for a caller that holds stridex's device lock; waits for the kernels
    /// when `wait` (or on the first launch on a runtime). Depends on the plan only, not on `I`
    /// (the test-support runs use it with erased types).
    pub(super) fn launch_locked(
        &self,
        client: &Client,
        count: Option<usize>,
        data: &Handle,
        indices: &[&Handle],
        output: &Handle,
        wait: bool,
    ) -> Result<(), Error> {
        let (plan, kernel) = self.at(count, if count.is_some() { "launch_at" } else { "launch" })?;
        if plan.scatter().is_some() {
            // Its scatter stage needs the element type (`launch_scattering`).
            return Err(Error::DestinationNeeded { call: "launch_locked" });
        }
        let n = plan.gathers().count();
        if indices.len() != n {
            return Err(Error::IndexBufferCount { expected: n, given: indices.len() });
        }
        let bytes = |t| Self::bytes(&plan, kernel.as_deref(), t);
        launch::check_handle(client, Operand::Data, data, bytes(Operand::Data))?;
        for (g, (&(stage, _), h)) in plan.gathers().collect::<Vec<_>>().iter().zip(indices).enumerate() {
            launch::check_handle(client, Operand::Indices, h, Self::index_bytes_of(&plan, g)?)
                .map_err(|e| in_stage(stage, e))?;
        }
        launch::check_handle(client, Operand::Output, output, bytes(Operand::Output))?;
        let checked = checked_gathers(&plan);
        if !checked.is_empty() {
            let handles = checked.iter().map(|&g| indices[g].clone()).collect();
            check_read_back(&plan, &checked, &launch::read_all(client, handles)?)?;
        }
        // An empty result launches nothing (its error-policy indices were still checked).
        let Some(kernel) = kernel.as_deref() else { return Ok(()) };
        let mut inputs = vec![(Operand::Data, data, bytes(Operand::Data))];
        inputs.extend(indices.iter().map(|&h| (Operand::Indices, h, 0)));
        self.queue_checked(client, kernel, &inputs, (output, bytes(Operand::Output)), wait)?;
        Ok(())
    }
}
