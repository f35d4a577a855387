//! Every rule of docs/rules.md (tensors, gathers, slices), accepting and rejecting, on plain data.

mod common;

use common::{d, onnx_slice};
use stridex_core::*;

fn gather(rules: GatherRules, data: &[usize], indices: &[usize], axis: i64) -> GatherDesc {
    let index_type = if rules == GatherRules::Onnx { DType::I64 } else { DType::U32 };
    GatherDesc::new(
        rules,
        TensorDecl::packed(DType::F32, d(data)),
        TensorDecl::packed(index_type, d(indices)),
        axis,
    )
}

fn shape(p: &GatherPlan) -> Vec<usize> {
    p.output.sizes.to_vec()
}

#[test]
fn onnx_shape_table_of_seed_003() {
    // (P,Q) scalar axis 0 -> (Q); (P,Q,R) scalar axis 1 -> (P,R); (P,Q)+(R,S) axis 0 -> (R,S,Q);
    // axis 1 -> (P,R,S).
    let (p, q, r, s) = (2, 3, 4, 5);
    assert_eq!(shape(&gather(GatherRules::Onnx, &[p, q], &[], 0).plan().unwrap()), vec![q]);
    assert_eq!(shape(&gather(GatherRules::Onnx, &[p, q, r], &[], 1).plan().unwrap()), vec![p, r]);
    assert_eq!(shape(&gather(GatherRules::Onnx, &[p, q], &[r, s], 0).plan().unwrap()), vec![r, s, q]);
    assert_eq!(shape(&gather(GatherRules::Onnx, &[p, q], &[r, s], 1).plan().unwrap()), vec![p, r, s]);
    assert_eq!(shape(&gather(GatherRules::Onnx, &[3], &[], 0).plan().unwrap()), Vec::<usize>::new());
}

#[test]
fn onnx_axis_range_and_negative_axis() {
    assert_eq!(gather(GatherRules::Onnx, &[3, 4], &[2], -1).plan().unwrap().axis, 1);
    assert_eq!(gather(GatherRules::Onnx, &[3, 4], &[2], -2).plan().unwrap().axis, 0);
    for axis in [2, -3] {
        assert_eq!(
            gather(GatherRules::Onnx, &[3, 4], &[2], axis).plan().unwrap_err(),
            RuleError::AxisOutOfRange { rules: GatherRules::Onnx, axis, rank: 2 }
        );
    }
}

#[test]
fn data_rank_zero_is_refused() {
    let e = gather(GatherRules::Onnx, &[], &[2], 0).plan().unwrap_err();
    assert!(matches!(e, RuleError::Rank { tensor: Operand::Data, rank: 0, .. }), "{e:?}");
    assert!(matches!(tensor::dims(Operand::Data, &[1; 9]), Err(RuleError::Rank { rank: 9, .. })));
}

#[test]
fn output_rank_over_eight_is_refused() {
    let e = gather(GatherRules::Onnx, &[2, 2, 2, 2, 2], &[2, 2, 2, 2, 2], 0).plan().unwrap_err();
    assert_eq!(e, RuleError::OutputRank { rank: 9, indices_rank: 5, data_rank: 5 });
}

#[test]
fn index_types_per_rule_set() {
    let mut g = gather(GatherRules::Onnx, &[3], &[2], 0);
    g.indices.dtype = DType::U32;
    assert!(matches!(g.plan(), Err(RuleError::IndexTypeNotAllowed { dtype: DType::U32, .. })));
    g.indices.dtype = DType::U64;
    assert!(matches!(g.plan(), Err(RuleError::IndexTypeNotAllowed { dtype: DType::U64, .. })));
    g.indices.dtype = DType::I32;
    assert!(g.plan().is_ok());
    for rules in GatherRules::ALL {
        let mut g = gather(rules, &[3], &[2], 0);
        g.indices.dtype = DType::F32;
        assert_eq!(g.plan().unwrap_err(), RuleError::IndexNotInteger { dtype: DType::F32 });
        for t in [DType::U32, DType::U64, DType::I32, DType::I64] {
            g.indices.dtype = t;
            assert_eq!(g.plan().is_ok(), rules != GatherRules::Onnx || t.as_index().unwrap().is_signed());
        }
    }
}

