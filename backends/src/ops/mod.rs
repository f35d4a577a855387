//! The ops a macro (or a run-time builder) produces: one [`Op`] over an [`OpKind`] (gather,
//! slice, chain, scatter). What every kind shares lives here: the validated plan and kernel built once,
//! the plan and kernel of a `_` op at a count, buffer sizes, the checks of host and device
//! buffers, and one path that uploads, queues and reads back any kernel ([`Launch`]). Each
//! kind's file adds what only it has: its buffers' types (`run`, `launch`) and its index checks.

pub(crate) mod chain;
mod error_policy;
pub(crate) mod gather;
#[cfg(feature = "test-support")]
mod guarded;
mod index_buffers;
mod scatter;
mod scatter_on_device;
mod shared;
mod slice;

pub use chain::ChainOp;
pub(crate) use error_policy::{check_indices, first_bad_index};
#[cfg(feature = "burn")]
pub(crate) use error_policy::{check_read_back, checked_gathers, in_stage};
pub use gather::GatherOp;
pub use index_buffers::{IndexBuffer, IndexBuffers, IndexTypes};
pub use scatter::ScatterOp;
#[cfg(feature = "burn")]
pub(crate) use scatter::{fault as scatter_fault, GroupedIntoZeros, IntoZeros, SumIntoZeros, Writes};
pub(crate) use shared::shared;
pub use slice::SliceOp;

use crate::device::{with_client, Device};
use crate::element::Element;
use crate::error::Error;
use crate::kernels::{Launch, OpKernel};
use crate::launch;
use crate::tensor::Tensor;
use cubecl::bytes::Bytes;
use cubecl::prelude::*;
use cubecl::server::Handle;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};
use stridex_core::kernel::Walk;
use stridex_core::{OpDesc, OpPlan, Operand, RuleError, TensorDecl, TensorLayout};

/// What an op kind (gather, slice, chain, scatter) brings to [`Op`]: its descriptor (whose plan, name
/// and description core's [`OpDesc`] gives) and its kernel (how it is made from the plan).
/// Implemented in this crate only: its kernel must be one stridex can launch (a crate-private
/// bound), which seals it.
#[allow(private_bounds)]
pub trait OpKind: Sized + 'static {
    type Desc: OpDesc;
    type Kernel: OpKernel<Plan = <Self::Desc as OpDesc>::Plan>;
}

/// Declares op kinds: uninhabited types, each naming its descriptor and its kernel.
macro_rules! op_kinds {
    ($($(#[$doc:meta])* $kind:ident: $desc:ty => $kernel:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $kind {}

        impl OpKind for $kind {
            type Desc = $desc;
            type Kernel = $kernel;
        }
    )*};
}

op_kinds! {
    /// The gather kind of [`Op`]: [`GatherOp`].
    GatherKind: stridex_core::GatherDesc => stridex_core::kernel::GatherKernelDesc;
    /// The slice kind of [`Op`]: [`SliceOp`].
    SliceKind: stridex_core::SliceDesc => stridex_core::kernel::SliceKernelDesc;
    /// The scatter kind of [`Op`]: [`ScatterOp`].
    ScatterKind: stridex_core::ScatterDesc => crate::kernels::ScatterKernel;
}

/// The chain kind of [`Op`]: [`ChainOp`], whose result has element type `O` (the data's, or a
/// `convert` stage's).
#[derive(Debug)]
pub enum ChainKind<O> {
    #[doc(hidden)]
    __Never(std::convert::Infallible, PhantomData<fn() -> O>),
}

impl<O: 'static> OpKind for ChainKind<O> {
    type Desc = stridex_core::ChainDesc;
    type Kernel = crate::kernels::ChainKernel;
}

/// The plan of an op kind's descriptor.
pub type PlanOf<K> = <<K as OpKind>::Desc as OpDesc>::Plan;

