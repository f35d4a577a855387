//! A chain of gathers and slices as one op: fused into one row-walk kernel where
//! [`ChainKernelDesc`] can lower it, else run stage by stage on the device (intermediates stay
//! on the device; only the result comes back).

use super::{
    check_len, check_type, has_gaps, leading_count, prepare, walk_at, word_bytes, Cell, Prepared, Verified,
};
use crate::device::{with_client, Device};
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::launch::{self, Queue, Queued};
use crate::tensor::Tensor;
use cubecl::prelude::*;
use cubecl::server::Handle;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::OnceLock;
use stridex_core::kernel::{GatherKernelDesc, SliceKernelDesc, Walk};
use stridex_core::layout::next_coords;
use stridex_core::{
    ChainCount, ChainDesc, ChainKernelDesc, ChainPlan, DType, GatherPlan, Operand, OutOfRange, RuleError,
    StageDesc, StagePlan, TensorLayout,
};

/// The index types of a chain's gathers, in stage order: `()`, `(I0,)`, `(I0, I1)`, ... up to
/// four (the most gathers a chain has).
pub trait IndexTypes: 'static {
    const DTYPES: &'static [DType];
}

/// A chain's index buffers on the host, in stage order: `()`, `(&ids,)`, `(&ids, &cols)`, ...
/// where each is anything that derefs to a slice of its index type (`&Vec<i64>`, `&[i32]`,
/// `&[u32; 4]`).
pub trait IndexBuffers<'a, I: IndexTypes> {
    #[doc(hidden)]
    fn buffers(self) -> Vec<IndexBuffer<'a>>;
}

/// One index buffer with its type erased (its bytes, and how to read a value back).
#[doc(hidden)]
pub struct IndexBuffer<'a> {
    bytes: Cow<'a, [u8]>,
    pub(super) len: usize,
    width: usize,
    value: fn(&[u8]) -> i128,
}

impl<'a> IndexBuffer<'a> {
    fn of<I: IndexElement>(values: &'a [I]) -> IndexBuffer<'a> {
        IndexBuffer {
            bytes: I::bytes(values),
            len: values.len(),
            width: I::DTYPE.size(),
            value: |b| I::from_bytes(b)[0].value(),
        }
    }

    fn value(&self, i: usize) -> i128 {
        (self.value)(&self.bytes[i * self.width..(i + 1) * self.width])
    }
}

impl IndexTypes for () {
    const DTYPES: &'static [DType] = &[];
}

impl IndexBuffers<'_, ()> for () {
    fn buffers(self) -> Vec<IndexBuffer<'static>> {
        Vec::new()
    }
}

macro_rules! index_tuples {
    ($(($($i:ident $a:ident $n:tt),+))*) => {$(
        impl<$($i: IndexElement),+> IndexTypes for ($($i,)+) {
            const DTYPES: &'static [DType] = &[$($i::DTYPE),+];
        }

        impl<'a, $($i: IndexElement, $a: AsRef<[$i]> + ?Sized),+> IndexBuffers<'a, ($($i,)+)> for ($(&'a $a,)+) {
            fn buffers(self) -> Vec<IndexBuffer<'a>> {
                vec![$(IndexBuffer::of::<$i>(self.$n.as_ref())),+]
            }
        }
    )*};
}

index_tuples! {
    (I0 A0 0)
    (I0 A0 0, I1 A1 1)
    (I0 A0 0, I1 A1 1, I2 A2 2)
    (I0 A0 0, I1 A1 1, I2 A2 2, I3 A3 3)
}

/// How a chain runs: one fused kernel, or its stages' kernels one after another.
#[derive(Clone, Debug)]
pub enum ChainKernel {
    Fused(ChainKernelDesc),
    Staged(Vec<StageKernel>),
}

/// A stage's own kernel, as the single op of that stage launches it (`None` for an empty
/// stage output: no kernel).
#[derive(Clone, Debug)]
pub enum StageKernel {
    Gather(Option<GatherKernelDesc>),
    Slice(Option<SliceKernelDesc>),
}