#[test]
fn an_index_type_message_names_the_operator_of_its_form() {
    let mut g = gather(GatherRules::Onnx, &[3, 3], &[3, 2], 1);
    g.indices.dtype = DType::U32;
    g.form = stridex_core::GatherForm::Elements;
    let e = g.plan().unwrap_err();
    assert_eq!(
        e.to_string(),
        "ONNX GatherElements-13: index type u32 is not allowed (ONNX GatherElements-13 takes int32 and \
         int64); use i64 or i32, or pick `rules: directml` / `rules: openvino`, which accept unsigned indices"
    );
}

#[test]
fn directml_data_types() {
    let mut g = gather(GatherRules::DirectMl, &[3], &[2], 0);
    for t in DType::ALL {
        g.data.dtype = t;
        assert_eq!(g.plan().is_ok(), !matches!(t, DType::Bool | DType::BF16), "{t}");
    }
}

#[test]
fn keys_belong_to_their_rule_set() {
    let mut g = gather(GatherRules::Onnx, &[3], &[2], 0);
    g.batch_dims = Some(0);
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::KeyNotAllowed { rules: GatherRules::Onnx, key: "batch_dims" }
    );
    let mut g = gather(GatherRules::OpenVino, &[3], &[2], 0);
    g.index_dims = Some(1);
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::KeyNotAllowed { rules: GatherRules::OpenVino, key: "index_dims" }
    );
}

#[test]
fn openvino_batch_dims() {
    let mut g = gather(GatherRules::OpenVino, &[2, 64, 128], &[2, 32, 21], 1);
    g.batch_dims = Some(1);
    assert_eq!(shape(&g.plan().unwrap()), vec![2, 32, 21, 128]); // seed 002, the IR example
    g.batch_dims = Some(-2); // normalizes to 3 - 2 = 1
    assert_eq!(g.plan().unwrap().batch_dims, 1);
    g.batch_dims = Some(4);
    assert_eq!(g.plan().unwrap_err(), RuleError::BatchDimsOutOfRange { batch_dims: 4, limit: 3 });
    g.batch_dims = Some(-4);
    assert_eq!(g.plan().unwrap_err(), RuleError::BatchDimsOutOfRange { batch_dims: -4, limit: 3 });
    g.batch_dims = Some(2);
    assert_eq!(g.plan().unwrap_err(), RuleError::BatchDimsAfterAxis { batch_dims: 2, axis: 1 });
    let mut g = gather(GatherRules::OpenVino, &[2, 5], &[3, 3], 1);
    g.batch_dims = Some(1);
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::BatchDimMismatch { op: "OpenVINO Gather-8", dim: 0, data: 2, indices: 3 }
    );
}

/// GatherND (docs/rules.md#gather-nd): ONNX's page's output shapes, and each rule's error.
#[test]
fn gather_nd_shapes_and_rules() {
    let nd = |rules, data: &[usize], indices: &[usize], b: Option<i64>| {
        let mut g = gather(rules, data, indices, 0);
        g.form = stridex_core::GatherForm::Nd;
        g.batch_dims = b;
        g.plan()
    };
    // Examples 1 to 5 of GatherND-13.
    assert_eq!(shape(&nd(GatherRules::Onnx, &[2, 2], &[2, 2], None).unwrap()), vec![2]);
    assert_eq!(shape(&nd(GatherRules::Onnx, &[2, 2], &[2, 1], None).unwrap()), vec![2, 2]);
    assert_eq!(shape(&nd(GatherRules::Onnx, &[2, 2, 2], &[2, 2], None).unwrap()), vec![2, 2]);
    assert_eq!(shape(&nd(GatherRules::Onnx, &[2, 2, 2], &[2, 1, 2], None).unwrap()), vec![2, 1, 2]);
    let p = nd(GatherRules::OpenVino, &[2, 2, 2], &[2, 1], Some(1)).unwrap();
    assert_eq!((shape(&p), p.components, p.axis), (vec![2, 2], 1, 1));
    assert_eq!(
        nd(GatherRules::Onnx, &[2, 2], &[2, 3], None).unwrap_err(),
        RuleError::NdDepth {
            rules: GatherRules::Onnx,
            depth: Some(3),
            data_rank: 2,
            indices_rank: 2,
            batch_dims: 0
        }
    );
    assert_eq!(
        nd(GatherRules::DirectMl, &[2, 2], &[2, 0], None).unwrap_err(),
        RuleError::NdDepth {
            rules: GatherRules::DirectMl,
            depth: Some(0),
            data_rank: 2,
            indices_rank: 2,
            batch_dims: 0
        }
    );
    assert_eq!(
        nd(GatherRules::OpenVino, &[2, 2], &[2, 1], Some(2)).unwrap_err(),
        RuleError::NdBatchDims { rules: GatherRules::OpenVino, batch_dims: 2, data_rank: 2, indices_rank: 2 }
    );
    assert_eq!(
        nd(GatherRules::OpenVino, &[2, 2], &[2, 1], Some(-1)).unwrap_err(),
        RuleError::NdBatchDims {
            rules: GatherRules::OpenVino,
            batch_dims: -1,
            data_rank: 2,
            indices_rank: 2
        }
    );
    assert_eq!(
        nd(GatherRules::Onnx, &[3, 2], &[2, 1], Some(1)).unwrap_err(),
        RuleError::BatchDimMismatch { op: "ONNX GatherND-13", dim: 0, data: 3, indices: 2 }
    );
    let mut g = gather(GatherRules::Onnx, &[2, 2], &[2, 2], 0);
    g.form = stridex_core::GatherForm::Nd;
    g.indices.dtype = DType::I32;
    assert_eq!(g.plan().unwrap_err(), RuleError::NdIndexType { dtype: DType::I32 });
    g.rules = GatherRules::DirectMl;
    g.index_dims = Some(1);
    assert_eq!(g.plan().unwrap_err(), RuleError::NdKey { rules: GatherRules::DirectMl, key: "index_dims" });
}

