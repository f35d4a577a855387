//! What each refusal says, word for word: a corpus of broken descriptors (one per message
//! branch that `rules.rs` and `boundaries.rs` do not spell out, and random descriptors broken in
//! one key each) against `snapshots/messages.txt` (`STRIDEX_BLESS=1` rewrites it: read the
//! diff before committing). The macros print these texts, spanned; `ui-tests/` checks that.

mod common;

use common::{chains, d, generate, generate::Rng};
use std::borrow::Cow;
use stridex_core::dynamic::PLACEHOLDER;
use stridex_core::keys::{check_ranges, check_stage_key, gather_rule_names};
use stridex_core::*;

fn gather(rules: GatherRules, data: &[usize], indices: &[usize], axis: i64) -> GatherDesc {
    GatherDesc::new(
        rules,
        TensorDecl::packed(DType::F32, d(data)),
        TensorDecl::packed(DType::I64, d(indices)),
        axis,
    )
}

fn slice1(input: &[usize], offsets: &[usize], sizes: &[usize]) -> SliceDesc {
    let strides = vec![1; input.len()];
    let window =
        SliceWindow::DirectMl { offsets: d(offsets), sizes: d(sizes), strides: SignedDims::of(&strides) };
    SliceDesc::new(TensorDecl::packed(DType::F32, d(input)), window)
}

fn err<T>(r: Result<T, RuleError>) -> String {
    match r {
        Ok(_) => "accepted".into(),
        Err(e) => e.to_string(),
    }
}

