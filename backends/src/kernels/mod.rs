//! The CubeCL kernels, each specialized by a comptime descriptor from `stridex_core::kernel`,
//! with its launcher and its definition (what `explain` compiles) beside its `#[cube]` code:
//! the row kernel (`rows`: gathers, slices and fused chains whose output rows are whole
//! vector lines), and a gather and a slice kernel for any layout (the slot walk), sharing the
//! `#[cube]` pieces below; and a scatter's kernels (`scatter_op`: grouped on the host, or
//! reading the indices on the device). `Launch` is what an op needs of a kernel descriptor: queue it on
//! buffers, size its buffers, and define it for `explain`.
//!
//! Buffers are arrays of 32-bit words (or vectors of them): data movement does not care about
//! types, and WGSL has no 8-, 16- or 64-bit storage. Index arithmetic is 32-bit (`usize` under
//! CubeCL's default 32-bit address type); every divisor is a literal.

mod chain;
mod convert;
mod gather;
mod index;
mod rows;
pub(crate) mod scatter;
pub(crate) mod scatter_grouping;
pub(crate) mod scatter_lines;
pub(crate) mod scatter_on_device;
mod scatter_op;
pub(crate) mod scatter_rows;
mod slice;

pub use crate::launch::RAN_MARKER;
pub use chain::{ChainKernel, StageKernel};
pub use convert::convert_kernel;
pub use gather::gather_kernel;
pub use rows::rows_kernel;
pub use scatter::scatter_kernel;
pub use scatter_lines::scatter_lines_kernel;
pub use scatter_on_device::OnDevice;
pub use scatter_op::ScatterKernel;
pub use scatter_rows::{claim_rows_kernel, write_rows_kernel};
pub use slice::slice_kernel;

use crate::error::Error;
use crate::launch::{Queued, CUBE_DIM};
use cubecl::ir::{DeviceIdentity, DeviceProperties, HardwareProperties, MemoryDeviceProperties};
use cubecl::prelude::*;
use cubecl::server::Handle;
use std::sync::Arc;
use stridex_core::kernel::{MoveDesc, Walk};
use stridex_core::{GatherPlan, OpPlan, TensorLayout};

/// A kernel descriptor stridex queues and explains: one kernel, or a chain's kernels.
pub(crate) trait Launch {
    /// The walk of a descriptor that is one kernel (`None`: it launches nothing, or it is
    /// several kernels, which name their first and last walks themselves).
    fn walk(&self) -> Option<&Walk>;

    /// The walk of the kernel that reads the op's first input (`None`: it launches nothing).
    fn first_walk(&self) -> Option<&Walk> {
        self.walk()
    }

    /// The walk of the kernel that writes the op's output (`None`: it launches nothing).
    fn last_walk(&self) -> Option<&Walk> {
        self.walk()
    }

    /// Queues the kernel(s) on `inputs` (the data or input, then each index buffer the walks
    /// read, in order) and `output`, buffers the caller checked against the descriptor.
    fn queue(&self, client: &Client, inputs: &[&Handle], output: &Handle) -> Vec<Queued>;

    /// The kernel definitions, as `explain` compiles them: each with a heading where there is
    /// more than one, `None` for a stage that launches nothing.
    fn definitions(&self) -> Vec<(Option<String>, Option<KernelDefinition>)>;
}

/// The kernel of one op kind's plan: how it is made, moved to a `_` op's count, and how many
/// bytes of indices it reads.
pub(crate) trait OpKernel: Launch + Clone + std::fmt::Debug + Send + Sync + Sized {
    type Plan: OpPlan;

    /// The kernel of a plan (`None` for an empty output: nothing to launch).
    fn of(plan: &Self::Plan) -> Option<Self>;

    /// The same compiled kernel on the walk `at` makes of its own (a `_` op's walk at a
    /// count: the invocation limit and buffer lengths change, the specialization does not).
    fn with_walk(
        &self,
        plan: &Self::Plan,
        at: impl FnOnce(&Walk) -> Result<Walk, Error>,
    ) -> Result<Self, Error>;