/// Every example of the seeds (the one table, `stridex_core::seeds`) plans to the output
/// shape its document prints, with the index types its rule set takes.
#[test]
fn every_seed_example_plans_to_its_printed_shape() {
    use stridex_core::seeds::{GATHERS, SLICES};
    for seed in GATHERS {
        let index = if seed.rules == GatherRules::Onnx { DType::I64 } else { DType::U64 };
        let index = if seed.indices.iter().any(|&i| i < 0) { DType::I64 } else { index };
        let plan = seed.desc(DType::F32, index).plan().unwrap_or_else(|e| panic!("{}: {e}", seed.name));
        assert_eq!(shape(&plan), seed.out_sizes, "{}", seed.name);
        assert_eq!(seed.out.len(), seed.out_sizes.iter().product::<usize>(), "{}: output values", seed.name);
    }
    for seed in SLICES {
        let plan = seed.desc(DType::F32).plan().unwrap();
        assert_eq!(plan.output.sizes.as_slice(), seed.out_sizes, "{}", seed.name);
    }
}

#[test]
fn directml_example_3_is_refused_as_written_with_a_fix() {
    // Seed 000 example 3 prints sizes {3,2}, but its formula gives {3,1,2}: 3 dims > 2.
    let mut g = gather(GatherRules::DirectMl, &[3, 2], &[1, 2], 1);
    g.index_dims = Some(2);
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::OutputDoesNotFit {
            formula: vec![3, 1, 2],
            meaningful: 3,
            original_rank: 2,
            index_dims: 2,
            dimension_count: 2,
            suggest_index_dims: Some(1),
            index_dims_given: true,
        }
    );
    g.index_dims = Some(1);
    assert_eq!(shape(&g.plan().unwrap()), vec![3, 2]);
    // Not fixable by padding: the indices really have two dimensions.
    let mut g = gather(GatherRules::DirectMl, &[3, 2], &[2, 2], 1);
    g.index_dims = Some(2);
    assert!(matches!(g.plan(), Err(RuleError::OutputDoesNotFit { suggest_index_dims: None, .. })));
    // A single index with the default index_dims: seed 000's rule (2 + 2 - 1 > 2) fails although
    // the formula [1, 1, 3] trims to one dimension; the message must say which.
    let g = gather(GatherRules::DirectMl, &[2, 3], &[1, 1], 0);
    let e = g.plan().unwrap_err();
    assert!(
        matches!(e, RuleError::OutputDoesNotFit { meaningful: 3, suggest_index_dims: Some(1), .. }),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("has 3 meaningful dimensions (original input rank 2 + index_dims 2 - 1 = 3)"),
        "{e}"
    );
}

#[test]
fn a_broadcast_axis_longer_than_32_bits_is_refused() {
    let mut g = gather(GatherRules::OpenVino, &[1 << 33], &[1], 0);
    g.data.strides = Some(d(&[0]));
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::TooLarge { tensor: Operand::Data, elements: Some(1 << 33), elem_bytes: 4 }
    );
}

