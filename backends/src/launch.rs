//! Uploads, launches and reads back, generic over the CubeCL runtime.

use crate::error::Error;
use crate::kernels::{gather_kernel, rows_kernel, slice_kernel, RAN_MARKER};
use cubecl::bytes::Bytes;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{GatherKernelDesc, RowAccess, RowWalk, SliceKernelDesc, Walk};
use stridex_core::Operand;

/// Invocations per cube; within every backend's limit (WebGPU guarantees 256).
const CUBE_DIM: u32 = 256;

/// `bytes` as a device buffer of at least `words` 32-bit words, zero-padded.
pub(crate) fn upload(client: &Client, bytes: &[u8], words: usize) -> Handle {
    let len = (words * 4).max(bytes.len().div_ceil(4) * 4).max(4);
    client.create(crate::staging::staged(bytes, len))
}

/// An output buffer for `walk`: zeroed when the layout leaves slots that no element writes.
pub(crate) fn output(client: &Client, walk: &Walk, zeroed: bool) -> Handle {
    let bytes = walk.out_words() as usize * 4;
    if zeroed {
        client.create(crate::staging::staged(&[], bytes))
    } else {
        client.empty(bytes)
    }
}

pub(crate) fn read(client: &Client, handle: Handle) -> Result<Bytes, Error> {
    Ok(read_all(client, vec![handle])?.remove(0))
}

/// Reads several buffers in one round trip to the device.
pub(crate) fn read_all(client: &Client, handles: Vec<Handle>) -> Result<Vec<Bytes>, Error> {
    // Compile and launch failures surface on flush, not on read (wgpu).
    client.flush().map_err(|e| Error::Device(format!("{e:?}")))?;
    cubecl::future::block_on(client.read_async(handles)).map_err(|e| Error::Device(format!("{e:?}")))
}

/// A launch in the device's queue, with the status buffer its kernel writes.
#[must_use = "a launch's status says whether it ran"]
pub(crate) struct Queued {
    status: Handle,
}

impl Queued {
    /// Waits for the launch, reading `also` in the same round trip; returns whether an index
    /// was out of range (error policy) and the bytes of `also`.
    pub(crate) fn wait(self, client: &Client, also: Vec<Handle>) -> Result<(bool, Vec<Bytes>), Error> {
        wait_all(client, vec![self], also)
    }
}

/// Waits for several launches, reading `also` in the same round trip; returns whether any
/// raised its out-of-range flag, and the bytes of `also`. A launch that CubeCL dropped (it logs
/// and swallows kernel build failures) left no marker.
pub(crate) fn wait_all(
    client: &Client,
    queued: Vec<Queued>,
    also: Vec<Handle>,
) -> Result<(bool, Vec<Bytes>), Error> {
    let n = queued.len();
    let mut handles: Vec<Handle> = queued.into_iter().map(|q| q.status).collect();
    handles.extend(also);
    let mut bytes = read_all(client, handles)?;
    let also = bytes.split_off(n);
    let mut flagged = false;
    for status in &bytes {
        let word = |i: usize| u32::from_le_bytes(status[4 * i..4 * i + 4].try_into().unwrap());
        if word(1) != RAN_MARKER {
            return Err(Error::Device(
                "the kernel did not run (CubeCL dropped the launch; RUST_LOG=warn or \
                 CUBECL_DEBUG_LOG=stderr shows its reason)"
                    .into(),
            ));
        }
        flagged |= word(0) != 0;
    }
    Ok((flagged, also))
}

