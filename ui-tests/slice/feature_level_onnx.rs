fn main() {
    let _ = stridex::slice! { rules: onnx, feature_level: 4_1, input: f32[4, 4], starts: [0], ends: [2] };
}