#[test]
fn a_size_one_axis_ignores_its_stride() {
    let mut g = gather(GatherRules::Onnx, &[1, 4], &[2], 0);
    g.data.dtype = DType::F64;
    g.data.strides = Some(d(&[1 << 63, 1]));
    let p = g.plan().unwrap();
    assert_eq!(p.index_axes().next().unwrap().stride, 0);
    assert!(stridex_core::kernel::GatherKernelDesc::new(&p).is_some());
}

#[test]
fn messages_do_not_overflow() {
    let mut g = gather(GatherRules::DirectMl, &[3], &[1], i64::MIN);
    g.index_dims = Some(1);
    assert!(g.plan().unwrap_err().to_string().contains("axis -9223372036854775808"));
    let e = slice(&[4], &[5], &[1], &[1]).plan().unwrap_err();
    assert_eq!(e.location(), Location::WindowAt(Window::Offsets, 0));
    assert!(
        e.to_string().contains("starts at offset 5, past the input size 4; use an offset of at most 3"),
        "{e}"
    );
}

#[test]
fn directml_dimension_counts_and_index_dims() {
    let g = gather(GatherRules::DirectMl, &[3, 2], &[4], 0);
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::DimensionCount { tensor: Operand::Indices, sizes: vec![4], expected: 2 }
    );
    let mut g = gather(GatherRules::DirectMl, &[3, 2], &[1, 4], 0);
    g.index_dims = Some(3);
    assert_eq!(g.plan().unwrap_err(), RuleError::IndexDimsOutOfRange { index_dims: 3, dimension_count: 2 });
    let mut g = gather(GatherRules::DirectMl, &[3, 2], &[2, 4], 0);
    g.index_dims = Some(1);
    assert_eq!(g.plan().unwrap_err(), RuleError::IndexPadding { dim: 0, size: 2, index_dims: 1 });
    let g = gather(GatherRules::DirectMl, &[3, 2], &[1, 4], -1);
    assert!(matches!(g.plan(), Err(RuleError::AxisOutOfRange { axis: -1, .. })));
    let mut g = gather(GatherRules::DirectMl, &[3, 2], &[1, 4], 0);
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[4, 2, 1]), strides: None });
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::DimensionCount { tensor: Operand::Output, sizes: vec![4, 2, 1], expected: 2 }
    );
}

#[test]
fn declared_output_must_match() {
    let mut g = gather(GatherRules::Onnx, &[3, 2], &[2, 2], 0);
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[2, 2, 2]), strides: None });
    assert!(g.plan().is_ok());
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[2, 3, 2]), strides: None });
    let e = g.plan().unwrap_err();
    assert_eq!(e.location(), Location::Size(Operand::Output, 1));
    g.output = Some(OutputDecl { dtype: Some(DType::F16), sizes: d(&[2, 2, 2]), strides: None });
    assert_eq!(g.plan().unwrap_err(), RuleError::OutputDType { data: DType::F32, output: DType::F16 });
    // Padded and permuted outputs are fine; overlapping ones are not.
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[2, 2, 2]), strides: Some(d(&[8, 3, 1])) });
    assert!(g.plan().is_ok());
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[2, 2, 2]), strides: Some(d(&[1, 2, 4])) });
    assert!(g.plan().is_ok());
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[2, 2, 2]), strides: Some(d(&[0, 2, 1])) });
    assert!(matches!(g.plan(), Err(RuleError::OutputOverlap { .. })));
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[2, 2, 2]), strides: Some(d(&[2, 2, 1])) });
    assert!(matches!(g.plan(), Err(RuleError::OutputOverlap { .. })));
    g.output = Some(OutputDecl { dtype: None, sizes: d(&[2, 2, 2]), strides: Some(d(&[2, 1])) });
    assert_eq!(
        g.plan().unwrap_err(),
        RuleError::StridesLen { tensor: Operand::Output, sizes: 3, strides: 2 }
    );
}

#[test]
fn strided_inputs_are_accepted() {
    let mut g = gather(GatherRules::Onnx, &[2, 3], &[2], 1);
    g.data.strides = Some(d(&[0, 1])); // broadcast
    assert!(g.plan().is_ok());
    g.data.strides = Some(d(&[5, 1])); // padded
    assert!(g.plan().is_ok());
    g.data.strides = Some(d(&[1, 2])); // column-major
    assert!(g.plan().is_ok());
    g.data.strides = Some(d(&[1]));
    assert_eq!(g.plan().unwrap_err(), RuleError::StridesLen { tensor: Operand::Data, sizes: 2, strides: 1 });
}

