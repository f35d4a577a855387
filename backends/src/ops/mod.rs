//! The ops a macro (or a runtime builder) produces. What a gather and a slice share lives here:
//! the validated plan built once, the checks of host buffers, and one path that uploads, queues
//! and reads back any kernel ([`launch::Queue`]).

pub(crate) mod chain;
pub(crate) mod gather;
#[cfg(feature = "test-support")]
mod guarded;
mod slice;

pub use chain::{ChainKernel, ChainOp, IndexBuffer, IndexBuffers, IndexTypes, StageKernel};
pub use gather::GatherOp;
pub use slice::SliceOp;

use crate::device::{with_client, Device};
use crate::element::Element;
use crate::error::Error;
use crate::launch::{self, Queue};
use cubecl::bytes::Bytes;
use cubecl::prelude::*;
use cubecl::server::Handle;
use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};
use stridex_core::kernel::Walk;
use stridex_core::{Operand, RuleError, TensorLayout};

/// A host buffer for `tensor`: a packed layout takes exactly its elements (a longer buffer
/// would be read only in part, hiding a batch-size mistake); a strided one at least its span.
fn check_len(tensor: Operand, layout: &TensorLayout, given: usize) -> Result<(), Error> {
    let needed = layout.min_buffer_len().unwrap_or(usize::MAX);
    if given < needed {
        return Err(Error::BufferTooShort { tensor, needed, given });
    }
    if layout.is_packed() && given > needed {
        return Err(Error::BufferTooLong { tensor, expected: needed, given });
    }
    Ok(())
}

/// The count of a `_` tensor's leading dimension: its buffer's length in whole rows.
fn leading_count(tensor: Operand, sizes: &[usize], given: usize) -> Result<usize, Error> {
    let row = stridex_core::dynamic::row_elements(sizes);
    if given % row != 0 {
        return Err(Error::PartialRow { tensor, given, row });
    }
    Ok(given / row)
}