impl StageKernel {
    fn walk(&self) -> Option<&Walk> {
        match self {
            StageKernel::Gather(k) => k.as_ref().map(|k| &k.walk),
            StageKernel::Slice(k) => k.as_ref().map(|k| &k.walk),
        }
    }

    fn explained(&self) -> Option<crate::explain::Kernel<'_>> {
        match self {
            StageKernel::Gather(k) => k.as_ref().map(crate::explain::Kernel::Gather),
            StageKernel::Slice(k) => k.as_ref().map(crate::explain::Kernel::Slice),
        }
    }
}

/// The source of a chain's kernel: one kernel when fused, else each stage's (headed `// stage
/// k`).
pub(crate) fn kernel_source(kernel: &ChainKernel, dialect: crate::Dialect) -> Result<String, Error> {
    use crate::explain::{source, Kernel};
    match kernel {
        ChainKernel::Fused(k) => match &k.walk {
            Walk::Rows(w) => source(Kernel::Rows(w), dialect),
            Walk::Slots(_) => unreachable!("a fused chain takes the row walk"),
        },
        ChainKernel::Staged(stages) => {
            let mut all = String::new();
            for (i, k) in stages.iter().enumerate() {
                all += &format!("// stage {}\n", i + 1);
                match k.explained() {
                    Some(k) => all += &source(k, dialect)?,
                    None => all += "// (empty output: no kernel)\n",
                }
            }
            Ok(all)
        }
    }
}

/// `None` for an empty result; the fused kernel where the chain lowers to one.
pub(crate) fn chain_kernel(plan: &ChainPlan) -> Option<ChainKernel> {
    match ChainKernelDesc::new(plan) {
        Ok(None) => None,
        Ok(Some(k)) => Some(ChainKernel::Fused(k)),
        Err(()) => Some(ChainKernel::Staged(
            plan.stages
                .iter()
                .map(|s| match s {
                    StagePlan::Gather(g) => StageKernel::Gather(GatherKernelDesc::new(g)),
                    StagePlan::Slice(s) => StageKernel::Slice(SliceKernelDesc::new(s)),
                })
                .collect(),
        )),
    }
}

/// A chain of gathers and slices checked stage by stage, run as one kernel where it fuses.
/// `chain!` builds one at compile time; [`ChainOp::new`] (or `Chain`'s builder) at run time.
/// `T` is the data's element type, `I` the tuple of the gathers' index types in stage order.
pub struct ChainOp<T, I> {
    desc: ChainDesc,
    prepared: Cell<ChainPlan, ChainKernel>,
    verified: Verified,
    types: PhantomData<fn() -> (T, I)>,
}

impl<T, I> std::fmt::Debug for ChainOp<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainOp").field("desc", &self.desc).finish_non_exhaustive()
    }
}

impl<T: Element, I: IndexTypes> ChainOp<T, I> {
    /// Checks `desc` (every stage with the rules of its rule set) and the Rust types against it.
    pub fn new(desc: ChainDesc) -> Result<Self, Error> {
        check_type::<T>(Operand::Data, desc.data.dtype)?;
        let declared: Vec<DType> = desc.gathers().map(|g| g.indices.dtype).collect();
        if declared != I::DTYPES {
            return Err(Error::IndexTypes { declared, used: I::DTYPES.to_vec() });
        }
        let op = Self::__from_checked(desc);
        op.prepared()?;
        Ok(op)
    }

    /// For `chain!` expansions: `desc` passed every rule at compile time, with these types.
    #[doc(hidden)]
    pub const fn __from_checked(desc: ChainDesc) -> Self {
        ChainOp { desc, prepared: OnceLock::new(), verified: Verified::new(), types: PhantomData }
    }

    fn prepared(&self) -> Result<&Prepared<ChainPlan, ChainKernel>, Error> {
        prepare(&self.prepared, || self.desc.plan(), chain_kernel)
    }