#[test]
fn too_large_for_32_bit_offsets() {
    let g = gather(GatherRules::Onnx, &[1 << 20, 1 << 13], &[2], 0);
    let e = g.plan().unwrap_err();
    assert_eq!(e, RuleError::TooLarge { tensor: Operand::Data, elements: Some(1 << 33), elem_bytes: 4 });
    assert!(
        e.to_string().contains("spans 8589934592 elements of 4 byte(s) (8589934592 32-bit words)"),
        "{e}"
    );
}

fn slice(input: &[usize], offsets: &[usize], sizes: &[usize], strides: &[i64]) -> SliceDesc {
    SliceDesc {
        input: TensorDecl::packed(DType::F32, d(input)),
        window: SliceWindow::DirectMl {
            offsets: d(offsets),
            sizes: d(sizes),
            strides: SignedDims::of(strides),
        },
        output: None,
        feature_level: None,
        dynamic_leading: false,
    }
}

#[test]
fn slice1_examples_of_seed_001() {
    let p = slice(&[1, 1, 4, 4], &[0, 0, 0, 1], &[1, 1, 4, 3], &[1, 1, 2, 2]).plan().unwrap();
    assert_eq!(p.output.sizes.as_slice(), &[1, 1, 2, 2]);
    assert_eq!(p.base, 1);
    let p = slice(&[1, 1, 4, 4], &[0, 0, 0, 1], &[1, 1, 4, 3], &[1, 1, -2, 2]).plan().unwrap();
    assert_eq!(p.base, 13); // CopyStart {0,0,3,1}
    assert_eq!(p.dims[0], SliceDim { size: 2, output_stride: 2, input_stride: -8 });
}

#[test]
fn slice1_rules() {
    let e = |s: SliceDesc| s.plan().unwrap_err();
    assert_eq!(
        e(slice(&[4, 4], &[0], &[4, 4], &[1, 1])),
        RuleError::WindowLen { window: Window::Offsets, len: 1, expected: 2, against: "the input's rank" }
    );
    assert_eq!(e(slice(&[4, 4], &[0, 0], &[4, 4], &[1, 0])), RuleError::WindowStrideZero { dim: 1 });
    assert_eq!(e(slice(&[4, 4], &[0, 0], &[0, 4], &[1, 1])), RuleError::WindowEmpty { dim: 0 });
    assert_eq!(
        e(slice(&[4, 4], &[0, 2], &[4, 3], &[1, 1])),
        RuleError::WindowPastInput { dim: 1, offset: 2, size: 3, input: 4 }
    );
    let mut s = slice(&[4, 4], &[0, 0], &[4, 3], &[1, 2]);
    s.output = Some(OutputDecl { dtype: None, sizes: d(&[4, 3]), strides: None });
    assert_eq!(e(s), RuleError::SliceOutputSize { dim: 1, size: 3, max: 2 });
    s.output = Some(OutputDecl { dtype: None, sizes: d(&[0, 2]), strides: None });
    assert_eq!(e(s), RuleError::SliceOutputSize { dim: 0, size: 0, max: 4 });
    // Fewer than MaxCopiedElements is allowed.
    s.output = Some(OutputDecl { dtype: None, sizes: d(&[3, 1]), strides: None });
    assert_eq!(s.plan().unwrap().output.sizes.as_slice(), &[3, 1]);
    s.input.dtype = DType::Bool;
    assert!(matches!(e(s), RuleError::DataTypeNotAllowed { dtype: DType::Bool, .. }));
}

#[test]
fn onnx_slice_shapes() {
    let s = |x: SliceDesc| x.plan().unwrap().output.sizes.to_vec();
    assert_eq!(
        s(onnx_slice(&[20, 10, 5], &[20, 10, 4], &[0, 0, 1], None, Some(&[-1, -3, -2]))),
        vec![19, 3, 2]
    );
    assert_eq!(s(onnx_slice(&[20, 10, 5], &[1000], &[1000], Some(&[1]), Some(&[1]))), vec![20, 0, 5]);
    assert_eq!(s(onnx_slice(&[20, 10, 5], &[0], &[-1], Some(&[1]), None)), vec![20, 9, 5]);
    assert_eq!(s(onnx_slice(&[3, 2], &[1, 0], &[200, 22000], Some(&[0, 1]), None)), vec![2, 2]);
    assert_eq!(s(onnx_slice(&[3, 4], &[1, 4], &[200, 0], Some(&[0, 1]), Some(&[1, -1]))), vec![2, 3]);
    assert_eq!(s(onnx_slice(&[0, 6], &[1], &[0], Some(&[0]), Some(&[-1]))), vec![0, 6]);
    assert!(matches!(
        onnx_slice(&[3, 4], &[0, 0], &[1, 1], Some(&[0, 0]), None).plan(),
        Err(RuleError::SliceAxisRepeated { position: 1, axis: 0 })
    ));
    assert!(matches!(
        onnx_slice(&[3, 4], &[0], &[1], Some(&[2]), None).plan(),
        Err(RuleError::SliceAxisOutOfRange { axis: 2, .. })
    ));
}

