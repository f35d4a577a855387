//! The edges of each rule, where a rule's comparison or arithmetic could be off by one and the
//! broad cases of `rules.rs` would not notice: found by mutation testing (`scripts/mutants.sh`),
//! each test here fails for a mutant that survived the rest.

mod common;

use common::{d, onnx_slice};
use stridex_core::*;

fn gather(data: TensorDecl, indices: TensorDecl, axis: i64) -> GatherDesc {
    GatherDesc::new(GatherRules::Onnx, data, indices, axis)
}

#[test]
fn vocabulary_prints_and_parses() {
    for t in DType::ALL {
        assert_eq!(DType::from_name(t.name()), Some(t));
    }
    assert_eq!(DType::from_name("f31"), None);
    assert_eq!(IndexType::ALL.map(|t| t.to_string()), ["i32", "i64", "u32", "u64"]);
    assert_eq!(format!("{:?} {}", d(&[2, 3]), d(&[4, 5, 6])), "[2, 3] [4, 5, 6]");
    assert_eq!(format!("{}", d(&[])), "[]");
}

/// Where each fault points (what the macros span): the tensor, key or window entry at fault.
#[test]
fn faults_point_at_their_token() {
    let operands = [Operand::Data, Operand::Indices, Operand::Output, Operand::Input];
    assert_eq!(operands.map(|o| o.to_string()), ["data", "indices", "output", "input"]);
    assert_eq!(operands.map(Operand::key), ["data", "indices", "output", "input"]);
    let windows = [
        Window::Offsets,
        Window::Sizes,
        Window::Strides,
        Window::Starts,
        Window::Ends,
        Window::Axes,
        Window::Steps,
    ];
    assert_eq!(windows.map(Window::key), ["offsets", "sizes", "strides", "starts", "ends", "axes", "steps"]);
    for t in operands {
        for at in [Location::DType(t), Location::Shape(t), Location::Size(t, 1), Location::Strides(t)] {
            assert_eq!(at.operand(), Some(t));
        }
    }
    assert_eq!(Location::Axis.operand(), None);
    assert_eq!(Location::WindowAt(Window::Sizes, 0).operand(), None);
    // ONNX takes neither `batch_dims` nor `index_dims`: each on its own key.
    let onnx = gather(TensorDecl::packed(DType::F32, d(&[4, 5])), TensorDecl::packed(DType::I64, d(&[2])), 0);
    let batch = GatherDesc { batch_dims: Some(0), ..onnx }.plan().unwrap_err();
    assert_eq!(batch.location(), Location::BatchDims, "{batch}");
    let index = GatherDesc { index_dims: Some(1), ..onnx }.plan().unwrap_err();
    assert_eq!(index.location(), Location::IndexDims, "{index}");
    // A SLICE1 window past its input: on the offset when the offset alone is past it.
    let window = |offset: usize, size: usize| {
        let input = TensorDecl::packed(DType::F32, d(&[4]));
        let w =
            SliceWindow::DirectMl { offsets: d(&[offset]), sizes: d(&[size]), strides: SignedDims::of(&[1]) };
        SliceDesc::new(input, w).plan().unwrap_err().location()
    };
    assert_eq!(window(4, 1), Location::WindowAt(Window::Offsets, 0));
    assert_eq!(window(5, 1), Location::WindowAt(Window::Offsets, 0));
    assert_eq!(window(2, 3), Location::WindowAt(Window::Sizes, 0));
}

#[test]
fn seeds_are_found_by_name() {
    let seed = seeds::gather_seed("openvino_6_negative_indices").unwrap();
    assert_eq!(seed.name, "openvino_6_negative_indices");
    assert_eq!(seeds::slice_seed("slice1_2_negative_stride").unwrap().name, "slice1_2_negative_stride");
    assert!(seeds::gather_seed("no such example").is_none() && seeds::slice_seed("").is_none());
    // Some examples run in integer types too, some only in floats.
    assert!(seed.integral());
    assert!(seeds::GATHERS.iter().any(|s| !s.integral()));
}

/// A buffer is at least one element and one vector of words, 8-byte elements two words.
#[test]
fn buffer_words_round_up_to_elements_and_vectors() {
    use stridex_core::kernel::buffer_words;
    let empty = TensorLayout::packed(d(&[0, 3]));
    assert_eq!(buffer_words(&empty, 8, 1), 2);
    assert_eq!(buffer_words(&empty, 4, 1), 1);
    assert_eq!(buffer_words(&empty, 1, 4), 4);
    let three = TensorLayout::packed(d(&[3]));
    assert_eq!(buffer_words(&three, 1, 1), 1);
    assert_eq!(buffer_words(&three, 8, 4), 8);
    // The most words a buffer spans: 2^32 - 1 rounded down to whole vectors of four.
    assert_eq!(stridex_core::limits::MAX_WORDS, (1 << 32) - 4);
}