/// An op checked against its rules, with its kernel specialized on the checked constants:
/// [`GatherOp`], [`SliceOp`], [`ChainOp`] and [`ScatterOp`] are this over their kind. `T` is the element type
/// and `I` the index type(s).
///
/// An op is `Send + Sync`: a `static` op serves every thread. Its plan and kernel descriptor
/// are built once, on first use; CubeCL compiles the kernel once per device.
pub struct Op<K: OpKind, T, I> {
    desc: K::Desc,
    prepared: OnceLock<Result<Prepared<K>, RuleError>>,
    verified: Verified,
    types: PhantomData<fn() -> (T, I)>,
}

/// An op's validated plan and kernel descriptor, built on first use (the macro already checked
/// the same rules at compile time; building them again is cheap and keeps the unchecked
/// launch's bounds derived by one code path).
struct Prepared<K: OpKind> {
    plan: PlanOf<K>,
    kernel: Option<K::Kernel>,
}

impl<K: OpKind> Clone for Prepared<K> {
    fn clone(&self) -> Self {
        Prepared { plan: self.plan.clone(), kernel: self.kernel.clone() }
    }
}

/// The plan and kernel of one launch: the op's own, borrowed, or those for a count.
#[allow(type_alias_bounds)]
pub(crate) type At<'a, K: OpKind> = (Cow<'a, PlanOf<K>>, Option<Cow<'a, K::Kernel>>);

impl<K: OpKind, T, I> std::fmt::Debug for Op<K, T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(K::Desc::NAME).field("desc", &self.desc).finish_non_exhaustive()
    }
}

impl<K: OpKind, T, I> Op<K, T, I> {
    /// For macro expansions: `desc` passed every rule at compile time, with these types.
    #[doc(hidden)]
    pub const fn __from_checked(desc: K::Desc) -> Self {
        Op { desc, prepared: OnceLock::new(), verified: Verified::new(), types: PhantomData }
    }

    fn prepared(&self) -> Result<&Prepared<K>, Error> {
        self.prepared
            .get_or_init(|| self.desc.plan().map(|plan| Prepared { kernel: K::Kernel::of(&plan), plan }))
            .as_ref()
            .map_err(|e| Error::Rule(e.clone()))
    }

    pub fn desc(&self) -> &K::Desc {
        &self.desc
    }

    /// The validated, normalized form (for a `_` op, at the placeholder count).
    pub fn plan(&self) -> Result<&PlanOf<K>, Error> {
        Ok(&self.prepared()?.plan)
    }

    /// A text a person reads: the rule set, every tensor's sizes, strides and minimum buffer,
    /// the output, the out-of-range policy, and for a gather, slice or chain with a small
    /// output (up to 64 elements) a grid of which input element each output element reads (a
    /// scatter's, and a chain's that scatters, has none: where it writes depends on the index
    /// values).
    pub fn describe(&self) -> String {
        match self.prepared() {
            Ok(p) => self.desc.describe(&p.plan),
            Err(e) => format!("{:?}\n  broken: {e}", self.desc),
        }
    }

    /// The output's shape, as `run` returns it (for an op whose output's leading size is the
    /// `_` count, [`Error::CountNeeded`]: see [`Op::output_shape_at`]; a `_` scatter's output,
    /// the data's shape, and a `_` chain's that ends in one, its destination's, need none).
    pub fn output_shape(&self) -> Result<&[usize], Error> {
        if self.desc.follows_count(Operand::Output) {
            return Err(Error::CountNeeded { call: "output_shape" });
        }
        Ok(self.plan()?.output().sizes.as_slice())
    }

    /// The output's shape for `count` leading steps of the `_` dimension (the indices' rows of
    /// a gather, the input's of a slice, the chain's count); for fixed sizes, the one shape.
    pub fn output_shape_at(&self, count: usize) -> Result<Vec<usize>, Error> {
        Ok(self.at(Some(count), "output_shape_at")?.0.output().sizes.to_vec())
    }