// DirectML feature levels (seed 000's and 001's "Tensor support" tables).

fn dml_gather(data: DType, index: DType, rank: usize, level: FeatureLevel) -> Result<GatherPlan, RuleError> {
    GatherDesc {
        form: stridex_core::GatherForm::Axis,
        rules: GatherRules::DirectMl,
        data: TensorDecl::packed(data, d(&vec![2; rank])),
        indices: TensorDecl::packed(index, d(&[vec![1; rank - 1], vec![2]].concat())),
        axis: 0,
        batch_dims: None,
        index_dims: Some(1),
        out_of_range: None,
        output: None,
        feature_level: Some(level),
        dynamic_leading: false,
    }
    .plan()
}

fn dml_slice(data: DType, rank: usize, level: FeatureLevel) -> Result<SlicePlan, RuleError> {
    SliceDesc {
        input: TensorDecl::packed(data, d(&vec![2; rank])),
        window: SliceWindow::DirectMl {
            offsets: d(&vec![0; rank]),
            sizes: d(&vec![2; rank]),
            strides: SignedDims::of(&vec![1; rank]),
        },
        output: None,
        feature_level: Some(level),
        dynamic_leading: false,
    }
    .plan()
}

/// The lowest level a refusal names, or `None` when the descriptor is accepted.
fn lowest<T>(r: Result<T, RuleError>) -> Option<Option<FeatureLevel>> {
    match r {
        Ok(_) => None,
        Err(RuleError::FeatureLevel { lowest, .. }) => Some(lowest),
        Err(e) => panic!("not a feature-level error: {e}"),
    }
}

#[test]
fn gather_feature_levels_follow_seed_000() {
    use DType::*;
    use FeatureLevel::*;
    let eleven = [F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8];
    let eight = [F32, F16, I32, I16, I8, U32, U16, U8];
    for level in FeatureLevel::ALL {
        for &t in &eleven {
            for index in [I64, I32, U64, U32] {
                for rank in 1..=8 {
                    let data_ok = match level {
                        L4_1 => true,
                        L3_0 | L2_1 => eight.contains(&t),
                        L1_0 => matches!(t, F32 | F16),
                    };
                    let index_ok = level >= L3_0 || index == U32;
                    let rank_ok = level >= L3_0 || rank == 4;
                    let accepted = dml_gather(t, index, rank, level).is_ok();
                    assert_eq!(
                        accepted,
                        data_ok && index_ok && rank_ok,
                        "{t} {index} rank {rank} at {level}"
                    );
                }
            }
        }
    }
    // Refusals name the lowest level that takes the descriptor.
    assert_eq!(lowest(dml_gather(I32, U32, 4, L1_0)), Some(Some(L2_1)));
    assert_eq!(lowest(dml_gather(F32, I32, 4, L2_1)), Some(Some(L3_0)));
    assert_eq!(lowest(dml_gather(F32, U32, 3, L1_0)), Some(Some(L3_0)));
    assert_eq!(lowest(dml_gather(F64, U32, 4, L3_0)), Some(Some(L4_1)));
    let e = dml_gather(F32, I32, 4, L2_1).unwrap_err();
    assert_eq!(e.location(), Location::DType(Operand::Indices));
    assert_eq!(
        e.to_string(),
        "DirectML GATHER at feature level 2_1: index type i32 is not supported (2_1 takes f32, f16, i32, i16, i8, u32, u16, u8 data; u32 indices; DimensionCount 4); the lowest level that takes this descriptor is 3_0: write `feature_level: 3_0` or higher"
    );
}