    /// Bytes of the op's index buffer (a chain's largest; none for a slice).
    fn index_bytes(_plan: &Self::Plan) -> usize {
        0
    }

    /// Bytes of the op's updates buffer (a scatter's; none for the others).
    fn updates_bytes(_plan: &Self::Plan) -> usize {
        0
    }

    /// The definitions `explain` compiles for `plan`, with no client: those of the kernels a
    /// device of [`offline_tile_spread`]'s kind launches, where that differs from the
    /// descriptor's compiled form (a GPU groups a scatter's lists on the device, and runs a
    /// gather folded into a grouped scatter as its two stages).
    fn offline_definitions(&self, _plan: &Self::Plan) -> Vec<(Option<String>, Option<KernelDefinition>)> {
        self.definitions()
    }
}

/// Whether a kernel's tile spreads through its row (a row kernel's lines, the grouped
/// scatter's units: neighbouring invocations on neighbouring ones, what GPUs coalesce) or
/// takes consecutive ones (measured faster on lavapipe, where an invocation is a SIMD lane of
/// a CPU thread). GPUs spread: a device whose identity names a physical card (CubeCL gives
/// CUDA's and HIP's one, and wgpu's adapters but CPU ones, so not lavapipe, Mesa's llvmpipe
/// on OpenGL or the CPU runtime). The other choices made for GPUs follow it (the grouped
/// scatter's `batch` and lists grouped on the device, the line scatter's `parts`), and
/// `STRIDEX_TILE=spread` or `consecutive` forces them: CI runs the GPU kernels on lavapipe,
/// and a GPU session can time the kernels a CPU device takes beside its own.
pub(crate) fn tile_spread(client: &Client) -> bool {
    forced_tile_spread().unwrap_or_else(|| client.properties().identity.physical.is_some())
}

/// Whether the grouped scatter's lists are made on the device from its indices
/// (`stridex_core::kernel::ScatterGroupingDesc`) rather than read back and sorted on the host:
/// on GPUs (as `tile_spread` says), where the round trip costs more than the kernels. On
/// lavapipe and the CPU runtime the host's sort is faster than the device's.
pub(crate) fn group_on_device(client: &Client) -> bool {
    tile_spread(client)
}

/// Where `STRIDEX_TILE=spread` shows what a GPU runs and a scatter's lists are grouped on the
/// device there: the grouping kernels' definitions, then the grouped kernel's over every run of
/// `dest` (for `explain`, and CI's CUDA offline check).
pub(crate) fn offline_grouping(
    plan: &stridex_core::ScatterPlan,
    dest: &stridex_core::TensorLayout,
) -> Option<Vec<(Option<String>, Option<KernelDefinition>)>> {
    // GPUs group on the device; the consecutive tiles stand for the CPU-like runtimes.
    if !offline_tile_spread() {
        return None;
    }
    let Some(ScatterKernel::Grouped(_)) = ScatterKernel::writing(plan, dest) else { return None };
    Some(OnDevice::grouped(plan, dest, false)?.definitions())
}

/// The tiles of a definition written for `explain`, with no client: consecutive, unless
/// `STRIDEX_TILE` says (so `STRIDEX_TILE=spread` shows, and CI's CUDA offline check compiles,
/// the kernels CUDA runs).
pub(crate) fn offline_tile_spread() -> bool {
    forced_tile_spread().unwrap_or(false)
}

fn forced_tile_spread() -> Option<bool> {
    static FORCED: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| match std::env::var("STRIDEX_TILE").as_deref() {
        Ok("spread") => Some(true),
        Ok("consecutive") => Some(false),
        _ => None,
    })
}

/// Bytes of a gather's index buffer.
pub(crate) fn index_bytes(g: &GatherPlan) -> usize {
    word_bytes(&g.indices, g.index_type.words() * 4)
}

