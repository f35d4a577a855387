//! The `error` policy on the host: the first index out of range, named by its position, for a
//! gather whose kernel raised its flag and for a chain's gathers, checked before its launch.

use super::index_buffers::{erased, IndexBuffer};
use crate::error::Error;
use stridex_core::layout::next_coords;
use stridex_core::{ChainPlan, DType, GatherForm, GatherPlan, OutOfRange};

/// The first index, row-major over the gather's indices, outside `[-s, s-1]` (or `[0, s-1]`
/// for unsigned types), `s` the size of the axis it names; `value(i)` reads element `i` of the
/// indices buffer.
fn first_bad(plan: &GatherPlan, value: impl Fn(usize) -> i128) -> Option<Error> {
    let layout = &plan.indices;
    if plan.form != GatherForm::Nd && layout.is_packed() {
        // One axis, and the elements in row-major order: a plain scan (millions of indices
        // under `error` are checked on the host before a launch that trusts them).
        let axis_size = plan.index_axes().next()?.size;
        let s = axis_size as i128;
        let at = (0..layout.num_elements()).find(|&i| !(-s..s).contains(&value(i)))?;
        let mut position = vec![0; layout.rank()];
        let mut rem = at;
        for (c, &n) in position.iter_mut().zip(layout.sizes.iter()).rev() {
            *c = rem % n;
            rem /= n;
        }
        return Some(Error::IndexOutOfRange { value: value(at), position, axis_size });
    }
    let mut c = vec![0; layout.rank()];
    loop {
        let v = value(layout.offset(&c));
        let axis_size = plan.axis_of(&c).size;
        let s = axis_size as i128;
        if v < -s || v >= s {
            return Some(Error::IndexOutOfRange { position: c, value: v, axis_size });
        }
        if !next_coords(&mut c, &layout.sizes) {
            return None;
        }
    }
}

/// [`first_bad`] of a gather whose kernel raised its flag (a device that flags an index the
/// host finds in range is reported as such).
pub(crate) fn first_bad_index<I: crate::IndexElement>(plan: &GatherPlan, indices: &[I]) -> Error {
    first_bad(plan, |i| indices[i].value()).unwrap_or_else(|| {
        Error::Device("the kernel flagged an out-of-range index, but the host found none".into())
    })
}

/// The first index of `indices` (the indices buffer's elements) out of range of `plan`'s
/// axes, as an `Err`: the `error` policy checked on the host before a kernel that trusts it.
pub(crate) fn check_indices<I: crate::IndexElement>(plan: &GatherPlan, indices: &[I]) -> Result<(), Error> {
    if plan.indices.is_empty() {
        return Ok(());
    }
    first_bad(plan, |i| indices[i].value()).map_or(Ok(()), Err)
}

/// A stage's error wrapped with the stage it belongs to.
pub(crate) fn in_stage(stage: usize, error: Error) -> Error {
    Error::InStage { stage, error: Box::new(error) }
}

/// The gathers (0-based, in stage order) whose indices are read back and checked in full before
/// a launch: those under the `error` policy whose output is not empty.
pub(crate) fn checked_gathers(plan: &ChainPlan) -> Vec<usize> {
    plan.gathers()
        .enumerate()
        .filter(|(_, (_, g))| g.out_of_range == OutOfRange::Error && !g.output.is_empty())
        .map(|(i, _)| i)
        .collect()
}

/// [`check_error_policies`] on the index bytes of the `checked` gathers, read back from a device.
pub(crate) fn check_read_back(
    plan: &ChainPlan,
    checked: &[usize],
    bytes: &[impl std::ops::Deref<Target = [u8]>],
) -> Result<(), Error> {
    let types: Vec<DType> = plan.gathers().map(|(_, g)| g.index_type.dtype()).collect();
    let read: Vec<IndexBuffer> = checked.iter().zip(bytes).map(|(&g, b)| erased(types[g], b)).collect();
    check_error_policies(plan, |g| {
        &read[checked.iter().position(|&c| c == g).expect("an error-policy gather")]
    })
}

/// Running the stages one by one, the first `error`-policy gather (in stage order) that holds
/// an index out of range fails the chain: the fused kernel reads only the indices the output
/// needs, so every such gather's indices are checked here, in full, before any launch.
pub(super) fn check_error_policies<'s, 'b: 's>(
    plan: &ChainPlan,
    buffer: impl Fn(usize) -> &'s IndexBuffer<'b>,
) -> Result<(), Error> {
    for (g, (stage, p)) in plan.gathers().enumerate() {
        // As the single op: a gather whose output is empty reads no index, so none can fail.
        if p.out_of_range != OutOfRange::Error || p.output.is_empty() {
            continue;
        }
        let b = buffer(g);
        if let Some(e) = first_bad(p, |i| b.value(i)) {
            return Err(in_stage(stage, e));
        }
    }
    Ok(())
}
