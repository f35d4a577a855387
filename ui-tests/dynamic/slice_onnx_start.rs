fn main() {
    let _ = stridex::slice! { rules: onnx, input: f32[_, 10], starts: [1], ends: [5] };
}
