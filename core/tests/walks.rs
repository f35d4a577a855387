//! The walks' descriptors, run on the host by its models of `rows_kernel` and of the slot
//! kernels (`common/host_model.rs`): they must agree with the naive reference on random gathers,
//! slices and fused chains, row walks with tiles taken consecutively and spread, every op also
//! through the slot walk, and every kind of row access and of slot must appear in the corpus. No device is needed, so the trickiest pure logic (merging
//! dimensions, line widths, alignment, tiles, groups, transposed blocks, chain lowering) is
//! checked by core's own tests; `tests/suite/walks.rs` checks the model against the kernel.

#[macro_use]
mod common;

use common::host_model::{check_chain, check_gather, check_slice};
use common::{chains, generate, generate::Rng};
use std::collections::BTreeSet;
use stridex_core::DType;

/// The fewest random gathers (and slices) of 6000 that must have a kernel (a non-empty output),
/// so that the host models are exercised (measured: 5523 gathers and 6000 slices).
const CHECKED: usize = 5000;

#[test]
fn walks_match_the_reference() {
    let mut seen = BTreeSet::new();
    // Cases with a kernel, so the host models ran: gathers, slices.
    let mut checked = (0, 0);
    for seed in 0..6000u64 {
        let mut rng = Rng::new(seed);
        let case = generate::gather_case(&mut rng, &DType::ALL);
        checked.0 += usize::from(
            by_size!(case.desc.data.dtype.size(), check_gather(&case, &mut rng, &mut seen, None)).unwrap(),
        );
        let mut rng = Rng::new(seed ^ 0x5eed);
        let case = generate::slice_case(&mut rng, &DType::ALL);
        checked.1 += usize::from(
            by_size!(case.desc.input.dtype.size(), check_slice(&case, &mut rng, &mut seen, None)).unwrap(),
        );
    }
    eprintln!("walks checked: {} gathers, {} slices of 6000 each", checked.0, checked.1);
    assert!(checked.0 >= CHECKED && checked.1 >= CHECKED, "too few walks checked: {checked:?}");
    let mut rng = Rng::new(7);
    for case in generate::channels_last_slices() {
        by_size!(case.desc.input.dtype.size(), check_slice(&case, &mut rng, &mut seen, None)).unwrap();
    }
    for must in [
        "Lines (1 lanes, 1 words)",
        "Lines (1 lanes, 2 words)",
        "Lines (2 lanes, 1 words)",
        "Lines (4 lanes, 1 words)",
        "ReversedLines (1 lanes, 1 words)",
        "ReversedLines (1 lanes, 2 words)",
        "ReversedLines (2 lanes, 1 words)",
        "ReversedLines (4 lanes, 1 words)",
        "SteppedLines (1 lanes, 1 words)",
        "SteppedLines (1 lanes, 2 words)",
        "SteppedLines (2 lanes, 1 words)",
        "SteppedLines (4 lanes, 1 words)",
        "Elements (1 lanes, 1 words)",
        "Elements (1 lanes, 2 words)",
        "Elements (2 lanes, 1 words)",
        "Elements (4 lanes, 1 words)",
        "Elements grouped (1 lanes, 1 words)",
        "Transposed (1 lanes, 1 words)",
        "Slots (1 lanes, 1 words)",
        "Slots (1 lanes, 1 words, padded)",
        "Slots (1 lanes, 2 words)",
        "Slots (1 lanes, 4 words)",
        "Slots (1 lanes, 4 words, padded)",
        "Slots (2 lanes, 1 words)",
        "Slots (2 lanes, 1 words, padded)",
        "Slots (4 lanes, 1 words)",
        "Slots (4 lanes, 1 words, padded)",
    ] {
        assert!(seen.contains(must), "no random descriptor took the walk {must}; seen: {seen:?}");
    }
}

