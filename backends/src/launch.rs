//! Uploads, launches and reads back, generic over the CubeCL runtime.

use crate::error::Error;
use crate::kernels::{gather_kernel, slice_kernel, RAN_MARKER};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{GatherKernelDesc, MoveDesc, SliceKernelDesc};
use stridex_core::Operand;

/// Invocations per cube; within every backend's limit (WebGPU guarantees 256).
const CUBE_DIM: u32 = 256;

/// `bytes` as a device buffer of at least `words` 32-bit words, zero-padded.
pub(crate) fn upload<R: Runtime>(client: &ComputeClient<R>, bytes: &[u8], words: usize) -> Handle {
    let len = (words * 4).max(bytes.len().div_ceil(4) * 4).max(4);
    if bytes.len() == len {
        return client.create_from_slice(bytes);
    }
    let mut padded = Vec::with_capacity(len);
    padded.extend_from_slice(bytes);
    padded.resize(len, 0);
    client.create_from_slice(&padded)
}

/// An output buffer for `m`: zeroed when the layout leaves slots that no element writes.
pub(crate) fn output<R: Runtime>(client: &ComputeClient<R>, m: &MoveDesc, zeroed: bool) -> Handle {
    let bytes = m.out_words as usize * 4;
    if zeroed {
        client.create_from_slice(&vec![0u8; bytes])
    } else {
        client.empty(bytes)
    }
}

pub(crate) fn read<R: Runtime>(client: &ComputeClient<R>, handle: Handle) -> Result<Vec<u8>, Error> {
    // Compile and launch failures surface on flush, not on read (wgpu).
    client.flush().map_err(|e| Error::Device(format!("{e:?}")))?;
    client.read_one(handle).map(|b| b.to_vec()).map_err(|e| Error::Device(format!("{e:?}")))
}

/// Whether an index was out of range (error policy). A launch that CubeCL dropped (it logs and
/// swallows kernel build failures) left no marker.
fn read_status<R: Runtime>(client: &ComputeClient<R>, handle: Handle) -> Result<bool, Error> {
    let status = read(client, handle)?;
    let word = |i: usize| u32::from_le_bytes(status[4 * i..4 * i + 4].try_into().unwrap());
    if word(1) != RAN_MARKER {
        return Err(Error::Device(
            "the kernel did not run (CubeCL dropped the launch; RUST_LOG=warn or \
             CUBECL_DEBUG_LOG=stderr shows its reason)"
                .into(),
        ));
    }
    Ok(word(0) != 0)
}

fn cube_count<R: Runtime>(client: &ComputeClient<R>, invocations: u32) -> CubeCount {
    // Spreads over y and z so no cube count dimension exceeds 65535.
    cubecl::calculate_cube_count_elemwise(client, invocations as usize, CubeDim::new_1d(CUBE_DIM))
}

/// A handle's usable bytes must cover what the kernel touches.
pub(crate) fn check_handle(tensor: Operand, handle: &Handle, needed: usize) -> Result<(), Error> {
    let given = handle.size_in_used() as usize;
    if given < needed {
        return Err(Error::HandleTooSmall { tensor, needed, given });
    }
    Ok(())
}

/// Launches a gather on device buffers (checked by the caller against the descriptor). With
/// `wait`, waits for it and returns whether an index was out of range under the `error`
/// policy; without, returns at once (false).
pub(crate) fn gather<R: Runtime>(
    client: &ComputeClient<R>,
    k: &GatherKernelDesc,
    data: &Handle,
    indices: &Handle,
    output: &Handle,
    wait: bool,
) -> Result<bool, Error> {
    let line = k.moves.line as usize;
    let status = upload(client, &[0; 8], 2);
    // SAFETY: `launch_unchecked` skips bounds checks. The kernel reads data words below
    // `src_words`, index words below the indices' minimum length, and writes output words below
    // `out_words`: the descriptor was derived from a plan that passed every rule of
    // stridex-core (checked by the macro at compile time and again when the op was built), and
    // the caller checked each buffer against those lengths (`check_handle`, or `upload`'s
    // sizing). Out-of-range indices are clamped or never dereferenced (`read_index`).
    unsafe {
        gather_kernel::launch_unchecked::<R>(
            client,
            cube_count(client, k.moves.invocations),
            CubeDim::new_1d(CUBE_DIM),
            line,
            ArrayArg::from_raw_parts(data.clone(), k.moves.src_words as usize / line),
            ArrayArg::from_raw_parts(indices.clone(), indices.size_in_used() as usize / 4),
            ArrayArg::from_raw_parts(output.clone(), k.moves.out_words as usize / line),
            ArrayArg::from_raw_parts(status.clone(), 2),
            k.clone(),
        );
    }
    if wait {
        read_status(client, status)
    } else {
        Ok(false)
    }
}

/// Launches a slice on device buffers checked by the caller; with `wait`, waits for it.
pub(crate) fn slice<R: Runtime>(
    client: &ComputeClient<R>,
    k: &SliceKernelDesc,
    input: &Handle,
    output: &Handle,
    wait: bool,
) -> Result<(), Error> {
    let line = k.moves.line as usize;
    let status = upload(client, &[0; 8], 2);
    // SAFETY: as for `gather`: the descriptor comes from a plan that passed every rule (window
    // inside the input, output disjoint), and the buffers hold at least `src_words` and
    // `out_words` words.
    unsafe {
        slice_kernel::launch_unchecked::<R>(
            client,
            cube_count(client, k.moves.invocations),
            CubeDim::new_1d(CUBE_DIM),
            line,
            ArrayArg::from_raw_parts(input.clone(), k.moves.src_words as usize / line),
            ArrayArg::from_raw_parts(output.clone(), k.moves.out_words as usize / line),
            ArrayArg::from_raw_parts(status.clone(), 2),
            k.clone(),
        );
    }
    if wait {
        read_status(client, status)?;
    }
    Ok(())
}

/// Bytes of a known pattern on each side of a guarded buffer; a multiple of every backend's
/// storage-buffer offset alignment.
const GUARD_BYTES: u64 = 256;
const GUARD: u8 = 0xA5;

/// A device buffer holding `middle` between two guard regions; kernels see only the middle.
pub(crate) struct Guarded {
    base: Handle,
    pub(crate) view: Handle,
}

pub(crate) fn guarded<R: Runtime>(client: &ComputeClient<R>, middle: &[u8]) -> Guarded {
    let g = GUARD_BYTES as usize;
    let mut all = vec![GUARD; g];
    all.extend_from_slice(middle);
    all.resize(all.len() + g, GUARD);
    let base = client.create_from_slice(&all);
    let view = base.clone().offset_start(GUARD_BYTES).offset_end(GUARD_BYTES);
    Guarded { base, view }
}

/// The middle of a guarded buffer, or an error if anything touched its guards.
pub(crate) fn unguard<R: Runtime>(
    client: &ComputeClient<R>,
    g: Guarded,
    tensor: Operand,
) -> Result<Vec<u8>, Error> {
    let all = read(client, g.base)?;
    let n = GUARD_BYTES as usize;
    let (head, rest) = all.split_at(n);
    let (middle, tail) = rest.split_at(rest.len() - n);
    if let Some(i) = head.iter().chain(tail).position(|&b| b != GUARD) {
        return Err(Error::Device(format!("guard byte {i} around `{tensor}` was overwritten")));
    }
    Ok(middle.to_vec())
}
