fn main() {
    let _ = stridex::slice!(rules: onnx, input: f32[20, 10], s[.., 1..]);
}