    /// Whether a leading size is `_`, known at run time (it is then the output's leading size,
    /// or, for a scatter and a chain that ends in one, the updates' and the positions').
    pub fn is_dynamic(&self) -> bool {
        self.desc.is_dynamic()
    }

    /// The constants the kernel is specialized on (`None` for an empty output; for a scatter,
    /// runs that are empty: nothing is written).
    pub fn kernel(&self) -> Result<Option<&K::Kernel>, Error> {
        Ok(self.prepared()?.kernel.as_ref())
    }

    /// The generated kernel source in `dialect` (`None` when nothing launches, as for
    /// [`Op::kernel`]); a chain that runs stage by stage gives each stage's kernel, headed
    /// `// stage k`, and an op of two kernels (a KV-cache write's claim and write) heads each
    /// `// kernel k of 2: ..`. With `STRIDEX_TILE=spread`, the kernels a GPU launches: a
    /// scatter's lists grouped on the device, and a gather folded into a grouped scatter run
    /// as its two stages ([`crate::ChainOp::is_fused`]).
    pub fn kernel_source(&self, dialect: crate::Dialect) -> Result<Option<String>, Error> {
        let p = self.prepared()?;
        p.kernel.as_ref().map(|k| crate::explain::source(k, &p.plan, dialect)).transpose()
    }

