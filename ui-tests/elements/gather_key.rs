fn main() {
    let op = stridex::gather_elements! { rules: openvino, data: f32[3, 3], indices: i64[3, 3], batch_dims: 1 };
    let _ = op.run(&[0.0; 9], &[0; 9]);
}
