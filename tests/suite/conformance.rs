//! ONNX's own node-test vectors and shape-inference cases for Gather and Slice
//! (tests/data/, ONNX's own node-test vectors; see its README), through the runtime
//! builder path, on a real launch.

use serde_json::Value;
use stridex::core::{Dims, SignedDims, SliceWindow, TensorDecl};
use stridex::{DType, GatherDesc, GatherOp, GatherRules, SliceDesc, SliceOp};

fn cases(file: &str) -> Vec<Value> {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str::<Vec<Value>>(&text).unwrap()
}

/// The input called `name`, when it is present (an absent optional input has no shape).
fn input<'a>(case: &'a Value, name: &str) -> Option<&'a Value> {
    case["inputs"].as_array().unwrap().iter().find(|i| i["name"] == name && !i["shape"].is_null())
}

fn shape(t: &Value) -> Vec<usize> {
    t["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect()
}

fn ints(t: &Value) -> Vec<i64> {
    t["data"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect()
}

fn floats(t: &Value) -> Vec<f32> {
    t["data"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect()
}

fn dtype(t: &Value) -> DType {
    match t["dtype"].as_str().unwrap() {
        "float32" => DType::F32,
        "float64" => DType::F64,
        "int64" => DType::I64,
        "int32" => DType::I32,
        other => panic!("dtype {other}"),
    }
}

fn expected(case: &Value) -> Option<(&Value, Vec<usize>)> {
    if let Some(o) = case.get("outputs").and_then(|o| o.as_array()).and_then(|o| o.first()) {
        return Some((o, shape(o)));
    }
    case.get("expected_output").filter(|o| !o.is_null()).map(|o| (o, shape(o)))
}

fn expected_shape(case: &Value) -> Vec<usize> {
    match case.get("expected_output_shape") {
        Some(s) if !s.is_null() => {
            s.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect()
        }
        _ => expected(case).unwrap().1,
    }
}

fn gather(case: &Value) {
    let name = case["name"].as_str().unwrap();
    let data = input(case, "data").or_else(|| input(case, "x")).unwrap();
    let indices = input(case, "indices").or_else(|| input(case, "i")).unwrap();
    let desc = GatherDesc::new(
        GatherRules::Onnx,
        TensorDecl::packed(dtype(data), Dims::of(&shape(data))),
        TensorDecl::packed(dtype(indices), Dims::of(&shape(indices))),
        case["attributes"]["axis"].as_i64().unwrap_or(0),
    );
    assert_eq!(case["expect_error"], false, "{name}");
    let op = GatherOp::<f32, i64>::new(desc).unwrap_or_else(|e| panic!("{name}: {e}"));
    let out_shape = expected_shape(case);
    assert_eq!(op.plan().unwrap().output.sizes.as_slice(), out_shape.as_slice(), "{name}");
    let n: usize = shape(data).iter().product();
    let values = if data.get("data").is_some() { floats(data) } else { (0..n).map(|v| v as f32).collect() };
    let idx = if indices.get("data").is_some() {
        ints(indices)
    } else {
        // Shape-inference cases carry no values: gather the first rows.
        vec![0; shape(indices).iter().product()]
    };
    let y = op.run(&values, &idx).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(y.shape(), out_shape.as_slice(), "{name}");
    if let Some((out, _)) = expected(case) {
        assert_eq!(y.data(), floats(out).as_slice(), "{name}");
    }
}

fn slice(case: &Value) {
    let name = case["name"].as_str().unwrap();
    let x = input(case, "x").or_else(|| input(case, "data")).unwrap();
    let x_shape = shape(x);
    let starts = ints(input(case, "starts").unwrap());
    let ends = ints(input(case, "ends").unwrap());
    let axes = input(case, "axes").map(ints);
    let steps = input(case, "steps").map(ints);
    let desc = SliceDesc {
        input: TensorDecl::packed(dtype(x), Dims::of(&x_shape)),
        window: SliceWindow::Onnx {
            starts: SignedDims::of(&starts),
            ends: SignedDims::of(&ends),
            axes: axes.as_deref().map(SignedDims::of),
            steps: steps.as_deref().map(SignedDims::of),
        },
        output: None,
        feature_level: None,
        dynamic_leading: false,
    };
    let out_shape = expected_shape(case);
    let n: usize = x_shape.iter().product();
    let has_data = x.get("data").is_some();
    let window = Window { starts: &starts, ends: &ends, axes: axes.as_deref(), steps: steps.as_deref() };
    let out = expected(case).map(|o| o.0);
    match dtype(x) {
        DType::F32 => {
            let values = if has_data { floats(x) } else { (0..n).map(|v| v as f32).collect() };
            check_slice(name, desc, &values, &x_shape, &window, &out_shape, out.map(floats));
        }
        DType::I64 => {
            let values = if has_data { ints(x) } else { (0..n as i64).collect() };
            check_slice(name, desc, &values, &x_shape, &window, &out_shape, out.map(ints));
        }
        DType::F64 => {
            let values: Vec<f64> = (0..n).map(|v| v as f64).collect();
            check_slice(name, desc, &values, &x_shape, &window, &out_shape, None);
        }
        other => panic!("{name}: dtype {other}"),
    }
}

struct Window<'a> {
    starts: &'a [i64],
    ends: &'a [i64],
    axes: Option<&'a [i64]>,
    steps: Option<&'a [i64]>,
}

/// Runs the slice and compares it with the expected shape, the naive reference, and the
/// expected values where the case has them.
fn check_slice<T: stridex::Element>(
    name: &str,
    desc: SliceDesc,
    values: &[T],
    x_shape: &[usize],
    w: &Window,
    out_shape: &[usize],
    expected: Option<Vec<T>>,
) {
    let op = SliceOp::<T>::new(desc).unwrap_or_else(|e| panic!("{name}: {e}"));
    let y = op.run(values).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(y.shape(), out_shape, "{name}");
    let (ref_shape, ref_data) =
        crate::common::reference::onnx_slice(values, x_shape, w.starts, w.ends, w.axes, w.steps);
    assert_eq!((ref_shape.as_slice(), ref_data.as_slice()), (y.shape(), y.data()), "{name}: reference");
    if let Some(expected) = expected {
        assert_eq!(y.data(), expected.as_slice(), "{name}");
    }
}

fn run_file(file: &str) -> usize {
    let all = cases(file);
    for case in &all {
        match case["op"].as_str().unwrap() {
            "Gather" => gather(case),
            "Slice" => slice(case),
            other => panic!("op {other}"),
        }
    }
    all.len()
}

#[test]
fn onnx_node_tests() {
    assert_eq!(run_file("onnx_node_cases.json"), 12);
}

#[test]
fn onnx_embedding_tests() {
    assert_eq!(run_file("onnx_extra_cases.json"), 2);
}

#[test]
fn onnx_shape_inference_and_doc_examples() {
    assert_eq!(run_file("onnx_spec_valid_cases.json"), 26);
}