    /// The plan and kernel of one launch: the op's own, or, when its leading size is `_`,
    /// those for `count` (`None`: `call` was made without one, an `Err` for a `_` op).
    pub(crate) fn at(&self, count: Option<usize>, call: &'static str) -> Result<At<'_, K>, Error> {
        let p = self.prepared()?;
        if !self.is_dynamic() {
            return Ok((Cow::Borrowed(&p.plan), p.kernel.as_ref().map(Cow::Borrowed)));
        }
        let Some(count) = count else { return Err(Error::CountNeeded { call }) };
        let plan = self.desc.plan_at(count)?;
        let kernel = match &p.kernel {
            Some(k) if !plan.output().is_empty() => {
                Some(Cow::Owned(k.with_walk(&plan, |w| walk_at(w, count, &plan))?))
            }
            _ => None,
        };
        Ok((Cow::Owned(plan), kernel))
    }

    /// Bytes a device buffer needs for `launch` (`Operand::Data` or `Input`, `Indices`, or
    /// `Output`): the tensor's elements, rounded up to whole 32-bit words (and, for data and
    /// output, to the kernel's vector width). A `u8[3, 5, 5]` tensor needs 76 bytes, not 75.
    /// For a chain, `Indices` gives the largest index buffer (see
    /// [`ChainOp::index_buffer_bytes`]). For an op with a `_` count, a tensor the count sizes
    /// is [`Error::CountNeeded`] (see [`Op::buffer_bytes_at`]); one it leaves alone (a gather's
    /// data, a scatter's data and output, the destination of a chain that ends in a scatter,
    /// a chain's data where a gather's indices carry the count) has its bytes at every count.
    ///
    /// Kernels write whole 32-bit words: for 1- and 2-byte elements, bytes of a padded output
    /// that lie between elements, and those after the last element in its word, are written
    /// as zero. Padding between wider elements is left as it was.
    pub fn buffer_bytes(&self, tensor: Operand) -> Result<usize, Error> {
        if self.is_dynamic() && !self.desc.follows_count(tensor) {
            // A tensor the count does not size: the plan and kernel at the placeholder count,
            // those the `_` rules found the same at a second count.
            let p = self.prepared()?;
            return Ok(Self::bytes(&p.plan, p.kernel.as_ref(), tensor));
        }
        let (plan, kernel) = self.at(None, "buffer_bytes")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// [`Op::buffer_bytes`] for `count` leading steps of the `_` dimension (for fixed sizes,
    /// `count` is not read).
    pub fn buffer_bytes_at(&self, count: usize, tensor: Operand) -> Result<usize, Error> {
        let (plan, kernel) = self.at(Some(count), "buffer_bytes_at")?;
        Ok(Self::bytes(&plan, kernel.as_deref(), tensor))
    }

    /// Bytes a buffer for `tensor` needs for the launch of `plan` and `kernel` (from `at`).
    pub(crate) fn bytes(plan: &PlanOf<K>, kernel: Option<&K::Kernel>, tensor: Operand) -> usize {
        let walk = |w: Option<&Walk>, words: fn(&Walk) -> u32, layout, elem: stridex_core::DType| {
            w.map_or_else(|| crate::kernels::word_bytes(layout, elem.size()), |w| words(w) as usize * 4)
        };
        match tensor {
            Operand::Indices => K::Kernel::index_bytes(plan),
            Operand::Updates => K::Kernel::updates_bytes(plan),
            Operand::Output => {
                walk(kernel.and_then(Launch::last_walk), Walk::out_words, plan.output(), plan.output_type())
            }
            Operand::Data | Operand::Input => {
                walk(kernel.and_then(Launch::first_walk), Walk::src_words, plan.source(), plan.data_type())
            }
        }
    }

    /// Queues `kernel` on the caller's device buffers after checking each against the bytes
    /// it needs (`inputs` in the kernel's order, with their operands and byte counts); waits
    /// (and returns whether an index was out of range) when `wait`, or on the op's first launch
    /// on a runtime, to confirm its kernel built and ran. The caller holds the device lock.
    fn queue_checked(
        &self,
        client: &Client,
        kernel: &K::Kernel,
        inputs: &[(Operand, &Handle, usize)],
        output: (&Handle, usize),
        wait: bool,
    ) -> Result<bool, Error> {
        for &(tensor, handle, needed) in inputs.iter().chain([&(Operand::Output, output.0, output.1)]) {
            launch::check_handle(client, tensor, handle, needed)?;
        }
        let handles: Vec<&Handle> = inputs.iter().map(|&(_, h, _)| h).collect();
        let queued = kernel.queue(client, &handles, output.0);
        if !wait && self.verified.seen(client) {
            return Ok(false);
        }
        let (flagged, _) = launch::wait_all(client, queued, vec![])?;
        self.verified.confirm(client);
        Ok(flagged)
    }
}

impl<K: OpKind, T: Element, I> Op<K, T, I> {
    /// Uploads `inputs` (host bytes, and the words each buffer needs: the first input's from
    /// the kernel, the others' their own), queues the kernel on them and a new output, and
    /// reads the status and the output back in one round trip. The uploads and the launch run
    /// on CubeCL's device thread, under stridex's device lock (see `launch`). Returns whether
    /// an index was out of range, and the output's bytes.
    fn run_bytes(
        &self,
        device: &Device,
        plan: &PlanOf<K>,
        kernel: &K::Kernel,
        inputs: &[&[u8]],
    ) -> Result<(bool, Bytes), Error> {
        let first_words = Self::bytes(plan, Some(kernel), Operand::Data) / 4;
        let gaps = has_gaps(plan.output());
        with_client!(device, c => {
            let (queued, out) = launch::on_device_thread(c, || {
                let handles: Vec<Handle> = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, bytes)| launch::upload(c, bytes, if i == 0 { first_words } else { 0 }))
                    .collect();
                let out = match kernel.last_walk() {
                    Some(w) => launch::output(c, w, gaps),
                    None => launch::upload(c, &[], 1),
                };
                (kernel.queue(c, &handles.iter().collect::<Vec<_>>(), &out), out)
            })?;
            let (flagged, mut bytes) = launch::wait_all(c, queued, vec![out])?;
            Ok((flagged, bytes.remove(0)))
        })
    }
}

