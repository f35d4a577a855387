fn main() {
    let _ = stridex::gather! { rules: onnx, feature_level: 4_1, data: f32[4, 4], indices: i64[2] };
}