/// Serializes stridex's own traffic with the device. CubeCL 0.10's client queue spins (hundreds
/// of thousands of `pause`s, then yields) while another thread's batch is in flight, so N
/// threads calling `run` at once starve CubeCL's device thread and, on lavapipe, the device
/// itself: measured, 16 threads reached 0.12x the ops/s of one. Waiting here sleeps instead.
static DEVICE_TRAFFIC: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` on CubeCL's device thread, where its client calls execute inline instead of each
/// making a round trip through CubeCL's queue. Host buffers that `f` copies are then allocated
/// and freed by that one thread: copies made by each calling thread and freed by the device
/// thread defeated the allocator's reuse (measured: page faults were a fifth of all CPU time
/// with 16 callers, and each call took twice as long).
pub(crate) fn on_device_thread<T: Send + 'static>(
    client: &Client,
    f: impl FnOnce() -> T + Send,
) -> Result<T, Error> {
    client.exclusive(f).map_err(|e| Error::Device(format!("{e:?}")))
}

/// Runs `f` while holding stridex's device lock (see [`DEVICE_TRAFFIC`]).
pub(crate) fn exclusive<T>(f: impl FnOnce() -> T) -> T {
    let _guard = DEVICE_TRAFFIC.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    f()
}

/// Invocations per cube: [`CUBE_DIM`] on GPUs and wgpu; on CubeCL's CPU runtime one per core.
/// There each unit of a cube is a task that loops over every cube, so a cube of 256 made 256
/// tasks per launch for 2 cores.
fn cube_dim(client: &Client) -> CubeDim {
    if is_cpu(client) {
        let cores = client.properties().hardware.num_cpu_cores.unwrap_or(1);
        CubeDim::new_1d(cores.clamp(1, CUBE_DIM))
    } else {
        CubeDim::new_1d(CUBE_DIM)
    }
}

fn is_cpu(client: &Client) -> bool {
    client.name() == "cpu"
}

fn cube_count(client: &Client, invocations: u32) -> CubeCount {
    // Spreads over y and z so no cube count dimension exceeds 65535.
    cubecl::calculate_cube_count_elemwise(client, invocations as usize, cube_dim(client))
}

/// The most lines of a row one invocation moves on CubeCL's CPU runtime (64 KiB of 16-byte
/// lines). Measured on the bench's beam reorder (rows of 16384 lines, three runs each):
/// 256 lines 15.6-18.6 GB/s, 1024 lines 16.3-33.0, 4096 lines 19.4-37.8.
const CPU_TILE_MAX: u32 = 4096;

/// Lines of a row per invocation on CubeCL's CPU runtime, where an invocation costs far more
/// than on a GPU or lavapipe (measured there: a row gather moving 4 vectors per invocation
/// reached 15 GB/s, 64 vectors 27 GB/s, 256 vectors 35 GB/s): the longest tile of lines that
/// divides the row, up to [`CPU_TILE_MAX`], keeping at least 64 invocations for the cores.
/// Lines read whole (forwards or reversed) or element by element (with a group, each line of
/// the tile is that line of every row of the group: columns of f32 went from 3.5-5.3 to
/// 8.5-10.6 GB/s). Elements narrower than a word keep their tile: a loop of lanes packed into
/// words measured slower (columns of u8, four runs: 1.44-1.91 GB/s with the walk's tile, 1.0-1.4
/// with 8 lines, 0.75-1.35 with 128); so do transposed blocks. `None` keeps the walk's tile.
fn cpu_tile(w: &RowWalk, invocations: u32) -> Option<u32> {
    let whole_lines = matches!(w.access, RowAccess::Lines | RowAccess::ReversedLines) && w.group.is_none();
    let whole_elements = w.access == RowAccess::Elements && w.lanes == 1;
    if !(whole_lines || whole_elements) || w.spread {
        return None;
    }
    let rows = u64::from(invocations) * u64::from(w.tile) / u64::from(w.row_lines.max(1));
    (1..=w.row_lines.min(CPU_TILE_MAX))
        .rev()
        .find(|&t| w.row_lines % t == 0 && rows * u64::from(w.row_lines / t) >= 64)
        .filter(|&t| t > w.tile)
}

/// A handle's usable bytes must cover what the kernel touches.
pub(crate) fn check_handle(tensor: Operand, handle: &Handle, needed: usize) -> Result<(), Error> {
    let given = handle.size_in_used() as usize;
    if given < needed {
        return Err(Error::HandleTooSmall { tensor, needed, given });
    }
    Ok(())
}

/// A kernel descriptor stridex can queue: its walk, and how it binds its buffers.
pub(crate) trait Queue {
    fn walk(&self) -> &Walk;

    /// Queues the kernel on `inputs` (a gather's data and indices, a slice's input) and
    /// `output`, buffers the caller checked against the descriptor.
    fn queue(&self, client: &Client, inputs: &[Handle], output: &Handle) -> Queued;
}

impl Queue for GatherKernelDesc {
    fn walk(&self) -> &Walk {
        &self.walk
    }

    fn queue(&self, client: &Client, inputs: &[Handle], output: &Handle) -> Queued {
        gather(client, self, &inputs[0], &inputs[1], output)
    }
}

impl Queue for SliceKernelDesc {
    fn walk(&self) -> &Walk {
        &self.walk
    }

    fn queue(&self, client: &Client, inputs: &[Handle], output: &Handle) -> Queued {
        slice(client, self, &inputs[0], output)
    }
}

/// Queues a gather on device buffers (checked by the caller against the descriptor).
fn gather(client: &Client, k: &GatherKernelDesc, data: &Handle, indices: &Handle, output: &Handle) -> Queued {
    let status = upload(client, &[0; 8], 2);
    let index_words = indices.size_in_used() as usize / 4;
    // SAFETY: `launch_unchecked` skips bounds checks. The kernel reads data words below
    // `src_words`, index words below the indices' minimum length, and writes output words below
    // `out_words`: the descriptor was derived from a plan that passed every rule of
    // stridex-core (checked by the macro at compile time and again when the op was built; for a
    // `_` op, at this launch's count, when it was known: see `rows`), and the caller checked
    // each buffer against those lengths (`check_handle`, or `upload`'s sizing). Out-of-range
    // indices are clamped or never dereferenced (`read_index`).
    unsafe {
        match &k.walk {
            Walk::Rows(w) => rows(client, w, &[indices], data, output, &status),
            Walk::Slots(m) => gather_kernel::launch_unchecked(
                client,
                cube_count(client, m.invocations),
                cube_dim(client),
                m.line as usize,
                BufferArg::from_raw_parts(data.clone(), m.src_words as usize),
                BufferArg::from_raw_parts(indices.clone(), index_words),
                BufferArg::from_raw_parts(output.clone(), m.out_words as usize),
                BufferArg::from_raw_parts(status.clone(), 2),
                m.invocations,
                m.out_slots,
                m.count_free(),
                k.index,
            ),
        }
    }
    Queued { status }
}

/// Queues a slice on device buffers checked by the caller.
fn slice(client: &Client, k: &SliceKernelDesc, input: &Handle, output: &Handle) -> Queued {
    let status = upload(client, &[0; 8], 2);
    // SAFETY: as for `gather`: the descriptor comes from a plan that passed every rule (window
    // inside the input, output disjoint), and the buffers hold at least `src_words` and
    // `out_words` words.
    unsafe {
        match &k.walk {
            Walk::Rows(w) => rows(client, w, &[], input, output, &status),
            Walk::Slots(m) => slice_kernel::launch_unchecked(
                client,
                cube_count(client, m.invocations),
                cube_dim(client),
                m.line as usize,
                BufferArg::from_raw_parts(input.clone(), m.src_words as usize),
                BufferArg::from_raw_parts(output.clone(), m.out_words as usize),
                BufferArg::from_raw_parts(status.clone(), 2),
                m.invocations,
                m.out_slots,
                m.count_free(),
            ),
        }
    }
    Queued { status }
}

/// Queues a fused chain on `data` and its index buffers in stage order (checked by the caller
/// against the descriptor).
pub(crate) fn fused(
    client: &Client,
    k: &stridex_core::ChainKernelDesc,
    data: &Handle,
    indices: &[&Handle],
    output: &Handle,
) -> Queued {
    let status = upload(client, &[0; 8], 2);
    let Walk::Rows(w) = &k.walk else { unreachable!("a fused chain takes the row walk") };
    // SAFETY: the walk was lowered from a chain plan whose every stage passed its rules
    // (checked by `chain!` at compile time and again when the op was built), so every data
    // offset it forms from in-range (or clamped, or zeroed) indices lies inside the data's
    // span, and every index read inside its index tensor; the caller checked each buffer
    // against `src_words`, the index layouts and `out_words`. Indices out of range under
    // `error` were refused on the host before this launch.
    unsafe { rows(client, w, indices, data, output, &status) };
    Queued { status }
}

/// Launches the row kernel on `data`, the index buffers its reads name (in buffer order; the
/// status buffer stands in for those a walk does not read), and `output`.
///
/// # Safety
/// As for [`gather`]: the buffers hold the words the walk touches. For a `_` walk, `w` is the
/// walk for one count (`RowWalk::with_count`): its invocation limit and buffer lengths come from
/// the plan for that count, which passed every rule when the count was known, and the kernel
/// it launches (specialized on the count-free walk) touches nothing past them.
pub(crate) unsafe fn rows(
    client: &Client,
    w: &RowWalk,
    indices: &[&Handle],
    data: &Handle,
    output: &Handle,
    status: &Handle,
) {
    // The count-free walk is what the kernel is specialized on: for a `_` walk, every count
    // shares one compiled kernel, bounded by `limit`, with buffers of this count's lengths.
    let (mut limit, src_words, out_words) = (w.invocations, w.src_words as usize, w.out_words as usize);
    let mut w = w.count_free();
    w.spread = tile_spread(client);
    if is_cpu(client) {
        if let Some(tile) = cpu_tile(&w, limit) {
            // Both tiles divide the row: `limit` is rows * row_lines / tile exactly, and so is
            // the new count (the new tile need not be a multiple of the old: 6 lines after 4).
            let rows = limit / (w.row_lines / w.tile);
            limit = rows * (w.row_lines / tile);
            if !w.dynamic {
                w.invocations = limit;
            }
            w.tile = tile;
        }
    }
    let index = |i: usize| match indices.get(i) {
        // SAFETY: (of the caller) the index buffer holds the words the reads touch.
        Some(h) => unsafe { BufferArg::from_raw_parts(h.to_owned().clone(), h.size_in_used() as usize / 4) },
        None => unsafe { BufferArg::from_raw_parts(status.clone(), 2) },
    };
    unsafe {
        rows_kernel::launch_unchecked(
            client,
            cube_count(client, limit),
            cube_dim(client),
            w.src_line() as usize,
            w.line as usize,
            BufferArg::from_raw_parts(data.clone(), src_words),
            index(0),
            index(1),
            index(2),
            index(3),
            BufferArg::from_raw_parts(output.clone(), out_words),
            BufferArg::from_raw_parts(status.clone(), 2),
            limit,
            w,
        );
    }
}

/// Whether a row kernel's tile spreads through its row (neighbouring invocations on
/// neighbouring lines: what GPUs coalesce) or takes consecutive lines (measured faster on
/// lavapipe, where an invocation is a SIMD lane of a CPU thread). GPUs spread; wgpu's adapters
/// are mostly GPUs, but stridex cannot tell lavapipe from one through a bare client, and its CI
/// device is lavapipe: wgpu takes consecutive lines unless `STRIDEX_TILE=spread`.
fn tile_spread(client: &Client) -> bool {
    static FORCED: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    let forced = *FORCED.get_or_init(|| match std::env::var("STRIDEX_TILE").as_deref() {
        Ok("spread") => Some(true),
        Ok("consecutive") => Some(false),
        _ => None,
    });
    forced.unwrap_or_else(|| matches!(client.name(), "cuda" | "hip"))
}