/// Bytes of a buffer of `layout` with `elem_bytes`-byte elements, in whole 32-bit words.
pub(crate) fn word_bytes(layout: &TensorLayout, elem_bytes: usize) -> usize {
    (layout.min_buffer_len().unwrap_or(0) * elem_bytes).div_ceil(4) * 4
}

/// What the launcher of a `launch_unchecked` kernel sets, for a definition made offline.
fn settings() -> KernelSettings {
    KernelSettings::new(CubeDim::new_1d(CUBE_DIM).into(), ExecutionMode::Unchecked, AddressType::U32)
}

/// Device properties for a definition made without a device. The kernels read none of them
/// (they query no plane size, shared memory or feature); `define` only carries them.
fn offline_device() -> Arc<DeviceProperties> {
    let hardware = HardwareProperties {
        load_width: 128,
        vector_register_count: None,
        plane_size_min: 32,
        plane_size_max: 32,
        max_bindings: 16,
        max_shared_memory_size: 0,
        max_cube_count: (65535, 65535, 65535),
        max_units_per_cube: 1024,
        max_cube_dim: (1024, 1024, 64),
        num_streaming_multiprocessors: None,
        num_cpu_cores: None,
        last_level_cache_size: None,
        num_tensor_cores: None,
        min_tensor_cores_dim: None,
        max_vector_size: 4,
        cube_mma_reserved_shared_memory: 0,
    };
    Arc::new(DeviceProperties::new(
        Default::default(),
        MemoryDeviceProperties::new(u64::MAX, 32),
        hardware,
        cubecl::profile::TimingMethod::System,
        DeviceIdentity::default(),
    ))
}

/// The four index-buffer arguments of a row or convert kernel: the buffers its walk's reads
/// name, in buffer order, then the status buffer (never read) for the rest.
///
/// # Safety
/// Each handle in `indices` holds the words the walk's reads touch.
unsafe fn index_args(indices: &[&Handle], status: &Handle) -> [BufferArg; 4] {
    std::array::from_fn(|i| match indices.get(i) {
        // SAFETY: (of the caller) the index buffer holds the words the reads touch.
        Some(h) => unsafe { BufferArg::from_raw_parts((*h).clone(), h.size_in_used() as usize / 4) },
        None => unsafe { BufferArg::from_raw_parts(status.clone(), 2) },
    })
}

/// A longer tile for CubeCL's CPU runtime, where an invocation costs far more than on a GPU:
/// the longest `t <= max` that divides `row` and `fits`, keeping at least 64 invocations for
/// the cores, where it is longer than `tile` (which divides `row`); with the invocation count
/// for it (rows * row / t, exactly: both tiles divide the row, and the new one need not be a
/// multiple of the old, 6 lines after 4).
fn cpu_retile(
    row: u32,
    tile: u32,
    invocations: u32,
    max: u32,
    fits: impl Fn(u32) -> bool,
) -> Option<(u32, u32)> {
    let rows = u64::from(invocations) * u64::from(tile) / u64::from(row.max(1));
    let longer = (1..=row.min(max))
        .rev()
        .find(|&t| row % t == 0 && fits(t) && rows * u64::from(row / t) >= 64)
        .filter(|&t| t > tile)?;
    Some((longer, invocations / (row / tile) * (row / longer)))
}

/// A buffer argument of a definition: read and written in place of nothing.
const BUFFER: BufferCompilationArg = BufferCompilationArg { inplace: None };

/// A kernel's definition as its launcher specializes it (for `explain`): the struct
/// `#[cube(launch_unchecked)]` generates for it, built with the launcher's settings and offline
/// device properties, one [`BUFFER`] per buffer parameter (named as the kernel names them), then
/// its other compilation arguments in order (`()` for a scalar, vector sizes, the comptime
/// descriptor).
macro_rules! offline_definition {
    ($kernel:ty, buffers[$($buffer:ident)*], $($arg:expr),* $(,)?) => {
        <$kernel>::new(
            $crate::kernels::settings(),
            $crate::kernels::offline_device(),
            ::std::sync::Arc::new(::cubecl::ir::TargetProperties::default()),
            $($crate::kernels::buffer_arg!($buffer),)*
            $($arg),*
        )
        .define()
    };
}

