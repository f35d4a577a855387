fn main() {
    let op = stridex::slice! { rules: onnx, input: f32[4, 4], starts: [0], ends: [2], steps: [0] };
    let _ = op.run(&[0.0; 16]);
}
