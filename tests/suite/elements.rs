//! GatherElements (`gather_elements!`, the elements form of a gather): ONNX's own cases, random
//! descriptors of every rule set against the naive reference, a `_` count, the chain stage and
//! the builder, on real launches.

use crate::common::generate::{self, Rng};
use crate::common::props::{cases, choices, FromI128};
use crate::common::reference::{self as r, Outcome, Policy};
use crate::random::{check_gather_op, GatherOperands};
use proptest::prelude::*;
use serde_json::Value;
use stridex::{DType, Element, Error, Gather};

/// ONNX's GatherElements node tests in the index family's file (its other ops are not in
/// stridex yet).
#[test]
fn onnx_gather_elements_cases() {
    let path = format!("{}/tests/data/onnx_index_family_cases.json", env!("CARGO_MANIFEST_DIR"));
    let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ints = |v: &Value| -> Vec<i64> {
        v["data"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect()
    };
    let shape = |v: &Value| -> Vec<usize> {
        v["shape"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect()
    };
    let mut ran = 0;
    for case in all.iter().filter(|c| c["op"] == "GatherElements") {
        let name = case["name"].as_str().unwrap();
        let (data, indices, out) = (&case["inputs"][0], &case["inputs"][1], &case["outputs"][0]);
        assert_eq!(
            (data["dtype"].as_str(), indices["dtype"].as_str()),
            (Some("float32"), Some("int64")),
            "{name}"
        );
        let values: Vec<f32> =
            data["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        let op = Gather::onnx()
            .elements()
            .data::<f32>(&shape(data))
            .indices::<i64>(&shape(indices))
            .axis(case["attributes"]["axis"].as_i64().unwrap_or(0))
            .build()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let y = op.run(&values, &ints(indices)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected: Vec<f32> =
            out["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        assert_eq!((y.shape(), y.data()), (shape(out).as_slice(), expected.as_slice()), "{name}");
        ran += 1;
    }
    assert_eq!(ran, 2);
}

/// The macro's form, with ONNX's doc example 2 (`axis: 0`, indices smaller than the data) and
/// its negative indices.
#[test]
fn the_macro_gathers_elements() {
    let op = stridex::gather_elements! { data: f32[3, 3], indices: i64[2, 3], axis: 0 };
    let data = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    let y = op.run(&data, &[1, 2, 0, 2, 0, 0]).unwrap();
    assert_eq!((y.shape(), y.data()), (&[2usize, 3][..], &[4.0, 8.0, 3.0, 7.0, 2.0, 3.0][..]));
    let y = op.run(&data, &[-2, -1, 0, -1, 0, 0]).unwrap();
    assert_eq!(y.data(), &[4.0, 8.0, 3.0, 7.0, 2.0, 3.0]);
    // ONNX's policy is `error`: the first bad index, row-major, comes back as `Err`.
    match op.run(&data, &[1, 2, 0, 2, 3, 0]) {
        Err(Error::IndexOutOfRange { position, value, .. }) => assert_eq!((position, value), (vec![1, 1], 3)),
        other => panic!("expected an index error, got {other:?}"),
    }
    // Along the last axis, PyTorch's `torch.gather(x, 1, idx)`.
    let rows = stridex::gather_elements! { data: u8[2, 4], indices: i32[2, 3], axis: -1, out_of_range: zero };
    let y = rows.run(&[10, 11, 12, 13, 20, 21, 22, 23], &[3, 0, 9, 1, 1, -4]).unwrap();
    assert_eq!(y.data(), &[13, 10, 0, 21, 21, 20]);
}

/// A `_` count of the indices along axis 0: one kernel for every count.
#[test]
fn a_runtime_count_along_axis_0() {
    let op = stridex::gather_elements! { data: f32[4, 3], indices: i32[_, 3], axis: 0 };
    let data: Vec<f32> = (0..12).map(|v| v as f32).collect();
    for count in [1usize, 3, 8] {
        let idx: Vec<i32> = (0..count * 3).map(|i| ((i * 5 + 1) % 4) as i32).collect();
        let y = op.run(&data, &idx).unwrap();
        let expected: Vec<f32> = (0..count * 3).map(|i| data[idx[i] as usize * 3 + i % 3]).collect();
        assert_eq!((y.shape(), y.data()), (&[count, 3][..], expected.as_slice()), "count {count}");
    }
}

/// In a chain: a slice, then each row's elements picked by its own indices, fused in one kernel.
#[test]
fn a_chain_stage() {
    let op = stridex::chain! {
        data: f32[4, 6],
        slice { s[1..4, ..;-1] },
        gather_elements { indices: i64[3, 2], axis: 1 },
    };
    assert!(op.is_fused().unwrap());
    let data: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let idx = [0i64, 5, 2, 2, -1, 1];
    let y = op.run(&data, (&idx[..],)).unwrap();
    // The slice: rows 1..4, columns reversed; then out[i][j] = sliced[i][idx[i][j]].
    let sliced = |i: usize, j: usize| data[(i + 1) * 6 + (5 - j)];
    let expected: Vec<f32> = (0..6)
        .map(|k| {
            let (i, v) = (k / 2, idx[k]);
            sliced(i, if v < 0 { (v + 6) as usize } else { v as usize })
        })
        .collect();
    assert_eq!((y.shape(), y.data()), (&[3usize, 2][..], expected.as_slice()));
}

/// The rules at run time, through the builder: `Err`s naming the rule, never a panic.
#[test]
fn the_builder_reports_the_rules() {
    let rank = Gather::onnx().elements().data::<f32>(&[3, 3]).indices::<i64>(&[3]).build();
    assert!(rank
        .unwrap_err()
        .to_string()
        .contains("GatherElements-13: indices of rank 1 for data of rank 2"));
    let wider = Gather::onnx().elements().data::<f32>(&[3, 3]).indices::<i64>(&[2, 4]).build();
    assert!(wider.unwrap_err().to_string().contains("indices dimension 1 has size 4"));
    let equal = Gather::openvino().elements().data::<f32>(&[3, 3]).indices::<i64>(&[2, 2]).build();
    assert!(equal.unwrap_err().to_string().contains("OpenVINO GatherElements-6"));
    let key =
        Gather::openvino().elements().data::<f32>(&[3, 3]).indices::<i64>(&[3, 3]).batch_dims(1).build();
    assert!(key.unwrap_err().to_string().contains("`batch_dims` belongs to the Gather operator"));
    let describe = Gather::directml().elements().data::<f32>(&[2, 2]).indices::<i32>(&[2, 2]).axis(1).build();
    assert!(describe.unwrap().describe().starts_with("gather_elements: DirectML GATHER_ELEMENTS"));
}

fn check_elements_case(choices: Vec<u64>, seed: u64) -> Result<(), String> {
    let mut rng = Rng::from_choices(choices, seed);
    let types = [DType::F32, DType::F16, DType::U8, DType::I16, DType::I32, DType::I64];
    let case = generate::elements_case(&mut rng, &types);
    with_types!(case.desc.data.dtype, case.desc.indices.dtype, check_elements(&case, &mut rng))
}

fn check_elements<T: Element, I: FromI128>(
    case: &generate::ElementsCase,
    rng: &mut Rng,
) -> Result<(), String> {
    let re = &case.reference;
    let operands = GatherOperands {
        data: (&re.data_sizes, &re.data_strides),
        indices: (&re.index_sizes, &re.index_strides),
        axis_size: re.data_sizes[re.axis()],
        signed: matches!(I::INDEX.dtype(), DType::I32 | DType::I64),
    };
    check_gather_op::<T, I>(case.desc, &operands, |data, values| re.run(data, values), rng)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(400), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn gather_elements_match_reference((choices, seed) in choices()) {
        check_elements_case(choices, seed).map_err(TestCaseError::fail)?;
    }
}

/// The reference itself on ONNX's doc example 1, so a mistake in it cannot hide one in both.
#[test]
fn the_reference_reads_the_formula() {
    let re = r::GatherElements {
        data_sizes: vec![2, 2],
        data_strides: vec![2, 1],
        index_sizes: vec![2, 2],
        index_strides: vec![2, 1],
        axis: 1,
        policy: Policy::Error,
        out_strides: None,
    };
    match re.run(&[1, 2, 3, 4], &[0, 0, 1, 0]) {
        Outcome::Ok { buffer, .. } => assert_eq!(buffer, [1, 1, 4, 3]),
        Outcome::Err { .. } => panic!("in range"),
    }
}
