//! Where each refusal points: the key or size a macro spans its message on (`RuleError::location`),
//! for the refusals whose place depends on what they carry (the key named, the first size that
//! differs, the indices' last dimension). The macros' UI cases show the spans; these pin the
//! mapping in `core`, where the builders and tools read it too.

mod common;

use common::scatter::decl;
use stridex_core::{DType, GatherForm, GatherRules, Location, Operand, RuleError, ScatterDesc};

/// A key the form does not take points at that key (the builders name `axis` for GatherND).
#[test]
fn a_key_of_another_form_points_at_the_key() {
    let rules = GatherRules::OpenVino;
    let op = "OpenVINO ScatterUpdate-3";
    let cases = [
        (RuleError::ScatterKey { op, key: "batch_dims" }, Location::BatchDims),
        (RuleError::ScatterKey { op, key: "index_dims" }, Location::IndexDims),
        (RuleError::ScatterKey { op, key: "output" }, Location::Shape(Operand::Output)),
        (RuleError::ScatterKey { op, key: "feature_level" }, Location::FeatureLevel),
        (RuleError::ElementsKey { rules, key: "batch_dims" }, Location::BatchDims),
        (RuleError::ElementsKey { rules, key: "index_dims" }, Location::IndexDims),
        (RuleError::ElementsKey { rules, key: "feature_level" }, Location::FeatureLevel),
        (RuleError::NdKey { rules, key: "axis" }, Location::Axis),
        (RuleError::NdKey { rules, key: "index_dims" }, Location::IndexDims),
        (RuleError::NdKey { rules, key: "feature_level" }, Location::FeatureLevel),
    ];
    for (e, at) in cases {
        assert_eq!(e.location(), at, "{e}");
        // Inside a scatter, the gather's refusal points where it did.
        let wrapped = RuleError::InScatter { op, rule: Box::new(e.clone()) };
        assert_eq!(wrapped.location(), at, "{wrapped}");
    }
}

/// A scatter's updates of the right rank point at the first size that differs; of another
/// rank, at the whole list.
#[test]
fn updates_of_the_wrong_shape_point_at_the_first_size_that_differs() {
    let shape = |declared: &[usize], expected: &[usize]| {
        RuleError::UpdatesShape {
            op: "ONNX ScatterND-18",
            declared: declared.to_vec(),
            expected: expected.to_vec(),
        }
        .location()
    };
    assert_eq!(shape(&[4, 3, 5], &[2, 3, 6]), Location::Size(Operand::Updates, 0));
    assert_eq!(shape(&[2, 4, 5], &[2, 3, 5]), Location::Size(Operand::Updates, 1));
    assert_eq!(shape(&[2, 4], &[2, 3, 1]), Location::Shape(Operand::Updates));
    assert_eq!(shape(&[2, 3], &[2, 3, 1]), Location::Shape(Operand::Updates));
    // From the rules: a ScatterND whose updates' second size is not the data's row.
    let desc = ScatterDesc::new(
        GatherForm::Nd,
        GatherRules::Onnx,
        decl(DType::F32, &[8, 16]),
        decl(DType::I64, &[5, 1]),
        decl(DType::F32, &[5, 15]),
        0,
    );
    assert_eq!(desc.plan().unwrap_err().location(), Location::Size(Operand::Updates, 1));
}

/// GatherND tuples deeper than the data's axes point at the indices' last size, the depth.
#[test]
fn a_tuple_too_deep_points_at_the_indices_last_size() {
    let depth = |indices_rank: usize| {
        RuleError::NdDepth {
            rules: GatherRules::Onnx,
            depth: Some(4),
            data_rank: 2,
            indices_rank,
            batch_dims: 0,
        }
        .location()
    };
    assert_eq!(depth(3), Location::Size(Operand::Indices, 2));
    assert_eq!(depth(1), Location::Size(Operand::Indices, 0));
    let none = RuleError::NdDepth {
        rules: GatherRules::Onnx,
        depth: None,
        data_rank: 2,
        indices_rank: 0,
        batch_dims: 0,
    };
    assert_eq!(none.location(), Location::Shape(Operand::Indices));
}