/// Broken descriptors, each named by what it breaks.
fn corpus() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, text: String| out.push((name.to_string(), text));
    use GatherRules::*;
    add("rank over eight", err(stridex_core::tensor::dims(Operand::Data, &[1; 9])));
    add("rank zero data", err(gather(Onnx, &[], &[2], 0).plan()));
    let mut slice = slice1(&[4, 5, 6], &[0, 0, 0], &[4, 5, 6]);
    slice.output = Some(OutputDecl { dtype: None, sizes: d(&[4, 30]), strides: None });
    add("slice output of another rank", err(slice.plan()));
    slice.output = Some(OutputDecl { dtype: None, sizes: d(&[4, 5, 6, 1]), strides: None });
    add("slice output of a higher rank", err(slice.plan()));
    add("window at the input's end", err(slice1(&[4], &[4], &[1]).plan()));
    add("window past the input's end", err(slice1(&[4], &[2], &[3]).plan()));
    add("window empty", err(slice1(&[4], &[0], &[0]).plan()));
    // DirectML's one DimensionCount: padded, dropped, or neither.
    let dml = |data: &[usize], indices: &[usize]| {
        let mut g = gather(DirectMl, data, indices, 0);
        g.indices.dtype = DType::U32;
        g.index_dims = Some(1);
        err(g.plan())
    };
    add("directml indices to pad", dml(&[2, 2, 2, 2], &[2]));
    add("directml indices with leading 1s", dml(&[2, 2, 2, 2], &[1, 1, 1, 1, 2]));
    add("directml indices of more dimensions", dml(&[2, 2, 2, 2], &[2, 1, 1, 1, 2]));
    // Feature levels: only the highest takes it, or a lower one does.
    let level = |t: DType, level| {
        let mut g = gather(DirectMl, &[2, 2, 2, 2], &[1, 1, 1, 2], 0);
        (g.data.dtype, g.indices.dtype, g.index_dims, g.feature_level) =
            (t, DType::U32, Some(1), Some(level));
        err(g.plan())
    };
    add("f64 at 3_0", level(DType::F64, FeatureLevel::L3_0));
    add("i32 at 1_0", level(DType::I32, FeatureLevel::L1_0));
    // A chain's count that cannot fuse: the rows, and an empty stage.
    let chain = |dtype, data: &[usize], stages: Vec<StageDesc>| ChainDesc {
        data: TensorDecl::packed(dtype, d(data)),
        stages: Cow::Owned(stages),
        output: None,
        dynamic_leading: Some(ChainCount::Data),
    };
    let window =
        |offsets: &[usize], sizes: &[usize]| common::window_stage(offsets, sizes, &vec![1; sizes.len()]);
    add(
        "u8 rows of 2 bytes under a count",
        err(chain(DType::U8, &[PLACEHOLDER, 3], vec![window(&[0, 1], &[PLACEHOLDER, 2])]).plan()),
    );
    add(
        "u16 rows of 2 bytes under a count",
        err(chain(DType::U16, &[PLACEHOLDER, 3], vec![window(&[0, 1], &[PLACEHOLDER, 1])]).plan()),
    );
    add("f32 after an empty axis under a count", {
        let onnx = StageDesc::Slice(SliceWindow::Onnx {
            starts: SignedDims::of(&[2]),
            ends: SignedDims::of(&[2]),
            axes: Some(SignedDims::of(&[1])),
            steps: None,
        });
        let vino = StageDesc::Gather(common::gather_stage(OpenVino, DType::I64, &[3], 1));
        err(chain(DType::F32, &[PLACEHOLDER, 4], vec![onnx, vino]).plan())
    });
    // The keys of each form.
    for key in ["data", "input", "output", "feature_level", "axis"] {
        add(&format!("stage key {key}"), err(check_stage_key(key)));
    }
    add("gather rule names", gather_rule_names().join(", "));
    for form in [SliceForm::DirectMl, SliceForm::Onnx] {
        add(&format!("{form:?} example"), form.example().to_string());
        for key in ["offsets", "sizes", "strides", "starts", "ends", "axes", "steps", "axis"] {
            add(&format!("{form:?} takes {key}"), err(form.check_key(key)));
        }
        add(&format!("ranges with {form:?}"), err(check_ranges(form, &[])));
    }
    add("ranges with sizes", err(check_ranges(SliceForm::DirectMl, &["sizes"])));
    add("ranges with axis", err(check_ranges(SliceForm::DirectMl, &["axis"])));
    // Random descriptors, each broken in one key.
    for seed in 0..40u64 {
        let mut g = generate::gather_case(&mut Rng::new(seed), &DType::ALL).desc;
        let rank = g.data.sizes.len() as i64;
        add(&format!("gather {seed}, axis past the rank"), err(GatherDesc { axis: rank, ..g }.plan()));
        g.output = Some(OutputDecl { dtype: None, sizes: d(&[3, 1, 4]), strides: None });
        add(&format!("gather {seed}, output [3, 1, 4]"), err(g.plan()));
        let mut s = generate::slice_case(&mut Rng::new(seed), &DType::ALL).desc;
        s.input.sizes = d(&vec![1; s.input.sizes.len()]);
        add(&format!("slice {seed}, input of 1s"), err(s.plan()));
        let mut c = chains::chain_case(&mut Rng::new(seed), &DType::ALL).desc;
        c.data.sizes = d(&vec![1; c.data.sizes.len()]);
        c.data.strides = None;
        add(&format!("chain {seed}, data of 1s"), err(c.plan()));
    }
    out
}

#[test]
fn refusals_say_what_is_recorded() {
    let texts: String = corpus().iter().map(|(name, text)| format!("== {name}\n{text}\n")).collect();
    common::check_recorded("messages.txt", "a message", &texts);
}

/// The fixes a fused `_` chain's causes name.
#[test]
fn unfused_causes_name_their_fix() {
    let rows = |size, elem_bytes| Unfused::Rows { stage: 2, size, elem_bytes }.fix();
    assert_eq!(
        rows(3, 1),
        "make the result's last dimension a multiple of 4 elements (whole words), or give the leading size"
    );
    assert_eq!(
        rows(1, 2),
        "make the result's last dimension a multiple of 2 elements (whole words), or give the leading size"
    );
    assert_eq!(Unfused::EmptyStage { stage: 1 }.fix(), "give the leading size");
    assert_eq!(Unfused::Overflow { stage: 3 }.stage(), 3);
}
