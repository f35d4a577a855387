//! Test support (feature `test-support`): runs with every buffer between guard regions that
//! must come back untouched, and inputs that must come back unchanged.

use super::{first_bad_index, GatherOp, ScatterOp, SliceOp};
use crate::device::Device;
use crate::element::{Element, IndexElement};
use crate::error::Error;
use crate::kernels::Launch;
use crate::launch::{exclusive, read, wait_all};
use crate::tensor::Tensor;
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::Operand;

/// Runs `kernel` on guarded copies of `inputs` (each padded to the bytes the kernel needs) and a
/// zeroed, guarded output of `out_bytes`: whether an index was flagged, and the output bytes.
fn run_guarded<K: Launch>(
    device: &Device,
    kernel: &K,
    inputs: &[(Operand, Vec<u8>)],
    out_bytes: usize,
) -> Result<(bool, Vec<u8>), Error> {
    launch_guarded(device, inputs, &vec![0; out_bytes], |c, views, o| {
        exclusive(|| wait_all(c, kernel.queue(c, views, o), vec![]).map(|(flagged, _)| flagged))
    })
}

fn padded(bytes: &[u8], len: usize) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.resize(len.max(bytes.len()).max(4), 0);
    v
}

impl<T: Element, I: IndexElement> GatherOp<T, I> {
    /// [`GatherOp::run_on`] with guard regions (feature `test-support`; not a stable API).
    #[doc(hidden)]
    pub fn __run_guarded(&self, device: &Device, data: &[T], indices: &[I]) -> Result<Tensor<T>, Error> {
        let (plan, kernel) = self.checked_at(data, indices)?;
        let Some(kernel) = kernel else { return Ok(Tensor::from_bytes(&plan.output, &[])) };
        let bytes_of = |t| Self::bytes(&plan, Some(&kernel), t);
        let inputs = [
            (Operand::Data, padded(&T::bytes(data), bytes_of(Operand::Data))),
            (Operand::Indices, padded(&I::bytes(indices), bytes_of(Operand::Indices))),
        ];
        let (flagged, bytes) = run_guarded(device, &*kernel, &inputs, bytes_of(Operand::Output))?;
        if flagged {
            return Err(first_bad_index(&plan, indices));
        }
        Ok(Tensor::from_bytes(&plan.output, &bytes))
    }
}

impl<T: Element> SliceOp<T> {
    /// [`SliceOp::run_on`] with guard regions (feature `test-support`; not a stable API).
    #[doc(hidden)]
    pub fn __run_guarded(&self, device: &Device, input: &[T]) -> Result<Tensor<T>, Error> {
        let (plan, kernel) = self.checked_at(input)?;
        let Some(kernel) = kernel else { return Ok(Tensor::from_bytes(&plan.output, &[])) };
        let bytes_of = |t| Self::bytes(&plan, Some(&kernel), t);
        let inputs = [(Operand::Input, padded(&T::bytes(input), bytes_of(Operand::Input)))];
        let (_, bytes) = run_guarded(device, &*kernel, &inputs, bytes_of(Operand::Output))?;
        Ok(Tensor::from_bytes(&plan.output, &bytes))
    }
}

impl<T: Element, I: IndexElement> ScatterOp<T, I> {
    /// [`ScatterOp::launch`] in place on a guarded copy of `data` (packed), with guarded
    /// indices and updates that must come back unchanged: the scattered data, as
    /// [`ScatterOp::run_on`] returns it (feature `test-support`; not a stable API).
    #[doc(hidden)]
    pub fn __run_guarded(
        &self,
        device: &Device,
        data: &[T],
        indices: &[I],
        updates: &[T],
    ) -> Result<Tensor<T>, Error> {
        let plan = self.plan()?;
        if !plan.map.data.is_packed() {
            return Err(Error::Device("a guarded scatter run takes packed data".into()));
        }
        let bytes_of = |t| self.buffer_bytes(t);
        let inputs = [
            (Operand::Indices, padded(&I::bytes(indices), bytes_of(Operand::Indices)?)),
            (Operand::Updates, padded(&T::bytes(updates), bytes_of(Operand::Updates)?)),
        ];
        let dest = padded(&T::bytes(data), bytes_of(Operand::Data)?);
        let ((), out) = launch_guarded(device, &inputs, &dest, |c, v, d| self.launch(c, d, v[0], v[1]))?;
        Ok(Tensor::from_bytes(&plan.map.data, &out))
    }
}

/// Runs `launch` (which takes stridex's device lock itself) on guarded copies of `inputs`, which
/// must come back unchanged, and of `dest`, updated in place: what `launch` returned, and the
/// new bytes of `dest`.
fn launch_guarded<R>(
    device: &Device,
    inputs: &[(Operand, Vec<u8>)],
    dest: &[u8],
    launch: impl FnOnce(&Client, &[&Handle], &Handle) -> Result<R, Error>,
) -> Result<(R, Vec<u8>), Error> {
    let c = device.client();
    device.on_stream(|| {
        let buffers: Vec<Guarded> = exclusive(|| inputs.iter().map(|(_, bytes)| guarded(c, bytes)).collect());
        let d = exclusive(|| guarded(c, dest));
        let returned = launch(c, &buffers.iter().map(|g| &g.view).collect::<Vec<_>>(), &d.view)?;
        for (g, (tensor, bytes)) in buffers.into_iter().zip(inputs) {
            if exclusive(|| unguard(c, g, *tensor))?[..bytes.len()] != bytes[..] {
                return Err(Error::Device(format!("the `{tensor}` buffer was written")));
            }
        }
        Ok((returned, exclusive(|| unguard(c, d, Operand::Output))?))
    })
}

