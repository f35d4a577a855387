//! GatherND (`gather_nd!`, the tuple form of a gather): ONNX's own cases, random descriptors of
//! every rule set against the naive reference, batch dimensions, a `_` count, the chain stage
//! and the builder, on real launches.

use crate::common::generate::{self, Rng};
use crate::common::props::{cases, choices, FromI128};
use crate::common::reference::{self as r, Outcome, Policy};
use crate::random::{check_gather_op, GatherOperands};
use proptest::prelude::*;
use serde_json::Value;
use stridex::{DType, Element, Error, Gather};

/// ONNX's GatherND node tests and its operator page's examples, value for value.
#[test]
fn onnx_gather_nd_cases() {
    let path = format!("{}/tests/data/onnx_index_family_cases.json", env!("CARGO_MANIFEST_DIR"));
    let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ints = |v: &Value| -> Vec<i64> {
        v["data"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect()
    };
    let shape = |v: &Value| -> Vec<usize> {
        v["shape"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect()
    };
    let mut ran = 0;
    for case in all.iter().filter(|c| c["op"] == "GatherND") {
        let name = case["name"].as_str().unwrap();
        let (data, indices, out) = (&case["inputs"][0], &case["inputs"][1], &case["outputs"][0]);
        assert_eq!(indices["dtype"].as_str(), Some("int64"), "{name}");
        let batch_dims = case["attributes"]["batch_dims"].as_i64().unwrap_or(0);
        let indices_shape = shape(indices);
        let op = |b: Gather| b.nd().indices::<i64>(&indices_shape).batch_dims(batch_dims);
        match data["dtype"].as_str().unwrap() {
            "float32" => {
                let values: Vec<f32> =
                    data["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
                let op = op(Gather::onnx())
                    .data::<f32>(&shape(data))
                    .build()
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let y = op.run(&values, &ints(indices)).unwrap_or_else(|e| panic!("{name}: {e}"));
                let expected: Vec<f32> =
                    out["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
                assert_eq!((y.shape(), y.data()), (shape(out).as_slice(), expected.as_slice()), "{name}");
            }
            "int32" => {
                let values: Vec<i32> = ints(data).into_iter().map(|v| v as i32).collect();
                let op = op(Gather::onnx())
                    .data::<i32>(&shape(data))
                    .build()
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let y = op.run(&values, &ints(indices)).unwrap_or_else(|e| panic!("{name}: {e}"));
                let expected: Vec<i32> = ints(out).into_iter().map(|v| v as i32).collect();
                assert_eq!((y.shape(), y.data()), (shape(out).as_slice(), expected.as_slice()), "{name}");
            }
            other => panic!("{name}: data type {other}"),
        }
        ran += 1;
    }
    assert_eq!(ran, 4);
}

/// The macro's form: ONNX's doc example 3 (tuples of two coordinates, slices of the rest), its
/// negative indices, and the `error` policy's first bad coordinate, checked against its own axis.
#[test]
fn the_macro_gathers_tuples() {
    let op = stridex::gather_nd! { data: f32[2, 2, 2], indices: i64[2, 2] };
    let data: Vec<f32> = (0..8).map(|v| v as f32).collect();
    let y = op.run(&data, &[0, 1, 1, 0]).unwrap();
    assert_eq!((y.shape(), y.data()), (&[2usize, 2][..], &[2.0, 3.0, 4.0, 5.0][..]));
    let y = op.run(&data, &[-2, -1, 1, -2]).unwrap();
    assert_eq!(y.data(), &[2.0, 3.0, 4.0, 5.0]);
    match op.run(&data, &[0, 1, 1, 2]) {
        Err(Error::IndexOutOfRange { position, value, axis_size }) => {
            assert_eq!((position, value, axis_size), (vec![1, 1], 2, 2))
        }
        other => panic!("expected an index error, got {other:?}"),
    }
    // Whole elements of 1-byte data (the slot walk, lanes assembled), tuples of three
    // coordinates into axes of different sizes; `zero` drops a tuple with any bad coordinate.
    let op = stridex::gather_nd! {
        rules: openvino, data: u8[2, 3, 5], indices: i32[3, 3], out_of_range: zero
    };
    let data: Vec<u8> = (0..30).collect();
    let y = op.run(&data, &[1, 2, 4, 0, 0, 0, 1, 3, 0]).unwrap();
    assert_eq!((y.shape(), y.data()), (&[3usize][..], &[29, 0, 0][..]));
    let op = stridex::gather_nd! {
        rules: directml, data: u8[2, 3, 5], indices: i32[3, 3]
    };
    // DirectML clamps each coordinate into its own axis.
    let y = op.run(&data, &[1, 2, 4, 0, 0, 0, 1, 3, 9]).unwrap();
    assert_eq!(y.data(), &[29, 0, 29]);
}

/// Batch dimensions (ONNX's doc example 5): each batch picks from its own data.
#[test]
fn batch_dimensions() {
    let op = stridex::gather_nd! { data: i32[2, 2, 2], indices: i64[2, 1], batch_dims: 1 };
    let y = op.run(&[0, 1, 2, 3, 4, 5, 6, 7], &[1, 0]).unwrap();
    assert_eq!((y.shape(), y.data()), (&[2usize, 2][..], &[2, 3, 4, 5][..]));
    // Two batch dimensions, the indices strided (every other tuple of a wider buffer).
    let op = stridex::gather_nd! {
        rules: openvino,
        data: f32[2, 3, 4],
        indices: i64[2, 3, 1] strides [12, 2, 1],
        batch_dims: 2,
    };
    let data: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let mut idx = vec![-7i64; 17];
    for (t, v) in [3, 2, 1, 0, 3, 2].into_iter().enumerate() {
        idx[(t / 3) * 12 + (t % 3) * 2] = v;
    }
    let y = op.run(&data, &idx).unwrap();
    assert_eq!((y.shape(), y.data()), (&[2usize, 3][..], &[3.0, 6.0, 9.0, 12.0, 19.0, 22.0][..]));
}

/// A `_` count of tuples: one kernel for every count.
#[test]
fn a_runtime_count_of_tuples() {
    let op = stridex::gather_nd! { data: f32[4, 3, 8], indices: i64[_, 2] };
    let data: Vec<f32> = (0..96).map(|v| v as f32).collect();
    for count in [1usize, 3, 8] {
        let idx: Vec<i64> = (0..count).flat_map(|t| [(t % 4) as i64, ((t * 2) % 3) as i64]).collect();
        let y = op.run(&data, &idx).unwrap();
        let expected: Vec<f32> = (0..count)
            .flat_map(|t| {
                let base = (idx[2 * t] * 24 + idx[2 * t + 1] * 8) as usize;
                data[base..base + 8].to_vec()
            })
            .collect();
        assert_eq!((y.shape(), y.data()), (&[count, 8][..], expected.as_slice()), "count {count}");
    }
}

/// In a chain: a slice, then tuples into the sliced tensor, fused in one kernel with one read
/// per coordinate.
#[test]
fn a_chain_stage() {
    let op = stridex::chain! {
        data: f32[4, 6, 2],
        slice { s[1..4, ..;-1, ..] },
        gather_nd { indices: i64[3, 2] },
    };
    assert!(op.is_fused().unwrap());
    let data: Vec<f32> = (0..48).map(|v| v as f32).collect();
    let idx = [0i64, 5, 2, 0, -1, 1];
    let y = op.run(&data, (&idx[..],)).unwrap();
    // The slice: rows 1..4, the middle dimension reversed; then out[t] = sliced[idx[t]].
    let sliced = |i: usize, j: usize, c: usize| data[(i + 1) * 12 + (5 - j) * 2 + c];
    let expected: Vec<f32> = (0..3)
        .flat_map(|t| {
            let (i, j) = (idx[2 * t].rem_euclid(3) as usize, idx[2 * t + 1].rem_euclid(6) as usize);
            [sliced(i, j, 0), sliced(i, j, 1)]
        })
        .collect();
    assert_eq!((y.shape(), y.data()), (&[3usize, 2][..], expected.as_slice()));
}

/// The rules at run time, through the builder: `Err`s naming the rule, never a panic.
#[test]
fn the_builder_reports_the_rules() {
    let err = |b: Result<stridex::GatherOp<f32, i64>, Error>| b.unwrap_err().to_string();
    let deep = Gather::onnx().nd().data::<f32>(&[3, 3]).indices::<i64>(&[2, 3]).build();
    assert!(err(deep).contains("GatherND-13: the indices' last size is 3"));
    let batch = Gather::openvino().nd().data::<f32>(&[3, 3]).indices::<i64>(&[3, 1]).batch_dims(2).build();
    assert!(err(batch).contains("OpenVINO GatherND-8: batch_dims 2 is out of range"));
    let mismatch = Gather::directml().nd().data::<f32>(&[3, 3]).indices::<i64>(&[2, 1]).batch_dims(1).build();
    assert!(err(mismatch).contains("DirectML GATHER_ND1: batch dimension 0 differs"));
    let axis = Gather::onnx().nd().data::<f32>(&[3, 3]).indices::<i64>(&[2, 1]).axis(1).build();
    assert!(err(axis).contains("`axis` belongs to the Gather operator, not GatherND"));
    let i32s = Gather::onnx().nd().data::<f32>(&[3, 3]).indices::<i32>(&[2, 1]).build();
    assert!(i32s.unwrap_err().to_string().contains("takes int64 alone"));
    let op = Gather::openvino().nd().data::<f32>(&[2, 3]).indices::<i32>(&[2, 2]).build().unwrap();
    let text = op.describe();
    assert!(text.starts_with("gather_nd: OpenVINO GatherND-8"), "{text}");
    assert!(text.contains("tuples of 2 coordinate(s) into data axes 0..2 (sizes [2, 3])"), "{text}");
    assert!(text.contains("data[i[0, 0], i[0, 1]]"), "{text}");
}

fn check_nd_case(choices: Vec<u64>, seed: u64) -> Result<(), String> {
    let mut rng = Rng::from_choices(choices, seed);
    let types = [DType::F32, DType::F16, DType::U8, DType::I16, DType::I32, DType::I64];
    let case = generate::nd_case(&mut rng, &types);
    with_types!(case.desc.data.dtype, case.desc.indices.dtype, check_nd(&case, &mut rng))
}

fn check_nd<T: Element, I: FromI128>(case: &generate::NdCase, rng: &mut Rng) -> Result<(), String> {
    let re = &case.reference;
    let q = re.index_sizes.len();
    // Values for one of the named axes: in range of some, out of range of others.
    let axis = re.batch_dims + rng.below(re.index_sizes[q - 1]);
    let operands = GatherOperands {
        data: (&re.data_sizes, &re.data_strides),
        indices: (&re.index_sizes, &re.index_strides),
        axis_size: re.data_sizes[axis],
        signed: matches!(I::INDEX.dtype(), DType::I32 | DType::I64),
    };
    check_gather_op::<T, I>(case.desc, &operands, |data, values| re.run(data, values), rng)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(400), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn gather_nd_matches_reference((choices, seed) in choices()) {
        check_nd_case(choices, seed).map_err(TestCaseError::fail)?;
    }
}

/// The reference itself on ONNX's doc example 5 (`batch_dims` 1), so a mistake in it cannot
/// hide one in both.
#[test]
fn the_reference_reads_the_formula() {
    let re = r::GatherNd {
        data_sizes: vec![2, 2, 2],
        data_strides: vec![4, 2, 1],
        index_sizes: vec![2, 1],
        index_strides: vec![1, 1],
        batch_dims: 1,
        policy: Policy::Error,
        out_strides: None,
    };
    match re.run(&[0, 1, 2, 3, 4, 5, 6, 7], &[1, 0]) {
        Outcome::Ok { shape, buffer } => assert_eq!((shape, buffer), (vec![2, 2], vec![2, 3, 4, 5])),
        Outcome::Err { .. } => panic!("in range"),
    }
}
