//! The plumbing every launch shares: uploads, output buffers, the status word a kernel writes,
//! cube sizes per runtime, waiting and reading back, and the device lock. The kernels and their
//! launchers (`crate::kernels`) sit on top of it.

use crate::error::Error;
use cubecl::bytes::Bytes;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::Walk;
use stridex_core::Operand;

/// Invocations per cube; within every backend's limit (WebGPU guarantees 256).
pub(crate) const CUBE_DIM: u32 = 256;

/// Written to `status[1]` by invocation 0. CubeCL drops a launch whose kernel fails to expand
/// or compile with only a log line; a missing marker turns that into an error.
pub const RAN_MARKER: u32 = 0x5354_5844;

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

/// A new status buffer: word 0 the out-of-range flag, word 1 the [`RAN_MARKER`].
pub(crate) fn status(client: &Client) -> Handle {
    upload(client, &[0; 8], 2)
}

impl Queued {
    /// The launch that writes `status`.
    pub(crate) fn new(status: Handle) -> Queued {
        Queued { status }
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
pub(crate) fn cube_dim(client: &Client) -> CubeDim {
    if is_cpu(client) {
        let cores = client.properties().hardware.num_cpu_cores.unwrap_or(1);
        CubeDim::new_1d(cores.clamp(1, CUBE_DIM))
    } else {
        CubeDim::new_1d(CUBE_DIM)
    }
}

pub(crate) fn is_cpu(client: &Client) -> bool {
    client.name() == "cpu"
}

pub(crate) fn cube_count(client: &Client, invocations: u32) -> CubeCount {
    // Spreads over y and z so no cube count dimension exceeds 65535.
    cubecl::calculate_cube_count_elemwise(client, invocations as usize, cube_dim(client))
}

/// A handle must be of `client`'s device: another device's memory CubeCL refuses by panicking
/// on the launch or read.
pub(crate) fn check_device(client: &Client, tensor: Operand, handle: &Handle) -> Result<(), Error> {
    match handle.service == client.service_id() {
        true => Ok(()),
        false => Err(Error::ForeignHandle { tensor }),
    }
}

/// A handle must be of `client`'s device ([`check_device`]), and its usable bytes must cover what the kernel
/// touches, from an offset the device can bind (`client`'s memory alignment: CubeCL's wgpu
/// device panics on any other). Burn's views keep that alignment; a handle moved by
/// `offset_start` by hand may not.
pub(crate) fn check_handle(
    client: &Client,
    tensor: Operand,
    handle: &Handle,
    needed: usize,
) -> Result<(), Error> {
    check_device(client, tensor, handle)?;
    let offset = handle.offset_start.unwrap_or(0);
    let alignment = client.properties().memory.alignment.max(1);
    if offset % alignment != 0 {
        return Err(Error::HandleMisaligned { tensor, offset, alignment });
    }
    let given = handle.size_in_used() as usize;
    if given < needed {
        return Err(Error::HandleTooSmall { tensor, needed, given });
    }
    Ok(())
}
