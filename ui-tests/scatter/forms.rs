// scatter-forms: ONNX has no scatter along an axis (OpenVINO ScatterUpdate-3 is the one).
fn main() {
    let _op = stridex::scatter! { rules: onnx, data: f32[4, 2], indices: i64[3], updates: f32[3, 2], axis: 0 };
}