/// Random chains of 2 to 4 stages, fused into one row walk and run on the host as the kernel
/// runs it, against the stages run one by one through the reference.
#[test]
fn fused_chains_match_the_stages_run_one_by_one() {
    let mut fused = 0;
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let case = chains::chain_case(&mut rng, &DType::ALL);
        let plan = case.desc.plan().unwrap_or_else(|e| panic!("{e}\n{:?}", case.desc));
        by_size!(case.dtype.size(), check_chain(&case, &plan, &mut rng, &mut fused));
    }
    // The others: an empty output (no kernel), an `error`-policy index out of range (the host
    // refuses the chain), or rows that are not whole 32-bit words (1- and 2-byte elements in
    // odd shapes; those chains run stage by stage).
    assert!(fused >= 1200, "only {fused} of 3000 chains fused");
}

/// `Walk`'s accessors read the walk it holds, row or slot (what launches size buffers and
/// grids by).
#[test]
fn a_walk_reports_its_own_buffers_and_invocations() {
    use stridex_core::kernel::{GatherKernelDesc, Walk};
    let (mut rows, mut slots) = (0, 0);
    for seed in 0..400u64 {
        let case = generate::gather_case(&mut Rng::new(seed), &DType::ALL);
        let Some(k) = GatherKernelDesc::new(&case.desc.plan().unwrap()) else { continue };
        let (src, out, invocations, dynamic) = match &k.walk {
            Walk::Rows(w) => {
                rows += 1;
                (w.src_words, w.out_words, w.invocations, w.dynamic)
            }
            Walk::Slots(m) => {
                slots += 1;
                (m.src_words, m.out_words, m.invocations, m.dynamic)
            }
            Walk::Convert(_) => unreachable!("a gather takes the row or slot walk"),
        };
        assert_eq!((k.walk.src_words(), k.walk.out_words()), (src, out));
        assert_eq!((k.walk.invocations(), k.walk.is_dynamic()), (invocations, dynamic));
    }
    assert!(rows > 50 && slots > 20, "{rows} row walks, {slots} slot walks");
}

/// The slot walk reads a gathered element at `index * axis_stride` from its slot's base: the
/// stride of the gathered axis in the data, in the walk's source vectors (rows of 8 `f32` are 2
/// vectors of 4; along the rows, one element is one vector).
#[test]
fn a_slot_walk_steps_the_gathered_axis_by_its_stride() {
    use stridex_core::kernel::{GatherKernelDesc, WalkChoice};
    use stridex_core::{GatherDesc, GatherRules, TensorDecl};
    for (axis, stride) in [(0, 2), (1, 1)] {
        let desc = GatherDesc::new(
            GatherRules::Onnx,
            TensorDecl::packed(DType::F32, common::d(&[10, 8])),
            TensorDecl::packed(DType::I64, common::d(&[3])),
            axis,
        );
        let k = GatherKernelDesc::with(&desc.plan().unwrap(), WalkChoice::Slots).unwrap();
        assert_eq!(k.reads[0].axis_stride, stride, "axis {axis}");
    }
}

/// A read that depends on an earlier read is per element only when that read is: a gather of a
/// gather's rows reads both indices once per row.
#[test]
fn a_read_of_a_read_stays_per_row() {
    use stridex_core::kernel::Walk;
    use stridex_core::{ChainDesc, ChainKernelDesc, GatherRules, StageDesc, TensorDecl};
    let gather = |n| StageDesc::Gather(common::gather_stage(GatherRules::Onnx, DType::I32, &[n], 0));
    let desc = ChainDesc {
        data: TensorDecl::packed(DType::F32, common::d(&[10, 8])),
        stages: vec![gather(3), gather(2)].into(),
        output: None,
        dynamic_leading: None,
    };
    let Some(k) = ChainKernelDesc::new(&desc.plan().unwrap()).unwrap() else { panic!("a kernel") };
    let Walk::Rows(w) = &k.walk else { panic!("a row walk") };
    assert_eq!(w.reads.len(), 2);
    assert!(
        w.reads.iter().any(|r| r.deps.iter().any(|&c| c != 0)),
        "the second read depends on the first: {w:?}"
    );
    assert!(!w.reads_per_element(), "{w:?}");
}