/// The byte of the known pattern on each side of a guarded buffer.
const GUARD: u8 = 0xA5;

/// How many guard bytes go on each side: at least 256, and a multiple of the device's
/// alignment for a handle's start (typically 256 on wgpu, 512 on CubeCL 0.11's CUDA), so that the view
/// between the guards is one `launch` accepts.
fn guard_bytes(client: &Client) -> u64 {
    let alignment = client.properties().memory.alignment.max(1);
    256u64.div_ceil(alignment) * alignment
}

/// A device buffer holding `middle` between two guard regions; kernels see only the middle.
struct Guarded {
    base: Handle,
    view: Handle,
}

fn guarded(client: &Client, middle: &[u8]) -> Guarded {
    let g = guard_bytes(client);
    let mut all = vec![GUARD; g as usize];
    all.extend_from_slice(middle);
    all.resize(all.len() + g as usize, GUARD);
    let base = client.create_from_slice(&all);
    let view = base.clone().offset_start(g).offset_end(g);
    Guarded { base, view }
}

/// The middle of a guarded buffer, or an error if anything touched its guards.
fn unguard(client: &Client, g: Guarded, tensor: Operand) -> Result<Vec<u8>, Error> {
    let n = guard_bytes(client) as usize;
    let all = read(client, g.base)?;
    let (head, rest) = all.split_at(n);
    let (middle, tail) = rest.split_at(rest.len() - n);
    if let Some(i) = head.iter().chain(tail).position(|&b| b != GUARD) {
        return Err(Error::Device(format!("guard byte {i} around `{tensor}` was overwritten")));
    }
    Ok(middle.to_vec())
}

impl<T: Element, I: super::IndexTypes, O: Element> super::ChainOp<T, I, O> {
    /// Runs with index buffers of the types the descriptor declares, given as bytes: through
    /// `run_on` when `guarded` is false, else through `launch` on buffers between guard regions
    /// that must come back untouched (feature `test-support`; not a stable API).
    #[doc(hidden)]
    pub fn __run_erased(
        &self,
        device: &Device,
        data: &[T],
        indices: &[Vec<u8>],
        guarded_run: bool,
    ) -> Result<Tensor<O>, Error> {
        let types: Vec<_> = self.desc().gathers().map(|g| g.indices.dtype).collect();
        let buffers: Vec<_> =
            types.iter().zip(indices).map(|(&t, b)| super::IndexBuffer::of_bytes(t, b)).collect();
        if !guarded_run {
            return self.run_buffers(device, data, buffers, super::NewTensor);
        }
        if self.plan()?.scatter().is_some() {
            // It has a destination to be given: `__launch_guarded_into`.
            return Err(Error::DestinationNeeded { call: "__run_erased" });
        }
        let lens: Vec<usize> = buffers.iter().map(|b: &super::IndexBuffer| b.len).collect();
        let count = self.count_of(data.len(), &lens)?;
        let (plan, kernel) = self.at(count, "run")?;
        super::check_len(Operand::Data, &plan.data, &self.desc().data, data.len())?;
        let bytes_of = |t| Self::bytes(&plan, kernel.as_deref(), t);
        let mut inputs = vec![(Operand::Data, padded(&T::bytes(data), bytes_of(Operand::Data)))];
        for (g, bytes) in indices.iter().enumerate() {
            inputs.push((Operand::Indices, padded(bytes, Self::index_bytes_of(&plan, g)?)));
        }
        let out = vec![0; bytes_of(Operand::Output)];
        let ((), bytes) = launch_guarded(device, &inputs, &out, |c, v, o| {
            exclusive(|| self.launch_locked(c, count, v[0], &v[1..], o, true))
        })?;
        Ok(Tensor::from_bytes(&plan.output, &bytes))
    }
}

impl<T: Element, I: super::IndexTypes, O: Element> super::ChainOp<T, I, O> {
    /// [`super::ChainOp::launch`] of a chain that ends in a scatter, on a guarded copy of
    /// `dest` (its destination, in place) and guarded data and index buffers (given as bytes,
    /// in stage order) that must come back unchanged: the destination's new values (feature
    /// `test-support`; not a stable API).
    #[doc(hidden)]
    pub fn __launch_guarded_into(
        &self,
        device: &Device,
        data: &[T],
        indices: &[Vec<u8>],
        dest: &[O],
    ) -> Result<Vec<O>, Error> {
        let types: Vec<_> = self.desc().index_dtypes();
        let lens: Vec<usize> =
            types.iter().zip(indices).map(|(&t, b)| super::IndexBuffer::of_bytes(t, b).len).collect();
        let count = self.count_of(data.len(), &lens)?;
        let (plan, kernel) = self.at(count, "launch")?;
        let bytes_of = |t| Self::bytes(&plan, kernel.as_deref(), t);
        let mut inputs = vec![(Operand::Data, padded(&T::bytes(data), bytes_of(Operand::Data)))];
        for (g, bytes) in indices.iter().enumerate() {
            inputs.push((Operand::Indices, padded(bytes, Self::index_bytes_of(&plan, g)?)));
        }
        let out = padded(&O::bytes(dest), bytes_of(Operand::Output));
        let ((), out) = launch_guarded(device, &inputs, &out, |c, v, d| match count {
            Some(count) => self.launch_at(c, count, v[0], &v[1..], d),
            None => self.launch(c, v[0], &v[1..], d),
        })?;
        Ok(O::from_bytes(&out[..dest.len() * O::DTYPE.size()]))
    }
}