    pub fn desc(&self) -> &ChainDesc {
        &self.desc
    }

    /// Every stage's validated plan, and the chain's data and output layouts.
    pub fn plan(&self) -> Result<&ChainPlan, Error> {
        Ok(&self.prepared()?.plan)
    }

    /// A text a person reads: the rule set, every tensor's sizes, strides and minimum buffer,
    /// the output, the out-of-range policy, and for small outputs (up to
    /// 64 elements) a grid of which input element each output element reads.
    pub fn describe(&self) -> String {
        match self.prepared() {
            Ok(p) => stridex_core::describe::chain(&self.desc, &p.plan),
            Err(e) => format!("{:?}\n  broken: {e}", self.desc),
        }
    }

    /// The output's shape, as `run` returns it (for a chain with a `_` count,
    /// [`Error::CountNeeded`]: see [`ChainOp::output_shape_at`]).
    pub fn output_shape(&self) -> Result<&[usize], Error> {
        let plan = self.plan()?;
        if plan.dynamic_leading {
            return Err(Error::CountNeeded { call: "output_shape" });
        }
        Ok(plan.output.sizes.as_slice())
    }

    /// The output's shape for a `_` count of `count`; for a chain of fixed sizes, its one shape.
    pub fn output_shape_at(&self, count: usize) -> Result<Vec<usize>, Error> {
        Ok(self.at(Some(count), "output_shape_at")?.0.output.sizes.to_vec())
    }

    /// Whether a leading size (of the data, or of one gather's indices) is `_`, known at run
    /// time; it is then the output's leading size.
    pub fn is_dynamic(&self) -> bool {
        self.desc.dynamic_leading.is_some()
    }

    /// The plan and kernel of one launch: the chain's own, or, with a `_` count, those for
    /// `count` (`None`: `call` was made without one, an `Err` for a `_` chain).
    #[allow(clippy::type_complexity)]
    pub(crate) fn at(
        &self,
        count: Option<usize>,
        call: &'static str,
    ) -> Result<(Cow<'_, ChainPlan>, Option<Cow<'_, ChainKernel>>), Error> {
        let p = self.prepared()?;
        p.at(
            p.plan.dynamic_leading,
            count,
            call,
            |n| stridex_core::dynamic::chain_at(&self.desc, n),
            |plan| &plan.output,
            |k, plan, n| match k {
                ChainKernel::Fused(k) => {
                    let walk = walk_at(&k.walk, n, &plan.data, &plan.output, plan.data_type.size())?;
                    Ok(ChainKernel::Fused(ChainKernelDesc { walk }))
                }
                // The rules make a `_` chain fuse, or be empty for every count.
                ChainKernel::Staged(_) => Err(Error::Rule(RuleError::Dynamic {
                    fault: stridex_core::DynamicFault::Staged,
                    at: stridex_core::Location::Chain,
                })),
            },
        )
    }

    /// The count of a `_` chain from the length of the buffer that carries it (`None` for fixed
    /// sizes): the data's, or the index buffer of its gather (`indices`, in gather order).
    pub(crate) fn count_of(&self, data: usize, indices: &[usize]) -> Result<Option<usize>, Error> {
        // The rules first: they put the count on the data or on a gather's indices.
        self.prepared()?;
        match self.desc.dynamic_leading {
            None => Ok(None),
            Some(ChainCount::Data) => leading_count(Operand::Data, &self.desc.data.sizes, data).map(Some),
            Some(ChainCount::Indices { stage }) => {
                let g = self.desc.stages[..stage - 1]
                    .iter()
                    .filter(|s| matches!(s, StageDesc::Gather(_)))
                    .count();
                let Some(StageDesc::Gather(decl)) = self.desc.stages.get(stage - 1) else {
                    return Err(Error::Rule(RuleError::Dynamic {
                        fault: stridex_core::DynamicFault::NoGatherAt { stage },
                        at: stridex_core::Location::Chain,
                    }));
                };
                let given = *indices.get(g).ok_or(Error::IndexBufferCount {
                    expected: self.desc.gathers().count(),
                    given: indices.len(),
                })?;
                leading_count(Operand::Indices, &decl.indices.sizes, given)
                    .map(Some)
                    .map_err(|e| in_stage(stage, e))
            }
        }
    }

