//! Typed copies between host slices and your own CubeCL buffers, for `launch`.
//!
//! Kernels move 32-bit words, so every buffer is a whole number of words: a `u8[3, 5, 5]`
//! tensor needs 76 bytes, not 75, and [`upload`] pads with zeros to the size you ask for
//! (`op.buffer_bytes(..)`, which also rounds up to the kernel's vector width).

use crate::element::Element;
use crate::error::Error;
use cubecl::client::Client;
use cubecl::server::Handle;
use stridex_core::limits::MAX_WORDS;

/// `data` as a new device buffer of at least `bytes` bytes (zero-padded to whole words). A size
/// past the largest buffer any op asks for ([`MAX_WORDS`] words) is an `Err`
/// ([`Error::UploadTooLarge`]), not an attempt to allocate it.
pub fn upload<T: Element>(client: &Client, data: &[T], bytes: usize) -> Result<Handle, Error> {
    let data = T::bytes(data);
    let (len, max) = (bytes.max(data.len()), MAX_WORDS * 4);
    if len > max {
        return Err(Error::UploadTooLarge { bytes: len, max });
    }
    Ok(crate::launch::upload(client, &data, len.div_ceil(4)))
}

/// The first `elements` elements of a device buffer (waits for the work queued on it).
pub fn read<T: Element>(client: &Client, handle: &Handle, elements: usize) -> Result<Vec<T>, Error> {
    crate::launch::check_device(client, stridex_core::Operand::Output, handle)?;
    let bytes = crate::launch::exclusive(|| crate::launch::read(client, handle.clone()))?;
    let n = elements.saturating_mul(T::DTYPE.size());
    if bytes.len() < n {
        return Err(Error::HandleTooSmall {
            tensor: stridex_core::Operand::Output,
            needed: n,
            given: bytes.len(),
        });
    }
    Ok(T::from_bytes(&bytes[..n]))
}