/// A `_` op's walk (planned at the placeholder count) for `count` leading steps, with the
/// buffers of the plan for that count. The kernel it launches is specialized on
/// [`stridex_core::kernel::RowWalk::count_free`], the same for every count.
fn walk_at(
    walk: &Walk,
    count: usize,
    src: &TensorLayout,
    out: &TensorLayout,
    elem_bytes: usize,
) -> Result<Walk, Error> {
    walk.with_count(count, src, out, elem_bytes).ok_or(Error::Rule(RuleError::TooLarge {
        tensor: Operand::Output,
        elements: Some(out.num_elements()),
        elem_bytes,
    }))
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

/// Bytes of a buffer of `layout` with `elem_bytes`-byte elements, in whole 32-bit words.
fn word_bytes(layout: &TensorLayout, elem_bytes: usize) -> usize {
    (layout.min_buffer_len().unwrap_or(0) * elem_bytes).div_ceil(4) * 4
}

/// The runtimes (by CubeCL's name for them) on which an op's kernel has been seen to run.
/// CubeCL drops a launch whose kernel fails to build with only a log line; building is
/// deterministic, so the first launch per runtime waits for the status word and later ones
/// need not.
struct Verified(Mutex<Vec<&'static str>>);

impl Verified {
    const fn new() -> Verified {
        Verified(Mutex::new(Vec::new()))
    }

    /// True when `client`'s runtime was confirmed before.
    fn seen(&self, client: &Client) -> bool {
        self.0.lock().is_ok_and(|v| v.contains(&client.name()))
    }

    fn confirm(&self, client: &Client) {
        if let Ok(mut v) = self.0.lock() {
            if !v.contains(&client.name()) {
                v.push(client.name());
            }
        }
    }
}

/// An op's validated plan and kernel descriptor, built on first use (the macro already checked
/// the same rules at compile time; building them again is cheap and keeps the unchecked launch's
/// bounds derived by one code path).
struct Prepared<P, K> {
    plan: P,
    kernel: Option<K>,
}

type Cell<P, K> = OnceLock<Result<Prepared<P, K>, RuleError>>;

impl<P: Clone, K: Clone> Prepared<P, K> {
    /// The plan and kernel of one launch: these, or for a `_` op (`dynamic`) those for `count`:
    /// `plan_at` plans the count, and `kernel_at` moves this kernel to that plan (never called
    /// for an empty output, which launches nothing). `None` for `count`: `call` was made
    /// without one, an `Err` for a `_` op.
    #[allow(clippy::type_complexity)]
    fn at(
        &self,
        dynamic: bool,
        count: Option<usize>,
        call: &'static str,
        plan_at: impl FnOnce(usize) -> Result<P, RuleError>,
        output: impl Fn(&P) -> &TensorLayout,
        kernel_at: impl FnOnce(&K, &P, usize) -> Result<K, Error>,
    ) -> Result<(Cow<'_, P>, Option<Cow<'_, K>>), Error> {
        if !dynamic {
            return Ok((Cow::Borrowed(&self.plan), self.kernel.as_ref().map(Cow::Borrowed)));
        }
        let Some(count) = count else { return Err(Error::CountNeeded { call }) };
        let plan = plan_at(count)?;
        let kernel = match &self.kernel {
            Some(k) if !output(&plan).is_empty() => Some(Cow::Owned(kernel_at(k, &plan, count)?)),
            _ => None,
        };
        Ok((Cow::Owned(plan), kernel))
    }
}

fn prepare<P, K>(
    cell: &Cell<P, K>,
    plan: impl FnOnce() -> Result<P, RuleError>,
    kernel: impl FnOnce(&P) -> Option<K>,
) -> Result<&Prepared<P, K>, Error> {
    cell.get_or_init(|| plan().map(|plan| Prepared { kernel: kernel(&plan), plan }))
        .as_ref()
        .map_err(|e| Error::Rule(e.clone()))
}

/// Uploads `inputs` (bytes, and the words each buffer needs), queues `kernel` on them and a new
/// output, and reads the status and the output back in one round trip. The uploads and the
/// launch run on CubeCL's device thread, under stridex's device lock (see `launch`).
fn run_kernel<K: Queue + Sync>(
    device: &Device,
    kernel: &K,
    inputs: &[(&[u8], usize)],
    output_gaps: bool,
) -> Result<(bool, Bytes), Error> {
    with_client!(device, c => {
        let (queued, out) = launch::on_device_thread(c, || {
            let handles: Vec<Handle> = inputs.iter().map(|&(bytes, words)| launch::upload(c, bytes, words)).collect();
            let out = launch::output(c, kernel.walk(), output_gaps);
            (kernel.queue(c, &handles, &out), out)
        })?;
        let (flagged, mut bytes) = queued.wait(c, vec![out])?;
        Ok((flagged, bytes.remove(0)))
    })
}

/// Queues `kernel` on the caller's device buffers after checking each against the bytes it
/// needs; waits (and returns whether an index was out of range) when `wait`, or on the op's
/// first launch on `R`.
fn launch_on<K: Queue>(
    client: &Client,
    kernel: &K,
    inputs: &[(Operand, &Handle, usize)],
    output: (&Handle, usize),
    wait: bool,
    verified: &Verified,
) -> Result<bool, Error> {
    for &(tensor, handle, needed) in inputs.iter().chain([&(Operand::Output, output.0, output.1)]) {
        launch::check_handle(tensor, handle, needed)?;
    }
    let wait = wait || !verified.seen(client);
    let handles: Vec<Handle> = inputs.iter().map(|(_, h, _)| (*h).clone()).collect();
    launch::exclusive(|| {
        let queued = kernel.queue(client, &handles, output.0);
        if !wait {
            return Ok(false);
        }
        let (flagged, _) = queued.wait(client, vec![])?;
        verified.confirm(client);
        Ok(flagged)
    })
}