/// Where a host run puts its result: a new [`Tensor`] (`run`), or the caller's slice
/// (`run_into`), checked against the output before the launch.
pub(crate) trait Sink<T: Element> {
    type Out;
    fn check(&self, output: &TensorLayout) -> Result<(), Error>;
    /// `bytes`: the output buffer as read back (at least the layout's elements).
    fn finish(self, output: &TensorLayout, bytes: &[u8]) -> Result<Self::Out, Error>;
    /// The output's bytes before the run, where the sink holds them (a chain that scatters
    /// updates its destination in place).
    fn destination(&self) -> Option<Vec<u8>> {
        None
    }
}

/// `run`'s sink.
pub(crate) struct NewTensor;

impl<T: Element> Sink<T> for NewTensor {
    type Out = Tensor<T>;
    fn check(&self, _: &TensorLayout) -> Result<(), Error> {
        Ok(())
    }
    fn finish(self, output: &TensorLayout, bytes: &[u8]) -> Result<Tensor<T>, Error> {
        Ok(Tensor::from_bytes(output, bytes))
    }
}

/// `run_into`'s sink: a slice of exactly the output's buffer (the elements `run`'s tensor holds,
/// in its strides).
pub(crate) struct IntoSlice<'o, T>(pub(crate) &'o mut [T]);

impl<T: Element> Sink<T> for IntoSlice<'_, T> {
    type Out = ();
    fn check(&self, output: &TensorLayout) -> Result<(), Error> {
        let needed = output.min_buffer_len().unwrap_or(0);
        match self.0.len() {
            given if given < needed => Err(Error::BufferTooShort { tensor: Operand::Output, needed, given }),
            given if given > needed => {
                Err(Error::BufferTooLong { tensor: Operand::Output, expected: needed, given })
            }
            _ => Ok(()),
        }
    }
    fn finish(self, _: &TensorLayout, bytes: &[u8]) -> Result<(), Error> {
        let n = self.0.len() * T::DTYPE.size();
        T::write_bytes(&bytes[..n], self.0);
        Ok(())
    }
    fn destination(&self) -> Option<Vec<u8>> {
        Some(T::bytes(self.0).into_owned())
    }
}

/// A host buffer for `tensor`: a packed layout takes exactly its elements (a longer buffer
/// would be read only in part, hiding a batch-size mistake); a strided one at least its span.
/// `declared` is the tensor as the descriptor states it: one declared with strides is strided
/// even where its layout at a count is packed (a `_` count of 1 with its images apart).
fn check_len(
    tensor: Operand,
    layout: &TensorLayout,
    declared: &TensorDecl,
    given: usize,
) -> Result<(), Error> {
    let needed = layout.min_buffer_len().unwrap_or(usize::MAX);
    if given < needed {
        return Err(Error::BufferTooShort { tensor, needed, given });
    }
    if declared.strides.is_none() && layout.is_packed() && given > needed {
        return Err(Error::BufferTooLong { tensor, expected: needed, given });
    }
    Ok(())
}

/// The count of a `_` tensor's leading dimension from its buffer's length: whole rows of a
/// packed tensor, the steps of its leading stride for a strided one.
fn leading_count(tensor: Operand, decl: &stridex_core::TensorDecl, given: usize) -> Result<usize, Error> {
    stridex_core::dynamic::count_in(decl, given).ok_or(Error::PartialRow {
        tensor,
        given,
        row: stridex_core::dynamic::row_step(decl),
    })
}

/// A `_` op's walk (planned at the placeholder count) for `count` leading steps, with the
/// buffers of the plan for that count. The kernel it launches is specialized on
/// [`stridex_core::kernel::RowWalk::specialized`], the same for every count.
fn walk_at(walk: &Walk, count: usize, plan: &impl OpPlan) -> Result<Walk, Error> {
    let elem_bytes = plan.data_type().size();
    walk.with_count(count, plan.source(), plan.output(), elem_bytes).ok_or(Error::Rule(RuleError::TooLarge {
        tensor: Operand::Output,
        elements: Some(plan.output().num_elements()),
        elem_bytes,
    }))
}