    /// How the chain runs (`None` for an empty output: no kernel).
    pub fn kernel(&self) -> Result<Option<&ChainKernel>, Error> {
        Ok(self.prepared()?.kernel.as_ref())
    }

    /// Whether the chain runs as one kernel. A chain runs stage by stage (intermediates on the
    /// device) when an intermediate tensor is empty, or when its output rows are not whole
    /// 32-bit words (1- and 2-byte elements in an odd innermost size).
    pub fn is_fused(&self) -> Result<bool, Error> {
        Ok(matches!(self.kernel()?, Some(ChainKernel::Fused(_))))
    }

    /// The generated source in `dialect`: one kernel for a fused chain, each stage's kernel
    /// (headed `// stage k`) for a staged one; `None` for an empty output.
    pub fn kernel_source(&self, dialect: crate::Dialect) -> Result<Option<String>, Error> {
        self.kernel()?.map(|k| kernel_source(k, dialect)).transpose()
    }

    /// Runs on the default device (see [`Device::default_device`]). `indices` are the gathers'
    /// index buffers in stage order, as a tuple: `()`, `(&ids,)`, `(&ids, &cols)`.
    pub fn run<'a>(&self, data: &[T], indices: impl IndexBuffers<'a, I>) -> Result<Tensor<T>, Error> {
        self.run_on(Device::default_device()?, data, indices)
    }

    pub fn run_on<'a>(
        &self,
        device: &Device,
        data: &[T],
        indices: impl IndexBuffers<'a, I>,
    ) -> Result<Tensor<T>, Error> {
        self.run_buffers(device, data, indices.buffers())
    }

    /// `run_on` with the index buffers' types erased (checked against the plan's).
    pub(super) fn run_buffers(
        &self,
        device: &Device,
        data: &[T],
        indices: Vec<IndexBuffer<'_>>,
    ) -> Result<Tensor<T>, Error> {
        let lens: Vec<usize> = indices.iter().map(|b| b.len).collect();
        let (plan, kernel) = self.at(self.count_of(data.len(), &lens)?, "run")?;
        check_len(Operand::Data, &plan.data, data.len())?;
        let count = gathers(&plan).count();
        if indices.len() != count {
            return Err(Error::IndexBufferCount { expected: count, given: indices.len() });
        }
        for ((stage, g), buffer) in gathers(&plan).zip(&indices) {
            check_len(Operand::Indices, &g.indices, buffer.len).map_err(|e| in_stage(stage, e))?;
        }
        check_error_policies(&plan, |g| &indices[g])?;
        let Some(kernel) = kernel.as_deref() else {
            return Ok(Tensor::from_bytes(&plan.output, &[]));
        };
        let data_words = Self::bytes(&plan, Some(kernel), Operand::Data) / 4;
        let bytes = with_client!(device, c => {
            let (queued, out) = launch::on_device_thread(c, || {
                let data = launch::upload(c, &T::bytes(data), data_words);
                let index: Vec<Handle> = indices.iter().map(|b| launch::upload(c, &b.bytes, 0)).collect();
                let out = output_buffer(c, &plan, kernel);
                let queued = queue(c, kernel, &data, &index.iter().collect::<Vec<_>>(), &out);
                (queued, out)
            })?;
            let (_, mut bytes) = launch::wait_all(c, queued, vec![out])?;
            Ok::<_, Error>(bytes.remove(0))
        })?;
        Ok(Tensor::from_bytes(&plan.output, &bytes))
    }

    /// Bytes a device buffer needs for [`ChainOp::launch`]: `Operand::Data` or `Output` (for the
    /// index buffers, see [`ChainOp::index_buffer_bytes`]; `Operand::Indices` here gives the
    /// largest of them).
    pub fn buffer_bytes(&self, tensor: Operand) -> Result<usize, Error> {
        let (plan, kernel) = self.at(None, "buffer_bytes")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// [`ChainOp::buffer_bytes`] for a `_` count of `count` (for fixed sizes, `count` is not read).
    pub fn buffer_bytes_at(&self, count: usize, tensor: Operand) -> Result<usize, Error> {
        let (plan, kernel) = self.at(Some(count), "buffer_bytes_at")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// Bytes a buffer for `tensor` needs for the launch of `plan` and `kernel` (from `at`).
    pub(crate) fn bytes(plan: &ChainPlan, kernel: Option<&ChainKernel>, tensor: Operand) -> usize {
        let elem = plan.data_type.size();
        match (tensor, kernel) {
            (Operand::Indices, _) => gathers(plan).map(|(_, g)| index_bytes(g)).max().unwrap_or(0),
            (Operand::Output, Some(k)) => {
                last_walk(k).map_or(word_bytes(&plan.output, elem), |w| w.out_words() as usize * 4)
            }
            (Operand::Output, None) => word_bytes(&plan.output, elem),
            (_, Some(k)) => {
                first_walk(k).map_or(word_bytes(&plan.data, elem), |w| w.src_words() as usize * 4)
            }
            (_, None) => word_bytes(&plan.data, elem),
        }
    }

    /// Bytes the index buffer of the chain's `gather`-th gather (0-based, stage order) needs.
    pub fn index_buffer_bytes(&self, gather: usize) -> Result<usize, Error> {
        Self::index_bytes_of(&self.at(None, "index_buffer_bytes")?.0, gather)
    }

    /// [`ChainOp::index_buffer_bytes`] for a `_` count of `count`.
    pub fn index_buffer_bytes_at(&self, count: usize, gather: usize) -> Result<usize, Error> {
        Self::index_bytes_of(&self.at(Some(count), "index_buffer_bytes_at")?.0, gather)
    }

    pub(crate) fn index_bytes_of(plan: &ChainPlan, gather: usize) -> Result<usize, Error> {
        let count = gathers(plan).count();
        let (_, g) = gathers(plan)
            .nth(gather)
            .ok_or(Error::IndexBufferCount { expected: count, given: gather + 1 })?;
        Ok(index_bytes(g))
    }

    /// Launches on buffers already on the device (`client` must be the one that made them):
    /// `data` laid out as the descriptor says and the gathers' index buffers in stage order,
    /// each at least its `buffer_bytes` / `index_buffer_bytes` long. Under the `error` policy
    /// the index buffers of those gathers are read back and checked before anything is queued
    /// (so an index out of range is an `Err` naming its stage, and no kernel ran). A staged
    /// chain allocates its intermediates on `client`.
    pub fn launch(
        &self,
        client: &Client,
        data: &Handle,
        indices: &[&Handle],
        output: &Handle,
    ) -> Result<(), Error> {
        launch::exclusive(|| self.launch_locked(client, None, data, indices, output, false))
    }

    /// [`ChainOp::launch`] for a `_` count of `count` (buffers of at least
    /// [`ChainOp::buffer_bytes_at`] / [`ChainOp::index_buffer_bytes_at`] for that count); one
    /// compiled kernel serves every count. For fixed sizes, `count` is not read.
    pub fn launch_at(
        &self,
        client: &Client,
        count: usize,
        data: &Handle,
        indices: &[&Handle],
        output: &Handle,
    ) -> Result<(), Error> {
        launch::exclusive(|| self.launch_locked(client, Some(count), data, indices, output, false))
    }

    /// [`ChainOp::launch`] for a caller that holds stridex's device lock; waits for the kernels
    /// when `wait` (or on the first launch on `R`). Depends on the plan only, not on `I` (the
    /// test-support runs use it with erased types).
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
        let n = gathers(&plan).count();
        if indices.len() != n {
            return Err(Error::IndexBufferCount { expected: n, given: indices.len() });
        }
        let bytes = |t| Self::bytes(&plan, kernel.as_deref(), t);
        launch::check_handle(Operand::Data, data, bytes(Operand::Data))?;
        for (g, (&(stage, _), h)) in gathers(&plan).collect::<Vec<_>>().iter().zip(indices).enumerate() {
            launch::check_handle(Operand::Indices, h, Self::index_bytes_of(&plan, g)?)
                .map_err(|e| in_stage(stage, e))?;
        }
        launch::check_handle(Operand::Output, output, bytes(Operand::Output))?;
        let checked = checked_gathers(&plan);
        if !checked.is_empty() {
            let handles = checked.iter().map(|&g| indices[g].clone()).collect();
            check_read_back(&plan, &checked, &launch::read_all(client, handles)?)?;
        }
        // An empty result launches nothing (its error-policy indices were still checked).
        let Some(kernel) = kernel.as_deref() else { return Ok(()) };
        let queued = queue(client, kernel, data, indices, output);
        if wait || !self.verified.seen(client) {
            launch::wait_all(client, queued, vec![])?;
            self.verified.confirm(client);
        }
        Ok(())
    }
}

