//! Typed copies between host slices and your own CubeCL buffers, for `launch`.
//!
//! Kernels move 32-bit words, so every buffer is a whole number of words: a `u8[3, 5, 5]`
//! tensor needs 76 bytes, not 75, and [`upload`] pads with zeros to the size you ask for
//! (`op.buffer_bytes(..)`, which also rounds up to the kernel's vector width).

use crate::element::Element;
use crate::error::Error;
use cubecl::client::Client;
use cubecl::server::Handle;

/// `data` as a new device buffer of at least `bytes` bytes (zero-padded).
pub fn upload<T: Element>(client: &Client, data: &[T], bytes: usize) -> Handle {
    let mut b = T::bytes(data).into_owned();
    b.resize(bytes.max(b.len()).div_ceil(4).max(1) * 4, 0);
    client.create_from_slice(&b)
}

/// The first `elements` elements of a device buffer (waits for the work queued on it).
pub fn read<T: Element>(client: &Client, handle: &Handle, elements: usize) -> Result<Vec<T>, Error> {
    let bytes = crate::launch::exclusive(|| crate::launch::read(client, handle.clone()))?;
    let n = elements * T::DTYPE.size();
    if bytes.len() < n {
        return Err(Error::HandleTooSmall {
            tensor: stridex_core::Operand::Output,
            needed: n,
            given: bytes.len(),
        });
    }
    Ok(T::from_bytes(&bytes[..n]))
}