/// The values of an index buffer on the device laid out as `layout`, read back (a round trip
/// that waits for the device's earlier work) after checking that the buffer holds them.
fn read_indices<I: crate::element::IndexElement>(
    client: &Client,
    indices: &Handle,
    layout: &TensorLayout,
) -> Result<Vec<I>, Error> {
    launch::check_handle(client, Operand::Indices, indices, index_buffer_len::<I>(layout))?;
    let read = launch::exclusive(|| launch::read(client, indices.clone()))?;
    Ok(index_values(&read, layout))
}

/// Bytes of the index elements of `layout`, in a buffer of `I`.
fn index_buffer_len<I: crate::element::IndexElement>(layout: &TensorLayout) -> usize {
    layout.min_buffer_len().unwrap_or(0) * I::INDEX.words() * 4
}

/// The index elements of `layout` in `bytes`, read back from a buffer checked to hold them.
fn index_values<I: crate::element::IndexElement>(bytes: &[u8], layout: &TensorLayout) -> Vec<I> {
    I::from_bytes(&bytes[..index_buffer_len::<I>(layout)])
}

fn check_type<T: Element>(tensor: Operand, declared: stridex_core::DType) -> Result<(), Error> {
    if declared != T::DTYPE {
        return Err(Error::TypeMismatch { tensor, declared, used: T::DTYPE });
    }
    Ok(())
}

/// Padding slots in the output are zero-initialized so no uninitialized device memory leaks.
fn has_gaps(layout: &TensorLayout) -> bool {
    layout.min_buffer_len() != Some(layout.num_elements())
}

/// The runtimes (by CubeCL's name for them) on which an op's kernel has been seen to run, with
/// which of its kernels (a scatter chooses among several per destination; other ops have one).
/// CubeCL drops a launch whose kernel fails to build with only a log line; building is
/// deterministic, so the first launch of a kernel per runtime waits for the status word and
/// later ones need not.
///
/// A scatter at a count (`ScatterOp::written`) shares its `_` op's record, and a kept op
/// (`ScatterOp::kept`) the record of the op it was kept for: their kernels are compiled alike.
struct Verified(OnceLock<Arc<Mutex<Seen>>>);

/// Runtimes by name, each with a kernel tag.
type Seen = Vec<(&'static str, u64)>;

impl Verified {
    const fn new() -> Verified {
        Verified(OnceLock::new())
    }

    fn record(&self) -> &Mutex<Seen> {
        self.0.get_or_init(Arc::default)
    }

    /// The same record, for an op at a count of this one.
    fn shared(&self) -> Verified {
        Verified(OnceLock::from(Arc::clone(self.0.get_or_init(Arc::default))))
    }

    /// True when `client`'s runtime was confirmed before (for the op's one kernel).
    fn seen(&self, client: &Client) -> bool {
        self.seen_kernel(client, 0)
    }

    fn confirm(&self, client: &Client) {
        self.confirm_kernel(client, 0)
    }

    /// Waits for `queued` (kernel `which` of the op) unless that kernel was confirmed on
    /// `client`'s runtime before; a first launch that ran confirms it.
    fn wait_unless_seen(
        &self,
        client: &Client,
        which: u64,
        queued: Vec<launch::Queued>,
    ) -> Result<(), Error> {
        if self.seen_kernel(client, which) {
            return Ok(());
        }
        launch::wait_all(client, queued, vec![])?;
        self.confirm_kernel(client, which);
        Ok(())
    }

    /// True when kernel `which` of the op was confirmed on `client`'s runtime before.
    fn seen_kernel(&self, client: &Client, which: u64) -> bool {
        self.record().lock().is_ok_and(|v| v.contains(&(client.name(), which)))
    }

    fn confirm_kernel(&self, client: &Client, which: u64) {
        if let Ok(mut v) = self.record().lock() {
            if !v.contains(&(client.name(), which)) {
                v.push((client.name(), which));
            }
        }
    }
}
