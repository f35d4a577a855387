//! A chain's own rules (docs/rules.md, `chain-*`): its length, its gathers, each stage checked
//! on the shape the stage before it gives with the fault named by stage, kind and shape, and a
//! declared output that is the last stage's.

mod common;

use common::d;
use std::borrow::Cow;
use stridex_core::chain::MAX_STAGES;
use stridex_core::{ChainDesc, DType, GatherRules, OutputDecl, RuleError, StageDesc, TensorDecl};

fn gather(indices: &[usize], axis: i64) -> StageDesc {
    StageDesc::Gather(common::gather_stage(GatherRules::Onnx, DType::I32, indices, axis))
}

fn slice(offsets: &[usize], sizes: &[usize]) -> StageDesc {
    common::window_stage(offsets, sizes, &vec![1; sizes.len()])
}

fn chain(data: &[usize], stages: Vec<StageDesc>) -> ChainDesc {
    ChainDesc {
        data: TensorDecl::packed(DType::F32, d(data)),
        stages: Cow::Owned(stages),
        output: None,
        dynamic_leading: None,
    }
}

#[test]
fn a_chain_has_one_to_eight_stages_and_at_most_four_gathers() {
    assert_eq!(
        chain(&[4], vec![]).plan().unwrap_err(),
        RuleError::ChainLength { stages: 0, max: MAX_STAGES }
    );
    let nine = vec![slice(&[0], &[4]); MAX_STAGES + 1];
    assert_eq!(chain(&[4], nine).plan().unwrap_err(), RuleError::ChainLength { stages: 9, max: MAX_STAGES });
    assert!(chain(&[4], vec![slice(&[0], &[4]); MAX_STAGES]).plan().is_ok());
    assert!(chain(&[4], vec![slice(&[0], &[4])]).plan().is_ok());
    let five = vec![gather(&[4], 0); 5];
    assert_eq!(chain(&[4], five).plan().unwrap_err(), RuleError::ChainGathers { gathers: 5, max: 4 });
    let four = chain(
        &[4],
        vec![gather(&[4], 0), slice(&[0], &[4]), gather(&[4], 0), gather(&[4], 0), gather(&[4], 0)],
    );
    let plan = four.plan().unwrap();
    let stages: Vec<usize> = plan.gathers().map(|(stage, _)| stage).collect();
    assert_eq!(stages, [1, 3, 4, 5], "gathers by 1-based stage");
    assert_eq!(four.gathers().count(), 4);
    assert_eq!(plan.data_type, DType::F32);
}

#[test]
fn each_stage_is_checked_on_what_the_stage_before_it_gives() {
    // [6, 5] -> slice [3, 5] -> gather along 0 with indices [2, 2] -> [2, 2, 5].
    let ok = chain(&[6, 5], vec![slice(&[1, 0], &[3, 5]), gather(&[2, 2], 0)]);
    let plan = ok.plan().unwrap();
    assert_eq!(plan.stages[0].output().sizes.to_vec(), [3, 5]);
    assert_eq!(plan.output.sizes.to_vec(), [2, 2, 5]);
    assert_eq!(plan.data.sizes.to_vec(), [6, 5]);
    // The same gather along an axis the sliced tensor lacks: stage 2, a gather, on [3, 5].
    let broken = chain(&[6, 5], vec![slice(&[1, 0], &[3, 5]), gather(&[2], 2)]);
    match broken.plan().unwrap_err() {
        RuleError::Stage { stage, kind, input, .. } => {
            assert_eq!((stage, kind, input), (2, "gather", vec![3, 5]));
        }
        e => panic!("{e}"),
    }
    let window = chain(&[6, 5], vec![gather(&[2], 0), slice(&[0, 0], &[3, 5])]);
    match window.plan().unwrap_err() {
        RuleError::Stage { stage, kind, input, .. } => {
            assert_eq!((stage, kind, input), (2, "slice", vec![2, 5]))
        }
        e => panic!("{e}"),
    }
    let message = window.plan().unwrap_err().to_string();
    assert!(message.starts_with("stage 2 (slice), on its input of shape [2, 5]: "), "{message}");
}

#[test]
fn a_declared_output_is_the_last_stages() {
    let declared = |sizes: &[usize], strides: Option<&[usize]>| {
        let mut c = chain(&[6, 5], vec![slice(&[1, 0], &[3, 5]), gather(&[2], 1)]);
        c.output = Some(OutputDecl { dtype: None, sizes: d(sizes), strides: strides.map(d) });
        c
    };
    let p = declared(&[3, 2], Some(&[1, 3])).plan().unwrap();
    assert_eq!(p.output.strides.to_vec(), [1, 3]);
    assert_eq!(p.stages[1].output(), &p.output);
    assert_eq!(p.stages[0].output().strides.to_vec(), [5, 1], "only the last stage writes the output");
    match declared(&[3, 3], None).plan().unwrap_err() {
        RuleError::Stage { stage, kind, .. } => assert_eq!((stage, kind), (2, "gather")),
        e => panic!("{e}"),
    }
}