/// The gathers (0-based, in stage order) whose indices are read back and checked in full before
/// a launch: those under the `error` policy whose output is not empty.
pub(crate) fn checked_gathers(plan: &ChainPlan) -> Vec<usize> {
    gathers(plan)
        .enumerate()
        .filter(|(_, (_, g))| g.out_of_range == OutOfRange::Error && !g.output.is_empty())
        .map(|(i, _)| i)
        .collect()
}

/// [`check_error_policies`] on the index bytes of the `checked` gathers, read back from a device.
pub(crate) fn check_read_back(
    plan: &ChainPlan,
    checked: &[usize],
    bytes: &[impl std::ops::Deref<Target = [u8]>],
) -> Result<(), Error> {
    let types: Vec<DType> = gathers(plan).map(|(_, g)| g.index_type.dtype()).collect();
    let read: Vec<IndexBuffer> = checked.iter().zip(bytes).map(|(&g, b)| erased(types[g], b)).collect();
    check_error_policies(plan, |g| {
        &read[checked.iter().position(|&c| c == g).expect("an error-policy gather")]
    })
}

/// Bytes of a gather's index buffer.
fn index_bytes(g: &GatherPlan) -> usize {
    word_bytes(&g.indices, g.index_type.words() * 4)
}

/// A stage's error wrapped with the stage it belongs to.
pub(crate) fn in_stage(stage: usize, error: Error) -> Error {
    Error::InStage { stage, error: Box::new(error) }
}

