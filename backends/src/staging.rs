//! Host staging for uploads: reusable byte buffers handed to CubeCL as its `Bytes`.
//!
//! Each `run` copies its inputs into a host buffer that CubeCL writes to the device and then
//! drops. Fresh buffers of that size come from `mmap` (glibc), so every call faulted its pages in
//! and unmapped them again; with many calling threads nothing was reused (measured with 16
//! threads sharing one op: page faults were a fifth of all CPU time). Buffers made here go back
//! to a small pool when CubeCL drops them.

use cubecl::bytes::{AccessError, AccessPolicy, AllocationController, AllocationProperty, Bytes};
use std::mem::MaybeUninit;
use std::sync::Mutex;

/// At most this many bytes wait in the pool; larger buffers are never kept.
const KEEP_BYTES: usize = 64 << 20;
const KEEP_BUFFERS: usize = 8;

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A pooled buffer; every byte of it is initialized.
struct Pooled(Vec<u8>);

impl AllocationController for Pooled {
    fn alloc_align(&self) -> usize {
        1
    }

    fn property(&self) -> AllocationProperty {
        AllocationProperty::Native
    }

    unsafe fn memory_mut(&mut self, _: AccessPolicy) -> Result<&mut [MaybeUninit<u8>], AccessError> {
        // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and the slice covers the vector's
        // initialized length only.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.0.len()) })
    }

    fn memory(&self, _: AccessPolicy) -> Result<&[MaybeUninit<u8>], AccessError> {
        // SAFETY: as in `memory_mut`.
        Ok(unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), self.0.len()) })
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        let Ok(mut pool) = POOL.lock() else { return };
        let kept: usize = pool.iter().map(Vec::capacity).sum();
        if pool.len() < KEEP_BUFFERS && kept + buf.capacity() <= KEEP_BYTES {
            pool.push(buf);
        }
    }
}

/// The smallest pooled buffer that holds `len` bytes, or a new one.
fn take(len: usize) -> Vec<u8> {
    if let Ok(mut pool) = POOL.lock() {
        let fit = (0..pool.len()).filter(|&i| pool[i].capacity() >= len).min_by_key(|&i| pool[i].capacity());
        if let Some(i) = fit {
            return pool.swap_remove(i);
        }
    }
    Vec::with_capacity(len)
}

/// `bytes` followed by zeros up to `len` bytes, as CubeCL `Bytes` backed by a pooled buffer.
pub(crate) fn staged(bytes: &[u8], len: usize) -> Bytes {
    let len = len.max(bytes.len());
    let mut buf = take(len);
    buf.clear();
    buf.extend_from_slice(bytes);
    buf.resize(len, 0);
    // SAFETY: all `len` bytes of the buffer are initialized, copied or zero-filled above.
    unsafe { Bytes::from_controller(Box::new(Pooled(buf)), len) }
}