/// [`BUFFER`], for the buffer parameter it names.
macro_rules! buffer_arg {
    ($buffer:ident) => {
        $crate::kernels::BUFFER
    };
}

use {buffer_arg, offline_definition};

/// Marks the launch as having run (see [`RAN_MARKER`]), and says whether invocation `pos` has
/// work: a `_` walk is specialized without its count, so `limit` bounds its invocations; other
/// walks are bounded by their constant `invocations`.
#[cube]
pub(crate) fn start(
    pos: usize,
    status: &mut [u32],
    limit: u32,
    #[comptime] dynamic: bool,
    #[comptime] invocations: u32,
) -> bool {
    if pos == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    if comptime!(dynamic) {
        pos < usize::cast_from(limit)
    } else {
        pos < comptime!(invocations as usize)
    }
}

/// [`start`] of a kernel bounded by a constant: marks the launch as having run and says
/// whether invocation `pos` is below `invocations`.
#[cube]
pub(crate) fn start_below(pos: usize, status: &mut [u32], #[comptime] invocations: u32) -> bool {
    start(pos, status, 0u32, false, invocations)
}

/// Where output slot `slot` comes from: whether it is an element (not padding), the sum of its
/// forward source steps (from the base offset), and a second sum: the backward source steps of
/// a slice's negative strides, or the indices word offset of a gather. The two never meet (a
/// gather's source strides are never negative, a slice has no indices), and sharing one
/// accumulator leaves no variable unused in either kernel (NVRTC warns on those).
#[cube]
pub(crate) fn locate(slot: usize, slots: u32, #[comptime] m: MoveDesc) -> (bool, usize, usize) {
    let mut rem = slot;
    let mut valid = true;
    if comptime!(m.check_total) {
        // A `_` walk's slot count is a launch argument; others' a constant.
        valid = if comptime!(m.dynamic) {
            slot < usize::cast_from(slots)
        } else {
            slot < comptime!(m.out_slots as usize)
        };
    }
    let mut forward = 0usize;
    if comptime!(m.base != 0) {
        forward = comptime!(m.base as usize);
    }
    let mut second = 0usize;
    #[unroll]
    for i in 0..comptime!(m.dims.len()) {
        let d = comptime!(m.dims[i]);
        // A broadcast dim of the output may feed neither sum: then its coordinate is not needed.
        if comptime!(d.check || d.src_stride != 0 || d.index_stride != 0) {
            // A unit stride is the innermost dim: the remainder is the coordinate. (`rem` is
            // not reset there: `let c = rem` binds the same variable in CubeCL.)
            let c = if comptime!(d.out_stride == 1) { rem } else { rem / comptime!(d.out_stride as usize) };
            if comptime!(d.check) {
                valid = valid && c < comptime!(d.size as usize);
            }
            if comptime!(d.src_stride != 0) {
                if comptime!(d.src_backwards) {
                    second += c * comptime!(d.src_stride as usize);
                } else {
                    forward += c * comptime!(d.src_stride as usize);
                }
            }
            if comptime!(d.index_stride != 0) {
                second += c * comptime!(d.index_stride as usize);
            }
        }
        if comptime!(d.out_stride != 1) {
            rem %= comptime!(d.out_stride as usize);
        }
    }
    if comptime!(m.check_rem) {
        valid = valid && rem == 0;
    }
    (valid, forward, second)
}

/// Reads one `32 / lanes`-bit element at element offset `elem` of a word array (vectors of one).
#[cube]
pub(crate) fn read_lane<E: Int, N: Size>(words: &[Vector<E, N>], elem: usize, #[comptime] lanes: u32) -> u32 {
    let per_word = comptime!(lanes as usize);
    let bits = comptime!(32 / lanes);
    let word = u32::cast_from(words[elem / per_word].extract(0usize));
    let shift = u32::cast_from(elem % per_word) * bits;
    (word >> shift) & comptime!(((1u64 << bits) - 1) as u32)
}