#[test]
fn names_round_trip_and_display() {
    let policies = [OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp];
    assert_eq!(policies.map(OutOfRange::name), ["error", "zero", "clamp"]);
    for p in policies {
        assert_eq!(OutOfRange::from_name(p.name()), Some(p));
        assert_eq!(p.to_string(), p.name());
    }
    assert_eq!(OutOfRange::from_name("wrap"), None);
    assert_eq!(GatherRules::ALL.map(GatherRules::name), ["onnx", "openvino", "directml"]);
    for r in GatherRules::ALL {
        assert_eq!(GatherRules::from_name(r.name()), Some(r));
        assert_eq!(r.to_string(), r.name());
    }
    assert_eq!(GatherRules::from_name("tflite"), None);
    assert_eq!(SliceForm::ALL.map(SliceForm::name), SliceForm::NAMES);
    for f in SliceForm::ALL {
        assert_eq!(SliceForm::from_name(f.name()), Some(f));
    }
    assert_eq!(SliceForm::from_name("openvino"), None);
    for l in FeatureLevel::ALL {
        assert_eq!(FeatureLevel::from_name(l.name()), Some(l));
    }
    assert_eq!(FeatureLevel::from_name("5_0"), None);
}

#[test]
fn rule_set_vocabulary() {
    assert_eq!(GatherRules::DirectMl.axis_range(3), (0, 2));
    assert_eq!(GatherRules::Onnx.axis_range(3), (-3, 2));
    assert!(!RuleSet::Gather(GatherRules::DirectMl).allows_data_type(DType::Bool));
    assert!(RuleSet::Gather(GatherRules::DirectMl).allows_data_type(DType::F32));
    assert!(RuleSet::Slice(SliceForm::Onnx).allows_data_type(DType::Bool));
    // The ONNX index-type message names its two types.
    let e = gather(TensorDecl::packed(DType::F32, d(&[3])), TensorDecl::packed(DType::U32, d(&[2])), 0)
        .plan()
        .unwrap_err();
    assert!(e.to_string().contains("int32 and int64"), "{e}");
}

#[test]
fn declared_output_types_that_match_are_taken() {
    let mut g =
        gather(TensorDecl::packed(DType::F32, d(&[3, 2])), TensorDecl::packed(DType::I64, d(&[2])), 0);
    g.output = Some(OutputDecl { dtype: Some(DType::F32), sizes: d(&[2, 2]), strides: None });
    assert!(g.plan().is_ok());
    let mut s = onnx_slice(&[4], &[1], &[3], None, None);
    s.output = Some(OutputDecl { dtype: Some(DType::F32), sizes: d(&[2]), strides: None });
    assert!(s.plan().is_ok());
    s.output = Some(OutputDecl { dtype: Some(DType::I32), sizes: d(&[2]), strides: None });
    assert!(matches!(s.plan(), Err(RuleError::OutputDType { .. })));
}

#[test]
fn index_and_axis_limits_of_32_bit_kernels() {
    // 2^31 i64 indices span 2^32 words: past what a kernel addresses (2^31 i32 would not be).
    let big = 1usize << 31;
    let e = gather(TensorDecl::packed(DType::F32, d(&[3])), TensorDecl::packed(DType::I64, d(&[big])), 0)
        .plan()
        .unwrap_err();
    assert!(matches!(e, RuleError::TooLarge { tensor: Operand::Indices, .. }), "{e:?}");
    // An axis of exactly u32::MAX elements is addressable (bytes, so the data fits).
    let axis = u32::MAX as usize;
    let g = gather(TensorDecl::packed(DType::U8, d(&[axis])), TensorDecl::packed(DType::I64, d(&[1])), 0);
    assert_eq!(g.plan().unwrap().index_axes().next().unwrap().size, axis);
    // The gathered axis' stride, and none for an axis of one.
    let g = gather(TensorDecl::packed(DType::F32, d(&[3, 4])), TensorDecl::packed(DType::I64, d(&[2])), 0);
    assert_eq!(g.plan().unwrap().index_axes().next().unwrap().stride, 4);
    let g = gather(TensorDecl::packed(DType::F32, d(&[1, 4])), TensorDecl::packed(DType::I64, d(&[2])), 0);
    assert_eq!(g.plan().unwrap().index_axes().next().unwrap().stride, 0);
}

#[test]
fn openvino_batch_dims_at_their_limits() {
    let mut g =
        gather(TensorDecl::packed(DType::F32, d(&[2, 3, 4])), TensorDecl::packed(DType::I32, d(&[2, 3])), 2);
    g.rules = GatherRules::OpenVino;
    for (b, normalized) in [(2, 2), (-2, 0)] {
        g.batch_dims = Some(b);
        assert_eq!(g.plan().unwrap().batch_dims, normalized, "batch_dims {b}");
    }
}

