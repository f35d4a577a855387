fn main() {
    let op = stridex::gather! { rules: onnx, data: f32[3, 2], indices: i64[2], axis: 2 };
    let _ = op.run(&[0.0; 6], &[0; 4]);
}
