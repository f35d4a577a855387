//! Uploads, launches and reads back, generic over the CubeCL runtime.

use crate::error::Error;
use crate::kernels::{gather_kernel, slice_kernel, RAN_MARKER};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{GatherKernelDesc, MoveDesc, SliceKernelDesc};

/// Invocations per cube; within every backend's limit (WebGPU guarantees 256).
const CUBE_DIM: u32 = 256;

/// `bytes` as a device buffer of at least `words` 32-bit words, zero-padded.
fn upload<R: Runtime>(client: &ComputeClient<R>, bytes: &[u8], words: usize) -> Handle {
    let len = (words * 4).max(bytes.len().div_ceil(4) * 4).max(4);
    if bytes.len() == len {
        return client.create_from_slice(bytes);
    }
    let mut padded = Vec::with_capacity(len);
    padded.extend_from_slice(bytes);
    padded.resize(len, 0);
    client.create_from_slice(&padded)
}

/// The output buffer: zeroed when the layout leaves slots that no element writes.
fn output<R: Runtime>(client: &ComputeClient<R>, m: &MoveDesc, zeroed: bool) -> Handle {
    let bytes = m.out_words as usize * 4;
    if zeroed {
        client.create_from_slice(&vec![0u8; bytes])
    } else {
        client.empty(bytes)
    }
}

fn read<R: Runtime>(client: &ComputeClient<R>, handle: Handle) -> Result<Vec<u8>, Error> {
    // Compile and launch failures surface on flush, not on read (wgpu).
    client.flush().map_err(|e| Error::Device(format!("{e:?}")))?;
    client.read_one(handle).map(|b| b.to_vec()).map_err(|e| Error::Device(format!("{e:?}")))
}

/// The status words back: whether an index was out of range (error policy). A launch that
/// CubeCL dropped (it logs and swallows kernel build failures) left no marker.
fn read_status<R: Runtime>(client: &ComputeClient<R>, handle: Handle) -> Result<bool, Error> {
    let status = read(client, handle)?;
    let word = |i: usize| u32::from_le_bytes(status[4 * i..4 * i + 4].try_into().unwrap());
    if word(1) != RAN_MARKER {
        return Err(Error::Device(
            "the kernel did not run (CubeCL dropped the launch; run with RUST_LOG=warn or \
             CUBECL_DEBUG_LOG=stderr for its reason)"
                .into(),
        ));
    }
    Ok(word(0) != 0)
}

fn cube_count<R: Runtime>(client: &ComputeClient<R>, invocations: u32) -> CubeCount {
    // Spreads over y and z so no cube count dimension exceeds 65535.
    cubecl::calculate_cube_count_elemwise(client, invocations as usize, CubeDim::new_1d(CUBE_DIM))
}

/// Output bytes of a gather, and whether the error flag was raised.
pub(crate) fn gather<R: Runtime>(
    client: &ComputeClient<R>,
    k: &GatherKernelDesc,
    data: &[u8],
    indices: &[u8],
    zeroed_output: bool,
) -> Result<(Vec<u8>, bool), Error> {
    let line = k.moves.line as usize;
    let data_h = upload(client, data, k.moves.src_words as usize);
    let index_words = indices.len().div_ceil(4).max(1);
    let index_h = upload(client, indices, index_words);
    let out_h = output(client, &k.moves, zeroed_output);
    let status_h = upload(client, &[0; 8], 2);
    // SAFETY: `launch_unchecked` skips bounds checks. The kernel reads data words below
    // `src_words`, index words below the indices' minimum length, and writes output words below
    // `out_words`: the descriptor was derived from a plan that passed every rule of
    // stridex-core (checked by the macro at compile time and again when the op was built),
    // `upload` sizes each buffer to at least those lengths, and the caller checked the host
    // slices against the layouts' minimum lengths. Out-of-range indices are clamped or
    // replaced before any read (`read_index`).
    unsafe {
        gather_kernel::launch_unchecked::<R>(
            client,
            cube_count(client, k.moves.invocations),
            CubeDim::new_1d(CUBE_DIM),
            line,
            ArrayArg::from_raw_parts(data_h, k.moves.src_words as usize / line),
            ArrayArg::from_raw_parts(index_h, index_words),
            ArrayArg::from_raw_parts(out_h.clone(), k.moves.out_words as usize / line),
            ArrayArg::from_raw_parts(status_h.clone(), 2),
            k.clone(),
        );
    }
    let flagged = read_status(client, status_h)?;
    Ok((read(client, out_h)?, flagged))
}

/// Output bytes of a slice.
pub(crate) fn slice<R: Runtime>(
    client: &ComputeClient<R>,
    k: &SliceKernelDesc,
    input: &[u8],
    zeroed_output: bool,
) -> Result<Vec<u8>, Error> {
    let line = k.moves.line as usize;
    let in_h = upload(client, input, k.moves.src_words as usize);
    let out_h = output(client, &k.moves, zeroed_output);
    let status_h = upload(client, &[0; 8], 2);
    // SAFETY: as for `gather`: the descriptor comes from a plan that passed every rule
    // (window inside the input, output disjoint), and the buffers hold at least `src_words` and
    // `out_words` words.
    unsafe {
        slice_kernel::launch_unchecked::<R>(
            client,
            cube_count(client, k.moves.invocations),
            CubeDim::new_1d(CUBE_DIM),
            line,
            ArrayArg::from_raw_parts(in_h, k.moves.src_words as usize / line),
            ArrayArg::from_raw_parts(out_h.clone(), k.moves.out_words as usize / line),
            ArrayArg::from_raw_parts(status_h.clone(), 2),
            k.clone(),
        );
    }
    read_status(client, status_h)?;
    read(client, out_h)
}