#[test]
fn layouts_at_their_edges() {
    let layout = |sizes: &[usize], strides: &[usize]| TensorLayout { sizes: d(sizes), strides: d(strides) };
    assert!(TensorLayout::packed(d(&[2, 3])).is_packed());
    assert!(!layout(&[2, 3], &[4, 1]).is_packed());
    // A dimension of one with stride 0 broadcasts nothing.
    assert_eq!(layout(&[1, 3], &[0, 2]).kind(), LayoutKind::Padded);
    // A dimension of one plays no part in nesting, whatever its stride.
    assert_eq!(layout(&[2, 1, 3], &[8, 2, 1]).kind(), LayoutKind::Padded);
    // 2^20 elements are still searched: the collision is found and named, in row-major order.
    let l = layout(&[1 << 18, 4], &[2, 3]);
    assert_eq!(l.check_disjoint(), Err(Overlap::Collision { a: vec![0, 2], b: vec![3, 0], offset: 6 }));
}

#[test]
fn inclusive_range_ends_stop_at_the_last_element() {
    let window = |r: SliceRange| ranges::window(&[4], &[r]);
    assert!(window(SliceRange { start: Some(0), end: Some(3), inclusive: true, step: 1 }).is_ok());
    assert!(window(SliceRange { start: Some(0), end: Some(4), inclusive: true, step: 1 }).is_err());
}

#[test]
fn onnx_slice_axes_and_backward_clamps() {
    // -rank is the first axis; one further is out of range.
    let p = onnx_slice(&[4, 6], &[1], &[3], Some(&[-2]), None).plan().unwrap();
    assert_eq!(p.output.sizes.as_slice(), &[2, 6]);
    let p = onnx_slice(&[4, 6], &[1], &[3], Some(&[-1]), None).plan().unwrap();
    assert_eq!(p.output.sizes.as_slice(), &[4, 2]);
    assert!(matches!(
        onnx_slice(&[4, 6], &[1], &[3], Some(&[-3]), None).plan(),
        Err(RuleError::SliceAxisOutOfRange { .. })
    ));
    // A backward walk from past the end starts at the last element: the whole dimension, reversed.
    let p = onnx_slice(&[5], &[100], &[-100], None, Some(&[-1])).plan().unwrap();
    assert_eq!(p.output.sizes.as_slice(), &[5]);
    let (offsets, sizes, strides) = p.window.unwrap();
    assert_eq!((offsets.to_vec(), sizes.to_vec(), strides.to_vec()), (vec![0], vec![5], vec![-1]));
    // An empty result has no window; a non-empty one has.
    let p = onnx_slice(&[5], &[3], &[3], None, None).plan().unwrap();
    assert_eq!(p.output.sizes.as_slice(), &[0]);
    assert!(p.window.is_none());
    assert!(onnx_slice(&[5], &[1], &[3], None, None).plan().unwrap().window.is_some());
}

#[test]
fn gather_dims_walk_the_data_after_the_axis() {
    let p = gather(TensorDecl::packed(DType::F32, d(&[3, 4])), TensorDecl::packed(DType::I64, d(&[2])), 0)
        .plan()
        .unwrap();
    let dims: Vec<_> =
        p.dims.iter().map(|g| (g.size, g.output_dim, g.data_dim, g.data_stride, g.index_stride)).collect();
    assert_eq!(dims, vec![(2, 0, None, 0, 1), (4, 1, Some(1), 1, 0)]);
}

#[test]
fn directml_fits_a_meaningful_rank_equal_to_the_dimension_count() {
    // Original data rank 3 and index_dims 2 make a meaningful output rank of 4 = DimensionCount.
    let mut g = gather(
        TensorDecl::packed(DType::F32, d(&[1, 2, 3, 4])),
        TensorDecl::packed(DType::U32, d(&[1, 1, 2, 2])),
        2,
    );
    g.rules = GatherRules::DirectMl;
    g.index_dims = Some(2);
    assert_eq!(g.plan().unwrap().output.sizes.as_slice(), &[2, 2, 2, 4]);
}

#[test]
fn only_slice1_windows_take_a_smaller_declared_output() {
    // SLICE1 lets a declared output take fewer elements than the window reaches; ONNX does not.
    let mut s = onnx_slice(&[4], &[0], &[4], None, None);
    s.output = Some(OutputDecl { dtype: None, sizes: d(&[3]), strides: None });
    assert!(s.plan().is_err());
    s.output = Some(OutputDecl { dtype: None, sizes: d(&[4]), strides: None });
    assert!(s.plan().is_ok());
}

#[test]
fn directml_suggests_the_index_dims_that_fit() {
    // index_dims 3 over indices [1, 1, 2] makes 3 + 3 - 1 = 5 meaningful dimensions, more than 3;
    // index_dims 2 still does not fit (3 + 2 - 1 = 4), index_dims 1 does.
    let mut g = gather(
        TensorDecl::packed(DType::F32, d(&[2, 3, 2])),
        TensorDecl::packed(DType::U32, d(&[1, 1, 2])),
        1,
    );
    g.rules = GatherRules::DirectMl;
    g.index_dims = Some(3);
    let e = g.plan().unwrap_err();
    assert!(
        matches!(
            e,
            RuleError::OutputDoesNotFit { meaningful: 5, original_rank: 3, suggest_index_dims: Some(1), .. }
        ),
        "{e:?}"
    );
}