#[test]
fn slice_feature_levels_follow_seed_001() {
    use DType::*;
    use FeatureLevel::*;
    for rank in 1..=8 {
        assert!(dml_slice(F32, rank, L3_0).is_ok());
        assert_eq!(dml_slice(F32, rank, L2_1).is_ok(), rank == 4 || rank == 5, "rank {rank}");
        assert_eq!(
            lowest(dml_slice(F32, rank, L1_0)),
            Some(Some(if rank == 4 || rank == 5 { L2_1 } else { L3_0 }))
        );
    }
    assert_eq!(lowest(dml_slice(I64, 4, L3_0)), Some(Some(L4_1)));
    assert!(dml_slice(U8, 5, L2_1).is_ok());
    let e = dml_slice(F32, 4, L1_0).unwrap_err();
    assert_eq!(e.location(), Location::FeatureLevel);
    assert!(e.to_string().starts_with("DirectML SLICE1 at feature level 1_0: the operator does not exist yet (SLICE1 came with 2_1); the lowest level that takes this descriptor is 2_1"), "{e}");
    // Only DirectML descriptors take a level.
    let mut onnx = gather(GatherRules::Onnx, &[2, 2], &[2], 0);
    onnx.feature_level = Some(L4_1);
    assert!(matches!(onnx.plan(), Err(RuleError::FeatureLevelOutsideDirectMl { .. })));
    // A descriptor broken at every level reports that rule, not the level.
    assert!(matches!(dml_gather(Bool, U32, 4, L4_1), Err(RuleError::DataTypeNotAllowed { .. })));
}

// ndarray / Burn style ranges.

#[test]
fn ranges_follow_ndarray() {
    use stridex_core::ranges::{window, RangeFault};
    let w = |sizes: &[usize], r: &[SliceRange]| {
        window(sizes, r).map(|(o, s, st)| (o.to_vec(), s.to_vec(), st.to_vec()))
    };
    // s[.., 1..9;2, ..;-1] on [20, 10, 5]
    assert_eq!(
        w(&[20, 10, 5], &[SliceRange::FULL, SliceRange::new(1, 9).step(2), SliceRange::FULL.step(-1)]),
        Ok((vec![0, 1, 0], vec![20, 8, 5], vec![1, 2, -1]))
    );
    // Negative bounds, `..=`, fewer ranges than dimensions.
    let inclusive = SliceRange { start: Some(-3), end: Some(-1), inclusive: true, step: 1 };
    assert_eq!(w(&[4, 6], &[inclusive]), Ok((vec![1, 0], vec![3, 6], vec![1, 1])));
    assert_eq!(w(&[4], &[SliceRange::to(-1)]), Ok((vec![0], vec![3], vec![1])));
    // A negative step walks the range backwards: 0..4;-1 starts at 3 (SLICE1's CopyStart).
    let p = SliceDesc {
        input: TensorDecl::packed(DType::F32, d(&[6])),
        window: {
            let (offsets, sizes, strides) = window(&[6], &[SliceRange::new(0, 4).step(-1)]).unwrap();
            SliceWindow::DirectMl { offsets, sizes, strides }
        },
        output: None,
        feature_level: None,
        dynamic_leading: false,
    }
    .plan()
    .unwrap();
    assert_eq!((p.base, p.output.sizes.to_vec()), (3, vec![4]));
    // Mistakes.
    let fault = |sizes: &[usize], r: &[SliceRange]| match window(sizes, r) {
        Err(RuleError::Range { dim, fault }) => (dim, fault),
        other => panic!("{other:?}"),
    };
    assert_eq!(fault(&[4], &[SliceRange::FULL.step(0)]), (0, RangeFault::StepZero));
    assert_eq!(
        fault(&[4, 4], &[SliceRange::FULL, SliceRange::new(0, 5)]),
        (1, RangeFault::BoundOutside { bound: 5, size: 4 })
    );
    assert_eq!(fault(&[4], &[SliceRange::new(-5, 2)]), (0, RangeFault::BoundOutside { bound: -5, size: 4 }));
    assert_eq!(fault(&[4], &[SliceRange::new(3, 1)]), (0, RangeFault::Empty { start: 3, end: 1 }));
    assert!(matches!(
        window(&[4], &[SliceRange::FULL, SliceRange::FULL]),
        Err(RuleError::RangeCount { ranges: 2, rank: 1 })
    ));
}

