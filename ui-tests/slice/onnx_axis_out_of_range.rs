fn main() {
    let op = stridex::slice! { rules: onnx, input: f32[4, 4], starts: [0], ends: [2], axes: [2] };
    let _ = op.run(&[0.0; 16]);
}