/// The chain's gathers: their stage (1-based) and plan, in stage order.
pub(crate) fn gathers(plan: &ChainPlan) -> impl Iterator<Item = (usize, &GatherPlan)> {
    plan.stages.iter().enumerate().filter_map(|(i, s)| match s {
        StagePlan::Gather(g) => Some((i + 1, g)),
        StagePlan::Slice(_) => None,
    })
}

/// Index bytes read back from a device, as a buffer of `dtype`.
fn erased(dtype: DType, bytes: &[u8]) -> IndexBuffer<'_> {
    fn value<I: IndexElement>(b: &[u8]) -> i128 {
        I::from_bytes(b)[0].value()
    }
    let value: fn(&[u8]) -> i128 = match dtype {
        DType::I32 => value::<i32>,
        DType::U32 => value::<u32>,
        DType::U64 => value::<u64>,
        _ => value::<i64>,
    };
    IndexBuffer { bytes: Cow::Borrowed(bytes), len: bytes.len() / dtype.size(), width: dtype.size(), value }
}

impl<'a> IndexBuffer<'a> {
    /// An index buffer of `dtype` as bytes (test support: chains with types chosen at run time).
    #[cfg(feature = "test-support")]
    pub(super) fn of_bytes(dtype: DType, bytes: &'a [u8]) -> IndexBuffer<'a> {
        erased(dtype, bytes)
    }
}

/// Running the stages one by one, the first `error`-policy gather (in stage order) that holds
/// an index out of range fails the chain: the fused kernel reads only the indices the output
/// needs, so every such gather's indices are checked here, in full, before any launch.
fn check_error_policies<'s, 'b: 's>(
    plan: &ChainPlan,
    buffer: impl Fn(usize) -> &'s IndexBuffer<'b>,
) -> Result<(), Error> {
    for (g, (stage, p)) in gathers(plan).enumerate() {
        // As the single op: a gather whose output is empty reads no index, so none can fail.
        if p.out_of_range != OutOfRange::Error || p.output.is_empty() {
            continue;
        }
        let b = buffer(g);
        if let Some(e) = first_bad(p, &p.indices, |i| b.value(i)) {
            return Err(in_stage(stage, e));
        }
    }
    Ok(())
}