/// A `_` leading size: the kernel is one row walk whose leading row dimension is the count
/// alone (never merged or grouped), and a walk for any count differs only in the count.
#[test]
fn a_dynamic_leading_size_plans_one_kernel_for_every_count() {
    use stridex_core::kernel::{GatherKernelDesc, Walk};
    // Packed rows that would merge with the leading dimension if it were fixed.
    let mut desc = gather(GatherRules::Onnx, &[100, 64], &[0, 8], 0);
    desc.dynamic_leading = true;
    let p = desc.plan().unwrap();
    assert!(p.dynamic_leading);
    let Walk::Rows(w) = GatherKernelDesc::new(&p).unwrap().walk else { panic!("a row walk") };
    assert!(w.dynamic);
    assert_eq!(w.outer[0].size as usize, dynamic::PLACEHOLDER);
    for count in [1usize, 5, 1000] {
        let at = dynamic::gather_at(&desc, count).unwrap();
        assert_eq!(shape(&at), [count, 8, 64]);
        let c = w.with_count(count, &at.data, &at.output, 4).unwrap();
        assert_eq!(c.specialized(), w.specialized());
        assert_eq!(c.invocations, w.invocations / 2 * count as u32);
        assert_eq!(c.out_words as usize, count * 8 * 64);
    }
    // A walk without row dimensions (public fields, so a caller may build one) has no count.
    let at = dynamic::gather_at(&desc, 3).unwrap();
    let bare = stridex_core::kernel::RowWalk { outer: Vec::new(), ..w.clone() };
    assert!(bare.with_count(3, &at.data, &at.output, 4).is_none());
    // The same descriptor with a fixed count merges everything into one run of rows.
    let fixed = gather(GatherRules::Onnx, &[100, 64], &[5, 8], 0).plan().unwrap();
    let Walk::Rows(f) = GatherKernelDesc::new(&fixed).unwrap().walk else { panic!("a row walk") };
    assert_eq!(f.outer.len(), 1);
    assert!(!f.dynamic);

    // Refusals name their reason and place.
    let mut axis1 = gather(GatherRules::Onnx, &[4, 3], &[0, 2], 1);
    axis1.dynamic_leading = true;
    assert_eq!(
        axis1.plan().unwrap_err(),
        RuleError::Dynamic { fault: DynamicFault::Axis { axis: 1 }, at: Location::Axis }
    );
    let mut dml = gather(GatherRules::DirectMl, &[4, 3], &[1, 2], 0);
    dml.dynamic_leading = true;
    assert_eq!(dml.plan().unwrap_err().location(), Location::Size(Operand::Indices, 0));
}

#[test]
fn a_strided_count_keeps_its_dimension_outermost() {
    let input = |strides: &[usize]| TensorDecl {
        dtype: DType::U8,
        sizes: d(&[1, 3, 4, 4]),
        strides: Some(d(strides)),
    };
    let slice = |strides: &[usize]| SliceDesc {
        dynamic_leading: true,
        ..SliceDesc::new(
            input(strides),
            SliceWindow::DirectMl {
                offsets: d(&[0, 0, 0, 0]),
                sizes: d(&[1, 3, 4, 4]),
                strides: SignedDims::of(&[1, 1, 1, 1]),
            },
        )
    };
    // NHWC viewed as NCHW: [3, 4, 4] with strides [1, 12, 3] spans 1 + 2 + 36 + 9 = 48.
    assert!(slice(&[48, 1, 12, 3]).plan().is_ok());
    assert!(slice(&[50, 1, 12, 3]).plan().is_ok());
    match slice(&[47, 1, 12, 3]).plan() {
        Err(RuleError::Dynamic {
            fault: DynamicFault::LeadingStride { tensor: Operand::Input, stride: 47, span: 48 },
            at: Location::Strides(Operand::Input),
        }) => {}
        r => panic!("{r:?}"),
    }
    // The count from a length: the strides it reaches into; whole rows when packed.
    let strided = input(&[48, 1, 12, 3]);
    assert_eq!(dynamic::row_step(&strided), 48);
    let counts: Vec<_> = [0, 1, 48, 49, 96].iter().map(|&n| dynamic::count_in(&strided, n)).collect();
    assert_eq!(counts, [Some(0), Some(1), Some(1), Some(2), Some(2)]);
    let packed = TensorDecl::packed(DType::U8, d(&[1, 3, 4, 4]));
    assert_eq!(dynamic::row_step(&packed), 48);
    assert_eq!(dynamic::count_in(&packed, 96), Some(2));
    assert_eq!(dynamic::count_in(&packed, 95), None);
}
