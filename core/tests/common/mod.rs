//! Shared by core's tests: shorthands (the scatter tests' in `scatter`), the naive reference
//! written from the rules (`reference`), random descriptors (`generate`, `chains`) and the
//! walks' host models (`host_model`). The integration suite includes `reference`, `generate`,
//! `chains` and `host_model` too (`tests/suite/common/mod.rs`).

#![allow(dead_code, unused_macros)]

pub mod chains;
pub mod generate;
#[macro_use]
pub mod host_model;
pub mod reference;
pub mod scatter;

use stridex_core::*;

pub fn d(v: &[usize]) -> Dims {
    Dims::of(v)
}

/// A chain's gather stage: packed `index` indices of `sizes`, along `axis`, under `rules`, with
/// no batch or index dimensions and the rule set's own policy.
pub fn gather_stage(rules: GatherRules, index: DType, sizes: &[usize], axis: i64) -> GatherStage {
    GatherStage {
        form: stridex_core::GatherForm::Axis,
        rules,
        indices: TensorDecl::packed(index, d(sizes)),
        axis,
        batch_dims: None,
        index_dims: None,
        out_of_range: None,
    }
}

/// A chain's SLICE1 stage.
pub fn window_stage(offsets: &[usize], sizes: &[usize], strides: &[i64]) -> StageDesc {
    StageDesc::Slice(SliceWindow::DirectMl {
        offsets: d(offsets),
        sizes: d(sizes),
        strides: SignedDims::of(strides),
    })
}

/// An ONNX Slice of an f32 `input`, `axes` and `steps` as given (`None`: the attribute is absent).
pub fn onnx_slice(
    input: &[usize],
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
) -> SliceDesc {
    let window = SliceWindow::Onnx {
        starts: SignedDims::of(starts),
        ends: SignedDims::of(ends),
        axes: axes.map(SignedDims::of),
        steps: steps.map(SignedDims::of),
    };
    SliceDesc::new(TensorDecl::packed(DType::F32, d(input)), window)
}

/// Checks `text` (sections headed `== name`) against `tests/snapshots/{file}`, or records it
/// there under `STRIDEX_BLESS=1`; a difference names the first section that changed.
pub fn check_recorded(file: &str, what: &str, text: &str) {
    let path = format!("{}/tests/snapshots/{file}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("STRIDEX_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).expect("the recorded texts (STRIDEX_BLESS=1 writes them)");
    if text != recorded {
        // Each section after a newline, the first one too.
        let (now, then) = (format!("\n{text}"), format!("\n{recorded}"));
        let (now, then) =
            now.split("\n== ").zip(then.split("\n== ")).find(|(a, b)| a != b).unwrap_or_default();
        panic!(
            "{what} changed (review, then STRIDEX_BLESS=1 records it):\nnow:\n== {now}\nrecorded:\n== {then}"
        );
    }
}

/// `OpDesc::follows_count` names the tensors a count sizes: for each tensor `sizes` gives (at a
/// plan), it holds exactly where the plans at counts 3 and 4 give it different sizes. A fixed
/// descriptor's count sizes nothing.
pub fn check_follows_count<D: OpDesc>(desc: &D, sizes: impl Fn(&D::Plan, Operand) -> Option<Vec<usize>>) {
    let tensors = [Operand::Data, Operand::Input, Operand::Indices, Operand::Updates, Operand::Output];
    if !desc.is_dynamic() {
        assert!(tensors.iter().all(|&t| !desc.follows_count(t)), "{desc:?}");
        return;
    }
    let (three, four) = (desc.plan_at(3).unwrap(), desc.plan_at(4).unwrap());
    for t in tensors {
        if let (Some(a), Some(b)) = (sizes(&three, t), sizes(&four, t)) {
            assert_eq!(desc.follows_count(t), a != b, "{t:?} of {desc:?}");
        }
    }
}