fn first_bad(plan: &GatherPlan, layout: &TensorLayout, value: impl Fn(usize) -> i128) -> Option<Error> {
    let s = plan.axis_size as i128;
    let mut c = vec![0; layout.rank()];
    loop {
        let v = value(layout.offset(&c));
        if v < -s || v >= s {
            return Some(Error::IndexOutOfRange { position: c, value: v, axis_size: plan.axis_size });
        }
        if !next_coords(&mut c, &layout.sizes) {
            return None;
        }
    }
}

fn first_walk(k: &ChainKernel) -> Option<&Walk> {
    match k {
        ChainKernel::Fused(k) => Some(&k.walk),
        ChainKernel::Staged(s) => s[0].walk(),
    }
}

fn last_walk(k: &ChainKernel) -> Option<&Walk> {
    match k {
        ChainKernel::Fused(k) => Some(&k.walk),
        ChainKernel::Staged(s) => s.last().and_then(StageKernel::walk),
    }
}

pub(crate) fn output_buffer(client: &Client, plan: &ChainPlan, kernel: &ChainKernel) -> Handle {
    match last_walk(kernel) {
        Some(w) => launch::output(client, w, has_gaps(&plan.output)),
        None => launch::upload(client, &[], 1),
    }
}

impl Queue for ChainKernelDesc {
    fn walk(&self) -> &Walk {
        &self.walk
    }

    fn queue(&self, client: &Client, inputs: &[Handle], output: &Handle) -> Queued {
        let indices: Vec<&Handle> = inputs[1..].iter().collect();
        launch::fused(client, self, &inputs[0], &indices, output)
    }
}

/// Queues `kernel` on checked buffers: one launch for a fused chain; for a staged one, each
/// stage's kernel on the previous one's output, in intermediates sized for both the stage that
/// writes them and the one that reads them (zeroed where a stage writes nothing).
fn queue(
    client: &Client,
    kernel: &ChainKernel,
    data: &Handle,
    indices: &[&Handle],
    output: &Handle,
) -> Vec<Queued> {
    let stages = match kernel {
        ChainKernel::Fused(k) => {
            let mut inputs = vec![data.clone()];
            inputs.extend(indices.iter().map(|&h| h.clone()));
            return vec![k.queue(client, &inputs, output)];
        }
        ChainKernel::Staged(stages) => stages,
    };
    let mut queued = Vec::new();
    let mut input = data.clone();
    let mut index = indices.iter();
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
                let index = (*index.next().expect("one buffer per gather")).clone();
                if let Some(k) = k {
                    queued.push(k.queue(client, &[input, index], &out));
                }
            }
            StageKernel::Slice(Some(k)) => queued.push(k.queue(client, &[input], &out)),
            StageKernel::Slice(None) => {}
        }
        input = out;
    }
    queued
}
